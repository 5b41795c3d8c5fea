// k runs per case (nondeterminism): every run judged, pass@k, pass^k, the pass rate and flaky
// cases in the report, the gates and compare; a case with fewer runs is a located warning.
// Also each run's tools against the expected ones (missing, extra, misordered) and runs
// without an outcome left out of the efficiency figures. Each test writes its own suite.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "trajcheck/eval.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {

// A fresh folder holding a suite, its cases and its runs; removed at the end.
struct RunsSuite {
  fs::path dir;
  explicit RunsSuite(const std::string& name) {
    dir = fs::temp_directory_path() / ("trajcheck-runs-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~RunsSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name, std::ios::binary) << text; }
  eval::EvalReport run(std::string* problems_out = nullptr) const {
    eval::EvalOptions o;
    o.suite_path = (dir / "s.suite").string();
    o.grader_cache = "-";
    eval::EvalReport report;
    std::vector<eval::EvalProblem> problems;
    bool ok = eval::run_eval(o, report, problems);
    INFO(eval::format_problems(problems));
    REQUIRE(ok);
    if (problems_out) *problems_out = eval::format_problems(problems);
    return report;
  }
};

// A run of `case_id` calling `tools` in order, reporting success (or nothing when `success`
// is empty).
std::string run_line(const std::string& case_id, int n, const std::vector<std::string>& tools, const std::string& success) {
  nlohmann::json steps = nlohmann::json::array({{{"type", "user_message"}, {"content", "help"}}});
  int i = 0;
  for (const auto& t : tools)
    steps.push_back({{"type", "tool_call"}, {"id", "c" + std::to_string(++i)}, {"tool", t}, {"arguments", {{"n", i}}},
                     {"result", "ok"}, {"status", "ok"}});
  steps.push_back({{"type", "assistant_message"}, {"content", "done"}});
  nlohmann::json r = {{"trace_id", case_id + "-" + std::to_string(n)}, {"case_id", case_id}, {"steps", steps}};
  if (!success.empty()) r["success"] = success == "true";
  return r.dump() + "\n";
}

const eval::GateResult& gate(const eval::EvalReport& r, const std::string& text) {
  for (const auto& g : r.gates)
    if (g.text == text) return g;
  FAIL("no gate " << text);
  return r.gates.front();
}

const std::string kCases = R"({"case_id": "a", "expected": {"tools": ["lookup"]}}
{"case_id": "b", "expected": {"tools": ["lookup"]}}
{"case_id": "c", "expected": {"tools": ["lookup"]}}
)";

}  // namespace

TEST_CASE("k runs per case: every run judged; pass@k, pass^k, pass rate and flaky cases") {
  RunsSuite s("k3");
  s.write("s.suite", "suite \"k\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\nrules \"r.rules\"\n"
                     "gate pass_at_k >= 60%\ngate pass_all_k >= 50%\ngate pass_rate >= 55%\n"
                     "gate violations[critical] == 0\n");
  s.write("r.rules", "rule no_wipe [critical]:\n    forbid wipe\n");
  s.write("cases.jsonl", kCases);
  std::string runs;
  for (int n = 1; n <= 3; ++n) {
    runs += run_line("a", n, {"lookup"}, "true");                          // passes 3 of 3
    runs += run_line("b", n, {"lookup"}, n == 2 ? "false" : "true");       // 2 of 3: flaky
    runs += run_line("c", n, {"lookup", "wipe"}, "true");                  // a critical violation each run
  }
  s.write("runs.jsonl", runs);
  eval::EvalReport r = s.run();
  CHECK(r.unmatched_runs.empty());
  CHECK(r.k == 3);
  CHECK(r.k_fewest == 3);
  CHECK(r.judged() == 3);
  CHECK(r.overall.cases == 3);
  CHECK(r.overall.runs == 9);
  REQUIRE(r.overall.pass_at_k);
  CHECK(*r.overall.pass_at_k == doctest::Approx(2.0 / 3));
  CHECK(*r.overall.pass_all_k == doctest::Approx(1.0 / 3));
  CHECK(*r.overall.pass_rate == doctest::Approx((1.0 + 2.0 / 3 + 0.0) / 3));
  CHECK(r.overall.flaky == 1);
  CHECK(r.overall.violations.at("critical") == 3);  // every run's violations count
  CHECK(r.overall.selection_n == 9);
  const eval::CaseResult& b = r.cases[1];
  CHECK(b.runs() == 3);
  CHECK(b.runs_passed() == 2);
  CHECK(b.flaky());
  CHECK_FALSE(b.pass_all());
  CHECK(b.repeats[0].run.find("runs.jsonl:5") != std::string::npos);
  CHECK(gate(r, "pass_at_k >= 60%").status == eval::GateStatus::pass);
  CHECK(gate(r, "pass_all_k >= 50%").status == eval::GateStatus::fail);
  CHECK(gate(r, "pass_rate >= 55%").status == eval::GateStatus::pass);
  CHECK(gate(r, "violations[critical] == 0").status == eval::GateStatus::fail);

  auto j = nlohmann::json::parse(eval::report_json(r));
  CHECK(j["summary"]["k"] == 3);
  CHECK(j["summary"]["runs"] == 9);
  CHECK(j["summary"]["runs_passed"] == 5);
  CHECK(j["summary"]["passed"] == 1);
  CHECK(j["overall"]["metrics"]["pass_all_k"].get<double>() == doctest::Approx(1.0 / 3));
  REQUIRE(j["flaky_cases"].size() == 1);
  CHECK(j["flaky_cases"][0]["case_id"] == "b");
  CHECK(j["cases"][1]["pass"] == false);
  CHECK(j["cases"][1]["run_passes"] == nlohmann::json::array({true, false, true}));
  CHECK(j["cases"][1]["repeats"].size() == 2);
  CHECK(j["cases"][1]["repeats"][0]["pass"] == false);

  std::string text = eval::report_text(r);
  CHECK(text.find("runs per case (k = 3)") != std::string::npos);
  CHECK(text.find("flaky cases (some runs pass, some fail)") != std::string::npos);
  CHECK(text.find("FAIL    b [designed] control act runs 2/3 pass (flaky): run 2: outcome:") != std::string::npos);
  CHECK(text.find("3 judged (1 pass), 9 runs (5 pass), k = 3") != std::string::npos);
  CHECK(eval::report_markdown(r).find("### Flaky cases (some runs pass, some fail)") != std::string::npos);
  CHECK(eval::report_html(r).find("<table id=\"flaky\">") != std::string::npos);
  CHECK(eval::report_junit(r).find("2/3 runs pass (flaky): run 2: outcome:") != std::string::npos);

  // compare: pass@k, pass^k and the pass rate are rows; the flip uses the case's verdict.
  RunsSuite one("k3-b");
  one.write("s.suite", "suite \"k\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\n");
  one.write("cases.jsonl", kCases);
  one.write("runs.jsonl", run_line("a", 1, {"lookup"}, "false") + run_line("b", 1, {"lookup"}, "true") +
                              run_line("c", 1, {"lookup"}, "true"));
  eval::CompareReport c;
  std::string error;
  REQUIRE(eval::compare_reports("k3", eval::report_json(r), "one", eval::report_json(one.run()), {}, c, error));
  std::map<std::string, const eval::CompareRow*> rows;
  for (const auto& row : c.rows)
    if (row.group == "overall") rows[row.dimension] = &row;
  REQUIRE(rows.count("pass_at_k"));
  CHECK(*rows["pass_at_k"]->a == doctest::Approx(2.0 / 3));
  CHECK(*rows["pass_at_k"]->b == doctest::Approx(2.0 / 3));
  CHECK(*rows["pass_all_k"]->b == doctest::Approx(2.0 / 3));
  CHECK(*rows["pass_rate"]->a == doctest::Approx(5.0 / 9));
  CHECK(rows["selection"]->paired == 3);
  CHECK(c.pass_to_fail == std::vector<std::string>{"a"});
  CHECK(c.fail_to_pass == std::vector<std::string>{"b", "c"});
}

TEST_CASE("k is the most runs of a case; a case with fewer is a located, counted warning") {
  RunsSuite s("fewer");
  s.write("s.suite", "suite \"k\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\n");
  s.write("cases.jsonl", kCases);
  s.write("runs.jsonl", run_line("a", 1, {"lookup"}, "true") + run_line("a", 2, {"lookup"}, "false") +
                            run_line("b", 1, {"lookup"}, "false") + run_line("c", 1, {"lookup"}, "true") +
                            run_line("c", 2, {"lookup"}, "true"));
  std::string problems;
  eval::EvalReport r = s.run(&problems);
  CHECK(r.k == 2);
  CHECK(r.k_fewest == 1);
  CHECK(r.warnings == 1);
  CHECK(problems.find("cases.jsonl:2: warning: case 'b' has 1 run, other cases up to 2 (k = 2)") != std::string::npos);
  CHECK(*r.overall.pass_at_k == doctest::Approx(2.0 / 3));   // a and c
  CHECK(*r.overall.pass_all_k == doctest::Approx(1.0 / 3));  // c
  CHECK(eval::report_text(r).find("runs per case (k = 2, fewest 1)") != std::string::npos);
}

TEST_CASE("one run per case: pass@k, pass^k and the pass rate are the share of cases that pass; no runs table") {
  RunsSuite s("k1");
  s.write("s.suite", "suite \"k\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\n");
  s.write("cases.jsonl", kCases);
  s.write("runs.jsonl", run_line("a", 1, {"lookup"}, "true") + run_line("b", 1, {"lookup"}, "false") +
                            run_line("c", 1, {"lookup"}, "true"));
  eval::EvalReport r = s.run();
  CHECK(r.k == 1);
  CHECK(r.overall.runs == 3);
  for (const auto* v : {&r.overall.pass_at_k, &r.overall.pass_all_k, &r.overall.pass_rate})
    CHECK(**v == doctest::Approx(2.0 / 3));
  std::string text = eval::report_text(r);
  CHECK(text.find("runs per case") == std::string::npos);
  CHECK(text.find("3 judged (2 pass), 0 stale") != std::string::npos);
  auto j = nlohmann::json::parse(eval::report_json(r));
  CHECK_FALSE(j["cases"][0].contains("repeats"));
  CHECK(j["flaky_cases"].empty());
}

TEST_CASE("each run's tools against the expected ones: missing, extra, misordered, in every format") {
  RunsSuite s("tools");
  s.write("s.suite", "suite \"t\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\n");
  s.write("cases.jsonl", R"({"case_id": "swap", "expected": {"tools": ["lookup", "refund"]}}
{"case_id": "short", "expected": {"tools": ["lookup", "refund"]}}
{"case_id": "quiet", "expected": {"control": "answer"}}
{"case_id": "right", "expected": {"tools": ["lookup", "refund"]}}
)");
  s.write("runs.jsonl", run_line("swap", 1, {"refund", "lookup", "search"}, "true") +
                            run_line("short", 1, {"lookup"}, "true") + run_line("quiet", 1, {"search", "search"}, "true") +
                            run_line("right", 1, {"lookup", "refund"}, "true"));
  eval::EvalReport r = s.run();
  const auto& swap = r.cases[0];
  CHECK(swap.missing_tools.empty());
  CHECK(swap.extra_tools == std::vector<std::string>{"search"});
  CHECK(swap.misordered_tools == std::vector<std::string>{"lookup", "refund"});
  CHECK(r.cases[1].missing_tools == std::vector<std::string>{"refund"});
  CHECK(r.cases[2].extra_tools == std::vector<std::string>{"search"});
  CHECK_FALSE(r.cases[3].tools_differ());
  std::string text = eval::report_text(r);
  CHECK(text.find("tools against the expected ones:") != std::string::npos);
  const std::string md = eval::report_markdown(r);
  CHECK(md.find("| swap |  | search | lookup, refund |") != std::string::npos);
  CHECK(md.find("| short | refund |  |  |") != std::string::npos);
  CHECK(md.find("| quiet |  | search |  |") != std::string::npos);
  CHECK(md.find("| right |") == std::string::npos);  // no row for a run that agrees
  CHECK(eval::report_html(r).find("<table id=\"tools\">") != std::string::npos);
  std::string junit = eval::report_junit(r);
  CHECK(junit.find("<system-out>tools: missing refund\n</system-out>") != std::string::npos);
  auto j = nlohmann::json::parse(eval::report_json(r));
  CHECK(j["cases"][0]["tools"]["misordered"] == nlohmann::json::array({"lookup", "refund"}));
  CHECK(j["cases"][0]["explanation"].get<std::string>().find("swapped lookup and refund") != std::string::npos);
}

TEST_CASE("a run without an outcome is not a success in the efficiency figures") {
  RunsSuite s("outcome");
  s.write("s.suite", "suite \"o\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\n");
  s.write("cases.jsonl", kCases);
  s.write("runs.jsonl", run_line("a", 1, {"lookup"}, "true") + run_line("b", 1, {"lookup", "lookup"}, "") +
                            run_line("c", 1, {"lookup"}, "false"));
  eval::EvalReport r = s.run();
  CHECK(r.cases[1].pass);  // nothing is wrong with it ...
  CHECK_FALSE(r.cases[1].outcome);
  CHECK(r.overall.efficiency.cases == 1);  // ... but only `a` is a success
  CHECK(*r.overall.efficiency.calls_per_success == doctest::Approx(1.0));
}
