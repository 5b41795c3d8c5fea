// The evaluator on tests/data/eval: control flows, abstention, each dimension, stale and
// unmatched cases, segment and split tables, every gate kind, and compare's bootstrap.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "trajcheck/eval.hpp"
#include "eval/eval.hpp"

using namespace trajcheck;

namespace {

eval::EvalReport run(const std::vector<std::string>& runs = {}) {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/gates.suite";
  for (const auto& r : runs) o.runs.push_back(std::string(TRAJCHECK_TEST_DIR) + "/data/eval/" + r);
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  bool ok = eval::run_eval(o, report, problems);
  REQUIRE_MESSAGE(ok, eval::format_problems(problems));
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
  CHECK(byid.status == eval::CaseStatus::judged);
  CHECK(*byid.outcome);
  CHECK(*byid.selection == 1.0);
}

TEST_CASE("argument validity: every call of a catalog tool against its schema, expected or not") {
  auto r = run();
  const auto& act = find(r, "act");  // lookup (no schema: any arguments) and update {id, v}
  CHECK(act.schema_calls == 2);
  CHECK(act.schema_valid == 2);
  const auto& retry = find(r, "retry");  // update {id} twice: `v` is required
  CHECK(retry.schema_calls == 3);
  CHECK(retry.schema_valid == 1);
  CHECK(retry.pass);  // not a case problem: a gate on argument_validity decides
  CHECK(find(r, "answer").schema_calls == 0);
  // 10 calls of catalog tools in the 9 judged runs, 2 invalid; `arguments` is unchanged.
  CHECK(r.overall.argument_validity_n == 10);
  CHECK(*r.overall.argument_validity == doctest::Approx(0.8));
  CHECK(*r.overall.arguments == 1.0);
  std::map<std::string, std::string> status;
  for (const auto& g : r.gates) status[g.text + (g.segment.empty() ? "" : " @" + g.segment)] = std::string(eval::to_string(g.status));
  CHECK(status["argument_validity >= 75%"] == "pass");
  CHECK(status["argument_validity == 100%"] == "fail");
  auto j = nlohmann::json::parse(eval::report_json(r));
  CHECK(j["overall"]["argument_validity"].get<double>() == doctest::Approx(0.8));
  CHECK(j["overall"]["argument_validity_calls"] == 10);
  CHECK(j["overall"]["metrics"]["argument_validity"].get<double>() == doctest::Approx(0.8));
  CHECK(j["splits"][2]["value"] == "synthetic");
  CHECK(j["splits"][2]["argument_validity"].get<double>() == doctest::Approx(4.0 / 6));
  for (const auto& c : j["cases"])
    if (c["case_id"] == "retry") CHECK(c["schema_valid"] == 1);
  CHECK(eval::report_text(r).find("arg validity") != std::string::npos);
  CHECK(eval::report_markdown(r).find("| argument validity |") != std::string::npos);
  CHECK(eval::report_html(r).find("<th>argument validity</th>") != std::string::npos);
}

TEST_CASE("without a catalog, argument validity has no value and its gate has no data") {
  std::string dir = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  eval::EvalOptions o;
  o.suite_path = dir + "sessions.suite";
  REQUIRE_MESSAGE(eval::run_eval(o, report, problems), eval::format_problems(problems));
  CHECK_FALSE(report.overall.argument_validity.has_value());
  CHECK(report.overall.argument_validity_n == 0);
}

TEST_CASE("violations[RULE] and violations[TAG] count one rule's or one tag's violations") {
  auto a = run();
  auto b = run({"runs-b.jsonl"});
  auto gate = [](const eval::EvalReport& r, const std::string& text) -> const eval::GateResult& {
    for (const auto& g : r.gates)
      if (g.text == text) return g;
    FAIL("no gate " << text);
    return r.gates.front();
  };
  // never_drop is [critical]: its gate is a critical one, listed with violations[critical].
  CHECK(gate(a, "violations[never_drop] == 0").critical);
  CHECK(gate(a, "violations[never_drop] == 0").status == eval::GateStatus::pass);
  CHECK(gate(b, "violations[never_drop] == 0").status == eval::GateStatus::fail);
  CHECK(*gate(b, "violations[never_drop] == 0").value == 1.0);
  CHECK(b.overall.violations_by_rule.at("never_drop") == 1);
  std::size_t critical = 0;
  while (critical < a.gates.size() && a.gates[critical].critical) ++critical;
  CHECK(critical == 3);  // violations[critical] == 0, > 0, violations[never_drop] == 0
  CHECK_FALSE(gate(a, "violations[order] == 0").critical);  // a tag of a rule without a severity
  CHECK(gate(a, "violations[order] == 0").metric == "violations[order]");
  // The json metrics name every rule and tag, so a baseline has them even at 0.
  auto j = nlohmann::json::parse(eval::report_json(a));
  for (const char* k : {"violations[never_drop]", "violations[lookup_first]", "violations[order]",
                        "violations[recovery]", "violations[style]"})
    CHECK(j["overall"]["metrics"].contains(k));
}

TEST_CASE("violations[NAME] that is no rule or tag is an error with the closest name") {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/bad-gate-rule.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  CHECK_FALSE(eval::run_eval(o, report, problems));
  std::string text = eval::format_problems(problems);
  CHECK(text.find("error[S006]: violations[never_dorp]: 'never_dorp' is no severity, rule or tag of the suite's "
                  "rules files; did you mean 'never_drop'?") != std::string::npos);
  CHECK(text.find("did you mean 'recovery'?") != std::string::npos);
  CHECK(text.find("'nothing_like_it' is no severity, rule or tag of the suite's rules files\n") != std::string::npos);
}

TEST_CASE("a rules file's aliases apply to scoring, on the runs' names and the cases' own") {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/aliases/aliases.suite";
  auto judge = [&](const eval::EvalOptions& opts) {
    eval::EvalReport report;
    std::vector<eval::EvalProblem> problems;
    REQUIRE_MESSAGE(eval::run_eval(opts, report, problems), eval::format_problems(problems));
    return report;
  };
  auto r = judge(o);
  for (const char* id : {"canonical", "observed", "path"}) {
    CAPTURE(id);
    const auto& c = find(r, id);
    CHECK(*c.selection == 1.0);  // not 1/3: `Search` is search_documents
    CHECK(*c.order == 1.0);
    CHECK(c.pass);
  }
  CHECK(find(r, "canonical").arguments_matched == 1);
  CHECK(find(r, "observed").arguments_matched == 1);
  CHECK(r.passed());
  // A name given with --alias keeps the given meaning: `search` is then another tool.
  o.reading.aliases = {{"search", "web_search"}};
  auto given = judge(o);
  CHECK(*find(given, "canonical").selection == doctest::Approx(1.0 / 3.0));
  CHECK_FALSE(given.passed());
}

TEST_CASE("stale and unmatched cases and runs are reported, not judged") {
  auto r = run();
  CHECK(find(r, "stale").status == eval::CaseStatus::stale);
  CHECK(find(r, "no-run").status == eval::CaseStatus::unmatched);
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
  for (const auto& g : r.gates) status[g.text + (g.segment.empty() ? "" : " @" + g.segment)] = std::string(eval::to_string(g.status));
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
  CHECK(status["selection >= baseline per kind if data @kind=k1"] == "pass");
  CHECK(status["selection >= baseline per kind if data @kind=k2"] == "no data");
  CHECK(status["arguments >= 90% per kind if data @kind=k1"] == "pass");
  CHECK(status["arguments >= 90% per kind if data @kind=k3"] == "no data");
  CHECK(status["latency_per_success <= 1000"] == "fail");  // no data, and no `if data`
  CHECK_FALSE(r.gates_pass());
}

TEST_CASE("a run that judged no case fails, and its gates without data fail unless `if data`") {
  auto r = run({"runs-none.jsonl"});  // an empty file
  CHECK(r.judged() == 0);
  CHECK_FALSE(r.passed());
  CHECK(eval::nothing_judged(r).rfind("no case was judged: 11 cases, 11 without a run, 0 stale", 0) == 0);
  std::map<std::string, std::string> status;
  for (const auto& g : r.gates) status[g.text + (g.segment.empty() ? "" : " @" + g.segment)] = std::string(eval::to_string(g.status));
  CHECK(status["violations[critical] == 0"] == "pass");  // a count: 0 of nothing
  CHECK(status["selection >= 80%"] == "fail");
  CHECK(status["selection >= 60% per kind"] == "fail");  // one row without data, not none
  CHECK(status["selection >= baseline per kind if data"] == "no data");
  auto j = nlohmann::json::parse(eval::report_json(r));
  CHECK(j["status"] == "fail");
  CHECK(j["reason"].get<std::string>().rfind("no case was judged", 0) == 0);
  CHECK(eval::report_text(r).find("FAIL: no case was judged") != std::string::npos);
  CHECK(eval::report_markdown(r).find("❌ fail") != std::string::npos);
  CHECK(eval::report_junit(r).find("name=\"judged cases\"><failure") != std::string::npos);
  CHECK(eval::report_html(r).find("<p class=\"status fail\">no case was judged") != std::string::npos);
}

TEST_CASE("a critical violation fails the critical gate and the case") {
  auto r = run({"runs-b.jsonl"});
  CHECK(r.gates[0].text == "violations[critical] == 0");
  CHECK(r.gates[0].status == eval::GateStatus::fail);
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
  // argument_validity is a row of its own: a share of calls over the paired cases.
  const eval::CompareRow* validity = nullptr;
  for (const auto& row : r1.rows)
    if (row.group == "overall" && row.dimension == "argument_validity") validity = &row;
  REQUIRE(validity);
  CHECK(*validity->a == doctest::Approx(0.8));
  CHECK(validity->paired == 9);  // every case judged with a catalog, with calls or not
  // A case that says more calls were valid than were checked is bad input.
  auto bad = nlohmann::json::parse(b);
  for (auto& c : bad["cases"])
    if (c["case_id"] == "act") c["schema_valid"] = 7;
  CHECK_FALSE(eval::compare_reports("a", a, "b", bad.dump(), o, r3, err));
  CHECK(err.find("schema_valid: 7 is more than schema_calls") != std::string::npos);
  for (std::size_t i = 0; i < r1.rows.size(); ++i) {
    CHECK(r1.rows[i].lo == r2.rows[i].lo);
    CHECK(r1.rows[i].hi == r2.rows[i].hi);
  }
  bool differs = false;
  for (std::size_t i = 0; i < r1.rows.size(); ++i) differs |= r1.rows[i].lo != r3.rows[i].lo;
  CHECK(differs);
  CHECK_FALSE(eval::compare_reports("a", "{}", "b", b, o, r1, err));
}

TEST_CASE("compare: overall and the per-success figures, and what --fail-on-regression fails on") {
  // Six cases passed in both; B makes two more calls on each (worse: lower is better) at a lower
  // overall score, and spends less per success (better).
  auto report = [](double overall, int calls, double cost, bool last_passes) {
    nlohmann::json j;
    j["overall"] = {{"metrics", nlohmann::json::object()}};
    j["cases"] = nlohmann::json::array();
    for (int i = 0; i < 6; ++i)
      j["cases"].push_back({{"case_id", "c" + std::to_string(i)}, {"status", "judged"}, {"split", "designed"},
                            {"pass", i < 5 || last_passes}, {"outcome", true}, {"overall", overall - 0.01 * i}, {"calls", calls + i % 2},
                            {"duplicates", 0}, {"tokens", nullptr}, {"cost", cost}, {"latency_ms", 100}});
    return j.dump();
  };
  eval::CompareOptions o;
  o.resamples = 400;
  eval::CompareReport r;
  std::string err;
  REQUIRE(eval::compare_reports("a", report(0.9, 2, 0.02, true), "b", report(0.7, 4, 0.01, true), o, r, err));
  auto row = [&](const char* dim) -> const eval::CompareRow& {
    for (const auto& x : r.rows)
      if (x.group == "overall" && x.dimension == dim) return x;
    FAIL("no row " << dim);
    return r.rows.front();
  };
  CHECK(*row("overall").delta == doctest::Approx(-0.2));
  CHECK(row("overall").regressed);
  CHECK(*row("calls_per_success").a == doctest::Approx(2.5));
  CHECK(*row("calls_per_success").delta == doctest::Approx(2.0));
  CHECK(row("calls_per_success").lower_is_better);
  CHECK(row("calls_per_success").regressed);  // more calls: the interval lies above 0
  CHECK_FALSE(row("cost_per_success").regressed);  // cheaper: an improvement
  CHECK(*row("cost_per_success").hi < 0);
  CHECK_FALSE(row("latency_per_success").regressed);  // unchanged: [0, 0]
  CHECK(row("tokens_per_success").paired == 0);       // no case has tokens
  CHECK(r.regressions == std::vector<std::string>{"overall", "calls_per_success"});
  CHECK(eval::compare_regressed(r));
  CHECK(nlohmann::json::parse(eval::compare_json(r))["regressed"] == true);
  CHECK(eval::compare_text(r).find("regressions (2): overall calls_per_success") != std::string::npos);
  // The same run twice: nothing regressed, nothing flipped.
  REQUIRE(eval::compare_reports("a", report(0.9, 2, 0.02, true), "b", report(0.9, 2, 0.02, true), o, r, err));
  CHECK(r.regressions.empty());
  CHECK_FALSE(eval::compare_regressed(r));
  // One case flipped pass -> fail, every interval straddles or touches 0: still a regression.
  REQUIRE(eval::compare_reports("a", report(0.9, 2, 0.02, true), "b", report(0.9, 2, 0.02, false), o, r, err));
  CHECK(r.pass_to_fail == std::vector<std::string>{"c5"});
  CHECK(eval::compare_regressed(r));
  CHECK(row("calls_per_success").paired == 5);  // per success: the cases both runs passed
  for (const char* f : {"markdown", "html"}) {
    std::string out = std::string(f) == "markdown" ? eval::compare_markdown(r) : eval::compare_html(r);
    CHECK_MESSAGE(out.find("c5") != std::string::npos, f);
  }
  // A per-success figure that is not a count is bad input, located.
  auto bad = nlohmann::json::parse(report(0.9, 2, 0.02, true));
  bad["cases"][1]["calls"] = -1;
  CHECK_FALSE(eval::compare_reports("a", bad.dump(), "b", report(0.9, 2, 0.02, true), o, r, err));
  CHECK(err.find("cases[1].calls: expected a count of 0 or more") != std::string::npos);
}

TEST_CASE("reports carry the digests of their inputs; compare warns, or with require_same fails, when they differ") {
  auto r = run();
  std::map<std::string, std::string> kinds;
  for (const auto& in : r.inputs) {
    CHECK(in.sha256.size() == 64);
    kinds[in.file.substr(in.file.find_last_of('/') + 1)] = in.kind;
  }
  CHECK(kinds == std::map<std::string, std::string>{
                     {"cases.jsonl", "cases"}, {"catalog.json", "catalog"}, {"t.rules", "rules"}});
  // SHA-256 of the file's bytes.
  std::ifstream in(std::string(TRAJCHECK_TEST_DIR) + "/data/eval/t.rules", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& d : r.inputs)
    if (d.kind == "rules") CHECK(d.sha256 == sha256_hex(text));
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  auto a = eval::report_json(r);
  auto b = nlohmann::json::parse(eval::report_json(run({"runs-b.jsonl"})));
  eval::CompareOptions o;
  o.resamples = 10;
  eval::CompareReport cr;
  std::string err;
  REQUIRE(eval::compare_reports("a", a, "b", b.dump(), o, cr, err));
  CHECK(cr.input_differences.empty());  // other runs, the same inputs
  for (auto& d : b["inputs"])
    if (d["kind"] == "rules") d["sha256"] = std::string(64, '0');
  REQUIRE(eval::compare_reports("a", a, "b", b.dump(), o, cr, err));
  REQUIRE(cr.input_differences.size() == 1);
  CHECK(cr.input_differences[0].find("t.rules: the files differ") != std::string::npos);
  CHECK(eval::compare_text(cr).find("warning: the reports were not computed from the same inputs") != std::string::npos);
  CHECK(nlohmann::json::parse(eval::compare_json(cr))["same_inputs"] == false);
  o.require_same = true;
  CHECK_FALSE(eval::compare_reports("a", a, "b", b.dump(), o, cr, err));
  CHECK(err.find("--require-same") != std::string::npos);
  b.erase("inputs");  // an older report: nothing to vouch for the inputs
  CHECK_FALSE(eval::compare_reports("a", a, "b", b.dump(), o, cr, err));
  CHECK(err.find("B has no input digests") != std::string::npos);
  b["inputs"] = 3;
  o.require_same = false;
  CHECK_FALSE(eval::compare_reports("a", a, "b", b.dump(), o, cr, err));
  CHECK(err.find("inputs: expected a list") != std::string::npos);
}

TEST_CASE("percentile is nearest rank") {
  CHECK(*eval::percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95) == 10);
  CHECK(*eval::percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50) == 5);
  CHECK(*eval::percentile({3}, 99) == 3);
  CHECK_FALSE(eval::percentile({}, 50).has_value());
}

namespace {
eval::EvalReport run_scoring() {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/scoring/scoring.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  bool ok = eval::run_eval(o, report, problems);
  REQUIRE_MESSAGE(ok, eval::format_problems(problems));
  return report;
}
}  // namespace

TEST_CASE("order is score's ordering: calls of one assistant turn are unordered") {
  auto r = run_scoring();
  // customer_lookup, then one turn calling shipment_track and order_list, against
  // [customer_lookup, order_list, shipment_track]: score says 1 (the plain LCS: 2/3).
  REQUIRE(find(r, "turns").order);
  CHECK(*find(r, "turns").order == 1.0);
}

TEST_CASE("order min length: shorter expected sequences have no order, overall is selection") {
  auto r = run_scoring();
  const auto& swapped = find(r, "swap2");  // [b, a] against [a, b]: 0.5 without the setting
  CHECK_FALSE(swapped.order);
  CHECK(*swapped.selection == 1.0);
  CHECK(*swapped.overall == 1.0);
  CHECK(r.overall.order_n == 1);
  CHECK(*r.overall.overall == 1.0);
  CHECK(r.gates[0].metric == "overall");
  CHECK(r.gates[0].status == eval::GateStatus::pass);
}

TEST_CASE("an outcome failure names the missing fields and the differing values") {
  auto r = run_scoring();
  const auto& c = find(r, "outcome");
  CHECK_FALSE(*c.outcome);
  REQUIRE(c.problems.size() == 1);
  CHECK(c.problems[0] ==
        "outcome: missing refund_id; note expected \"refunded in full to the original pay..., got \"refunded in "
        "part: the shipping fee s...; status expected \"done\", got \"pending\"");
}

TEST_CASE("duplicates per 100 cases (the rubric's unit) and per 100 calls") {
  auto r = run_scoring();
  const auto& e = r.overall.efficiency;
  REQUIRE(e.cases == 3);  // turns, swap2, dup pass; 7 calls, 1 duplicate
  CHECK(e.calls == 7);
  CHECK(*e.duplicates_per_100 == doctest::Approx(100.0 / 3));
  CHECK(*e.duplicates_per_100_calls == doctest::Approx(100.0 / 7));
  CHECK(r.gates[1].metric == "duplicates_per_100");
  CHECK(r.gates[1].status == eval::GateStatus::fail);
}

TEST_CASE("retrieval volume: read calls' result bytes, and reads whose results are never used") {
  auto r = run_scoring();
  const auto& turns = find(r, "turns");
  CHECK(turns.read_calls == 3);
  CHECK(*turns.read_volume == std::string(R"({"customer_id":"c_9"}{"eta":"tomorrow"}{"orders":["o_1"]})").size());
  CHECK(turns.unused_reads == 1);  // o_1: in no later call's arguments nor the answer
  CHECK(find(r, "dup").unused_reads == 0);     // c_9 is in the final answer
  CHECK(find(r, "swap2").unused_reads == 1);  // nothing after the lookup uses c_9
  const auto& e = r.overall.efficiency;
  CHECK(e.read_calls == 6);
  CHECK(*e.unused_read_share == doctest::Approx(2.0 / 6));
  CHECK(*e.read_volume_per_success == doctest::Approx(120.0 / 3));
}

TEST_CASE("compare: every printed delta is B - A over the pairs and lies inside its own interval") {
  // The example regression: B judges a case A did not (stale in A), so report-level values
  // and the paired statistic differ; the row prints the paired one.
  std::string dir = std::string(TRAJCHECK_SOURCE_DIR) + "/examples/eval/reports/";
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::vector<std::pair<std::string, std::string>> inputs{
      {slurp(dir + "release-41.json"), slurp(dir + "candidate-b.json")},
      {eval::report_json(run()), eval::report_json(run({"runs-b.jsonl"}))}};
  // Random paired reports: ratios, shares of calls, booleans, absent values, two segments.
  std::mt19937_64 rng(99);
  for (int k = 0; k < 40; ++k) {
    nlohmann::json ra = {{"overall", nlohmann::json::object()}, {"cases", nlohmann::json::array()}};
    nlohmann::json rb = ra;
    int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i)
      for (nlohmann::json* r : {&ra, &rb}) {
        nlohmann::json c = {{"case_id", "c" + std::to_string(i)}, {"status", "judged"}, {"pass", rng() % 2 == 0},
                            {"split", "designed"}, {"segments", {{"kind", rng() % 2 ? "x" : "y"}}}};
        c["selection"] = static_cast<double>(rng() % 4) / 3.0;
        c["order"] = rng() % 5 == 0 ? nlohmann::json(nullptr) : nlohmann::json(static_cast<double>(rng() % 3) / 2.0);
        c["arguments_calls"] = rng() % 6;
        c["arguments_matched"] = rng() % (c["arguments_calls"].get<int>() + 1);
        c["recovery"] = rng() % 3 == 0 ? nlohmann::json(nullptr) : nlohmann::json(rng() % 2 == 0);
        c["outcome"] = rng() % 2 == 0;
        (*r)["cases"].push_back(c);
      }
    ra["segments"] = rb["segments"] = nlohmann::json::array({{{"field", "kind"}, {"value", "x"}}, {{"field", "kind"}, {"value", "y"}}});
    inputs.emplace_back(ra.dump(), rb.dump());
  }
  int rows = 0;
  for (const auto& [a, b] : inputs) {
    eval::CompareOptions o;
    o.resamples = 400;
    eval::CompareReport r;
    std::string err;
    REQUIRE_MESSAGE(eval::compare_reports("a", a, "b", b, o, r, err), err);
    for (const auto& row : r.rows) {
      if (!row.delta) continue;
      ++rows;
      CAPTURE(row.group);
      CAPTURE(row.dimension);
      CHECK(*row.delta == doctest::Approx(*row.b - *row.a));
      REQUIRE(row.lo);
      CHECK(*row.lo <= *row.delta + 1e-12);
      CHECK(*row.hi >= *row.delta - 1e-12);
    }
  }
  CHECK(rows > 300);
}

TEST_CASE("tokens: the run's own, else the usage its messages report, once per response") {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/producers.suite";
  eval::EvalReport r;
  std::vector<eval::EvalProblem> problems;
  REQUIRE_MESSAGE(eval::run_eval(o, r, problems), eval::format_problems(problems));
  auto tokens = [&](const std::string& id) { return find(r, id).tokens.value_or(-1); };
  // Real producers: Claude Code's Anthropic usage per response (2 and 3 responses of 10 + 5),
  // Codex's last token count, LangChain's usage_metadata (62 + 85).
  CHECK(tokens("b62a1058-cefc-4fcc-95a7-ce0fec56fc71") == 30);
  CHECK(tokens("b62a1058-cefc-4fcc-95a7-ce0fec56fc71/agent-a7fc607ca3670d7ae") == 45);
  CHECK(tokens("01a247f3-05db-7653-8400-c72134e20224") == 450);
  CHECK(tokens("langchain-serialized") == 147);
  CHECK(tokens("openai-chat") == 260);      // prompt + completion, then total_tokens
  CHECK(tokens("anthropic-cache") == 515);  // input + cache creation + cache read + output
  CHECK(tokens("run-says") == 7);           // the run's metadata wins over its messages
  CHECK(tokens("resp-usage") == 380);       // a response record's usage
  CHECK(tokens("sess-usage") == 48);        // one response written on two lines: counted once
}
