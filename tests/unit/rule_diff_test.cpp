// trajcheck diff (include/trajcheck/rule_diff.hpp): pairing, verdicts, and counterexamples that
// the checker itself confirms (each found trace is read again and checked against both files).
#include <doctest/doctest.h>

#include "trajcheck/rule_diff.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;

namespace {

RuleDiffResult rd_diff(const std::string& old_text, const std::string& new_text, std::uint32_t max_steps = 10) {
  RuleDiffOptions o;
  o.max_steps = max_steps;
  return diff_rules(Source("old.rules", old_text), Source("new.rules", new_text), o);
}

RuleDiffEntry rd_only(const RuleDiffResult& r) {
  REQUIRE(r.ok());
  REQUIRE(r.rules.size() == 1);
  return r.rules.front();
}

// The rule named `name` of `text` is violated by `record`.
bool rd_violates(const std::string& text, const std::string& name, const std::string& record) {
  testing::Rules rules = testing::Rules::compile(Source("r.rules", text));
  testing::Trace t = testing::read_trace(record);
  return testing::violates(rules, t, name).ok;
}

}  // namespace

TEST_CASE("diff: a raised count bound widens, with the shortest trace") {
  const std::string a = "rule r:\n    order_get at most 1\n", b = "rule r:\n    order_get at most 2\n";
  const RuleDiffEntry e = rd_only(rd_diff(a, b));
  CHECK(e.change == RuleChange::widened);
  CHECK(e.paired_by == "name");
  REQUIRE(e.has_widening);
  CHECK_FALSE(e.has_narrowing);
  CHECK(e.widening.steps == std::vector<std::string>{"order_get", "order_get"});
  CHECK(rd_violates(a, "r", e.widening.record));
  CHECK_FALSE(rd_violates(b, "r", e.widening.record));
  // The other way round it narrows.
  const RuleDiffEntry f = rd_only(rd_diff(b, a));
  CHECK(f.change == RuleChange::narrowed);
}

TEST_CASE("diff: swapped precedes operands change both ways") {
  const std::string a = "rule r:\n    lookup precedes order_get\n", b = "rule r:\n    order_get precedes lookup\n";
  const RuleDiffEntry e = rd_only(rd_diff(a, b));
  CHECK(e.change == RuleChange::changed);
  REQUIRE(e.has_widening);
  REQUIRE(e.has_narrowing);
  CHECK(e.widening.steps.size() == 1);
  CHECK(e.narrowing.steps.size() == 1);
  CHECK(rd_violates(a, "r", e.widening.record));
  CHECK(rd_violates(b, "r", e.narrowing.record));
  CHECK(e.inexact.empty());  // `changed` needs no caveat: both traces are proofs
}

TEST_CASE("diff: a dropped where widens; a widened glob narrows a forbid") {
  const RuleDiffEntry e = rd_only(rd_diff("rule r:\n    approval where decision == \"approved\" precedes refund_order\n",
                                           "rule r:\n    approval precedes refund_order\n"));
  CHECK(e.change == RuleChange::widened);
  REQUIRE(e.has_widening);
  CHECK(e.widening.steps.size() == 2);
  const RuleDiffEntry g = rd_only(rd_diff("rule r:\n    forbid delete_order\n", "rule r:\n    forbid delete_*\n"));
  CHECK(g.change == RuleChange::narrowed);
  REQUIRE(g.has_narrowing);
  CHECK(g.narrowing.steps == std::vector<std::string>{"delete_x"});
}

TEST_CASE("diff: the same meaning is unchanged, through a group and a rename") {
  RuleDiffResult r = rd_diff("group g = a | b\nrule r:\n    forbid g\n", "rule s:\n    forbid a | b\n");
  const RuleDiffEntry e = rd_only(r);
  CHECK(e.change == RuleChange::unchanged);
  CHECK(e.paired_by == "meaning");
  // A changed group is not unchanged.
  const RuleDiffEntry f = rd_only(rd_diff("group g = a | b\nrule r:\n    forbid g\n", "group g = a\nrule r:\n    forbid g\n"));
  CHECK(f.change == RuleChange::widened);
}

TEST_CASE("diff: added and removed rules; a search that finds nothing says why it is not a proof") {
  RuleDiffResult r = rd_diff("rule a:\n    forbid x\n", "rule b:\n    forbid y\n");
  REQUIRE(r.ok());
  REQUIRE(r.rules.size() == 2);
  CHECK(r.rules[0].paired_by == "removed");
  CHECK(r.rules[0].change == RuleChange::widened);
  CHECK(r.rules[1].paired_by == "added");
  CHECK(r.rules[1].change == RuleChange::narrowed);
  const RuleDiffEntry e = rd_only(rd_diff("rule r:\n    forbid bash where arguments.command matches /rm -rf/\n",
                                           "rule r:\n    forbid bash where arguments.command matches /rm\\s+-rf/\n"));
  CHECK(e.change == RuleChange::no_difference_found);
  CHECK_FALSE(e.inexact.empty());
  std::string text = format_rule_diff(rd_diff("rule r:\n    forbid bash where arguments.command matches /rm -rf/\n",
                                              "rule r:\n    forbid bash where arguments.command matches /rm\\s+-rf/\n"),
                                      RuleDiffFormat::text);
  CHECK(text.find("not exhaustive because") != std::string::npos);
  CHECK(text.find("equivalent") == std::string::npos);
}

TEST_CASE("diff: long counterexamples come from families, within max_steps") {
  const RuleDiffEntry e = rd_only(rd_diff("rule r:\n    get_* at most 8 in a row\n", "rule r:\n    get_* at most 7 in a row\n"));
  CHECK(e.change == RuleChange::narrowed);
  REQUIRE(e.has_narrowing);
  CHECK(e.narrowing.steps.size() == 8);
  const RuleDiffEntry f = rd_only(rd_diff("rule r:\n    get_* at most 8 in a row\n", "rule r:\n    get_* at most 7 in a row\n", 5));
  CHECK(f.change == RuleChange::no_difference_found);
}

TEST_CASE("diff: a file that does not compile is an error, not a diff") {
  RuleDiffResult r = rd_diff("rule r:\n    forbid (\n", "forbid x\n");
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("old.rules") != std::string::npos);
}

TEST_CASE("diff: a condition on the trace context is tried with contexts that hold the constant") {
  const std::string a = "rule v:\n    forbid refund_order where context.role == \"viewer\"\n";
  const std::string b = "rule v:\n    forbid refund_* where context.role == \"viewer\"\n";
  const RuleDiffEntry e = rd_only(rd_diff(a, b));
  CHECK(e.change == RuleChange::narrowed);
  REQUIRE(e.has_narrowing);
  CHECK(e.narrowing.context == R"({"role":"viewer"})");
  CHECK(e.narrowing.steps == std::vector<std::string>{"refund_x"});
  CHECK(rd_violates(b, "v", e.narrowing.record));
  CHECK_FALSE(rd_violates(a, "v", e.narrowing.record));
}
