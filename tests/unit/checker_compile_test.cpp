// End to end: rules text through the front end and the compiler into verdicts.
#include <doctest/doctest.h>

#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using V = VerdictStatus;
using W = std::vector<std::uint32_t>;

namespace {
std::shared_ptr<const Program> compile_text(const std::string& text, CompileOptions o = {}) {
  CompileResult r = compile(Source("t.rules", text), o);
  INFO(format_diagnostics(r.source, r.diagnostics));
  REQUIRE(r.ok());
  return r.program;
}
}  // namespace

TEST_CASE("the docs/language.md example compiles and checks") {
  auto p = compile_text(R"(workflow "refunds"
alias search = search_documents
group lookup = customer_get | order_search_by_email

forbid delete_*
order_get at most 1
approval precedes refund_order

rule refund_needs_approval [critical]:
    approval where decision == "approved" precedes refund_order
    message "refund issued without an approved approval"

transfer_to_human_agents is never followed by tool_call

between login and logout:
    db_write at most 3
)");
  REQUIRE(p->rules().size() == 6);
  CHECK(p->workflow() == "refunds");
  CHECK(p->rules()[3].name == "refund_needs_approval");
  CHECK(p->rules()[3].severity == RuleSeverity::critical);
  CHECK(p->rules()[3].location == "t.rules:9:1");
  StepsBuilder t;
  t.call("order_get");
  t.message(StepType::approval, "", R"({"decision":"denied"})");
  t.call("refund_order");
  t.call("delete_user");
  t.call("order_get");
  t.call("transfer_to_human_agents");
  t.call("search");
  auto r = run(p, t.t);
  REQUIRE(r.size() == 6);
  CHECK(r[0].steps == W{3});
  CHECK(r[1].steps == W{4});
  CHECK(r[2].status == V::satisfied);
  CHECK(r[3].status == V::violated);
  CHECK(r[3].steps == W{2});
  CHECK(r[4].steps == W{5, 6});
  CHECK(r[5].status == V::vacuous);
  CHECK(p->dump_automaton().find("counter") != std::string::npos);
  CHECK(!p->dump_ir().empty());
}

TEST_CASE("expect from text, with an all-of group") {
  auto p = compile_text("expect (customer_get -> order_list | order_search_by_email) -> order_get -> refund_order\n"
                        "expect {profile_get, settings_get} -> render\n");
  StepsBuilder t;
  t.call("order_search_by_email");
  t.call("settings_get");
  t.call("order_get");
  t.call("profile_get");
  t.call("refund_order");
  t.call("render");
  auto r = run(p, t.t);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[1].status == V::satisfied);
}

TEST_CASE("parametric rules and seen() from text") {
  auto p = compile_text(
      "approval where arguments.order_id == $o precedes refund_order where arguments.order_id == $o\n"
      "forbid refund_order where not seen(arguments.order_id)\n");
  StepsBuilder t;
  t.call("order_get", "", false, R"({"orders":["a","b"]})");
  t.message(StepType::approval);  // no arguments: binds nothing
  Step& ap = t.message(StepType::approval);
  ap.arguments = t.t.store(R"({"order_id":"a"})");
  t.call("refund_order", R"({"order_id":"a"})");
  t.call("refund_order", R"({"order_id":"b"})");
  t.call("refund_order", R"({"order_id":"zz"})");
  auto r = run(p, t.t);
  REQUIRE(r.size() == 3);  // rule 0 violated for b and zz, rule 1 for the invented zz
  CHECK(r[0].status == V::violated);
  CHECK(r[0].binding[0].second == "\"b\"");
  CHECK(r[0].steps == W{4});
  CHECK(r[1].rule == 0);
  CHECK(r[1].binding[0].second == "\"zz\"");
  CHECK(r[1].steps == W{5});
  CHECK(r[2].rule == 1);
  CHECK(r[2].steps == W{5});
}

TEST_CASE("failed P may bind a variable: a failed refund of o is retried for o") {
  auto p = compile_text(
      "failed refund_order where arguments.order_id == $o is immediately followed by "
      "refund_order where arguments.order_id == $o\n");
  StepsBuilder t;
  t.call("refund_order", R"({"order_id":"a"})", true);   // failed, retried next for a
  t.call("refund_order", R"({"order_id":"a"})");
  t.call("refund_order", R"({"order_id":"b"})", true);   // failed, then something else
  t.call("order_get", R"({"order_id":"b"})");
  t.call("refund_order", R"({"order_id":"c"})");          // did not fail: c has nothing to retry
  auto r = run(p, t.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].binding[0].second == "\"b\"");
  CHECK(r[0].steps == W{2});
  // A call that did not fail binds nothing through the failed side: a successful lookup of
  // another order between a failure and its retry is in the slice, so the retry is not next.
  StepsBuilder u;
  u.call("refund_order", R"({"order_id":"a"})", true);
  u.call("refund_order", R"({"order_id":"x"})");
  u.call("refund_order", R"({"order_id":"a"})");
  r = run(compile_text("failed refund_order where arguments.order_id == $o is immediately followed by "
                       "order_get where arguments.order_id == $o\n"), u.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{0});
}

TEST_CASE("not P still cannot bind a variable") {
  CompileResult r = compile(Source("t.rules", "forbid not refund_order where arguments.order_id == $o\n"), {});
  REQUIRE_FALSE(r.ok());
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].code == "E102");
}

TEST_CASE("E102 for a second binding conjunct says so, at its variable") {
  CompileResult two = compile(Source("t.rules", "approval where arguments.id == $a and arguments.u == $b precedes "
                                                "refund where arguments.id == $a\n"), {});
  REQUIRE(two.diagnostics.size() == 1);
  CHECK(two.diagnostics[0].code == "E102");
  CHECK(two.diagnostics[0].range.begin == 53);
  CHECK(two.diagnostics[0].message ==
        "this pattern binds `$a` already: a pattern binds one variable, with one `PATH == $name` or `PATH contains $name` conjunct");
  CompileResult again = compile(Source("t.rules", "approval where arguments.id == $a and arguments.u == $a precedes "
                                                  "refund where arguments.id == $a\n"), {});
  REQUIRE(again.diagnostics.size() == 1);
  CHECK(again.diagnostics[0].message ==
        "`$a` is bound already by an earlier conjunct of this pattern: a pattern binds its variable once");
}

TEST_CASE("a scoped parametric rule whose segment binds no value is vacuous") {
  auto p = compile_text(
      "between login and logout:\n    refund_order where arguments.order_id == $o at most 1\n"
      "before logout:\n    forbid refund_order where arguments.order_id == $o\n");
  StepsBuilder t;  // the value is bound before login and after logout only
  t.call("refund_order", R"({"order_id":"a"})");
  t.call("login");
  t.call("logout");
  t.call("refund_order", R"({"order_id":"b"})");
  auto r = run(p, t.t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == V::vacuous);
  CHECK(r[1].status == V::violated);  // a's refund is before logout
  StepsBuilder u;  // bound inside the segment: exercised
  u.call("login");
  u.call("refund_order", R"({"order_id":"a"})");
  u.call("logout");
  r = run(p, u.t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[1].status == V::violated);
}

TEST_CASE("the automaton cap from text is E101 at the statement") {
  CompileOptions o;
  o.max_automaton_states = 79;  // 5 elements x 2^4 contexts = 80 positions
  CompileResult r = compile(Source("t.rules", "forbid x\nexpect {a, b, c, d, e}\n"), o);
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E101");
  CHECK(format_diagnostics(r.source, r.diagnostics).find("t.rules:2:1: error[E101]") != std::string::npos);
  CHECK(r.diagnostics[0].message.find("an all-of group of n elements") != std::string::npos);
}

TEST_CASE("E101 for a plain sequence over the cap does not blame all-of groups") {
  CompileOptions o;
  o.max_automaton_states = 3;
  CompileResult r = compile(Source("t.rules", "forbid x\nexpect a -> b -> c -> d\n"), o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E101");
  CHECK(r.diagnostics[0].message ==
        "the automaton of this PATH needs 4 states, over the cap of 3 (one state per step name or group in it: "
        "split it into shorter PATHs)");
}
