// Rules that read a case's environment fixture (`fixture.…`) and `x in PATH` over arrays:
// parsing, printing, checking with and without a fixture.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "trajcheck/rules.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {

std::shared_ptr<const Program> compiled(const std::string& text) {
  CompileResult r = compile(Source("fixture.rules", text));
  INFO(format_diagnostics(r.source, r.diagnostics));
  REQUIRE(r.ok());
  return r.program;
}

VerdictStatus verdict(const std::shared_ptr<const Program>& p, const Trajectory& t, std::string_view fixture) {
  Checker checker(p);
  checker.set_fixture(fixture);
  std::vector<RuleResult> out;
  checker.check(t, out);
  REQUIRE(out.size() == 1);
  return out[0].status;
}

constexpr const char* kFixture = R"({"customer": {"id": "c_7", "orders": ["ord_1", "ord_2"], "tier": 2}})";

}  // namespace

TEST_CASE("a rule reads the fixture: ids outside the customer's orders are caught") {
  auto p = compiled("forbid refund_order where not arguments.order_id in fixture.customer.orders\n");
  Trace own = TraceBuilder{}.call("refund_order", R"({"order_id":"ord_2"})").build();
  Trace other = TraceBuilder{}.call("refund_order", R"({"order_id":"ord_9"})").build();
  CHECK(verdict(p, own, kFixture) == VerdictStatus::satisfied);
  CHECK(verdict(p, other, kFixture) == VerdictStatus::violated);
  // Without a fixture every fixture path is absent: `in` is false, so `not … in …` fires.
  CHECK(verdict(p, own, "") == VerdictStatus::violated);
}

TEST_CASE("fixture paths compare like context paths, and a checker keeps its fixture until changed") {
  auto p = compiled("forbid order_get where arguments.customer_id != fixture.customer.id\n");
  Trace t = TraceBuilder{}.call("order_get", R"({"customer_id":"c_7"})").build();
  Checker checker(p);
  std::vector<RuleResult> out;
  checker.set_fixture(kFixture);
  checker.check(t, out);
  CHECK(out[0].status == VerdictStatus::satisfied);
  checker.check(t, out);  // the same fixture, read again
  CHECK(out[0].status == VerdictStatus::satisfied);
  checker.set_fixture(R"({"customer": {"id": "c_8"}})");
  checker.check(t, out);
  CHECK(out[0].status == VerdictStatus::violated);
  auto numbers = compiled("forbid refund_order where fixture.customer.tier < 3\n");
  CHECK(verdict(numbers, t, kFixture) == VerdictStatus::satisfied);
  Trace refund = TraceBuilder{}.call("refund_order", "{}").build();
  CHECK(verdict(numbers, refund, kFixture) == VerdictStatus::violated);
}

TEST_CASE("x in PATH: typed element equality on an array, false on anything else") {
  auto p = compiled("forbid any where arguments.v in context.allowed\n");
  auto fired = [&](const std::string& context, const std::string& args) {
    Trace t = TraceBuilder{}.context(context).call("t", args).build();
    return verdict(p, t, "") == VerdictStatus::violated;
  };
  CHECK(fired(R"({"allowed": ["a", 2, true]})", R"({"v":"a"})"));
  CHECK(fired(R"({"allowed": ["a", 2, true]})", R"({"v":2.0})"));
  CHECK(fired(R"({"allowed": ["a", 2, true]})", R"({"v":true})"));
  CHECK_FALSE(fired(R"({"allowed": ["a", 2, true]})", R"({"v":"2"})"));
  CHECK_FALSE(fired(R"({"allowed": "abc"})", R"({"v":"a"})"));      // a string is no array
  CHECK_FALSE(fired(R"({"allowed": {"a": 1}})", R"({"v":"a"})"));   // nor an object
  CHECK_FALSE(fired(R"({"allowed": [["a"]]})", R"({"v":"a"})"));    // elements compare as scalars
  CHECK_FALSE(fired(R"({})", R"({"v":"a"})"));                      // absent
  CHECK_FALSE(fired(R"({"allowed": ["a"]})", R"({})"));             // absent left side
}

TEST_CASE("`in PATH` and fixture paths print back as written") {
  for (const char* text : {"forbid refund_order where not arguments.order_id in fixture.customer.orders\n",
                           "forbid any where arguments.v in [\"a\", 2]\n",
                           "forbid any where fixture.items[0].sku == arguments.sku\n"}) {
    std::vector<Diagnostic> diags;
    CHECK(format_rules(Source("x.rules", text), diags) == text);
    CHECK(diags.empty());
  }
}

TEST_CASE("a bad right-hand side of `in` is a located syntax error") {
  CompileResult r = compile(Source("bad.rules", "forbid any where arguments.v in 3\n"));
  REQUIRE_FALSE(r.ok());
  std::string text = format_diagnostics(r.source, r.diagnostics);
  CHECK(text.find("bad.rules:1:33:") != std::string::npos);
  CHECK(text.find("expected a list or a path after 'in'") != std::string::npos);
}
