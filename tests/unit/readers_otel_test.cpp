#include <doctest/doctest.h>

#include <fmt/format.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

TEST_CASE("otel: one trajectory per traceId, steps by start time, parent ids kept") {
  ReadResult r = read_file("formats/otel.json");
  REQUIRE(r.rejected == 0);
  CHECK(r.records == 1);
  REQUIRE(r.traces.size() == 2);
  const Trajectory& a = r.traces[0];
  CHECK(a.trace_id() == "5b8efff798038103d269b633813fc60c");
  // The totals: the root span's duration, the model calls' usage.
  CHECK(a.metadata() == R"({"resource":{"service.name":"support-agent","deployment.environment":"staging"},)"
                        R"("latency_ms":90,"tokens":812,"input_tokens":812})");
  REQUIRE(a.steps().size() == 3);
  // The chat span started first although the file lists it second.
  CHECK(a.steps()[0].type == StepType::other);
  CHECK(a.text(a.steps()[0].type_name) == "chat");
  CHECK(extra_of(a, 0).find(R"("gen_ai.usage.input_tokens":812)") != std::string::npos);

  CHECK(a.steps()[1].type == StepType::tool_call);
  CHECK(tool_of(a, 1) == "order_get");
  CHECK(id_of(a, 1) == "call_1");
  CHECK(args_of(a, 1) == R"({"order_id":"ord_81ks92"})");
  CHECK(result_of(a, 1) == R"({"status":"delayed"})");
  CHECK(a.steps()[1].status == StepStatus::ok);
  CHECK(extra_of(a, 1).find(R"("parent_id":"b1c2d3e4f5a60001")") != std::string::npos);
  CHECK(extra_of(a, 1).find(R"("latency_ms":184)") != std::string::npos);

  // Status code 2 is an error; the message is kept.
  CHECK(tool_of(a, 2) == "refund_order");
  CHECK(a.text(a.steps()[2].raw_tool) == "Refund_Order");
  CHECK(a.steps()[2].status == StepStatus::error);
  CHECK(a.steps()[2].result.empty());
  CHECK(extra_of(a, 2).find(R"("status_message":"payment gateway timeout")") != std::string::npos);

  const Trajectory& b = r.traces[1];
  CHECK(b.trace_id() == "0af7651916cd43dd8448eb211c80319c");
  REQUIRE(b.steps().size() == 1);
  CHECK(tool_of(b, 0) == "search_kb");
}

TEST_CASE("otel: a traceId of 32 hex digits is one trace whatever its case; another id is kept as written") {
  auto span = [](const char* trace, const char* tool, int start) {
    return fmt::format(R"({{"traceId":"{}","startTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.tool.name","value":{{"stringValue":"{}"}}}}]}})",
                       trace, start, tool);
  };
  ReadResult r = read_text(R"({"resourceSpans":[{"scopeSpans":[{"spans":[)" + span("5B8EFFF798038103D269B633813FC60C", "a", 1) +
                           "," + span("5b8efff798038103d269b633813fc60c", "b", 2) + "," + span("ABC", "c", 3) + "," +
                           span("abc", "d", 4) + "]}]}]}");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 3);
  CHECK(r.traces[0].trace_id() == "5b8efff798038103d269b633813fc60c");
  REQUIRE(r.traces[0].steps().size() == 2);
  CHECK(tool_of(r.traces[0], 1) == "b");
  CHECK(r.traces[1].trace_id() == "ABC");
  CHECK(r.traces[2].trace_id() == "abc");
}

TEST_CASE("otel: parse_value wants exactly one trace") {
  TraceParser p(NormalizeOptions{});
  ToolTable tools;
  Trajectory t(&tools);
  std::string two = R"({"resourceSpans":[{"scopeSpans":[{"spans":[
    {"traceId":"a","startTimeUnixNano":"1","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"x"}}]},
    {"traceId":"b","startTimeUnixNano":"2","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"y"}}]}]}]}]})";
  ParseOutcome o = p.parse_value(two, RecordOrigin{"score.jsonl", 3, 10, 0}, t);
  REQUIRE(o.errors.size() == 1);
  CHECK(o.errors[0].message == "expected one trajectory, found 2");
  CHECK(o.errors[0].where.line == 3);
}

TEST_CASE("otel: attribute values of every AnyValue kind, numeric times, string status codes") {
  ReadResult r = read_text(R"({"resourceSpans":[{"scopeSpans":[{"spans":[
    {"traceId":"t","spanId":"s1","startTimeUnixNano":5,"endTimeUnixNano":2000005,
     "status":{"code":"STATUS_CODE_ERROR"},
     "attributes":[
      {"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
      {"key":"gen_ai.tool.name","value":{"stringValue":"Lookup"}},
      {"key":"gen_ai.tool.call.arguments","value":{"kvlistValue":{"values":[{"key":"q","value":{"stringValue":"x"}}]}}},
      {"key":"n","value":{"intValue":"12345678901234567890"}},
      {"key":"d","value":{"doubleValue":0.5}},
      {"key":"b","value":{"boolValue":true}},
      {"key":"arr","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"2"}]}}}]}]}]}]})");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  REQUIRE(t.steps().size() == 1);
  CHECK(tool_of(t, 0) == "lookup");
  CHECK(args_of(t, 0) == R"({"q":"x"})");
  CHECK(t.steps()[0].status == StepStatus::error);
  CHECK(extra_of(t, 0) ==
        R"({"span_id":"s1","start_time_unix_nano":5,"end_time_unix_nano":2000005,"n":12345678901234567890,"d":0.5,"b":true,"arr":["a",2],"latency_ms":2})");
}

TEST_CASE("otel: shape errors") {
  ReadResult r = read_text(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}}]}]}]}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "execute_tool span has no gen_ai.tool.name");
  CHECK(r.errors[0].where.column == 44);

  r = read_text(R"({"resourceSpans":{}})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "\"resourceSpans\" must be an array");
}

TEST_CASE("otel: a record rejected after its spans were read emits nothing") {
  ReadResult r = read_text(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"x"}}]}]}]}]} junk)");
  CHECK(r.rejected == 1);
  CHECK(r.traces.empty());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "invalid JSON: unexpected content after the value");
  CHECK(r.errors[0].where.column == 136);

  ReadResult none = read_text(R"({"resourceSpans":[],"schemaUrl":"x"})");
  CHECK(none.rejected == 0);
  REQUIRE(none.traces.size() == 1);
  CHECK(none.traces[0].steps().empty());
  CHECK(none.traces[0].metadata() == R"({"schemaUrl":"x"})");
}
