// Calls issued in one turn (parallel tool calls of one assistant message) are unordered for
// the ordering statements: a step is before another only when its turn ended first.
#include <doctest/doctest.h>

#include <string>

#include "trajcheck/metrics.hpp"
#include "trajcheck/monitor.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {

// The status (and witnesses) of the one rule of `rules` on `trace`.
std::string verdict(const std::string& rules, const Trajectory& trace) {
  CheckOutcome o = satisfies(Rules::text(rules), trace);
  REQUIRE(o.results.size() == 1);
  std::string out(to_string(o.results[0].status));
  for (std::uint32_t s : o.results[0].steps) out += " " + std::to_string(s);
  return out;
}

// user, then order_get and refund_order in one message (turn 1).
Trace parallel_lookup_and_refund() {
  return TraceBuilder{}
      .user("refund ord_1").set("turn", "0")
      .call("order_get", R"({"order_id":"ord_1"})").set("turn", "1")
      .call("refund_order", R"({"order_id":"ord_1"})").set("turn", "1")
      .build();
}

}  // namespace

TEST_CASE("turns: an A in the same turn does not precede B") {
  Trace t = parallel_lookup_and_refund();
  CHECK(verdict("order_get precedes refund_order", t) == "violated 2");
  Trace seq = TraceBuilder{}
                  .user("refund ord_1")
                  .call("order_get", R"({"order_id":"ord_1"})")
                  .call("refund_order", R"({"order_id":"ord_1"})")
                  .build();
  CHECK(verdict("order_get precedes refund_order", seq) == "satisfied");
  // Parametric (lazy slices): the same for the order's own lookup.
  CHECK(verdict("order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o", t) ==
        "violated 2");
  CHECK(verdict("order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o", seq) ==
        "satisfied");
}

TEST_CASE("turns: followed by and never followed by need a later turn") {
  Trace t = TraceBuilder{}
                .call("a").set("turn", "1")
                .call("b").set("turn", "1")
                .call("c").set("turn", "2")
                .build();
  CHECK(verdict("a is followed by b", t) == "violated 0");
  CHECK(verdict("a is followed by c", t) == "satisfied");
  CHECK(verdict("a is never followed by b", t) == "satisfied");
  CHECK(verdict("a is never followed by c", t) == "violated 0 2");
  // Steps binding nothing (`c`) are logged once and caught up by the slices.
  CHECK(verdict("a where arguments.x == $v is followed by b | c", TraceBuilder{}
                                                                      .call("a", R"({"x":1})").set("turn", "1")
                                                                      .call("b").set("turn", "1")
                                                                      .call("x").set("turn", "2")
                                                                      .build()) == "violated 0");
}

TEST_CASE("turns: immediately precedes / followed by look at the adjacent turn") {
  // turn 1: a, x; turn 2: b, y; turn 3: z
  Trace t = TraceBuilder{}
                .call("a").set("turn", "1")
                .call("x").set("turn", "1")
                .call("y").set("turn", "2")
                .call("b").set("turn", "2")
                .call("z").set("turn", "3")
                .build();
  CHECK(verdict("a immediately precedes b", t) == "satisfied");      // a is in the turn before b's
  CHECK(verdict("x immediately precedes y", t) == "satisfied");
  CHECK(verdict("y immediately precedes b", t) == "violated 3");     // same turn: not before
  CHECK(verdict("a is immediately followed by b", t) == "satisfied");
  CHECK(verdict("x is immediately followed by z", t) == "violated 1");  // z is two turns later
  CHECK(verdict("b is immediately followed by z", t) == "satisfied");
  CHECK(verdict("z is immediately followed by a", t) == "violated 4");  // the last turn
  // Without turns, the next step decides, as always.
  Trace seq = TraceBuilder{}.call("a").call("x").call("b").build();
  CHECK(verdict("a immediately precedes b", seq) == "violated 2");
  CHECK(verdict("a is immediately followed by x", seq) == "satisfied");
}

TEST_CASE("turns: parallel OpenAI tool_calls share a turn, and normalize keeps it") {
  const std::string chat = R"({"id":"c1","messages":[
    {"role":"user","content":"refund ord_1"},
    {"role":"assistant","content":null,"tool_calls":[
      {"id":"k1","type":"function","function":{"name":"order_get","arguments":"{\"order_id\":\"ord_1\"}"}},
      {"id":"k2","type":"function","function":{"name":"refund_order","arguments":"{\"order_id\":\"ord_1\"}"}}]},
    {"role":"tool","tool_call_id":"k1","content":"{\"status\":\"delivered\"}"},
    {"role":"tool","tool_call_id":"k2","content":"{\"refund_id\":\"r1\"}"}]})";
  Trace t = read_trace(chat);
  CHECK(verdict("order_get precedes refund_order", t) == "violated 2");
  std::string normalized;
  write_normalized_json(t, normalized);
  CHECK(normalized.find("\"turn\":") != std::string::npos);
  Trace back = read_trace(normalized);
  CHECK(verdict("order_get precedes refund_order", back) == "violated 2");
  REQUIRE(back.trajectory().steps().size() == t.trajectory().steps().size());
  for (std::size_t i = 0; i < t.trajectory().steps().size(); ++i)
    CHECK(back.trajectory().steps()[i].turn == t.trajectory().steps()[i].turn);
  // Scoring sees the same turns: the strict order holds either way round after normalizing.
  Trace swapped = TraceBuilder{}.call("refund_order").call("order_get").build();
  CHECK(score(t, swapped).match.strict);
  CHECK(score(back, swapped).match.strict);
  // A trace whose steps each had a turn of its own prints none.
  std::string plain;
  write_normalized_json(TraceBuilder{}.call("a").call("b").build(), plain);
  CHECK(plain.find("\"turn\"") == std::string::npos);
}

TEST_CASE("turns: a monitor decides adjacency when the shared turn ends") {
  CompileResult r = compile(Source("turns.rules", "a is immediately followed by b\n"));
  REQUIRE(r.ok());
  Monitor mon(r.program);
  std::vector<Violation> v;
  MonitorStep a = MonitorStep::call("a", "{}");
  a.turn = 1;
  MonitorStep x = MonitorStep::call("x", "{}");
  x.turn = 2;
  MonitorStep b = MonitorStep::call("b", "{}");
  b.turn = 2;
  MonitorStep z = MonitorStep::call("z", "{}");
  z.turn = 3;
  mon.observe(a, v);
  CHECK(v.empty());
  mon.observe(x, v);
  CHECK(v.empty());  // turn 2 may still bring a b
  mon.observe(b, v);
  CHECK(v.empty());
  mon.observe(z, v);
  CHECK(v.empty());
  std::vector<RuleResult> out;
  mon.finish(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == VerdictStatus::satisfied);
}

TEST_CASE("turns: a monitor fed one step at a time numbers the turns itself") {
  CompileResult r = compile(Source("turns.rules", "order_get precedes refund_order\nx is immediately followed by y\n"));
  REQUIRE(r.ok());
  // Each step read on its own (as `trajcheck guard` and Python's monitor read them) has turn
  // 0 in its own record: still one turn per step.
  Trace get = read_trace(R"({"trace_id":"s","steps":[{"tool":"order_get"}]})");
  Trace refund = read_trace(R"({"trace_id":"s","steps":[{"tool":"refund_order"}]})");
  Trace x = read_trace(R"({"trace_id":"s","steps":[{"tool":"x"}]})");
  Monitor one(r.program);
  std::vector<Violation> v;
  one.observe(get, 0, v);
  one.check(refund, 0, v);
  CHECK(v.empty());
  one.observe(refund, 0, v);
  CHECK(v.empty());
  one.observe(x, 0, v);
  CHECK(v.empty());
  one.observe(get, 0, v);  // not a y: the step after x is denied at once
  REQUIRE(v.size() == 1);
  CHECK(v[0].steps == std::vector<std::uint32_t>{2});
  // A history replayed in order keeps its shared turns.
  Trace parallel = read_trace(R"({"trace_id":"p","steps":[{"tool":"order_get","turn":1},{"tool":"refund_order","turn":1}]})");
  Monitor replay(r.program);
  replay.observe(parallel, 0, v);
  CHECK(v.empty());
  replay.check(parallel, 1, v);
  REQUIRE(v.size() == 1);
  replay.observe(parallel, 1, v);
  REQUIRE(v.size() == 1);
  CHECK(v[0].steps == std::vector<std::uint32_t>{1});
}
