// The evaluator on tests/data/eval: control flows, abstention, each dimension, stale and
// unmatched cases, segment and split tables, every gate kind, and compare's bootstrap.
#include <doctest/doctest.h>

#include <map>

#include "eval/compare.hpp"
#include "eval/eval.hpp"

using namespace trajcheck;

namespace {

eval::EvalReport run(const std::vector<std::string>& runs = {}) {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/gates.suite";
  for (const auto& r : runs) o.runs.push_back(std::string(TRAJCHECK_TEST_DIR) + "/data/eval/" + r);
  eval::EvalReport report;
  std::string errors;
  bool ok = eval::run_eval(o, report, errors, false);
  REQUIRE_MESSAGE(ok, errors);
  return report;
}

const eval::CaseResult& find(const eval::EvalReport& r, const std::string& id) {
  for (const auto& c : r.cases)
    if (c.case_id == id) return c;
  FAIL("no case " << id);
  return r.cases.front();
}

}  // namespace

TEST_CASE("each control flow is classified") {
  auto r = run();
  CHECK(find(r, "act").control == "act");
  CHECK(find(r, "answer").control == "answer");
  CHECK(find(r, "clarify").control == "clarify");
  CHECK(find(r, "refuse").control == "refuse");
  CHECK(find(r, "handoff").control == "handoff");
  CHECK(find(r, "retry").control == "retry");
  CHECK(find(r, "retry").retried);
  CHECK(find(r, "retry").pass);
}

TEST_CASE("abstention: answer/clarify/refuse score selection 1 only without tool calls") {
  auto r = run();
  CHECK(*find(r, "answer").selection == 1.0);
  CHECK(*find(r, "clarify").selection == 1.0);
  CHECK(*find(r, "answer-with-tool").selection == 0.0);
  CHECK(*find(r, "refuse-with-tool").selection == 0.0);
  CHECK_FALSE(find(r, "refuse-with-tool").pass);
  CHECK(find(r, "refuse-with-tool").control == "refuse");
}

TEST_CASE("dimensions per case") {
  auto r = run();
  const auto& act = find(r, "act");
  CHECK(*act.selection == 1.0);
  CHECK(act.arguments_matched == 1);
  CHECK(act.arguments_total == 1);
  CHECK(*act.order == 1.0);
  CHECK_FALSE(act.recovery.has_value());  // no failed call
  CHECK(*act.outcome);
  const auto& retry = find(r, "retry");
  CHECK(retry.failed_call);
  CHECK(*retry.recovery);
  CHECK(retry.retries == 1);
  CHECK(retry.retries_by_class.at("timeout") == 1);
  CHECK(retry.duplicates == 0);  // repeating a failed call is a retry, not a duplicate
  const auto& byid = find(r, "by-trace-id");  // joined by trace_id; outcome from expected.output
  CHECK(byid.status == "judged");
  CHECK(*byid.outcome);
  CHECK(*byid.selection == 1.0);
}

TEST_CASE("stale and unmatched cases and runs are reported, not judged") {
  auto r = run();
  CHECK(find(r, "stale").status == "stale");
  CHECK(find(r, "no-run").status == "unmatched");
  REQUIRE(r.unmatched_runs.size() == 1);
  CHECK(r.unmatched_runs[0].find("(orphan)") != std::string::npos);
  CHECK(r.overall.cases == 9);
}

TEST_CASE("overall, segment and split tables") {
  auto r = run();
  CHECK(*r.overall.selection == doctest::Approx(7.0 / 9.0));
  CHECK(*r.overall.arguments == 1.0);
  REQUIRE(r.segments.size() == 3);
  CHECK(r.segments[0].value == "k1");
  CHECK(r.segments[0].dims.cases == 3);
  CHECK(*r.segments[0].dims.selection == doctest::Approx(2.0 / 3.0));
  CHECK(*r.segments[2].dims.selection == 1.0);
  REQUIRE(r.splits.size() == 3);
  CHECK(r.splits[0].value == "designed");
  CHECK(r.splits[1].value == "production");
  CHECK(r.splits[1].dims.cases == 3);
  CHECK(r.splits[2].value == "synthetic");
  CHECK(*r.splits[2].dims.recovery == 1.0);
  // Efficiency only over successful, gate-passing cases: 8 of 9 judged pass here.
  CHECK(r.overall.efficiency.cases == 7);
}

TEST_CASE("every gate kind passes and fails where it should, critical gates first") {
  auto r = run();
  std::map<std::string, std::string> status;
  for (const auto& g : r.gates) status[g.text + (g.segment.empty() ? "" : " @" + g.segment)] = g.status;
  CHECK(r.gates[0].critical);
  CHECK(r.gates[1].critical);
  CHECK(status["violations[critical] == 0"] == "pass");
  CHECK(status["violations[critical] > 0"] == "fail");
  CHECK(status["selection >= 80%"] == "fail");
  CHECK(status["selection < 50%"] == "fail");
  CHECK(status["arguments >= 100%"] == "pass");
  CHECK(status["arguments != 1"] == "fail");
  CHECK(status["order <= 1"] == "pass");
  CHECK(status["p95(calls_per_success) <= baseline * 1.10"] == "fail");
  CHECK(status["max(calls_per_success) == 3"] == "pass");
  CHECK(status["cost_per_success <= baseline + 0"] == "pass");
  CHECK(status["write_share <= 50%"] == "pass");
  CHECK(status["selection >= 70% per kind @kind=k1"] == "fail");
  CHECK(status["selection >= 70% per kind @kind=k3"] == "pass");
  CHECK(status["selection >= baseline per kind @kind=k1"] == "pass");
  CHECK(status["selection >= baseline per kind @kind=k2"] == "no data");
  CHECK_FALSE(r.gates_pass());
}

TEST_CASE("a critical violation fails the critical gate and the case") {
  auto r = run({"runs-b.jsonl"});
  CHECK(r.gates[0].text == "violations[critical] == 0");
  CHECK(r.gates[0].status == "fail");
  CHECK(*r.gates[0].value == 1.0);
  const auto& act = find(r, "act");
  CHECK_FALSE(act.pass);
  CHECK(act.duplicates == 1);
  CHECK(act.arguments_matched == 0);
  CHECK(find(r, "clarify").control == "act");
}

TEST_CASE("compare: known delta, flips, and a bootstrap reproducible by seed") {
  auto a = eval::report_json(run());
  auto b = eval::report_json(run({"runs-b.jsonl"}));
  eval::CompareOptions o;
  o.seed = 11;
  o.resamples = 500;
  eval::CompareReport r1, r2, r3;
  std::string err;
  REQUIRE(eval::compare_reports("a", a, "b", b, o, r1, err));
  REQUIRE(eval::compare_reports("a", a, "b", b, o, r2, err));
  o.seed = 12;
  REQUIRE(eval::compare_reports("a", a, "b", b, o, r3, err));
  CHECK(r1.paired_cases == 9);
  const eval::CompareRow* sel = nullptr;
  for (const auto& row : r1.rows)
    if (row.group == "overall" && row.dimension == "selection") sel = &row;
  REQUIRE(sel);
  // B: act keeps selection 1 (extra drop_table: Jaccard 2/3), clarify 1 -> 0.
  CHECK(*sel->a == doctest::Approx(7.0 / 9.0));
  CHECK(*sel->b == doctest::Approx((7.0 - 1.0 / 3.0 - 1.0) / 9.0));
  CHECK(*sel->delta == doctest::Approx(-(1.0 / 3.0 + 1.0) / 9.0));
  CHECK(*sel->lo <= *sel->delta);
  CHECK(*sel->hi >= *sel->delta - 1e-12);
  CHECK(r1.pass_to_fail == std::vector<std::string>{"act", "clarify"});
  CHECK(r1.fail_to_pass.empty());
  for (std::size_t i = 0; i < r1.rows.size(); ++i) {
    CHECK(r1.rows[i].lo == r2.rows[i].lo);
    CHECK(r1.rows[i].hi == r2.rows[i].hi);
  }
  bool differs = false;
  for (std::size_t i = 0; i < r1.rows.size(); ++i) differs |= r1.rows[i].lo != r3.rows[i].lo;
  CHECK(differs);
  CHECK_FALSE(eval::compare_reports("a", "{}", "b", b, o, r1, err));
}

TEST_CASE("percentile is nearest rank") {
  CHECK(*eval::percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95) == 10);
  CHECK(*eval::percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50) == 5);
  CHECK(*eval::percentile({3}, 99) == 3);
  CHECK_FALSE(eval::percentile({}, 50).has_value());
}
