// ServeCore (trajcheck/serve.hpp) without sockets: OTLP export requests in, verdicts out, with
// a clock of the test's own — the idle rule, the caps and their evictions, refusals, reload.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/serve.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;

namespace {

std::shared_ptr<const RuleSet> serve_rules(std::string text) {
  std::vector<Source> s;
  s.emplace_back("serve.rules", std::move(text));
  RuleSetResult r = compile_rule_set(std::move(s));
  REQUIRE(r.ok());
  return r.rules;
}

// One export request with spans of `trace` (each: span id, parent, start, end, tool or "").
struct SpanSpec {
  std::string id, parent;
  int start, end;
  std::string tool;
};
std::string serve_request(const std::string& trace, const std::vector<SpanSpec>& spans) {
  std::string s = R"({"resourceSpans":[{"scopeSpans":[{"spans":[)";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const SpanSpec& p = spans[i];
    if (i) s += ',';
    s += fmt::format(R"({{"traceId":"{}","spanId":"{}","parentSpanId":"{}","name":"s","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[)",
                     trace, p.id, p.parent, p.start, p.end);
    if (!p.tool.empty())
      s += fmt::format(R"({{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},{{"key":"gen_ai.tool.name","value":{{"stringValue":"{}"}}}})",
                       p.tool);
    s += "]}";
  }
  return s + "]}]}]}";
}

struct ServeHarness {
  std::uint64_t now = 0;
  std::vector<std::string> jsonl, warnings;
  std::unique_ptr<ServeCore> core;
  explicit ServeHarness(ServeOptions o = {}, std::string rules = "lookup precedes refund\n") {
    o.clock = [this] { return now; };
    core = std::make_unique<ServeCore>(serve_rules(std::move(rules)), o, [this](const ServeVerdict& v) {
      jsonl.push_back(v.jsonl);
      if (!v.warnings.empty()) warnings.push_back(v.warnings);
    });
  }
  int post(const std::string& body) { return core->post_traces("application/json", body).status; }
};

const std::string kTraceA = "0af7651916cd43dd8448eb211c80319c";
const std::string kTraceB = "4bf92f3577b34da6a3ce929d0e0e4736";

}  // namespace

TEST_CASE("serve: a trace is checked once its root ended and it was idle, parts joined") {
  ServeOptions o;
  o.idle_ms = 1000;
  ServeHarness h(o);
  CHECK(h.post(serve_request(kTraceA, {{"c1", "r", 10, 11, "refund"}})) == 200);
  CHECK(h.post(serve_request(kTraceA, {{"c2", "r", 5, 6, "lookup"}})) == 200);
  h.now = 5000;
  CHECK(h.core->poll() == 0);  // no root yet
  CHECK(h.post(serve_request(kTraceA, {{"r", "", 1, 20, ""}})) == 200);
  h.now = 5999;
  CHECK(h.core->poll() == 0);
  h.now = 6000;
  CHECK(h.core->poll() == 1);
  REQUIRE(h.jsonl.size() == 1);
  // Joined by start time: lookup (5) before refund (10): the rule holds.
  CHECK(h.jsonl[0].rfind("{\"trace_id\":\"" + kTraceA + "\",\"status\":\"pass\"", 0) == 0);
  CHECK(h.jsonl[0].back() == '\n');
  ServeCore::Counters c = h.core->counters();
  CHECK(c.traces_checked == 1);
  CHECK(c.spans == 3);
  CHECK(c.open_traces == 0);
  CHECK(c.spans_held == 0);
}

TEST_CASE("serve: shutdown checks every open trace; violations are counted in the metrics") {
  ServeHarness h;
  CHECK(h.post(serve_request(kTraceA, {{"c1", "r", 1, 2, "refund"}, {"c2", "r", 3, 4, "lookup"}})) == 200);
  CHECK(h.post(serve_request(kTraceB, {{"c1", "r", 1, 2, "lookup"}})) == 200);
  CHECK(h.core->counters().open_traces == 2);
  CHECK(h.core->counters().spans_held == 3);
  const std::string before = h.core->metrics();
  CHECK(before.find("trajcheck_serve_open_traces 2\n") != std::string::npos);
  CHECK(before.find("trajcheck_serve_spans_held 3\n") != std::string::npos);
  CHECK(h.core->finish() == 2);
  REQUIRE(h.jsonl.size() == 2);
  CHECK(h.jsonl[0].find("\"status\":\"fail\"") != std::string::npos);
  CHECK(h.jsonl[1].find("\"status\":\"pass\"") != std::string::npos);
  const std::string m = h.core->metrics();
  CHECK(m.find("trajcheck_serve_traces_checked_total{status=\"fail\"} 1\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_traces_checked_total{status=\"pass\"} 1\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_violations_total{rule=\"lookup precedes refund\",severity=\"error\"} 1\n") !=
        std::string::npos);
  CHECK(m.find("trajcheck_serve_open_traces 0\n") != std::string::npos);
  CHECK(m.find("# TYPE trajcheck_serve_violations_total counter\n") != std::string::npos);
  CHECK(m.find("process_resident_memory_bytes ") != std::string::npos);
}

TEST_CASE("serve: bad payloads are refused with a reason and counted") {
  ServeHarness h;
  ServeReply r = h.core->post_traces("application/json", "{not json");
  CHECK(r.status == 400);
  CHECK(r.body.find("\"message\"") != std::string::npos);
  r = h.core->post_traces("application/json", R"({"steps":[{"type":"tool_call","tool":"x"}]})");
  CHECK(r.status == 400);
  CHECK(r.body.find("not an OTLP trace export") != std::string::npos);
  r = h.core->post_traces("application/x-protobuf", std::string("\x0a\x05\x12", 3));  // cut short
#if TRAJCHECK_OTLP_PROTOBUF
  CHECK(r.status == 400);
  CHECK(r.content_type == "application/x-protobuf");  // a google.rpc.Status, as the request was protobuf
  CHECK(r.body.find("ExportTraceServiceRequest") != std::string::npos);
#else
  CHECK(r.status == 415);
  CHECK(r.body.find("built without protobuf") != std::string::npos);
#endif
  r = h.core->post_traces("text/plain", "{}");
  CHECK(r.status == 415);
  CHECK(r.body.find("or protobuf (application/x-protobuf)") != std::string::npos);
  CHECK(h.core->post_traces("Application/JSON; charset=utf-8", serve_request(kTraceA, {{"r", "", 1, 2, "lookup"}}))
            .status == 200);
  CHECK(h.core->counters().rejected == 4);
  const std::string m = h.core->metrics();
#if TRAJCHECK_OTLP_PROTOBUF
  CHECK(m.find("trajcheck_serve_rejected_total{reason=\"bad_request\"} 3\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_rejected_total{reason=\"unsupported_media_type\"} 1\n") != std::string::npos);
#else
  CHECK(m.find("trajcheck_serve_rejected_total{reason=\"bad_request\"} 2\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_rejected_total{reason=\"unsupported_media_type\"} 2\n") != std::string::npos);
#endif
  CHECK(h.jsonl.empty());  // nothing of a refused request was kept
  CHECK(h.core->finish() == 1);
  h.core->drain();
  r = h.core->post_traces("application/json", serve_request(kTraceB, {{"r", "", 1, 2, "lookup"}}));
  CHECK(r.status == 503);
  CHECK(r.retry_after_s > 0);
}

TEST_CASE("serve: caps evict, with a warning and counted, or push back with Retry-After") {
  ServeOptions o;
  o.idle_ms = 1000;
  o.max_open_traces = 1;
  o.max_spans_per_trace = 2;
  ServeHarness h(o);
  CHECK(h.post(serve_request(kTraceA, {{"c1", "r", 1, 2, "refund"}})) == 200);
  // B would be a second open trace and A is not idle yet: 503, nothing of B kept.
  ServeReply r = h.core->post_traces("application/json", serve_request(kTraceB, {{"c1", "r", 1, 2, "lookup"}}));
  CHECK(r.status == 503);
  CHECK(r.retry_after_s == 1);
  CHECK(h.jsonl.empty());
  // Once A has been idle for idle_ms it is evicted (checked as it is) to make room.
  h.now = 1000;
  CHECK(h.post(serve_request(kTraceB, {{"c1", "r", 1, 2, "lookup"}})) == 200);
  REQUIRE(h.jsonl.size() == 1);
  CHECK(h.jsonl[0].find(kTraceA) != std::string::npos);
  REQUIRE(h.warnings.size() == 1);
  CHECK(h.warnings[0].find("POST /v1/traces:1:1: warning: OTLP trace " + kTraceA + " is evicted: more than 1 open traces") == 0);
  // B passes its span cap: checked at once, as it is.
  CHECK(h.post(serve_request(kTraceB, {{"c2", "r", 3, 4, "refund"}, {"c3", "r", 5, 6, "refund"}})) == 200);
  REQUIRE(h.jsonl.size() == 2);
  CHECK(h.jsonl[1].find(kTraceB) != std::string::npos);
  CHECK(h.warnings.back().find("is evicted: more than 2 spans") != std::string::npos);
  const ServeCore::Counters c = h.core->counters();
  CHECK(c.evicted == 2);
  CHECK(c.open_traces == 0);
  const std::string m = h.core->metrics();
  CHECK(m.find("trajcheck_serve_evictions_total{cause=\"open_traces\"} 1\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_evictions_total{cause=\"spans_per_trace\"} 1\n") != std::string::npos);
  CHECK(m.find("trajcheck_serve_rejected_total{reason=\"full\"} 1\n") != std::string::npos);
}

TEST_CASE("serve: reloaded rules check the traces from then on") {
  ServeHarness h;
  CHECK(h.post(serve_request(kTraceA, {{"r", "", 1, 9, ""}, {"c1", "r", 2, 3, "refund"}})) == 200);
  h.core->reload(serve_rules("forbid refund\n"));
  h.core->finish();
  REQUIRE(h.jsonl.size() == 1);
  CHECK(h.jsonl[0].find("\"rule\":\"forbid refund\"") != std::string::npos);
  CHECK(h.core->counters().reloads == 1);
}

TEST_CASE("serve: verdicts as decision-log lines, one per violation or an allow per trace") {
  const std::string digest = "sha256:0123";
  std::vector<std::string> lines;
  DecisionLogArguments args;
  auto core = std::make_unique<ServeCore>(
      serve_rules("rule order: lookup precedes refund\nrule no_refund:\n    forbid refund\n    message \"refunds need a person\"\n"),
      ServeOptions{}, [&](const ServeVerdict& v) { lines.push_back(serve_decision_lines(v, digest, args)); });
  // A: refund (with arguments and a call id) before lookup: both rules violated at the refund.
  std::string a = serve_request(kTraceA, {{"r", "", 1, 9, ""}, {"c1", "r", 2, 3, "refund"}, {"c2", "r", 4, 5, "lookup"}});
  const std::string attrs = R"({"key":"gen_ai.tool.name","value":{"stringValue":"refund"}})";
  a.replace(a.find(attrs), attrs.size(),
            attrs + R"(,{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_7"}},)"
                    R"({"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order_id\":\"o1\",\"card\":{\"pan\":\"4111\"}}"}})");
  CHECK(core->post_traces("application/json", a).status == 200);
  CHECK(core->post_traces("application/json", serve_request(kTraceB, {{"r", "", 1, 9, ""}, {"c1", "r", 2, 3, "lookup"}}))
            .status == 200);
  core->finish();
  REQUIRE(lines.size() == 2);
  auto parse_lines = [](const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(nlohmann::json::parse(l));
    return out;
  };
  const auto fail = parse_lines(lines[0]);
  REQUIRE(fail.size() == 2);
  for (std::size_t i = 0; i < fail.size(); ++i) {
    const nlohmann::json& d = fail[i];
    CHECK(d["decision_id"] == kTraceA + ":" + std::to_string(i + 1));
    CHECK(d["trace_id"] == kTraceA);
    CHECK(d["verdict"] == "deny");
    CHECK(d["mode"] == "observe");
    CHECK(d["forwarded"] == true);
    CHECK(d["rules_digest"] == digest);
    CHECK(d["call_id"] == "call_7");
    CHECK(d["tool"] == "refund");
    CHECK(d["arguments"] == nlohmann::json::parse(R"({"order_id":"***","card":{"pan":"***"}})"));
    CHECK(d["time"].get<std::string>().size() == 24);  // 2026-07-01T09:12:05.118Z
  }
  CHECK(fail[0]["rule"] == "order");
  CHECK(fail[0]["message"] == "violates rule order");
  CHECK(fail[1]["rule"] == "no_refund");
  CHECK(fail[1]["message"] == "refunds need a person");
  const auto pass = parse_lines(lines[1]);
  REQUIRE(pass.size() == 1);
  CHECK(pass[0]["decision_id"] == kTraceB + ":1");
  CHECK(pass[0]["verdict"] == "allow");
  for (const char* k : {"call_id", "tool", "arguments", "rule", "message"}) CHECK(pass[0][k].is_null());
  // --log-arguments full with --mask-arg card: the arguments as called, but card's value.
  lines.clear();
  args.full = true;
  args.mask = {"card"};
  core = std::make_unique<ServeCore>(serve_rules("forbid refund\n"), ServeOptions{},
                                     [&](const ServeVerdict& v) { lines.push_back(serve_decision_lines(v, digest, args)); });
  CHECK(core->post_traces("application/json", a).status == 200);
  core->finish();
  REQUIRE(lines.size() == 1);
  CHECK(parse_lines(lines[0]).at(0)["arguments"] == nlohmann::json::parse(R"({"order_id":"o1","card":"***"})"));
}
