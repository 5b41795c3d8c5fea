// Unit tests of trajcheck/testing.hpp: traces built in code read as the readers read them,
// rules compiled once, checks explained as `check` prints them, and the doctest macros.
#include <doctest/doctest.h>

#include "trajcheck/metrics.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {
const char* kRules =
    "forbid delete_*\n"
    "order_get at most 1\n"
    "rule refund_needs_approval [critical]:\n"
    "    approval where decision == \"approved\" precedes refund_order\n"
    "    message \"refund issued without an approved approval\"\n";
}  // namespace

TEST_CASE("TraceBuilder writes a native record") {
  TraceBuilder b;
  b.id("t1").context(R"({"tier":"gold"})").user("refund ord_1")
      .call("Order_Get ", R"({"order_id": "ord_1"})").result(R"({"status":"delivered"})")
      .call("refund_order").fails("Error: timeout").set("latency_ms", "120")
      .approval("approved", "c2").final_answer("done");
  CHECK(b.json() ==
        R"({"trace_id":"t1","context":{"tier":"gold"},"steps":[{"type":"user_message","content":"refund ord_1"},)"
        R"({"type":"tool_call","tool":"Order_Get ","arguments":{"order_id": "ord_1"},"result":{"status":"delivered"}},)"
        R"({"type":"tool_call","tool":"refund_order","status":"error","result":"Error: timeout","latency_ms":120},)"
        R"({"type":"approval","decision":"approved","tool_call_id":"c2"},{"type":"final_answer","content":"done"}]})");
}

TEST_CASE("a built trace is normalized by the reader") {
  Trace t = TraceBuilder{}
                .call("Order_Get ", R"({"order_id": "ord_1"})")
                .result_text(R"({"status": "delivered"})")  // a string holding an object: read as the object
                .call("refund_order").fails()
                .step(R"({"type":"retrieval","query":"policy","documents":3})")
                .build();
  const Trajectory& tr = t;
  REQUIRE(tr.steps().size() == 3);
  CHECK(tr.trace_id() == "trace");
  CHECK(tr.tool_name(tr.steps()[0]) == "order_get");
  CHECK(tr.text(tr.steps()[0].raw_tool) == "Order_Get ");
  CHECK(tr.text(tr.steps()[0].arguments) == R"({"order_id":"ord_1"})");
  CHECK(tr.text(tr.steps()[0].result) == R"({"status":"delivered"})");
  CHECK(tr.steps()[1].status == StepStatus::error);
  CHECK(tr.steps()[2].type == StepType::other);
  CHECK(tr.text(tr.steps()[2].extra) == R"({"query":"policy","documents":3})");
  std::string normalized;
  write_normalized_json(tr, normalized);
  CHECK(read_trace(normalized).record() == normalized);

  NormalizeOptions aliases;
  aliases.aliases.emplace_back("lookup", "order_get");
  CHECK(TraceBuilder{}.call("Lookup").build(aliases).trajectory().tool_name(
            TraceBuilder{}.call("Lookup").build(aliases).trajectory().steps()[0]) == "order_get");
}

TEST_CASE("builder arguments that are not JSON are refused with the step named") {
  CHECK_THROWS_WITH_AS(TraceBuilder{}.call("order_get", "{order_id: 1}"),
                       "call order_get arguments: not one JSON value: {order_id: 1}", std::invalid_argument);
  CHECK_THROWS_WITH_AS(TraceBuilder{}.call("x").result("not json"), "result: not one JSON value: not json",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(TraceBuilder{}.fails(), "fails: the trace has no step yet", std::invalid_argument);
  CHECK_THROWS_AS(TraceBuilder{}.step("[1]"), std::invalid_argument);
  CHECK_THROWS_AS(TraceBuilder{}.context("{"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(read_trace(R"({"steps":[{"type":"tool_call"}]})"),
                       doctest::Contains("<trace>:1:"), std::invalid_argument);
}

TEST_CASE("rules are compiled once per text or file, and errors carry the compiler's text") {
  const Rules& a = Rules::text(kRules, "inline.rules");
  CHECK(&a == &Rules::text(kRules, "inline.rules"));
  CHECK(&a != &Rules::text(kRules, "other.rules"));
  CHECK(a.find("order_get at most 1") == 1);
  CHECK(a.find("nope") == -1);
  const Rules& f = Rules::file(TRAJCHECK_SOURCE_DIR "/examples/rules/refunds.rules");
  CHECK(&f == &Rules::file(TRAJCHECK_SOURCE_DIR "/examples/rules/refunds.rules"));
  CHECK(f.rule_set()->rules().size() == 6);
  try {
    Rules::text("forbid\n", "bad.rules");
    FAIL("no RulesError");
  } catch (const RulesError& e) {
    REQUIRE(!e.diagnostics().empty());
    CHECK(std::string(e.what()) == format_diagnostics(Source("bad.rules", "forbid\n"), e.diagnostics()));
  }
  CHECK_THROWS_AS(Rules::file("/nonexistent/x.rules"), RulesError);
}

TEST_CASE("satisfies and violates explain themselves as check prints a trace") {
  const Rules& rules = Rules::text(kRules, "inline.rules");
  Trace bad = TraceBuilder{}.id("t7").user("refund ord_1")
                  .call("order_get", R"({"order_id":"ord_1"})")
                  .call("refund_order", R"({"order_id":"ord_1"})")
                  .build();
  CheckOutcome s = satisfies(rules, bad);
  CHECK_FALSE(s);
  CHECK(s.results.size() == 3);
  CHECK(s.explanation ==
        "FAIL t7  (<trace>:1, 3 steps)\n"
        "  critical refund_needs_approval: refund issued without an approved approval  inline.rules:3:1\n"
        "      #1 order_get {\"order_id\":\"ord_1\"}\n"
        "    > #2 refund_order {\"order_id\":\"ord_1\"}\n");
  CHECK(explain(rules, bad) == s.explanation);
  CHECK(violates(rules, bad, "refund_needs_approval"));
  CHECK(violates(rules, bad, "refund_needs_approval").explanation.empty());

  CheckOutcome v = violates(rules, bad, "forbid delete_*");
  CHECK_FALSE(v);
  CHECK(v.explanation ==
        "rule 'forbid delete_*' is satisfied on trace t7 (3 steps):\n"
        "    #0 user_message \"refund ord_1\"\n"
        "    #1 order_get {\"order_id\":\"ord_1\"}\n"
        "    #2 refund_order {\"order_id\":\"ord_1\"}\n"
        "other rules it violates:\n" + s.explanation);
  CheckOutcome missing = violates(rules, bad, "refund_need_approval");
  CHECK_FALSE(missing);
  CHECK(missing.explanation ==
        "the rules have no rule named 'refund_need_approval'; they have:\n"
        "    forbid delete_*\n    order_get at most 1\n    refund_needs_approval\n");

  Trace good = TraceBuilder{}.call("order_get").approval("approved").call("refund_order").build();
  CHECK(satisfies(rules, good));
  CHECK(satisfies(rules, good).explanation.empty());
  // A warning-level violation fails `satisfies` unless fail_on says otherwise.
  const Rules& warn = Rules::text("rule w [warning]: forbid notify\n", "warn.rules");
  Trace notify = TraceBuilder{}.call("notify").build();
  CHECK_FALSE(satisfies(warn, notify));
  CHECK(satisfies(warn, notify, RuleSeverity::error));
  CHECK(explain(warn, notify).rfind("WARN trace", 0) == 0);
}

TEST_CASE("the doctest macros pass where the checks hold") {
  const Rules& rules = Rules::text(kRules, "inline.rules");
  Trace t = TraceBuilder{}.call("order_get").call("order_get").build();
  TRAJCHECK_CHECK_VIOLATES(rules, t, "order_get at most 1");
  TRAJCHECK_REQUIRE_VIOLATES(rules, t, "order_get at most 1");
  Trace ok = TraceBuilder{}.call("order_get").build();
  TRAJCHECK_CHECK_SATISFIES(rules, ok);
  TRAJCHECK_REQUIRE_SATISFIES(rules, ok);
}

TEST_CASE("score takes its sides by name") {
  Trace expected = TraceBuilder{}.call("a").call("b").call("c").build();
  Trace actual = TraceBuilder{}.call("a").call("c").build();
  ScoreResult named = score({.expected = expected, .actual = actual});
  ScoreResult positional = score(actual.trajectory(), expected.trajectory());
  CHECK(named.selection == positional.selection);
  CHECK(named.missing == std::vector<std::string>{"b"});
  CHECK(named.extra.empty());
  ScoreResult swapped = score({.expected = actual, .actual = expected});
  CHECK(swapped.extra == std::vector<std::string>{"b"});
  ScoreResult path = score({.expected = "a -> {b, c}", .actual = actual});
  CHECK(path.missing == std::vector<std::string>{"b"});
  Scorer scorer;
  CHECK(scorer.score({.expected = expected, .actual = actual}).overall == named.overall);
  CHECK(scorer.score({.expected = "a -> (", .actual = actual}).error.find("1:7") != std::string::npos);
}
