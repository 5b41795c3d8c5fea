// --context KEY=VALUE: overrides replace the source's keys and reach conditions.
#include <doctest/doctest.h>

#include "trajcheck/run.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"

using namespace trajcheck;

namespace {
std::string parse_context(const NormalizeOptions& o, const std::string& record, Trajectory& t) {
  TraceParser parser(o);
  RawRecord rec;
  rec.text = record;
  rec.origin.file = "t.jsonl";
  rec.origin.line = 1;
  std::string ctx;
  ParseOutcome out = parser.parse(rec, t, [&](Trajectory& tr) { ctx = std::string(tr.context()); });
  REQUIRE(out.ok());
  return ctx;
}
}  // namespace

TEST_CASE("VALUE is JSON when it parses, else a string") {
  CHECK(context_value_json("u_17") == "\"u_17\"");
  CHECK(context_value_json("17") == "17");
  CHECK(context_value_json("\"17\"") == "\"17\"");
  CHECK(context_value_json("true") == "true");
  CHECK(context_value_json("") == "\"\"");
  CHECK(context_value_json("{\"a\": 1}") == "{\"a\":1}");
}

TEST_CASE("overrides replace the trace's own keys and keep the others") {
  ToolTable tools;
  Trajectory t(&tools);
  NormalizeOptions o;
  o.context_overrides = {{"user_id", "\"u_9\""}, {"region", "\"eu\""}};
  std::string ctx = parse_context(
      o, R"({"trace_id":"a","context":{"user_id":"u_1","tenant":"acme"},"steps":[]})", t);
  CHECK(ctx == R"({"tenant":"acme","user_id":"u_9","region":"eu"})");
  ctx = parse_context(o, R"({"trace_id":"b","steps":[]})", t);
  CHECK(ctx == R"({"user_id":"u_9","region":"eu"})");
}

TEST_CASE("the trace's own members are kept as read, numbers beyond 64 bits included") {
  ToolTable tools;
  Trajectory t(&tools);
  NormalizeOptions o;
  o.context_overrides = {{"user_id", "\"u_9\""}};
  std::string ctx = parse_context(
      o,
      R"({"trace_id":"a","context":{"tenant":"acme","quota":12345678901234567890123,"ratio":1.50,)"
      R"("limits":{"max": 1e400 },"tags":["a", "b\u0041"],"user_id":"u_1","ok":true,"none":null},"steps":[]})",
      t);
  // (The reader itself drops the blanks and decodes the escape, as without an override.)
  CHECK(ctx == R"({"tenant":"acme","quota":12345678901234567890123,"ratio":1.50,"limits":{"max":1e400},)"
               R"("tags":["a","bA"],"ok":true,"none":null,"user_id":"u_9"})");
}

TEST_CASE("a rule on context.* sees the override") {
  CompileResult r = compile(Source("c.rules", "forbid get_order_details where arguments.user_id != context.user_id\n"));
  REQUIRE(r.ok());
  ToolTable tools;
  Trajectory t(&tools);
  NormalizeOptions o;
  o.context_overrides = {{"user_id", "\"u_2\""}};
  TraceParser parser(o);
  RawRecord rec;
  rec.text = R"({"trace_id":"x","context":{"user_id":"u_1"},"steps":[)"
             R"({"type":"tool_call","tool":"get_order_details","arguments":{"user_id":"u_1"}}]})";
  Checker checker(r.program);
  std::vector<RuleResult> results;
  REQUIRE(parser.parse(rec, t, [&](Trajectory& tr) { checker.check(tr, results); }).ok());
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == VerdictStatus::violated);
  CHECK(results[0].steps == std::vector<std::uint32_t>{0});
}
