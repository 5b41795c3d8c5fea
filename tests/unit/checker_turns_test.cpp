// Calls issued in one turn (parallel tool calls of one assistant message) are unordered for
// the ordering statements: a step is before another only when its turn ended first.
#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <vector>

#include "trajcheck/metrics.hpp"
#include "trajcheck/monitor.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {

// The status (and witnesses) of the one rule of `rules` on `trace`.
// A rule's result as "STATUS STEP…".
std::string result_text(const RuleResult& res) {
  std::string out(to_string(res.status));
  for (std::uint32_t s : res.steps) out += " " + std::to_string(s);
  return out;
}

std::string verdict(const std::string& rules, const Trajectory& trace) {
  CheckOutcome o = satisfies(Rules::text(rules), trace);
  REQUIRE(o.results.size() == 1);
  return result_text(o.results[0]);
}

// user, then order_get and refund_order in one message (turn 1).
Trace parallel_lookup_and_refund() {
  return TraceBuilder{}
      .user("refund ord_1").set("turn", "0")
      .call("order_get", R"({"order_id":"ord_1"})").set("turn", "1")
      .call("refund_order", R"({"order_id":"ord_1"})").set("turn", "1")
      .build();
}

// Calls `names` (a turn each, or `shared` for those in one turn): "a b|c d" is a, then b and c
// in one turn, then d. "a:1" calls a with {"id":"1"}; "a!" is a call of a that failed.
Trace turns_of(const std::string& spec) {
  TraceBuilder b;
  int turn = 0;
  std::size_t at = 0;
  while (at <= spec.size()) {
    std::size_t end = spec.find(' ', at);
    if (end == std::string::npos) end = spec.size();
    const std::string group = spec.substr(at, end - at);
    ++turn;
    std::size_t from = 0;
    while (from <= group.size()) {
      std::size_t bar = group.find('|', from);
      if (bar == std::string::npos) bar = group.size();
      std::string name = group.substr(from, bar - from);
      std::string args = "{}";
      const bool failed = !name.empty() && name.back() == '!';
      if (failed) name.pop_back();
      if (const auto colon = name.find(':'); colon != std::string::npos) {
        args = R"({"id":")" + name.substr(colon + 1) + R"("})";
        name = name.substr(0, colon);
      }
      b.call(name, args).set("turn", std::to_string(turn));
      if (failed) b.fails("error");
      from = bar + 1;
    }
    at = end + 1;
  }
  return b.build();
}

const RuleResult& only_result(const CheckOutcome& o) {
  REQUIRE(o.results.size() == 1);
  return o.results[0];
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

TEST_CASE("turns: followed by needs a later turn; never followed by counts a B beside the A") {
  Trace t = TraceBuilder{}
                .call("a").set("turn", "1")
                .call("b").set("turn", "1")
                .call("c").set("turn", "2")
                .build();
  CHECK(verdict("a is followed by b", t) == "violated 0");
  CHECK(verdict("a is followed by c", t) == "satisfied");
  // The b beside the a may come after it: every order of the turn must keep the rule.
  CHECK(verdict("a is never followed by b", t) == "violated 0 1");
  CHECK(verdict("b is never followed by a", t) == "violated 0 1");
  CHECK(verdict("a is never followed by a", turns_of("a|a")) == "violated 0 1");
  CHECK(verdict("a is never followed by a", turns_of("a")) == "satisfied");
  CHECK(verdict("a | b is never followed by b", turns_of("b|x")) == "satisfied");
  CHECK(verdict("a is never followed by b", turns_of("b a")) == "satisfied");
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


TEST_CASE("turns: a call sharing the turn of a scope boundary the rule looks at is a violation") {
  // The docs' parallel lookup and refund: the refund may come before the lookup.
  Trace t = parallel_lookup_and_refund();
  CHECK(verdict("before order_get: forbid refund_order", t) == "violated 2");
  CheckOutcome o = satisfies(Rules::text("before order_get: forbid refund_order"), t);
  REQUIRE(only_result(o).details.size() == 1);
  CHECK(only_result(o).details[0] ==
        "issued in one turn with step 1, which closes the scope's segment: it may come before or after it");
  CHECK(verdict("before order_get: forbid refund_order", turns_of("order_get refund_order")) == "satisfied");
  // Each scope form, both sides of the boundary.
  CHECK(verdict("after login: forbid delete", turns_of("delete|login")) == "violated 0");
  CHECK(verdict("after login: forbid delete", turns_of("delete login")) == "satisfied");
  CHECK(verdict("after login: require audit", turns_of("login|audit")) == "violated 1");
  CHECK(verdict("after login: require audit", turns_of("login audit")) == "satisfied");
  CHECK(verdict("between login and logout: db_write at most 3", turns_of("login db_write|logout")) == "violated 1");
  CHECK(verdict("between login and logout: db_write at most 3", turns_of("login db_write logout")) == "satisfied");
  CHECK(verdict("after login until logout: require audit", turns_of("login audit|logout")) == "violated 1");
  CHECK(verdict("after login until logout: require audit", turns_of("login audit logout")) == "satisfied");
  CHECK(verdict("between login and logout: precedes_check precedes db_write", turns_of("login|precedes_check db_write logout")) ==
        "violated 1");
  // Calls the rule does not look at, and calls whose side is known, do not count.
  CHECK(verdict("before order_get: forbid refund_order", turns_of("order_get|search refund_order")) == "satisfied");
  CHECK(verdict("after login: login at most 2", turns_of("login|login")) == "satisfied");
  CHECK(verdict("before logout: forbid db_write", turns_of("db_write logout|logout")) == "violated 0");
  // The other boundary pattern counts: the logout may come first and the login open a
  // session after it, or the login first and the logout close it.
  CHECK(verdict("between login and logout: forbid fetch", turns_of("login|logout")) == "violated 0 1");
  // A statement that looks at every call: any call beside the boundary.
  CHECK(verdict("after login: only login | fetch", turns_of("login|search")) == "violated 1");
  CHECK(verdict("after login: expect fetch -> db_write", turns_of("login|fetch db_write")) == "violated 1");
  // A later Q in an `after` scope is no boundary: the segment opened long before.
  CHECK(verdict("after login: forbid delete", turns_of("login x login|fetch")) == "satisfied");
  // A rule with a variable looks at every call; the violation has no binding.
  CheckOutcome p = satisfies(
      Rules::text("between login and logout: refund where arguments.id == $o at most 1"), turns_of("login refund:1 x|logout"));
  REQUIRE(p.results.size() == 1);
  CHECK(p.results[0].status == VerdictStatus::violated);
  CHECK(p.results[0].binding.empty());
  CHECK(p.results[0].steps == std::vector<std::uint32_t>{2});
  // Without turns (each step its own), the same calls in the recorded order.
  Trace plain = TraceBuilder{}.call("order_get").call("refund_order").build();
  CHECK(verdict("before order_get: forbid refund_order", plain) == "satisfied");
}

TEST_CASE("turns: expect holds only when every order of each turn is a word of the PATH") {
  Trace t = parallel_lookup_and_refund();
  CHECK(verdict("expect order_get -> refund_order", t) == "violated 2");
  CHECK(verdict("expect order_get -> refund_order", turns_of("order_get refund_order")) == "satisfied");
  CHECK(verdict("expect {a, b} -> c", turns_of("a|b c")) == "satisfied");
  CHECK(verdict("expect a -> (b | c)*", turns_of("a b|c|b c")) == "satisfied");
  CHECK(verdict("expect a -> b -> c", turns_of("a b|c")) == "violated 2");
  CHECK(verdict("expect a -> b -> c", turns_of("a b c")) == "satisfied");
  // Ends early in some order: `b, a` leaves the PATH before its end? no — `a, b` and `b, a`
  // are both prefixes of words of (a -> b | b -> a) -> c, and neither is a word.
  CHECK(verdict("expect (a -> b | b -> a) -> c", turns_of("a|b")) == "violated");
  CHECK(verdict("expect (a -> b | b -> a) -> c", turns_of("a|b c")) == "satisfied");
  CHECK(verdict("expect exactly a -> x? -> b", turns_of("a|x b")) == "violated 1");
  // In a rule with a variable (its slices fed every step on such a trace).
  const std::string per_order = "rule r:\n    order_get where arguments.order_id == $o at most 1\n"
                                "    expect order_get -> refund_order\n";
  CHECK(verdict(per_order, t) == "violated 2");
  CHECK(verdict(per_order,
                TraceBuilder{}
                    .call("order_get", R"({"order_id":"ord_1"})").set("turn", "1")
                    .call("refund_order", R"({"order_id":"ord_1"})").set("turn", "2")
                    .build()) == "satisfied");
}

TEST_CASE("expect: a step that is no letter of the PATH is passed over, wherever it stands") {
  // The checker steps an `expect` rule only on the steps matching one of its atoms: a call
  // whose atom's condition is false, messages, other tools and a call sharing a letter's
  // turn must leave the automaton where it was, and a scope's bounds still open and close it.
  const Trace t = TraceBuilder{}
                      .user("refund ord_1")
                      .call("order_get", R"({"order_id":"ord_1"})").set("turn", "1")
                      .assistant("checking")
                      .call("refund_order", R"({"amount":5})").set("turn", "2")
                      .call("refund_order", R"({"amount":50})").set("turn", "3")
                      .call("lookup", "{}").set("turn", "3")
                      .call("order_get", R"({"order_id":"ord_2"})").set("turn", "4")
                      .build();
  CHECK(verdict("expect order_get -> (refund_order where arguments.amount > 10) -> order_get", t) == "satisfied");
  CHECK(verdict("expect order_get -> order_get", t) == "satisfied");
  CHECK(verdict("expect order_get -> refund_order -> order_get", t) == "violated 4");
  CHECK(verdict("expect (refund_order where arguments.amount > 10) -> order_get", t) == "violated 1");
  CHECK(verdict("expect exactly order_get -> refund_order -> refund_order -> order_get", t) == "violated 5");
  // Scoped: the segment opens at the small refund (a letter of the PATH, so taken).
  CHECK(verdict("after (refund_order where arguments.amount < 10):\n    expect refund_order -> refund_order -> order_get\n",
                t) == "satisfied");
  CHECK(verdict("after (refund_order where arguments.amount < 10):\n    expect refund_order -> order_get\n", t) ==
        "violated 4");
}

TEST_CASE("turns: a PATH turn of more than 12 letters is a violation with a note, not a pass") {
  std::string twelve = "a", thirteen;
  for (int k = 1; k < 12; ++k) twelve += "|a";
  thirteen = twelve + "|a";
  CHECK(verdict("expect a*", turns_of(twelve)) == "satisfied");
  CheckOutcome o = satisfies(Rules::text("expect a*"), turns_of(thirteen));
  CHECK(only_result(o).status == VerdictStatus::violated);
  CHECK(only_result(o).steps == std::vector<std::uint32_t>{12});
  REQUIRE(only_result(o).details.size() == 1);
  CHECK(only_result(o).details[0] == "a turn with more than 12 calls of the PATH: its orders are not tried");
  // Calls that are no letter of the PATH do not count toward the 12.
  CHECK(verdict("expect a*", turns_of(twelve + "|x|x")) == "satisfied");
}

TEST_CASE("turns: a guard denies the call that shares a boundary's turn, and a PATH's turn order") {
  CompileResult r = compile(Source("turns.rules", "before order_get: forbid refund_order\n"
                                                  "expect order_get -> refund_order\n"));
  REQUIRE(r.ok());
  MonitorStep get = MonitorStep::call("order_get", R"({"order_id":"ord_1"})");
  get.turn = 1;
  MonitorStep refund = MonitorStep::call("refund_order", R"({"order_id":"ord_1"})");
  refund.turn = 1;
  Monitor mon(r.program);
  std::vector<Violation> v;
  mon.observe(get, v);
  CHECK(v.empty());
  mon.check(refund, v);
  REQUIRE(v.size() == 2);  // both rules: the refund is denied
  CHECK(v[0].steps == std::vector<std::uint32_t>{1});
  CHECK(v[1].steps == std::vector<std::uint32_t>{1});
  mon.observe(refund, v);
  CHECK(v.size() == 2);
  std::vector<RuleResult> out;
  mon.finish(out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].status == VerdictStatus::violated);
  CHECK(out[1].status == VerdictStatus::violated);
  // The refund in a turn of its own, or steps given no turn: allowed, as before.
  for (bool numbered : {true, false}) {
    Monitor seq(r.program);
    MonitorStep g = get, f = refund;
    if (numbered) f.turn = 2;
    else g.turn = f.turn = std::nullopt;
    seq.observe(g, v);
    CHECK(v.empty());
    seq.check(f, v);
    CHECK(v.empty());
    seq.observe(f, v);
    CHECK(v.empty());
    seq.finish(out);
    CHECK(out[0].status == VerdictStatus::satisfied);
    CHECK(out[1].status == VerdictStatus::satisfied);
  }
}

// One Checker over several traces: a rule a trace leaves alone is not reset and gets its
// untouched result, and `never followed by` skips the B's before its first A only on a trace
// where no step shares its turn. Each verdict is a fresh checker's.
TEST_CASE("turns: a checker reused across traces gives each trace a fresh checker's verdicts") {
  const std::string rules = "a is never followed by b\nrequire c\n";
  CompileResult r = compile(Source("reused.rules", rules));
  REQUIRE(r.ok());
  Checker checker(r.program);
  std::vector<RuleResult> out;
  const char* specs[] = {"b b a b", "b|a", "c x", "b|a", "x", "b b a b", "c"};
  const char* first[] = {"violated 2 3", "violated 0 1", "vacuous", "violated 0 1", "vacuous", "violated 2 3", "vacuous"};
  for (std::size_t k = 0; k < std::size(specs); ++k) {
    CAPTURE(specs[k]);
    const Trace t = turns_of(specs[k]);
    checker.check(t, out);
    REQUIRE(out.size() == 2);
    CHECK(result_text(out[0]) == first[k]);
    CHECK(result_text(out[0]) == verdict("a is never followed by b", t));
    CHECK(result_text(out[1]) == verdict("require c", t));
  }
}

// A monitor begun again for the next trace clears the containers of its own kind of
// statement: one Checker reused across traces that leave state behind (keys seen, retry
// chains, expect's positions and shared turns, A's waiting on the next turn) gives each trace
// a fresh checker's verdicts, for every statement kind that keeps such state.
TEST_CASE("turns: a reused checker forgets each statement kind's state between traces") {
  const std::vector<std::string> rules = {
      "no duplicate a",
      "retries of a at most 1",
      "expect a -> b",
      "expect exactly a -> b",
      "a immediately precedes b",
      "a is immediately followed by b",
      "a is never followed by b",
  };
  std::string all;
  for (const std::string& r : rules) all += r + "\n";
  CompileResult r = compile(Source("reused.rules", all));
  REQUIRE(r.ok());
  Checker checker(r.program);
  std::vector<RuleResult> out;
  // Traces that end mid-state (a key seen, a chain open, an A waiting, expect part way, a
  // shared turn), each followed by one that a leftover would misjudge.
  const char* specs[] = {"a:1 a:1", "a:1",     "a a a",   "a",   "a|b a",   "b",       "a",
                         "b",       "a|a|b",   "a b",     "b a", "a:2 b",   "a|x",     "b a:2",
                         "x",       "a a:1 a", "a:1 b b", "a b", "a|b|a b", "b|a a b", "a",
                         "a! a!",   "a!",      "a! a! a!", "a! a",  "a!",      "a a!",    "a!"};
  for (const char* spec : specs) {
    CAPTURE(spec);
    const Trace t = turns_of(spec);
    checker.check(t, out);
    REQUIRE(out.size() == rules.size());
    for (std::size_t k = 0; k < rules.size(); ++k) {
      CAPTURE(rules[k]);
      CHECK(result_text(out[k]) == verdict(rules[k], t));
    }
  }
}
