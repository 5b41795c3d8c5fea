// ServeCore and run_serve (trajcheck/serve.hpp): OTLP/HTTP JSON traces in, jsonl verdicts,
// evaluation events and Prometheus metrics out.
#include "trajcheck/serve.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http/http.hpp"
#include "json/text.hpp"
#include "run/decision_log.hpp"
#include "run/otlp_events.hpp"
#include "run/otlp_protobuf.hpp"
#include "trajcheck/report.hpp"

namespace trajcheck {
namespace {

constexpr std::string_view kServeOrigin = "POST /v1/traces";

std::string serve_status_body(int code, std::string_view message) {
  // google.rpc.Status in OTLP JSON: the reason for the exporter's log.
  return nlohmann::json{{"code", code}, {"message", message}}.dump(-1, ' ', false,
                                                                    nlohmann::json::error_handler_t::replace);
}

std::string serve_media_type(std::string_view content_type) {
  std::string t(content_type.substr(0, content_type.find(';')));
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  t.erase(0, i);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

// A Prometheus label value: backslash, double quote and newline escaped.
std::string serve_label(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

struct ServeCore::Impl {
  ServeOptions o;
  Sink sink;
  mutable std::mutex mu;
  std::shared_ptr<const RuleSet> rules;
  std::unique_ptr<TraceParser> parser;
  std::unique_ptr<RuleSetChecker> checker;
  std::unique_ptr<CheckReport> report;
  ToolTable tools;
  Trajectory scratch{&tools}, joined{&tools};
  std::unique_ptr<TraceJoiner> joiner;
  TraceParser::Emit emit;
  std::unordered_map<std::string, std::size_t> spans_of;  // open traces: spans held
  std::size_t spans_held = 0;
  Counters c;
  std::map<std::pair<std::string, std::string>, std::uint64_t> violations;  // (rule, severity)
  std::map<std::string, std::uint64_t> rejected_by, evicted_by;
  std::uint64_t memory_evictions_seen = 0;
  std::atomic<std::size_t> waiting{0};
  std::atomic<bool> draining{false};
  std::uint64_t seq = 0;

  void set_rules(std::shared_ptr<const RuleSet> r) {
    rules = std::move(r);
    parser = std::make_unique<TraceParser>(rules->reading_options(NormalizeOptions{}));
    checker = std::make_unique<RuleSetChecker>(rules, o.fail_on);
    CheckReportOptions ro;
    ro.format = CheckFormat::jsonl;
    ro.fail_on = o.fail_on;
    report = std::make_unique<CheckReport>(rules, ro);
  }

  void check_one(Trajectory& t) {
    auto open = spans_of.find(std::string(t.trace_id()));
    if (open != spans_of.end()) {
      spans_held -= open->second;
      spans_of.erase(open);
    }
    const TraceVerdict& v = checker->check(t);
    ++c.traces_checked;
    c.traces_failed += v.failed;
    for (const RuleResult& r : v.results)
      if (r.status == VerdictStatus::violated && r.rule < rules->rules().size()) {
        const RuleInfo& info = *rules->rules()[r.rule].info;
        ++violations[{info.name, std::string(to_string(info.severity))}];
      }
    ServeVerdict sv;
    sv.trace = &t;
    sv.verdict = &v;
    sv.rules = rules.get();
    report->trace(t, v, sv.jsonl);
    for (const std::string& w : t.warnings) {
      sv.warnings += w;
      if (w.empty() || w.back() != '\n') sv.warnings += '\n';
    }
    if (sink) sink(sv);
  }

  ServeReply refuse(int status, std::string_view reason, std::string_view why, int retry_after = 0) {
    ++c.rejected;
    ++rejected_by[std::string(reason)];
    ServeReply r;
    r.status = status;
    r.retry_after_s = retry_after;
    // OTLP's Status codes: INVALID_ARGUMENT 3, RESOURCE_EXHAUSTED 8, UNAVAILABLE 14.
    r.body = serve_status_body(status == 400 || status == 413 || status == 415 ? 3 : status == 429 ? 8 : 14, why);
    return r;
  }

  ServeReply post(const std::string& media, bool protobuf, std::string_view body);

  void count_memory_evictions() {
    const std::uint64_t early = joiner->early_traces();
    if (early > memory_evictions_seen) {
      c.evicted += early - memory_evictions_seen;
      evicted_by["memory"] += early - memory_evictions_seen;
      memory_evictions_seen = early;
    }
  }
};

ServeCore::ServeCore(std::shared_ptr<const RuleSet> rules, ServeOptions options, Sink sink)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.o = std::move(options);
  m.sink = std::move(sink);
  m.set_rules(std::move(rules));
  TraceJoinOptions jo;
  jo.idle_ms = std::max<std::uint64_t>(m.o.idle_ms, 1);
  jo.clock = m.o.clock;
  m.joiner = std::make_unique<TraceJoiner>(jo);
  m.emit = [&m](Trajectory& t) { m.check_one(t); };
}

ServeCore::~ServeCore() = default;

ServeReply ServeCore::post_traces(std::string_view content_type, std::string_view body) {
  const std::string media = serve_media_type(content_type);
  const bool protobuf = media == "application/x-protobuf" || media == "application/protobuf";
  ServeReply r = impl_->post(media, protobuf, body);
  if (protobuf && detail::otlp_protobuf_available()) {
    // OTLP/HTTP answers in the request's encoding: an empty ExportTraceServiceResponse, or a
    // google.rpc.Status.
    r.content_type = "application/x-protobuf";
    if (r.status == 200) {
      r.body.clear();
    } else {
      const nlohmann::json status = nlohmann::json::parse(r.body, nullptr, false);
      r.body = detail::otlp_status_protobuf(status.value("code", 0), status.value("message", std::string()));
    }
  }
  return r;
}

ServeReply ServeCore::Impl::post(const std::string& media, bool protobuf, std::string_view body) {
  Impl& m = *this;
  const int idle_s = static_cast<int>(std::max<std::uint64_t>(1, (m.o.idle_ms + 999) / 1000));
  if (m.draining) {
    std::lock_guard<std::mutex> lk(m.mu);
    return m.refuse(503, "shutting_down", "trajcheck serve is shutting down", idle_s);
  }
  if (protobuf && !detail::otlp_protobuf_available()) {
    std::lock_guard<std::mutex> lk(m.mu);
    return m.refuse(415, "unsupported_media_type",
                    "this trajcheck was built without protobuf: export OTLP/HTTP JSON (Content-Type: application/json; "
                    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)");
  }
  if (!protobuf && media != "application/json") {
    std::lock_guard<std::mutex> lk(m.mu);
    return m.refuse(415, "unsupported_media_type",
                    fmt::format("Content-Type '{}' is not OTLP/HTTP JSON (application/json) or protobuf "
                                "(application/x-protobuf)",
                                media));
  }
  if (body.size() > m.o.max_body_bytes) {
    std::lock_guard<std::mutex> lk(m.mu);
    return m.refuse(413, "too_large",
                    fmt::format("the request is larger than the {} bytes allowed", m.o.max_body_bytes));
  }
  // Back-pressure: too many requests already wait for the core.
  if (m.waiting.fetch_add(1) >= m.o.max_waiting_requests) {
    m.waiting.fetch_sub(1);
    std::lock_guard<std::mutex> lk(m.mu);
    return m.refuse(429, "throttled", "too many export requests wait to be read; send again later", 1);
  }
  // Protobuf is decoded outside the lock, into the OTLP JSON of the same request: from here
  // on both encodings are read alike.
  std::string converted;
  if (protobuf) {
    std::string why;
    if (!detail::otlp_traces_protobuf_to_json(body, &converted, &why)) {
      m.waiting.fetch_sub(1);
      std::lock_guard<std::mutex> lk(m.mu);
      ++m.c.requests;
      ++m.c.protobuf_requests;
      return m.refuse(400, "bad_request", why);
    }
    body = converted;
  }
  std::unique_lock<std::mutex> lk(m.mu);
  m.waiting.fetch_sub(1);
  ++m.c.requests;
  m.c.protobuf_requests += protobuf;
  RawRecord rec;
  rec.text.reserve(body.size() + kRecordPadding);
  rec.text.assign(body);
  rec.origin = RecordOrigin{std::string(kServeOrigin), m.seq + 1, 1, m.seq};
  ++m.seq;
  std::vector<Trajectory> parts;
  bool not_otlp = false;
  ParseOutcome po = m.parser->parse(rec, m.scratch, [&](Trajectory& t) {
    if (t.spans.empty()) not_otlp = true;
    else parts.push_back(t);
  });
  if (!po.ok()) {
    const RecordError& e = po.errors.front();
    return m.refuse(400, "bad_request",
                    fmt::format("{}byte {} of line {}: {}", protobuf ? "the request's spans as OTLP JSON: " : "",
                                e.where.column, e.where.line, e.message));
  }
  if (not_otlp)
    return m.refuse(400, "bad_request", "not an OTLP trace export (an object with resourceSpans of spans)");
  // Room for the traces this request opens.
  std::unordered_set<std::string> fresh;
  for (const Trajectory& t : parts)
    if (!m.spans_of.count(std::string(t.trace_id()))) fresh.insert(std::string(t.trace_id()));
  if (m.spans_of.size() + fresh.size() > m.o.max_open_traces) {
    m.joiner->poll(m.joined, m.emit);
    while (m.spans_of.size() + fresh.size() > m.o.max_open_traces &&
           m.joiner->evict_oldest(m.o.idle_ms, fmt::format("is evicted: more than {} open traces (--max-open-traces); "
                                                           "checked as it is, later spans of it form another trace",
                                                           m.o.max_open_traces),
                                  m.joined, m.emit)) {
      ++m.c.evicted;
      ++m.evicted_by["open_traces"];
    }
    if (m.spans_of.size() + fresh.size() > m.o.max_open_traces)
      return m.refuse(503, "full",
                      fmt::format("{} traces are open (--max-open-traces {}), none idle for long enough to evict",
                                  m.spans_of.size(), m.o.max_open_traces),
                      idle_s);
  }
  for (Trajectory& t : parts) {
    const std::string id(t.trace_id());
    const std::size_t n = t.spans.size();
    m.c.spans += n;
    m.spans_of[id] += n;
    m.spans_held += n;
    m.joiner->offer(t, m.joined, m.emit);
    auto open = m.spans_of.find(id);
    if (open != m.spans_of.end() && open->second > m.o.max_spans_per_trace &&
        m.joiner->evict(id,
                        fmt::format("is evicted: more than {} spans (--max-spans-per-trace); checked as it is, "
                                    "later spans of it form another trace",
                                    m.o.max_spans_per_trace),
                        m.joined, m.emit)) {
      ++m.c.evicted;
      ++m.evicted_by["spans_per_trace"];
    }
  }
  m.count_memory_evictions();
  return ServeReply{};
}

std::size_t ServeCore::poll() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->joiner->poll(impl_->joined, impl_->emit);
}

std::size_t ServeCore::finish() {
  std::lock_guard<std::mutex> lk(impl_->mu);
  const std::size_t n = impl_->joiner->held_traces();
  impl_->joiner->finish(impl_->joined, impl_->emit);
  impl_->spans_of.clear();
  impl_->spans_held = 0;
  return n;
}

void ServeCore::drain() { impl_->draining = true; }

void ServeCore::reload(std::shared_ptr<const RuleSet> rules) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  impl_->set_rules(std::move(rules));
  ++impl_->c.reloads;
}

ServeCore::Counters ServeCore::counters() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  Counters c = impl_->c;
  c.open_traces = impl_->spans_of.size();
  c.spans_held = impl_->spans_held;
  return c;
}

std::string ServeCore::metrics() const {
  const Impl& m = *impl_;
  std::lock_guard<std::mutex> lk(m.mu);
  std::string s;
  auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    s += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  family("trajcheck_serve_requests_total", "counter", "OTLP export requests read");
  s += fmt::format("trajcheck_serve_requests_total {}\n", m.c.requests);
  family("trajcheck_serve_protobuf_requests_total", "counter", "OTLP export requests read in protobuf");
  s += fmt::format("trajcheck_serve_protobuf_requests_total {}\n", m.c.protobuf_requests);
  family("trajcheck_serve_spans_total", "counter", "Spans received");
  s += fmt::format("trajcheck_serve_spans_total {}\n", m.c.spans);
  family("trajcheck_serve_traces_checked_total", "counter", "Traces checked, by verdict");
  s += fmt::format("trajcheck_serve_traces_checked_total{{status=\"pass\"}} {}\n", m.c.traces_checked - m.c.traces_failed);
  s += fmt::format("trajcheck_serve_traces_checked_total{{status=\"fail\"}} {}\n", m.c.traces_failed);
  family("trajcheck_serve_violations_total", "counter", "Rule violations, by rule and severity");
  for (const auto& [key, n] : m.violations)
    s += fmt::format("trajcheck_serve_violations_total{{rule=\"{}\",severity=\"{}\"}} {}\n", serve_label(key.first),
                     serve_label(key.second), n);
  family("trajcheck_serve_rejected_total", "counter", "Export requests refused, by reason");
  for (std::string_view reason : {"bad_request", "unsupported_media_type", "too_large", "throttled", "full",
                                  "shutting_down"}) {
    auto it = m.rejected_by.find(std::string(reason));
    s += fmt::format("trajcheck_serve_rejected_total{{reason=\"{}\"}} {}\n", reason,
                     it == m.rejected_by.end() ? 0 : it->second);
  }
  family("trajcheck_serve_evictions_total", "counter", "Traces checked before they were complete, by cause");
  for (std::string_view cause : {"open_traces", "spans_per_trace", "memory"}) {
    auto it = m.evicted_by.find(std::string(cause));
    s += fmt::format("trajcheck_serve_evictions_total{{cause=\"{}\"}} {}\n", cause,
                     it == m.evicted_by.end() ? 0 : it->second);
  }
  family("trajcheck_serve_rule_reloads_total", "counter", "Rules reloaded (SIGHUP)");
  s += fmt::format("trajcheck_serve_rule_reloads_total {}\n", m.c.reloads);
  family("trajcheck_serve_open_traces", "gauge", "Traces held, waiting to be complete");
  s += fmt::format("trajcheck_serve_open_traces {}\n", m.spans_of.size());
  family("trajcheck_serve_spans_held", "gauge", "Spans of the open traces");
  s += fmt::format("trajcheck_serve_spans_held {}\n", m.spans_held);
  family("trajcheck_serve_held_bytes", "gauge", "Bytes of the open traces' spans");
  s += fmt::format("trajcheck_serve_held_bytes {}\n", m.joiner->held_bytes());
  family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes");
  s += fmt::format("process_resident_memory_bytes {}\n", resident_bytes());
  return s;
}

std::string serve_decision_lines(const ServeVerdict& sv, std::string_view rules_digest,
                                 const DecisionLogArguments& arguments) {
  using Json = nlohmann::json;
  const Trajectory& t = *sv.trace;
  detail::Decision d;
  d.trace_id = std::string(t.trace_id());
  d.mode = "observe";
  d.forwarded = true;
  d.rules_digest = std::string(rules_digest);
  std::string lines;
  std::size_t n = 0;
  for (const RuleResult& r : sv.verdict->results) {
    if (r.status != VerdictStatus::violated || r.rule >= sv.rules->rules().size()) continue;
    const RuleInfo& info = *sv.rules->rules()[r.rule].info;
    d.decision_id = fmt::format("{}:{}", d.trace_id, ++n);
    d.verdict = "deny";
    d.rule = info.name;
    d.message = info.message.empty() ? fmt::format("violates rule {}", info.name) : info.message;
    d.call_id = d.tool = d.arguments = Json();
    if (!r.steps.empty() && r.steps.back() < t.steps().size()) {
      const Step& step = t.steps()[r.steps.back()];
      if (step.type == StepType::tool_call) {
        if (step.id.len != 0) d.call_id = std::string(t.text(step.id));
        d.tool = std::string(t.text(step.raw_tool.len != 0 ? step.raw_tool : step.tool_name));
        Json args = step.arguments.len != 0 ? Json::parse(t.text(step.arguments), nullptr, false) : Json::object();
        if (args.is_discarded()) args = std::string(t.text(step.arguments));
        d.arguments = detail::masked_arguments(args, arguments.full ? &arguments.mask : nullptr);
      }
    }
    lines += detail::decision_line(detail::decision_record(d));
  }
  if (n == 0) {
    d.decision_id = fmt::format("{}:1", d.trace_id);
    d.verdict = "allow";
    lines += detail::decision_line(detail::decision_record(d));
  }
  return lines;
}

// ---------------------------------------------------------------------------------------
// The server

namespace {

// gen_ai.evaluation.result events: one per rule that applied to the trace.
void serve_events(detail::OtlpEventExporter& ex, const ServeVerdict& sv) {
  const auto now = std::chrono::system_clock::now();
  const std::string_view id = sv.trace->trace_id();
  const bool hex_id = json::is_hex_trace_id(id);
  for (const RuleResult& r : sv.verdict->results) {
    if (r.status == VerdictStatus::vacuous || r.rule >= sv.rules->rules().size()) continue;
    const RuleInfo& info = *sv.rules->rules()[r.rule].info;
    const bool violated = r.status == VerdictStatus::violated;
    nlohmann::json rec = detail::event_record(
        "gen_ai.evaluation.result", now, violated, violated && !info.message.empty() ? info.message : info.name,
        {{"gen_ai.evaluation.name", info.name},
         {"gen_ai.evaluation.score.label", violated ? "fail" : "pass"},
         {"gen_ai.evaluation.score.value", violated ? 0.0 : 1.0},
         {"gen_ai.evaluation.explanation", info.message.empty() ? nlohmann::json() : nlohmann::json(info.message)},
         {"trajcheck.rule.severity", std::string(to_string(info.severity))},
         {"trajcheck.rule.source", info.location},
         {"trajcheck.trace_id", std::string(id)}});
    if (hex_id) rec["traceId"] = std::string(id);
    ex.emit(std::move(rec));
  }
}

bool serve_split_listen(const std::string& listen, std::string* host, int* port) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) return false;
  *host = listen.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  if (host->empty()) return false;
  const std::string p = listen.substr(colon + 1);
  if (p.size() > 5 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  *port = std::stoi(p);
  return *port <= 65535;
}

RuleSetResult serve_compile(const ServeRunOptions& o, std::FILE* err) {
  RuleSetResult compiled = compile_rule_set(o.rules_files, o.compile);
  const std::string d = compiled.format_diagnostics(false);
  if (!d.empty()) std::fputs(d.c_str(), err);
  return compiled;
}

}  // namespace

int run_serve(const ServeRunOptions& o, std::FILE* err) {
  RuleSetResult compiled = serve_compile(o, err);
  if (!compiled.ok()) {
    fmt::print(err, "trajcheck serve: rules did not compile; the server was not started\n");
    return 2;
  }
  std::string host;
  int port = 0;
  if (!serve_split_listen(o.listen, &host, &port)) {
    fmt::print(err, "trajcheck serve: --listen '{}' is not HOST:PORT\n", o.listen);
    return 2;
  }
  std::string http_error;
  const http::Api* http_api = http::api(&http_error);
  if (http_api == nullptr) {
    fmt::print(err, "trajcheck serve: {}\n", http_error);
    return 2;
  }
  std::FILE* out = stdout;
  if (o.out != "-") {
    out = std::fopen(o.out.c_str(), "ab");
    if (out == nullptr) {
      fmt::print(err, "trajcheck serve: cannot write verdicts to {}: {}\n", o.out, std::strerror(errno));
      return 2;
    }
  }
  std::FILE* decisions = nullptr;
  if (o.decision_log == "-") {
    decisions = err;
  } else if (!o.decision_log.empty() && (decisions = std::fopen(o.decision_log.c_str(), "ab")) == nullptr) {
    fmt::print(err, "trajcheck serve: cannot write the decision log {}: {}\n", o.decision_log, std::strerror(errno));
    if (out != stdout) std::fclose(out);
    return 2;
  }
  auto close_decisions = [&] { return decisions != nullptr && decisions != err ? std::fclose(decisions) == 0 : true; };
  // The rules in use and the one before (verdicts being written during a reload have those),
  // each with the digest its decision lines name.
  struct NamedRules {
    std::shared_ptr<const RuleSet> rules;
    std::string digest;
  };
  std::mutex digest_mu;
  NamedRules current{compiled.rules, rules_digest(compiled)}, before;
  std::unique_ptr<detail::OtlpEventExporter> events;
  if (!o.otlp_endpoint.empty()) {
    std::string error;
    events = detail::OtlpEventExporter::open(o.otlp_endpoint, "trajcheck-serve", &error);
    if (!events) {
      fmt::print(err, "trajcheck serve: --otlp-endpoint: {}\n", error);
      if (out != stdout) std::fclose(out);
      close_decisions();
      return 2;
    }
  }
  bool write_failed = false, decisions_failed = false;
  ServeCore core(compiled.rules, o.core, [&](const ServeVerdict& v) {
    if (!v.warnings.empty()) std::fputs(v.warnings.c_str(), err);
    if (std::fwrite(v.jsonl.data(), 1, v.jsonl.size(), out) != v.jsonl.size() || std::fflush(out) != 0) {
      if (!write_failed) fmt::print(err, "trajcheck serve: cannot write verdicts to {}: {}\n", o.out, std::strerror(errno));
      write_failed = true;
    }
    if (decisions != nullptr) {
      std::string digest;
      {
        std::lock_guard<std::mutex> lk(digest_mu);
        digest = v.rules == before.rules.get() ? before.digest : current.digest;
      }
      const std::string lines = serve_decision_lines(v, digest, o.log_arguments);
      if ((std::fwrite(lines.data(), 1, lines.size(), decisions) != lines.size() || std::fflush(decisions) != 0) &&
          !decisions_failed) {
        fmt::print(err, "trajcheck serve: cannot write the decision log {}: {}\n", o.decision_log, std::strerror(errno));
        decisions_failed = true;
      }
    }
    if (events) serve_events(*events, v);
  });

  // Signals are taken by this thread alone (sigwait): blocked here before any thread starts.
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);

  http::ServerSpec spec;
  spec.max_body_bytes = o.core.max_body_bytes;
  spec.routes.push_back({http::Route::Method::kPost, "/v1/traces", [&](const http::Request& req) {
                           // The core answers a body one byte past the limit 413.
                           ServeReply r = core.post_traces(req.content_type, req.body);
                           http::Answer a{r.status, std::move(r.content_type), std::move(r.body), {}};
                           if (r.retry_after_s > 0) a.headers.emplace_back("Retry-After", std::to_string(r.retry_after_s));
                           return a;
                         }});
  spec.routes.push_back({http::Route::Method::kGet, "/metrics", [&](const http::Request&) {
                           return http::Answer{200, "text/plain; version=0.0.4; charset=utf-8", core.metrics(), {}};
                         }});
  spec.routes.push_back({http::Route::Method::kGet, "/healthz",
                         [](const http::Request&) { return http::Answer{200, "text/plain", "ok\n", {}}; }});
  const std::unique_ptr<http::Server> server = http_api->make_server(std::move(spec));
  const int bound = server->bind(host, port);
  if (bound < 0) {
    fmt::print(err, "trajcheck serve: cannot listen on {}: {}\n", o.listen, std::strerror(errno));
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (out != stdout) std::fclose(out);
    close_decisions();
    return 2;
  }
  fmt::print(err, "trajcheck serve: listening on http://{}:{} (POST /v1/traces, GET /metrics, GET /healthz)\n",
             host.find(':') != std::string::npos ? "[" + host + "]" : host, bound);
  std::fflush(err);
  std::thread listener([&] { server->listen(); });
  std::mutex tick_mu;
  std::condition_variable tick_cv;
  bool stopping = false;
  std::thread ticker([&] {
    const auto period = std::chrono::milliseconds(std::clamp<std::uint64_t>(o.core.idle_ms / 4, 10, 250));
    std::unique_lock<std::mutex> lk(tick_mu);
    while (!tick_cv.wait_for(lk, period, [&] { return stopping; })) {
      lk.unlock();
      core.poll();
      lk.lock();
    }
  });
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      RuleSetResult again = serve_compile(o, err);
      if (again.ok()) {
        {
          std::lock_guard<std::mutex> lk(digest_mu);
          before = std::move(current);
          current = NamedRules{again.rules, rules_digest(again)};
        }
        core.reload(again.rules);
        fmt::print(err, "trajcheck serve: rules reloaded\n");
      } else {
        fmt::print(err, "trajcheck serve: the rules did not compile; the old rules stay in use\n");
      }
      std::fflush(err);
      continue;
    }
    break;
  }
  // Stop accepting; requests being read finish first (stop joins the server's threads).
  server->stop();
  listener.join();
  core.drain();
  {
    std::lock_guard<std::mutex> lk(tick_mu);
    stopping = true;
  }
  tick_cv.notify_all();
  ticker.join();
  const std::size_t at_shutdown = core.finish();
  int rc = 0;
  if (out != stdout ? std::fclose(out) != 0 : std::fflush(out) != 0) write_failed = true;
  if (!close_decisions()) decisions_failed = true;
  if (write_failed || decisions_failed) rc = 2;
  if (events) {
    const detail::OtlpEventExporter::Result r = events->close();
    if (r.lost != 0) {
      fmt::print(err, "trajcheck serve: {} evaluation events were not delivered to {}: {}\n", r.lost, events->url(),
                 r.first_error);
      rc = 2;
    }
  }
  const ServeCore::Counters c = core.counters();
  fmt::print(err, "trajcheck serve: stopped; {} traces checked ({} at shutdown), {} failed, {} requests refused, {} evicted\n",
             c.traces_checked, at_shutdown, c.traces_failed, c.rejected, c.evicted);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return rc;
}

}  // namespace trajcheck
