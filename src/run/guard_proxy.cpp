// The MCP proxy of `trajcheck guard`. GuardSession makes every decision from bytes (no
// processes: the unit tests and the fuzz target drive it directly); run_guard runs the server
// and two threads, one per direction, that feed it. Client to server: each message is read
// strictly and a `tools/call` is checked against the calls forwarded so far (answered or not)
// before it is forwarded or answered by the proxy. Server to client: bytes go through
// unchanged; a response to a forwarded call gives the call's step its result.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/guard.hpp"

#include "run/decision_log.hpp"
#include "run/otlp_events.hpp"

extern char** environ;

namespace trajcheck {

namespace {

using Json = nlohmann::json;

constexpr int kMaxDepth = 512;  // as the trace readers' nesting limit (docs/limits.md)

bool write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Splits a byte stream into messages: on `\n` only, or (split_cr) on `\n`, `\r\n` and a lone
// `\r`, as a text stream with universal newlines reads lines. A message is kept up to `limit`
// bytes; a longer one is reported once (too_long) and skipped to its end, never buffered. Each
// byte is looked at once.
class Framer {
 public:
  Framer(bool split_cr, std::size_t limit) : split_cr_(split_cr), limit_(limit) {}

  template <class Line, class TooLong>
  void feed(std::string_view in, Line&& line, TooLong&& too_long) {
    std::size_t i = 0;
    while (i < in.size()) {
      if (skip_lf_) {
        skip_lf_ = false;
        if (in[i] == '\n') {
          ++i;
          continue;
        }
      }
      const std::size_t j = split_cr_ ? in.find_first_of("\r\n", i) : in.find('\n', i);
      const std::size_t end = j == std::string_view::npos ? in.size() : j;
      if (!dropping_) {
        if (buf_.size() + (end - i) > limit_) {
          dropping_ = true;
          too_long();
          std::string().swap(buf_);
        } else {
          buf_.append(in.data() + i, end - i);
        }
      }
      if (j == std::string_view::npos) break;
      skip_lf_ = in[j] == '\r';
      if (!dropping_) line(std::string_view(buf_));
      buf_.clear();
      dropping_ = false;
      i = j + 1;
    }
  }
  template <class Line>
  void end(Line&& line) {
    if (!dropping_ && !buf_.empty()) line(std::string_view(buf_));
    buf_.clear();
    dropping_ = skip_lf_ = false;
  }

 private:
  bool split_cr_;
  std::size_t limit_;
  std::string buf_;
  bool dropping_ = false, skip_lf_ = false;
};

// Strict JSON for what the proxy forwards: nlohmann's parser (valid UTF-8, no lone
// surrogates) plus no duplicate key in any object, no number out of a double's range, at
// most kMaxDepth levels. A message another parser could read differently is not read.
struct Unreadable {
  std::string why;
};
bool parse_strict(std::string_view text, Json& out, std::string& why) {
  std::vector<std::set<std::string>> keys;
  auto cb = [&](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        if (depth >= kMaxDepth) throw Unreadable{fmt::format("nested deeper than {} levels", kMaxDepth)};
        keys.emplace_back();
        break;
      case Json::parse_event_t::array_start:
        if (depth >= kMaxDepth) throw Unreadable{fmt::format("nested deeper than {} levels", kMaxDepth)};
        break;
      case Json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
          throw Unreadable{fmt::format("duplicate key \"{}\"", parsed.get<std::string>())};
        break;
      case Json::parse_event_t::value:
        if (parsed.is_number_float() && !std::isfinite(parsed.get<double>()))
          throw Unreadable{"a number out of range"};
        break;
      default: break;
    }
    return true;
  };
  try {
    out = Json::parse(text.begin(), text.end(), cb, true, false);
    return true;
  } catch (const Unreadable& e) {
    why = e.why;
  } catch (const Json::exception& e) {
    // nlohmann's text, without its "[json.exception…] " prefix and the bytes it last read.
    why = e.what();
    if (auto at = why.find("] "); at != std::string::npos) why.erase(0, at + 2);
    if (auto at = why.find("; last read"); at != std::string::npos) why.erase(at);
  }
  return false;
}

// A request id the proxy can answer and match: a string or an integer. Its key compares
// `1` and `"1"` as one, so that no server can mistake one for the other.
// A message to the client, one line (the JSON of a message the guard read is valid UTF-8;
// what it quotes of one it could not read might not be).
std::string text_of(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }
std::string dump(const Json& msg) { return text_of(msg) + "\n"; }

bool usable_id(const Json& id) { return id.is_string() || id.is_number_integer(); }
std::string id_key(const Json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

std::string folded(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

}  // namespace

struct GuardSession::Impl {
  Impl(std::shared_ptr<const RuleSet> r, const GuardOptions& o, std::FILE* l)
      : rules(std::move(r)), options(o), log(l), client_framer(true, o.max_message_bytes),
        server_framer(false, o.max_message_bytes), parser(rules->reading_options({})), scratch(&tools),
        replay(&tools), committed(rules, o.context) {}

  std::shared_ptr<const RuleSet> rules;
  GuardOptions options;
  std::FILE* log;
  Framer client_framer, server_framer;
  TraceParser parser;
  ToolTable tools;
  Trajectory scratch, replay;  // a call read for a decision; a step read to be observed
  RawRecord raw;
  std::vector<Violation> found, ignored;

  // The calls forwarded (and the denied attempts, as `denied_call` steps), in the order they
  // were made. `committed` has observed a prefix of them, each with its result: every call up
  // to the first still unanswered. `speculative`
  // (when built) has observed all of them — the unanswered ones as calls without a result —
  // and decides the next call while any is unanswered.
  struct Call {
    std::uint64_t seq;
    Json step;
    bool answered = false;
  };
  RuleSetMonitor committed;
  std::deque<Call> calls;  // forwarded, not yet observed by `committed`
  std::optional<RuleSetMonitor> speculative;
  std::uint64_t next_seq = 0;
  // Client requests the server has not answered: id key -> the call's seq (or none).
  std::map<std::string, std::optional<std::uint64_t>> in_flight;

  GuardStats stats;
  std::mutex mutex;

  // The trace: one native record per session on one line, written as its steps are known.
  std::FILE* trace = nullptr;
  bool trace_started = false, trace_failed = false;
  std::size_t trace_steps = 0;
  std::string trace_id, client_name;
  std::uint64_t decisions = 0;
  std::unique_ptr<detail::OtlpEventExporter> otlp;  // --otlp-endpoint: each decision as an event

  // ---- client to server -------------------------------------------------------------

  void on_client_message(std::string_view text, Output& out) {
    if (text.find_first_not_of(" \t") == std::string_view::npos) return;  // a blank line: nothing to forward
    Json msg;
    std::string why;
    if (!parse_strict(text, msg, why)) {
      refuse(out, Json(), -32700, "trajcheck guard cannot read this message (" + why + "): not forwarded", text);
      return;
    }
    if (msg.is_array()) return on_batch(msg, text, out);
    if (!msg.is_object()) {
      refuse(out, Json(), -32600, "not a JSON-RPC message: not forwarded", text);
      return;
    }
    const Json* id = msg.contains("id") ? &msg["id"] : nullptr;
    const Json answer_id = id ? *id : Json();
    if (!msg.contains("method")) {
      if (id && (msg.contains("result") || msg.contains("error"))) return forward(text, out);  // an answer to the server
      refuse(out, Json(), -32600, "not a JSON-RPC request, notification or response: not forwarded", text);
      return;
    }
    const Json& method = msg["method"];
    if (!method.is_string()) {
      refuse(out, answer_id, -32600, "the method is not a string: not forwarded", text);
      return;
    }
    const std::string& m = method.get_ref<const std::string&>();
    if (m != "tools/call" && folded(m) == "tools/call") {
      refuse(out, answer_id, -32600, "a method spelled like tools/call but not exactly is not forwarded", text);
      return;
    }
    if (m == "initialize" && msg.contains("params") && msg["params"].is_object()) {
      const Json& params = msg["params"];
      if (params.contains("clientInfo") && params["clientInfo"].is_object() && params["clientInfo"].contains("name") &&
          params["clientInfo"]["name"].is_string())
        client_name = params["clientInfo"]["name"].get<std::string>();
    }
    if (m == "tools/call") return on_call(msg, text, out);
    if (id) {
      if (!usable_id(*id)) return forward(text, out);  // the server answers it an error; no tool runs
      if (in_flight.count(id_key(*id))) {
        refuse(out, *id, -32600, "this id is already used by a request still in flight: not forwarded", text);
        return;
      }
      in_flight.emplace(id_key(*id), std::nullopt);
    }
    forward(text, out);
  }

  void on_call(const Json& msg, std::string_view text, Output& out) {
    ++stats.calls;
    if (!msg.contains("id")) {
      refuse(out, Json(), 0, "a tools/call without an id (a notification) is not forwarded", text);
      return;
    }
    const Json& id = msg["id"];
    if (!usable_id(id)) {
      refuse(out, id, -32600, "a tools/call id must be a string or an integer: not forwarded", text);
      return;
    }
    if (!msg.contains("params") || !msg["params"].is_object()) {
      refuse(out, id, -32602, "tools/call params must be an object: not forwarded", text);
      return;
    }
    const Json& params = msg["params"];
    if (!params.contains("name") || !params["name"].is_string() || params["name"].get_ref<const std::string&>().empty()) {
      refuse(out, id, -32602, "tools/call needs a tool name (a non-empty string): not forwarded", text);
      return;
    }
    const std::string& name = params["name"].get_ref<const std::string&>();
    if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      refuse(out, id, -32602, "a tool name holding a control character is not forwarded", text);
      return;
    }
    if (params.contains("arguments") && !params["arguments"].is_object()) {
      refuse(out, id, -32602, "tools/call arguments must be an object: not forwarded", text);
      return;
    }
    if (in_flight.count(id_key(id))) {
      refuse(out, id, -32600, "this id is already used by a request still in flight: not forwarded", text);
      return;
    }
    Json step = {{"type", "tool_call"}, {"tool", name}, {"arguments", params.value("arguments", Json::object())},
                 {"id", id_key(id)}};
    std::string error;
    if (!read_step(step, scratch, &error)) {
      refuse(out, id, -32602, "trajcheck guard cannot read this call (" + error + "): not forwarded", text);
      return;
    }
    decide(found);
    const bool deny = !found.empty() && options.deny;
    for (const Violation& v : found) log_violation(options.deny ? "deny" : "warn", name, v);
    log_decision(step, found.empty() ? nullptr : &found.front(), found.empty() ? "allow" : "deny", !deny);
    if (deny) {
      ++stats.denied;
      const std::string message = message_of(found.front());
      Json reply = {{"jsonrpc", "2.0"}, {"id", id},
                    {"result", {{"content", Json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}}}};
      out.to_client += dump(reply);
      // The attempt is a step of the trace too (not a tool call: it did not run), in call order.
      Json attempt = {{"type", "denied_call"}, {"id", id_key(id)}, {"denied_tool", name},
                      {"arguments", step["arguments"]}, {"rule", rules->rules()[found.front().rule].info->name},
                      {"message", message}};
      if (!read_step(attempt, replay)) return;
      if (speculative) speculative->observe(replay, 0, ignored);
      calls.push_back(Call{next_seq++, std::move(attempt), true});
      commit(false);
      return;
    }
    const std::uint64_t seq = next_seq++;
    in_flight.emplace(id_key(id), seq);
    if (speculative) speculative->observe(scratch, 0, ignored);
    calls.push_back(Call{seq, std::move(step)});
    forward(text, out);
  }

  // The call in `scratch`, decided against every call forwarded before it.
  void decide(std::vector<Violation>& out) {
    if (calls.empty()) return committed.check(scratch, 0, out);
    if (!speculative) {
      speculative.emplace(rules, options.context);
      const Trajectory& done = committed.trace();
      for (std::size_t i = 0; i < done.steps().size(); ++i) speculative->observe(done, i, ignored);
      for (const Call& c : calls)
        if (read_step(c.step, replay)) speculative->observe(replay, 0, ignored);
    }
    speculative->check(scratch, 0, out);
  }

  // A JSON-RPC batch. One holding no call (and nothing unreadable) is forwarded as it is; one
  // holding a call is not forwarded at all — the server answers a batch as a whole, so
  // deciding its calls one by one could let a denied one through or lose its answer — and
  // each request in it is answered with a JSON-RPC error. (MCP since 2025-06-18 has no batches.)
  void on_batch(const Json& batch, std::string_view text, Output& out) {
    auto suspect = [](const Json& m) {
      if (!m.is_object()) return true;
      if (!m.contains("method")) return false;
      return !m["method"].is_string() || folded(m["method"].get_ref<const std::string&>()) == "tools/call";
    };
    std::set<std::string> ids;
    bool reused = false;
    for (const Json& m : batch)
      if (m.is_object() && m.contains("method") && m.contains("id") && usable_id(m["id"]))
        reused |= in_flight.count(id_key(m["id"])) > 0 || !ids.insert(id_key(m["id"])).second;
    if (std::none_of(batch.begin(), batch.end(), suspect) && !reused) {
      for (const std::string& k : ids) in_flight.emplace(k, std::nullopt);
      return forward(text, out);
    }
    Json replies = Json::array();
    for (const Json& m : batch)
      if (m.is_object() && m.contains("id") && m.contains("method"))
        replies.push_back({{"jsonrpc", "2.0"}, {"id", m["id"]},
                           {"error", {{"code", -32600}, {"message", "trajcheck guard does not forward a batch holding "
                                                                    "tools/call (or a reused id): send each tool call on its own"}}}});
    ++stats.batches_refused;
    fmt::print(log, "guard: refused a batch of {} messages holding a tools/call or a reused id (not forwarded)\n",
               batch.size());
    if (!replies.empty()) out.to_client += dump(replies);
  }

  void forward(std::string_view text, Output& out) {
    out.to_server.append(text);
    out.to_server.push_back('\n');
  }

  // Not forwarded: logged, counted and, when the message has an id (or could have had one),
  // answered with a JSON-RPC error. code 0: a notification, not answered.
  void refuse(Output& out, const Json& id, int code, const std::string& why, std::string_view text) {
    ++stats.refused;
    fmt::print(log, "guard: refused a client message: {}: {:.80}\n", why, text);
    if (code == 0) return;
    Json reply = {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", why}}}};
    out.to_client += dump(reply);
  }

  void too_long(Output& out) {
    refuse(out, Json(), -32600,
           fmt::format("a message longer than the guard's limit of {} bytes: not forwarded", options.max_message_bytes), "");
  }

  // ---- server to client -------------------------------------------------------------

  void on_server_message(std::string_view text) {
    Json msg = Json::parse(text, nullptr, false);
    if (msg.is_discarded()) {
      if (text.find_first_not_of(" \t\r") != std::string_view::npos) {
        ++stats.malformed;
        fmt::print(log, "guard: a message from the server is not JSON: {:.80}\n", text);
      }
      return;
    }
    if (!msg.is_object() || !msg.contains("id") || msg.contains("method") || !(msg.contains("result") || msg.contains("error")))
      return;
    if (!usable_id(msg["id"])) return;
    auto it = in_flight.find(id_key(msg["id"]));
    if (it == in_flight.end()) return;
    const std::optional<std::uint64_t> seq = it->second;
    in_flight.erase(it);
    if (!seq) return;
    auto call = std::find_if(calls.begin(), calls.end(), [&](const Call& c) { return c.seq == *seq; });
    if (call == calls.end()) return;
    Json& step = call->step;
    const bool failed = msg.contains("error") || (msg["result"].is_object() && msg["result"].value("isError", false) == true);
    step["result"] = msg.contains("error") ? msg["error"] : msg["result"];
    if (failed) step["status"] = "error";
    call->answered = true;
    ++stats.results;
    speculative.reset();  // it saw this call without its result
    commit(false);
  }

  // Observes the answered calls at the front of `calls` (all of them at the end, the
  // unanswered with status error) and appends them to the trace.
  void commit(bool all) {
    while (!calls.empty() && (all || calls.front().answered)) {
      Call& c = calls.front();
      if (!c.answered) {
        c.step["status"] = "error";
        c.step["unanswered"] = true;
        ++stats.unanswered;
        fmt::print(log, "guard: the call of {} (id {}) was never answered: recorded with status error\n",
                   c.step["tool"].get<std::string>(), Json(c.step["id"]).dump());
      }
      if (read_step(c.step, replay)) {
        committed.observe(replay, 0, found);
        for (const Violation& v : found)
          log_violation("violation", c.step.value("tool", c.step.value("denied_tool", std::string())), v);
      }
      write_step(c.step);
      calls.pop_front();
    }
  }

  // ---- the trace and the logs ---------------------------------------------------------

  const std::string& id_of_trace() {
    if (trace_id.empty())
      trace_id = !options.trace_id.empty()
                     ? options.trace_id
                     : fmt::format("guard-{}{}-{}", client_name.empty() ? "" : client_name + "-",
                                   detail::utc_now("{:%Y%m%dT%H%M%S}.{:03}Z"), ::getpid());
    return trace_id;
  }

  void write_trace(std::string_view text) {
    if (trace == nullptr || trace_failed) return;
    if (std::fwrite(text.data(), 1, text.size(), trace) != text.size() || std::fflush(trace) != 0) {
      trace_failed = true;
      fmt::print(log, "guard: cannot write the trace to {}: {}\n", options.trace_out, std::strerror(errno));
    }
  }
  void start_trace() {
    if (trace_started) return;
    trace_started = true;
    Json head = {{"trace_id", id_of_trace()}};
    std::string text = text_of(head);
    text.pop_back();
    if (!options.context.empty()) text += ",\"context\":" + options.context;
    text += ",\"steps\":[";
    write_trace(text);
  }
  void write_step(const Json& step) {
    start_trace();
    write_trace((trace_steps++ ? "," : "") + text_of(step));
  }

  bool read_step(const Json& step, Trajectory& into, std::string* error = nullptr) {
    raw.text = R"({"trace_id":"guard","steps":[)" + text_of(step) + "]}";
    raw.origin = RecordOrigin{"<mcp>", 1, 1, 0};
    ParseOutcome outcome = parser.parse(raw, into, [](Trajectory&) {});
    if (outcome.ok() && into.steps().size() == 1) return true;
    std::string why = outcome.errors.empty() ? "not one step" : outcome.errors.front().message;
    if (error) *error = why;
    else fmt::print(log, "guard: cannot read the step of {}: {}\n", step.value("tool", step.value("denied_tool", std::string())), why);
    return false;
  }

  std::string message_of(const Violation& v) const {
    const RuleInfo& info = *rules->rules()[v.rule].info;
    return info.message.empty() ? "denied by rule " + info.name : info.message;
  }
  void log_violation(std::string_view what, std::string_view tool, const Violation& v) {
    const RuleInfo& info = *rules->rules()[v.rule].info;
    std::string binding;
    for (const auto& [var, value] : v.binding) binding += fmt::format(" (${} = {})", var, value);
    fmt::print(log, "guard: {} {}: rule {}{} [{}] at {}{}\n", what, tool, info.name, binding, to_string(info.severity),
               info.location, info.message.empty() ? "" : ": " + info.message);
  }
  void log_decision(const Json& step, const Violation* v, std::string_view verdict, bool forwarded) {
    if (options.decision_log == nullptr && !otlp) return;
    const auto now = std::chrono::system_clock::now();
    detail::Decision decision;
    decision.decision_id = fmt::format("{}:{}", id_of_trace(), ++decisions);
    decision.trace_id = id_of_trace();
    decision.call_id = step["id"];
    decision.tool = step["tool"];
    decision.arguments = detail::masked_arguments(step["arguments"], options.log_arguments ? &options.mask_args : nullptr);
    decision.verdict = verdict;
    decision.mode = options.deny ? "enforce" : "observe";
    decision.forwarded = forwarded;
    decision.rule = v ? Json(rules->rules()[v->rule].info->name) : Json();
    decision.message = v ? Json(message_of(*v)) : Json();
    decision.rules_digest = options.rules_digest;
    const Json d = detail::decision_record(decision);
    if (options.decision_log != nullptr) detail::write_decision(options.decision_log, d);
    if (otlp) otlp->emit(guardrail_event(d, now));
  }
  // The decision as the OpenTelemetry event gen_ai.guardrail.result (docs/guard.md).
  static Json guardrail_event(const Json& d, std::chrono::system_clock::time_point time) {
    const Json& id = d["call_id"];
    const bool deny = d["verdict"] == "deny";
    const std::string body = d["message"].is_string() ? d["message"].get<std::string>() : d["verdict"].get<std::string>();
    return detail::event_record(
        "gen_ai.guardrail.result", time, deny, body,
        {{"gen_ai.conversation.id", d["trace_id"]},
         {"gen_ai.tool.name", d["tool"]},
         {"gen_ai.tool.call.id", id.is_string() ? id : Json(id.dump())},
         {"gen_ai.tool.call.arguments", d["arguments"].dump(-1, ' ', false, Json::error_handler_t::replace)},
         {"gen_ai.guardrail.result", d["verdict"]},
         {"gen_ai.guardrail.mode", d["mode"]},
         {"gen_ai.guardrail.rule", d["rule"]},
         {"trajcheck.decision_id", d["decision_id"]},
         {"trajcheck.forwarded", d["forwarded"]},
         {"trajcheck.rules_digest", d["rules_digest"]}});
  }
};

GuardSession::GuardSession(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, std::FILE* log)
    : impl_(std::make_unique<Impl>(std::move(rules), options, log)) {}
GuardSession::~GuardSession() {
  if (impl_->trace) std::fclose(impl_->trace);
}

bool GuardSession::open_trace(std::string* error) {
  Impl& m = *impl_;
  if (!m.options.otlp_endpoint.empty() && !m.otlp) {
    m.otlp = detail::OtlpEventExporter::open(m.options.otlp_endpoint, "trajcheck-guard", error);
    if (!m.otlp) {
      *error = "--otlp-endpoint " + *error;
      return false;
    }
  }
  if (m.options.trace_out.empty()) return true;
  m.trace = std::fopen(m.options.trace_out.c_str(), "ab+");
  if (m.trace == nullptr) {
    *error = fmt::format("cannot write the trace to {}: {}", m.options.trace_out, std::strerror(errno));
    return false;
  }
  // A record cut short (a guard killed outright) stays a line of its own: the next starts on a new line.
  if (std::fseek(m.trace, -1, SEEK_END) == 0 && std::fgetc(m.trace) != '\n') {
    std::fseek(m.trace, 0, SEEK_END);
    m.write_trace("\n");
  }
  std::fseek(m.trace, 0, SEEK_END);
  return !m.trace_failed;
}

void GuardSession::client_bytes(std::string_view bytes, Output& out) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->client_framer.feed(
      bytes, [&](std::string_view line) { impl_->on_client_message(line, out); }, [&] { impl_->too_long(out); });
}
void GuardSession::client_end(Output& out) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->client_framer.end([&](std::string_view line) { impl_->on_client_message(line, out); });
}
void GuardSession::server_bytes(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->server_framer.feed(
      bytes, [&](std::string_view line) { impl_->on_server_message(line); },
      [&] {
        ++impl_->stats.malformed;
        fmt::print(impl_->log, "guard: a server message longer than {} bytes was forwarded unread\n",
                   impl_->options.max_message_bytes);
      });
}
void GuardSession::server_end() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->server_framer.end([&](std::string_view line) { impl_->on_server_message(line); });
}

bool GuardSession::finish(GuardStats* stats) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  m.commit(true);
  m.in_flight.clear();
  const TraceVerdict& v = m.committed.finish();
  for (const RuleResult& r : v.results) {
    if (r.status != VerdictStatus::violated) continue;
    ++m.stats.violated_at_end;
    const RuleInfo& info = *m.rules->rules()[r.rule].info;
    fmt::print(m.log, "guard: at the end, rule {} [{}] is violated{}\n", info.name, to_string(info.severity),
               info.message.empty() ? "" : ": " + info.message);
  }
  const GuardStats& s = m.stats;
  fmt::print(m.log,
             "guard: {} tool calls, {} denied, {} results recorded, {} never answered, {} malformed messages, "
             "{} batches refused, {} messages refused\n",
             s.calls, s.denied, s.results, s.unanswered, s.malformed, s.batches_refused, s.refused);
  if (stats) *stats = s;
  bool exported = true;
  if (m.otlp) {  // events not delivered are evidence lost: said, and the session fails
    const detail::OtlpEventExporter::Result r = m.otlp->close();
    exported = r.lost == 0;
    if (exported)
      fmt::print(m.log, "guard: {} decision events exported to {}\n", r.sent, m.otlp->url());
    else
      fmt::print(m.log, "guard: {} of {} decision events could not be exported to {}: {}\n", r.lost, r.sent + r.lost,
                 m.otlp->url(), r.first_error);
    m.otlp.reset();
  }
  if (m.trace == nullptr) return exported;
  m.start_trace();
  m.write_trace("]}\n");
  const bool ok = !m.trace_failed && ::fsync(::fileno(m.trace)) == 0;
  const bool closed = std::fclose(m.trace) == 0;
  m.trace = nullptr;
  return ok && closed && exported;
}

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int sig) { g_signal = sig; }

// Reads fd until end of input, an error, or `stop` (checked every 100 ms), calling f(bytes).
template <class F>
void each_read(int fd, const std::atomic<bool>& stop, F&& f) {
  char chunk[65536];
  while (!stop && g_signal == 0) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    f(std::string_view(chunk, static_cast<std::size_t>(n)));
  }
}

}  // namespace

int run_guard(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, const std::vector<std::string>& command,
              std::FILE* in, std::FILE* out, std::FILE* log, GuardStats* stats) {
  if (command.empty()) {
    fmt::print(log, "guard: no server command given\n");
    return 2;
  }
  GuardSession session(std::move(rules), options, log);
  std::string error;
  if (!session.open_trace(&error)) {
    fmt::print(log, "guard: {}; the server was not started\n", error);
    return 2;
  }
  int to_server[2], from_server[2];
  if (::pipe(to_server) != 0 || ::pipe(from_server) != 0) {
    fmt::print(log, "guard: cannot make pipes: {}\n", std::strerror(errno));
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_server[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_server[1], 1);
  for (int fd : {to_server[0], to_server[1], from_server[0], from_server[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_server[0]);
  ::close(from_server[1]);
  if (rc != 0) {
    fmt::print(log, "guard: cannot start {}: {}\n", command[0], std::strerror(rc));
    ::close(to_server[1]);
    ::close(from_server[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a side that went away is seen as a failed write
  // SIGTERM/SIGINT end the session as the end of input does: the server is stopped, the
  // calls in flight are recorded, the trace is closed.
  g_signal = 0;
  struct sigaction stop_action {}, old_term {}, old_int {};
  stop_action.sa_handler = on_stop_signal;
  sigemptyset(&stop_action.sa_mask);
  ::sigaction(SIGTERM, &stop_action, &old_term);
  ::sigaction(SIGINT, &stop_action, &old_int);
  std::fflush(out);
  const int client_in = fileno(in), client_out = fileno(out);
  std::mutex out_mutex;
  auto to_client = [&](std::string_view text) {
    std::lock_guard<std::mutex> lock(out_mutex);
    write_all(client_out, text);
  };
  std::atomic<bool> server_gone{false};
  const std::atomic<bool> never{false};
  std::thread upstream([&] {
    bool open = true;
    GuardSession::Output o;
    auto send = [&] {
      if (!o.to_client.empty()) to_client(o.to_client);
      open = open && (o.to_server.empty() || write_all(to_server[1], o.to_server));
      o.to_client.clear();
      o.to_server.clear();
    };
    each_read(client_in, server_gone, [&](std::string_view bytes) {
      session.client_bytes(bytes, o);
      send();
    });
    if (!server_gone && g_signal == 0) {
      session.client_end(o);
      send();
    }
    ::close(to_server[1]);  // the client is done: so is the server's input
  });
  each_read(from_server[0], never, [&](std::string_view bytes) {
    to_client(bytes);
    session.server_bytes(bytes);
  });
  if (g_signal != 0) ::kill(pid, SIGTERM);
  else session.server_end();
  ::close(from_server[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  server_gone = true;  // a client still sending has nobody to talk to
  upstream.join();
  const bool written = session.finish(stats);
  const int sig = g_signal;
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGINT, &old_int, nullptr);
  if (!written) return 2;
  if (sig != 0) return 128 + sig;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace trajcheck
