// The agent team's tests: the refund agent's trajectories follow the policy in refunds.rules,
// and its tool use stays close to the reference solution.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>  // before trajcheck/testing.hpp: enables the TRAJCHECK_* macros

#include <trajcheck/metrics.hpp>
#include <trajcheck/testing.hpp>

using trajcheck::testing::Rules;
using trajcheck::testing::Trace;
using trajcheck::testing::TraceBuilder;

namespace {

const Rules& policy() { return Rules::file(RULES_FILE); }  // compiled once for the whole binary

// What the agent did when asked to refund a broken order.
Trace approved_refund() {
  return TraceBuilder{}
      .id("approved_refund")
      .user("My order ord_1 arrived broken, please refund it.")
      .call("order_get", R"({"order_id":"ord_1"})").result(R"({"status":"delivered","total":42.5})")
      .approval_request("c2")
      .approval("approved", "c2")
      .call("refund_order", R"({"order_id":"ord_1"})").set("id", R"("c2")").result(R"({"refund_id":"rf_1"})")
      .assistant("Your refund rf_1 is on its way.")
      .build();
}

}  // namespace

TEST_CASE("an approved refund follows the policy") {
  TRAJCHECK_CHECK_SATISFIES(policy(), approved_refund());
}

TEST_CASE("a refund without approval is caught") {
  Trace t = TraceBuilder{}
                .id("unapproved_refund")
                .user("Refund ord_2 now.")
                .call("order_get", R"({"order_id":"ord_2"})").result(R"({"status":"delivered"})")
                .call("refund_order", R"({"order_id":"ord_2"})").fails("Error: payment gateway timeout")
                .build();
  TRAJCHECK_CHECK_VIOLATES(policy(), t, "refund_needs_approval");
  // Without the macros: the outcome converts to bool and carries the explanation.
  trajcheck::testing::CheckOutcome o = trajcheck::testing::satisfies(policy(), t);
  CHECK_FALSE(o);
  CHECK(o.explanation.find("critical refund_needs_approval") != std::string::npos);
}

TEST_CASE("tool use scores at least 0.8 against the reference") {
  Trace reference = TraceBuilder{}
                        .call("order_get", R"({"order_id":"ord_1"})")
                        .call("refund_order", R"({"order_id":"ord_1"})")
                        .build();
  trajcheck::ScoreResult s = trajcheck::score({.expected = reference, .actual = approved_refund()});
  CHECK_MESSAGE(s.overall >= 0.8, s.explanation);
  // The expected side may be a PATH of the rule language too.
  trajcheck::ScoreResult p = trajcheck::score({.expected = "order_get -> refund_order", .actual = approved_refund()});
  CHECK(p.overall == doctest::Approx(1.0));
}
