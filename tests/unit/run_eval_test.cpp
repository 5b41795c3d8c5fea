// Eval through the public header alone: problems are values (a diagnostic in its file, or a
// message line) that format to what `trajcheck eval` prints, and the report is the CLI's.
#include <doctest/doctest.h>

#include "run_test_util.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "trajcheck/eval.hpp"

using namespace trajcheck;
using run_test::slurp;

namespace {

struct InData : run_test::InDir {
  InData() : InDir(TRAJCHECK_TEST_DIR "/data/eval") {}
};

// The golden runner's record: stdout, "--- stderr", stderr, "--- exit N".
std::string golden(const std::string& name) { return slurp(TRAJCHECK_TEST_DIR "/golden/eval/" + name); }

}  // namespace

TEST_CASE("a suite's mistakes are diagnostics with their file and code") {
  InData in;
  eval::EvalOptions o;
  o.suite_path = "bad.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  CHECK_FALSE(eval::run_eval(o, report, problems));
  REQUIRE_FALSE(problems.empty());
  REQUIRE(problems[0].source != nullptr);
  CHECK(problems[0].source->name() == "bad.suite");
  CHECK(problems[0].diagnostic.code == "S002");
  CHECK(problems[0].diagnostic.severity == Severity::error);
  CHECK("--- stderr\n" + eval::format_problems(problems) + "--- exit 2\n" == golden("bad-suite.expected"));
}

TEST_CASE("problems of the cases files are message lines, in the order found") {
  InData in;
  eval::EvalOptions o;
  o.suite_path = "bad-cases.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  CHECK_FALSE(eval::run_eval(o, report, problems));
  REQUIRE(problems.size() >= 2);
  CHECK(problems[0].source == nullptr);
  CHECK(problems[0].text.rfind("bad-cases.jsonl:2:54: error: ", 0) == 0);
  CHECK("--- stderr\n" + eval::format_problems(problems) + "--- exit 2\n" == golden("bad-cases.expected"));
}

TEST_CASE("the json report is the CLI's") {
  InData in;
  eval::EvalOptions o;
  o.suite_path = "gates.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  REQUIRE(eval::run_eval(o, report, problems));
  const int exit = report.rejected ? 2 : report.gates_pass() ? 0 : 1;
  CHECK(eval::report_json(report) + "--- stderr\n" + eval::format_problems(problems) + "--- exit " +
            std::to_string(exit) + "\n" ==
        golden("gates.json.expected"));
}

TEST_CASE("a rule's name that --alias renames means its canonical tool, as in check") {
  // The runs call read_page; --alias read_page=open_page renames it before anything is judged,
  // so `forbid read_page` must mean the calls of open_page, not a name no run shows any more.
  char dir_template[] = "/tmp/trajcheck-eval-alias-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir = dir_template;
  auto write = [&](const char* name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("s.suite", "suite \"alias\"\ncases \"cases.jsonl\"\nruns \"runs.jsonl\"\nrules \"r.rules\"\n");
  write("r.rules", "rule no_read [critical]: forbid read_page\n");
  write("cases.jsonl", R"({"case_id":"c","expected":{"tools":["open_page"]}})" "\n");
  write("runs.jsonl", R"({"trace_id":"t","case_id":"c","success":true,"steps":[{"type":"tool_call","tool":"read_page"}]})" "\n");
  eval::EvalOptions o;
  o.suite_path = (dir / "s.suite").string();
  o.reading.aliases = {{"read_page", "open_page"}};
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  REQUIRE(eval::run_eval(o, report, problems));
  REQUIRE(report.cases.size() == 1);
  CHECK(report.cases[0].violations.size() == 1);
  CHECK_FALSE(report.cases[0].pass);
  std::filesystem::remove_all(dir);
}
