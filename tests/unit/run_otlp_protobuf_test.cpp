// OTLP/HTTP protobuf (run/otlp_protobuf.hpp): requests built with the generated OTLP messages
// decode to the OTLP JSON encoding (hex ids, integer enums, lowerCamelCase keys), which serve
// reads as it reads the JSON an exporter sends: the same steps, the same verdicts.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run/otlp_protobuf.hpp"
#include "trajcheck/serve.hpp"

#if TRAJCHECK_OTLP_PROTOBUF

#include <google/protobuf/unknown_field_set.h>

#include <opentelemetry/proto/collector/trace/v1/trace_service.pb.h>

using namespace trajcheck;
namespace otlp = opentelemetry::proto;

namespace {

const std::string kTrace("\x4b\xf9\x2f\x35\x77\xb3\x4d\xa6\xa3\xce\x92\x9d\x0e\x0e\x47\x36", 16);
const std::string kTraceHex = "4bf92f3577b34da6a3ce929d0e0e4736";
std::string span_id(char last) { return std::string("\x00\xf0\x67\xaa\x0b\xa9\x02", 7) + last; }

void string_attr(otlp::trace::v1::Span* s, const std::string& key, const std::string& value) {
  auto* kv = s->add_attributes();
  kv->set_key(key);
  kv->mutable_value()->set_string_value(value);
}

otlp::trace::v1::Span* tool_span(otlp::trace::v1::ScopeSpans* ss, char id, std::uint64_t start, const std::string& tool,
                                 const std::string& args) {
  auto* s = ss->add_spans();
  s->set_trace_id(kTrace);
  s->set_span_id(span_id(id));
  s->set_parent_span_id(span_id('\x01'));
  s->set_name("execute_tool " + tool);
  s->set_kind(otlp::trace::v1::Span::SPAN_KIND_CLIENT);
  s->set_start_time_unix_nano(start);
  s->set_end_time_unix_nano(start + 1000);
  string_attr(s, "gen_ai.operation.name", "execute_tool");
  string_attr(s, "gen_ai.tool.name", tool);
  string_attr(s, "gen_ai.tool.call.id", "call_" + std::to_string(static_cast<int>(id)));
  string_attr(s, "gen_ai.tool.call.arguments", args);
  return s;
}

// A refund agent's run: the root span, then refund_order (failed) before lookup.
otlp::collector::trace::v1::ExportTraceServiceRequest refund_run() {
  otlp::collector::trace::v1::ExportTraceServiceRequest req;
  auto* rs = req.add_resource_spans();
  auto* res = rs->mutable_resource()->add_attributes();
  res->set_key("service.name");
  res->mutable_value()->set_string_value("refund-agent");
  auto* ss = rs->add_scope_spans();
  ss->mutable_scope()->set_name("refund-agent");
  auto* root = ss->add_spans();
  root->set_trace_id(kTrace);
  root->set_span_id(span_id('\x01'));
  root->set_name("invoke_agent refunds");
  root->set_kind(otlp::trace::v1::Span::SPAN_KIND_INTERNAL);
  root->set_start_time_unix_nano(1700000000000000000ULL);
  root->set_end_time_unix_nano(1700000009000000000ULL);
  auto* refund = tool_span(ss, '\x02', 1700000001000000000ULL, "refund_order", R"({"order_id":"ord_1","amount":20})");
  refund->mutable_status()->set_code(otlp::trace::v1::Status::STATUS_CODE_ERROR);
  refund->mutable_status()->set_message("refund refused");
  auto* retries = refund->add_attributes();
  retries->set_key("retries");
  retries->mutable_value()->set_int_value(2);
  auto* link = refund->add_links();
  link->set_trace_id(std::string(16, '\x0a'));
  link->set_span_id(std::string(8, '\xb7'));
  tool_span(ss, '\x03', 1700000003000000000ULL, "lookup", R"({"order_id":"ord_1"})");
  return req;
}

// The same spans as an OTLP/HTTP JSON exporter writes them.
const char* kRefundRunJson = R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"refund-agent"}}]},
"scopeSpans":[{"scope":{"name":"refund-agent"},"spans":[
{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba90201","name":"invoke_agent refunds","kind":1,
 "startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000009000000000"},
{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba90202","parentSpanId":"00f067aa0ba90201",
 "name":"execute_tool refund_order","kind":3,"startTimeUnixNano":"1700000001000000000","endTimeUnixNano":"1700000001000001000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
  {"key":"gen_ai.tool.name","value":{"stringValue":"refund_order"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_2"}},
  {"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order_id\":\"ord_1\",\"amount\":20}"}},
  {"key":"retries","value":{"intValue":"2"}}],
 "links":[{"traceId":"0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a","spanId":"b7b7b7b7b7b7b7b7"}],
 "status":{"message":"refund refused","code":2}},
{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba90203","parentSpanId":"00f067aa0ba90201",
 "name":"execute_tool lookup","kind":3,"startTimeUnixNano":"1700000003000000000","endTimeUnixNano":"1700000003000001000",
 "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
  {"key":"gen_ai.tool.name","value":{"stringValue":"lookup"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_3"}},
  {"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"order_id\":\"ord_1\"}"}}]}]}]}]})";

struct Seen {
  std::vector<std::string> jsonl;
  std::vector<nlohmann::json> steps;  // every step of every trace: type, tool, id, arguments, result, extra
};

Seen serve_once(std::string_view content_type, std::string_view body) {
  std::vector<Source> src;
  src.emplace_back("p.rules", "rule order: lookup precedes refund_order\nrule ok: refund_order at most 1\n");
  auto rules = compile_rule_set(std::move(src)).rules;
  REQUIRE(rules);
  Seen seen;
  ServeCore core(rules, {}, [&](const ServeVerdict& v) {
    seen.jsonl.push_back(v.jsonl);
    for (const Step& s : v.trace->steps()) {
      auto text = [&](Slice x) { return std::string(v.trace->text(x)); };
      auto parsed = [&](Slice x) { return x.len ? nlohmann::json::parse(text(x)) : nlohmann::json(); };
      seen.steps.push_back({{"type", static_cast<int>(s.type)}, {"status", static_cast<int>(s.status)},
                            {"tool", text(s.tool_name)}, {"id", text(s.id)}, {"arguments", parsed(s.arguments)},
                            {"result", parsed(s.result)}, {"extra", parsed(s.extra)}});
    }
  });
  const ServeReply r = core.post_traces(content_type, body);
  CHECK(r.status == 200);
  core.finish();
  return seen;
}

}  // namespace

TEST_CASE("otlp protobuf: decoded as OTLP JSON: hex ids, integer enums, camelCase keys") {
  std::string json, error;
  REQUIRE(detail::otlp_protobuf_available());
  REQUIRE(detail::otlp_traces_protobuf_to_json(refund_run().SerializeAsString(), &json, &error));
  const nlohmann::json doc = nlohmann::json::parse(json);
  const nlohmann::json& spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"];
  REQUIRE(spans.size() == 3);
  CHECK(spans[0]["traceId"] == kTraceHex);  // not base64 ("S/kvNXezTaajzpKdDg5HNg==")
  CHECK(spans[0]["spanId"] == "00f067aa0ba90201");
  CHECK_FALSE(spans[0].contains("parentSpanId"));  // a root span: no parent
  CHECK(spans[1]["parentSpanId"] == "00f067aa0ba90201");
  CHECK(spans[0]["kind"] == 1);  // SPAN_KIND_INTERNAL as its number
  CHECK(spans[1]["kind"] == 3);
  CHECK(spans[1]["status"]["code"] == 2);  // STATUS_CODE_ERROR
  CHECK(spans[1]["startTimeUnixNano"] == "1700000001000000000");
  CHECK(spans[1]["links"][0]["traceId"] == "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a");
  CHECK(spans[1]["links"][0]["spanId"] == "b7b7b7b7b7b7b7b7");
  CHECK(spans[1]["attributes"][4]["value"]["intValue"] == "2");
  CHECK(doc["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"] == "refund-agent");
}

TEST_CASE("otlp protobuf: serve reads the same steps and gives the same verdicts as from JSON") {
  const Seen from_json = serve_once("application/json", kRefundRunJson);
  const Seen from_protobuf = serve_once("application/x-protobuf", refund_run().SerializeAsString());
  REQUIRE(from_json.jsonl.size() == 1);
  CHECK(from_json.jsonl[0].find("\"status\":\"fail\"") != std::string::npos);
  CHECK(from_protobuf.jsonl == from_json.jsonl);
  REQUIRE(from_json.steps.size() >= 2);
  CHECK(from_protobuf.steps == from_json.steps);
}

TEST_CASE("otlp protobuf: what does not decode is refused with the reason") {
  std::string json, error;
  CHECK_FALSE(detail::otlp_traces_protobuf_to_json(std::string("\x0a\x05\x12", 3), &json, &error));  // cut short
  CHECK(error.find("ExportTraceServiceRequest") != std::string::npos);
  error.clear();
  CHECK_FALSE(detail::otlp_traces_protobuf_to_json("\xff\xff\xff", &json, &error));
  CHECK_FALSE(error.empty());
  // A span name that is not UTF-8: proto3 refuses it, and protobuf's own reason is kept.
  auto req = refund_run();
  req.mutable_resource_spans(0)->mutable_scope_spans(0)->mutable_spans(0)->set_name("bad \xc3\x28");
  const std::string bytes = req.SerializeAsString();  // (protobuf logs a warning writing it)
  error.clear();
  CHECK_FALSE(detail::otlp_traces_protobuf_to_json(bytes, &json, &error));
  CHECK(error.find("UTF-8") != std::string::npos);
  // An empty request is a request with no spans (serve answers it as it answers {} in JSON).
  CHECK(detail::otlp_traces_protobuf_to_json("", &json, &error));
  CHECK(json == "{}");
}

TEST_CASE("otlp protobuf: a refused request's google.rpc.Status") {
  const std::string body = detail::otlp_status_protobuf(3, "not an OTLP ExportTraceServiceRequest");
  google::protobuf::UnknownFieldSet fields;
  REQUIRE(fields.ParseFromString(body));
  REQUIRE(fields.field_count() == 2);
  CHECK(fields.field(0).number() == 1);
  CHECK(fields.field(0).varint() == 3);
  CHECK(fields.field(1).number() == 2);
  CHECK(fields.field(1).length_delimited() == "not an OTLP ExportTraceServiceRequest");
  // In serve: a protobuf request is answered in protobuf, 200 with an empty ExportTraceServiceResponse.
  std::vector<Source> src;
  src.emplace_back("p.rules", "forbid refund_order\n");
  ServeCore core(compile_rule_set(std::move(src)).rules, {}, nullptr);
  ServeReply ok = core.post_traces("application/x-protobuf", refund_run().SerializeAsString());
  CHECK(ok.status == 200);
  CHECK(ok.content_type == "application/x-protobuf");
  CHECK(ok.body.empty());
  ServeReply bad = core.post_traces("application/x-protobuf", "\xff\xff\xff");
  CHECK(bad.status == 400);
  CHECK(bad.content_type == "application/x-protobuf");
  google::protobuf::UnknownFieldSet status;
  REQUIRE(status.ParseFromString(bad.body));
  CHECK(status.field(0).varint() == 3);  // INVALID_ARGUMENT
  CHECK(core.metrics().find("trajcheck_serve_rejected_total{reason=\"bad_request\"} 1\n") != std::string::npos);
  CHECK(core.metrics().find("trajcheck_serve_protobuf_requests_total 2\n") != std::string::npos);
  CHECK(core.counters().protobuf_requests == 2);
  CHECK(core.post_traces("application/json", kRefundRunJson).status == 200);
  CHECK(core.counters().requests == 3);
  CHECK(core.counters().protobuf_requests == 2);
}

#else

TEST_CASE("otlp protobuf: a build without protobuf says so") {
  std::string json, error;
  CHECK_FALSE(trajcheck::detail::otlp_protobuf_available());
  CHECK_FALSE(trajcheck::detail::otlp_traces_protobuf_to_json("", &json, &error));
  CHECK(error.find("without protobuf") != std::string::npos);
}

#endif
