#include <doctest/doctest.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

TEST_CASE("list: strings, {name}, {function: name}, {function: {name, arguments}}, tool_calls objects") {
  ReadResult r = read_file("formats/list.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 3);
  const Trajectory& gold = r.traces[0];
  CHECK(gold.trace_id() == std::string(data_path("formats/list.jsonl")) + ":1");
  REQUIRE(gold.steps().size() == 2);
  CHECK(tool_of(gold, 0) == "find_user_id_by_name_zip");
  CHECK(args_of(gold, 0) == R"({"first_name":"Yusuf","last_name":"Rossi","zip":"19122"})");  // tau-bench "kwargs"
  CHECK(gold.steps()[0].result.empty());

  const Trajectory& fn = r.traces[1];
  REQUIRE(fn.steps().size() == 2);
  CHECK(tool_of(fn, 0) == "get_weather");
  CHECK(tool_of(fn, 1) == "book_table");
  CHECK(args_of(fn, 1) == R"({"time":"21:00"})");

  const Trajectory& wrapped = r.traces[2];
  CHECK(wrapped.trace_id() == "expected_3");
  REQUIRE(wrapped.steps().size() == 2);
  CHECK(id_of(wrapped, 0) == "call_1");
  CHECK(args_of(wrapped, 0) == R"({"order_id":"ord_1"})");
  CHECK(tool_of(wrapped, 1) == "refund_order");
}

TEST_CASE("list: a bare array of names in a .json file is one trajectory") {
  ReadResult r = read_file("formats/list.json");
  CHECK(r.records == 1);
  REQUIRE(r.traces.size() == 1);
  REQUIRE(r.traces[0].steps().size() == 4);
  CHECK(tool_of(r.traces[0], 3) == "cancel_pending_order");
}

TEST_CASE("list: parse_value reads the `expected` side of score records in every shape") {
  TraceParser p(NormalizeOptions{});
  ToolTable tools;
  Trajectory t(&tools);
  RecordOrigin where{"score.jsonl", 4, 30, 3};
  struct Case {
    const char* json;
    std::vector<std::string> tools;
  };
  std::vector<Case> cases = {
      {R"(["Order_Get", "refund_order"])", {"order_get", "refund_order"}},
      {R"([{"name":"a","arguments":{"x":1}},{"function":"b"}])", {"a", "b"}},
      {R"([{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"1","function":{"name":"c","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"ok"}])",
       {"c"}},
      {R"({"traj":[{"role":"assistant","content":"","tool_calls":[{"id":"1","function":{"name":"d","arguments":"{}"}}]}]})", {"d"}},
      {R"({"steps":[{"type":"tool_call","tool":"e"}]})", {"e"}},
      {R"([])", {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    ParseOutcome o = p.parse_value(c.json, where, t);
    REQUIRE(o.ok());
    CHECK(o.traces == 1);
    std::vector<std::string> got;
    for (const Step& s : t.steps())
      if (s.type == StepType::tool_call) got.emplace_back(t.text(s.tool_name));
    CHECK(got == c.tools);
  }
  ParseOutcome bad = p.parse_value(R"("order_get -> refund")", where, t);
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message.find("the record is a JSON string") != std::string::npos);
  CHECK(bad.errors[0].where.line == 4);
  CHECK(bad.errors[0].where.column == 30);

  bad = p.parse_value(R"([1, 2])", where, t);
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message.rfind("not a known trace shape", 0) == 0);

  NormalizeOptions forced;
  forced.format = InputFormat::list;
  TraceParser pl(forced);
  bad = pl.parse_value(R"(["a", 3])", where, t);
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message == "a tool list entry must be a tool name or an object with \"name\" or \"function\"");
  CHECK(bad.errors[0].where.column == 30 + 6);
}
