// Datasets that stay honest: environment fixtures (staleness, rules reading them, case new
// keeping them), injected failures (observed or not, recovery per error class, error classes
// outside the vocabulary), `case vary` (every kind, same seed same bytes) and external graders
// (an answer, a failure, a timeout, bad output, the cache). Each test writes its own suite.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_test_util.hpp"
#include "trajcheck/eval.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {

// A fresh folder holding a suite's files; removed at the end.
struct SuiteDir {
  fs::path dir;
  explicit SuiteDir(const std::string& name) {
    dir = fs::temp_directory_path() / fs::path("trajcheck-datasets-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~SuiteDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

constexpr const char* kCatalog = R"({"version": "v4", "tools": [
  {"name": "order_get", "effect": "read", "errors": [{"class": "not_found"}, {"class": "rate_limited", "retryable": true}]},
  {"name": "refund_order", "effect": "write", "operation_key": "idempotency_key",
   "errors": [{"class": "timeout", "retryable": true}, {"class": "card_declined", "retryable": false}]},
  {"name": "transfer_to_human_agents", "effect": "write"}]})";

const std::string kSuiteHead = R"(suite "datasets"
cases "cases.jsonl"
runs "runs.jsonl"
rules "refunds.rules"
catalog "catalog.json"
fixtures "fixtures/" version "v2"
control handoff = transfer_to_human_agents
)";

eval::EvalReport run(const SuiteDir& d, std::vector<eval::EvalProblem>* problems_out = nullptr,
                     const std::string& cache = "-") {
  eval::EvalOptions o;
  o.suite_path = d.path("s.suite");
  o.grader_cache = cache;
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  bool ok = eval::run_eval(o, report, problems);
  if (problems_out) *problems_out = problems;
  else {
    INFO(eval::format_problems(problems));
    REQUIRE(ok);
  }
  return report;
}

const eval::CaseResult& case_of(const eval::EvalReport& r, const std::string& id) {
  for (const auto& c : r.cases)
    if (c.case_id == id) return c;
  FAIL("no case " << id);
  return r.cases.front();
}

bool has_problem(const eval::CaseResult& c, const std::string& text) {
  for (const auto& p : c.problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

// A native run record of `case_id` with these steps (JSON objects, comma-separated).
std::string run_record(const std::string& case_id, const std::string& steps) {
  return R"({"trace_id": "run-)" + case_id + R"(", "case_id": ")" + case_id + R"(", "steps": [)" + steps + "]}\n";
}

std::string call(const std::string& tool, const std::string& args, const std::string& result = R"({"ok": true})",
                 bool failed = false) {
  return R"({"type": "tool_call", "tool": ")" + tool + R"(", "arguments": )" + args + R"(, "result": )" + result +
         R"(, "status": ")" + (failed ? "error" : "ok") + R"("})";
}
std::string fail(const std::string& tool, const std::string& args, const std::string& cls) {
  return call(tool, args, R"({"error_class": ")" + cls + R"("})", true);
}

void fixtures_suite(const SuiteDir& d) {
  d.write("catalog.json", kCatalog);
  d.write("s.suite", kSuiteHead);
  d.write("refunds.rules", "rule own_orders [critical]:\n"
                           "    forbid refund_order where not arguments.order_id in fixture.customer.orders\n");
  d.write("fixtures/a.json", R"({"customer": {"id": "c_1", "orders": ["ord_1", "ord_2"]}})");
  d.write("cases.jsonl",
          R"({"case_id": "own", "fixture": "fixtures/a.json", "fixture_version": "v2", "expected": {"tools": ["refund_order"]}})" "\n"
          R"({"case_id": "other", "fixture": "fixtures/a.json", "fixture_version": "v2", "expected": {"tools": ["refund_order"]}})" "\n"
          R"({"case_id": "old", "fixture": "fixtures/a.json", "fixture_version": "v1"})" "\n"
          R"({"case_id": "unversioned", "fixture": "fixtures/a.json"})" "\n"
          R"({"case_id": "old-catalog", "catalog_version": "v3", "fixture": "fixtures/a.json", "fixture_version": "v2"})" "\n");
  std::string refund1 = call("refund_order", R"({"order_id": "ord_1"})");
  d.write("runs.jsonl", run_record("own", refund1) + run_record("other", call("refund_order", R"({"order_id": "ord_9"})")) +
                            run_record("old", refund1) + run_record("unversioned", refund1) +
                            run_record("old-catalog", refund1));
}

}  // namespace

TEST_CASE("a case whose fixture version differs from the suite's is stale, like a stale catalog") {
  SuiteDir d("stale");
  fixtures_suite(d);
  eval::EvalReport r = run(d);
  CHECK(case_of(r, "old").status == eval::CaseStatus::stale);
  CHECK(case_of(r, "old").problems.at(0) == "fixture_version v1 differs from the suite's fixtures v2");
  CHECK(case_of(r, "unversioned").status == eval::CaseStatus::stale);
  CHECK(case_of(r, "unversioned").problems.at(0) == "fixture fixtures/a.json has no fixture_version; the suite's fixtures are v2");
  CHECK(case_of(r, "old-catalog").problems.at(0) == "catalog_version v3 differs from the suite's catalog v4");
  CHECK(case_of(r, "own").status == eval::CaseStatus::judged);
  std::string text = eval::report_text(r);
  CHECK(text.find("  stale   old: fixture_version v1 differs from the suite's fixtures v2\n") != std::string::npos);
  CHECK(text.find("3 stale") != std::string::npos);
}

TEST_CASE("rules read the case's fixture: a refund of another customer's order is a critical violation") {
  SuiteDir d("rules");
  fixtures_suite(d);
  eval::EvalReport r = run(d);
  CHECK(case_of(r, "own").violations.empty());
  REQUIRE(case_of(r, "other").violations.size() == 1);
  CHECK(case_of(r, "other").violations[0].rule == "own_orders");
  CHECK_FALSE(case_of(r, "other").pass);
  CHECK(eval::report_json(r).find("\"fixture\": \"fixtures/a.json\"") != std::string::npos);
}

TEST_CASE("a fixture outside the suite's folders, unreadable or not JSON is bad input, located") {
  SuiteDir d("badfix");
  fixtures_suite(d);
  d.write("fixtures/broken.json", "{not json");
  d.write("cases.jsonl", R"({"case_id": "a", "fixture": "../../etc/passwd"})" "\n"
                         R"({"case_id": "b", "fixture": "fixtures/missing.json"})" "\n"
                         R"({"case_id": "c", "fixture": "fixtures/broken.json"})" "\n"
                         R"({"case_id": "d", "fixture": 3})" "\n");
  std::vector<eval::EvalProblem> problems;
  run(d, &problems);
  std::string text = eval::format_problems(problems);
  CHECK(text.find("cases.jsonl:4:1: error: \"fixture\" must be the file name") != std::string::npos);
  d.write("cases.jsonl", R"({"case_id": "a", "fixture": "../../etc/passwd"})" "\n"
                         R"({"case_id": "b", "fixture": "fixtures/missing.json"})" "\n"
                         R"({"case_id": "c", "fixture": "fixtures/broken.json"})" "\n");
  run(d, &problems);
  text = eval::format_problems(problems);
  CHECK(text.find("cases.jsonl:1: error: fixture \"../../etc/passwd\" is outside the suite's folder") != std::string::npos);
  CHECK(text.find("cases.jsonl:2: error: cannot read the fixture") != std::string::npos);
  CHECK(text.find("cases.jsonl:3: error: the fixture") != std::string::npos);
  CHECK(text.find("root:") == std::string::npos);  // never read, never quoted
}

TEST_CASE("expected invariants: a named rule that is violated fails the case whatever its severity") {
  SuiteDir d("invariants");
  fixtures_suite(d);
  d.write("refunds.rules", "rule one_refund [info]:\n    refund_order at most 1\n");
  d.write("cases.jsonl", R"({"case_id": "own", "expected": {"invariants": ["one_refund"]}})" "\n"
                         R"({"case_id": "other", "expected": {}})" "\n");
  std::string two = call("refund_order", R"({"order_id": "ord_1"})") + "," + call("refund_order", R"({"order_id": "ord_2"})");
  d.write("runs.jsonl", run_record("own", two) + run_record("other", two));
  eval::EvalReport r = run(d);
  CHECK(has_problem(case_of(r, "own"), "invariant one_refund violated"));
  CHECK_FALSE(case_of(r, "own").pass);
  CHECK(case_of(r, "other").pass);  // an info violation alone does not fail a case
  d.write("cases.jsonl", R"({"case_id": "own", "expected": {"invariants": ["no_such_rule"]}})" "\n");
  std::vector<eval::EvalProblem> problems;
  run(d, &problems);
  CHECK(eval::format_problems(problems).find("cases.jsonl:1: error: expected.invariants names \"no_such_rule\"") !=
        std::string::npos);
}

TEST_CASE("case new keeps the input, copies and versions the fixture, and lists the rules that held") {
  SuiteDir d("casenew");
  fixtures_suite(d);
  d.write("refunds.rules", "rule own_orders [critical]:\n"
                           "    forbid refund_order where not arguments.order_id in fixture.customer.orders\n"
                           "rule lookup_first:\n    order_get precedes refund_order\n"
                           "rule never_delete:\n    forbid delete_order\n");
  d.write("prod/fixture.json", R"({"customer": {"orders": ["ord_1"]}})");
  eval::SuiteFile suite = eval::parse_suite_file(*Source::from_file(d.path("s.suite"), nullptr));
  REQUIRE(suite.ok());
  eval::CaseNewOptions o;
  o.case_id = "prod-1";
  o.note = "reviewer: refunded the right order";
  o.suite = suite.suite.get();
  std::string errors;
  REQUIRE(eval::compile_suite_rules(suite, o.rules, errors));
  REQUIRE(eval::copy_case_fixture(suite, d.path("prod/fixture.json"), "", o, errors));
  CHECK(run_test::slurp(d.path("fixtures/prod-1.json")) == R"({"customer": {"orders": ["ord_1"]}})");
  testing::Trace t = testing::TraceBuilder{}.user("refund ord_1").call("refund_order", R"({"order_id":"ord_1"})").build();
  std::string line = eval::case_from_trace(t, o);
  CHECK(line.find(R"("input":"refund ord_1")") != std::string::npos);
  CHECK(line.find(R"("fixture":"fixtures/prod-1.json","fixture_version":"v2")") != std::string::npos);
  // own_orders and never_delete held (satisfied); lookup_first was violated.
  CHECK(line.find(R"("invariants":["own_orders","never_delete"])") != std::string::npos);
  CHECK(line.find(R"("note":"reviewer: refunded the right order")") != std::string::npos);
  // The reviewer's names win; a different file of the same name is never replaced.
  o.invariants = {"lookup_first"};
  CHECK(eval::case_from_trace(t, o).find(R"("invariants":["lookup_first"])") != std::string::npos);
  d.write("prod/other.json", R"({"customer": {}})");
  CHECK_FALSE(eval::copy_case_fixture(suite, d.path("prod/other.json"), "", o, errors));
  CHECK(errors.find("exists and differs") != std::string::npos);
  o.case_id = "../escape";
  CHECK_FALSE(eval::copy_case_fixture(suite, d.path("prod/fixture.json"), "", o, errors));
}

TEST_CASE("case new never writes the fixture copy through a symbolic link in the fixtures folder") {
  SuiteDir d("casenew-link");
  fixtures_suite(d);
  d.write("prod/fixture.json", R"({"customer": {"orders": ["ord_1"]}})");
  SuiteDir outside("casenew-outside");
  fs::create_directories(d.dir / "fixtures");
  // A dangling link (the copy would create its target) and a link to an existing file.
  fs::create_symlink(outside.dir / "created.json", d.dir / "fixtures" / "dangling.json");
  outside.write("victim.json", R"({"customer": {"orders": ["ord_1"]}})");
  fs::create_symlink(outside.dir / "victim.json", d.dir / "fixtures" / "same.json");
  eval::SuiteFile suite = eval::parse_suite_file(*Source::from_file(d.path("s.suite"), nullptr));
  REQUIRE(suite.ok());
  eval::CaseNewOptions o;
  std::string errors;
  o.case_id = "dangling";
  CHECK_FALSE(eval::copy_case_fixture(suite, d.path("prod/fixture.json"), "", o, errors));
  CHECK(errors.find("dangling.json is a symbolic link; the fixture is not written through it") != std::string::npos);
  CHECK_FALSE(fs::exists(outside.dir / "created.json"));
  errors.clear();
  o.case_id = "same";  // same bytes behind the link: still not taken as the copy
  CHECK_FALSE(eval::copy_case_fixture(suite, d.path("prod/fixture.json"), "", o, errors));
  CHECK(errors.find("same.json is a symbolic link") != std::string::npos);
  CHECK(o.fixture_path.empty());
  errors.clear();
  o.case_id = "plain";
  CHECK(eval::copy_case_fixture(suite, d.path("prod/fixture.json"), "", o, errors));
  CHECK(fs::is_regular_file(fs::symlink_status(d.dir / "fixtures" / "plain.json")));
}

namespace {

// One case per recovery judgment: each injected failure, and what the run did after it.
void recovery_suite(const SuiteDir& d) {
  d.write("catalog.json", kCatalog);
  d.write("s.suite", kSuiteHead);
  d.write("refunds.rules", "order_get at most 9\n");
  auto inj = [](const std::string& tool, int attempt, const std::string& cls, const char* extra = "") {
    return R"({"tool": ")" + tool + R"(", "attempt": )" + std::to_string(attempt) + R"(, "error": {"class": ")" + cls +
           R"("})" + extra + "}";
  };
  auto kase = [](const std::string& id, const std::string& inject, const std::string& control = "act") {
    return R"({"case_id": ")" + id + R"(", "inject": [)" + inject + R"(], "expected": {"control": ")" + control + "\"}}\n";
  };
  d.write("cases.jsonl", kase("retried-same-key", inj("refund_order", 1, "timeout")) +
                             kase("retried-new-key", inj("refund_order", 1, "timeout")) +
                             kase("retried-no-key", inj("refund_order", 1, "timeout")) +
                             kase("retried-declined", inj("refund_order", 1, "card_declined")) +
                             kase("handed-off", inj("refund_order", 1, "card_declined"), "handoff") +
                             kase("gave-up", inj("order_get", 1, "rate_limited")) +
                             kase("no-handoff", inj("refund_order", 1, "card_declined"), "handoff") +
                             kase("second-attempt", inj("order_get", 2, "rate_limited")) +
                             kase("not-met", inj("order_get", 1, "rate_limited")) +
                             kase("other-class", inj("order_get", 1, "rate_limited")) +
                             kase("out-of-vocabulary", ""));
  const std::string k1 = R"({"order_id": "o", "idempotency_key": "k1"})", k2 = R"({"order_id": "o", "idempotency_key": "k2"})",
                    nokey = R"({"order_id": "o"})", o = R"({"order_id": "o"})";
  const std::string handoff = call("transfer_to_human_agents", "{}");
  d.write("runs.jsonl",
          run_record("retried-same-key", fail("refund_order", k1, "timeout") + "," + call("refund_order", k1)) +
              run_record("retried-new-key", fail("refund_order", k1, "timeout") + "," + call("refund_order", k2)) +
              run_record("retried-no-key", fail("refund_order", nokey, "timeout") + "," + call("refund_order", nokey)) +
              run_record("retried-declined", fail("refund_order", k1, "card_declined") + "," + call("refund_order", k1)) +
              run_record("handed-off", fail("refund_order", k1, "card_declined") + "," + handoff) +
              run_record("gave-up", fail("order_get", o, "rate_limited")) +
              run_record("no-handoff", fail("refund_order", k1, "card_declined")) +
              run_record("second-attempt", call("order_get", o) + "," + fail("order_get", o, "rate_limited") + "," +
                                               call("order_get", o)) +
              run_record("not-met", call("order_get", o)) +
              run_record("other-class", fail("order_get", o, "not_found")) +
              run_record("out-of-vocabulary", fail("order_get", o, "upstream_502") + "," + call("order_get", o)));
}

}  // namespace

TEST_CASE("injected failures: observed ones are judged on recovery, the others listed and not judged") {
  SuiteDir d("inject");
  recovery_suite(d);
  eval::EvalReport r = run(d);
  auto recovered = [&](const std::string& id) {
    const auto& c = case_of(r, id);
    REQUIRE(c.injections.size() == 1);
    CHECK(c.injections[0].observed);
    return c.injections[0].recovered;
  };
  CHECK(recovered("retried-same-key"));
  CHECK(case_of(r, "retried-same-key").recovery == std::optional<bool>(true));
  CHECK(recovered("handed-off"));
  CHECK(recovered("second-attempt"));
  CHECK_FALSE(recovered("retried-new-key"));
  CHECK(has_problem(case_of(r, "retried-new-key"), "recovery: operation key idempotency_key of refund_order changed across attempts 1 and 2"));
  CHECK_FALSE(recovered("retried-no-key"));
  CHECK(has_problem(case_of(r, "retried-no-key"), "possible duplicate side effect: refund_order repeated after an uncertain timeout"));
  CHECK_FALSE(recovered("retried-declined"));
  CHECK(has_problem(case_of(r, "retried-declined"), "retried refund_order after card_declined, which is not retryable"));
  CHECK_FALSE(recovered("gave-up"));
  CHECK(has_problem(case_of(r, "gave-up"), "gave up on order_get after rate_limited, which is retryable"));
  CHECK_FALSE(recovered("no-handoff"));
  CHECK(case_of(r, "no-handoff").injections[0].problems.at(0) == "no hand-off after card_declined of refund_order");
  CHECK(case_of(r, "retried-new-key").recovery == std::optional<bool>(false));
  for (const char* id : {"not-met", "other-class"}) {
    const auto& c = case_of(r, id);
    REQUIRE(c.injections.size() == 1);
    CHECK_FALSE(c.injections[0].observed);
    CHECK_FALSE(c.recovery.has_value());  // not judged on recovery
  }
  CHECK(case_of(r, "not-met").injections[0].problems.at(0) == "call 1 of order_get did not fail");
  CHECK(case_of(r, "other-class").injections[0].problems.at(0) == "call 1 of order_get failed with not_found, not rate_limited");
  REQUIRE(r.injections_not_observed.size() == 2);
  CHECK(r.injections_not_observed[0] == "not-met: order_get attempt 1 (rate_limited): call 1 of order_get did not fail");
}

TEST_CASE("recovery tables per error class and per tool, and classes outside the vocabulary") {
  SuiteDir d("tables");
  recovery_suite(d);
  eval::EvalReport r = run(d);
  std::map<std::string, eval::RecoveryRow> by_class, by_tool;
  for (const auto& row : r.recovery_by_class) by_class[row.key] = row;
  for (const auto& row : r.recovery_by_tool) by_tool[row.key] = row;
  // timeout: same key (recovered), new key, no key (not).
  CHECK(by_class["timeout"].failures == 3);
  CHECK(by_class["timeout"].injected == 3);
  CHECK(by_class["timeout"].recovered == 1);
  CHECK(by_class["card_declined"].judged == 3);
  CHECK(by_class["card_declined"].recovered == 1);
  CHECK(by_class["upstream_502"].injected == 0);  // a real failure, judged by the case's recovery
  CHECK(by_class["upstream_502"].recovered == 1);
  CHECK(by_class["not_found"].judged == 0);  // its case has an unobserved injection
  CHECK(by_tool["refund_order"].failures == 6);
  REQUIRE(r.unknown_errors.size() == 1);
  CHECK(r.unknown_errors.begin()->first == "order_get: upstream_502");
  CHECK(case_of(r, "out-of-vocabulary").unknown_errors == std::vector<std::string>{"order_get: upstream_502"});
  // Every report format has the tables.
  CHECK(eval::report_text(r).find("recovery per error class:\n  error class") != std::string::npos);
  CHECK(eval::report_text(r).find("\nrecovery per tool:\n") != std::string::npos);
  CHECK(eval::report_markdown(r).find("### Recovery per error class\n\n| error class | failures |") != std::string::npos);
  CHECK(eval::report_json(r).find("\"by_class\": [") != std::string::npos);
  CHECK(eval::report_html(r).find("<table id=\"recovery-by-tool\">") != std::string::npos);
  CHECK(eval::report_junit(r).find("classname=\"datasets.recovery\" name=\"error class timeout\"><failure message=\"1 of 3") !=
        std::string::npos);
  CHECK(eval::report_text(r).find("error classes outside the catalog's vocabulary:\n") != std::string::npos);
  CHECK(eval::report_text(r).find("injections not observed (not judged on recovery):\n") != std::string::npos);
}

TEST_CASE("a bad inject list is located bad input") {
  SuiteDir d("badinject");
  recovery_suite(d);
  d.write("cases.jsonl", R"({"case_id": "a", "inject": [{"tool": "x", "attempt": 0, "error": {"class": "t"}}]})" "\n");
  std::vector<eval::EvalProblem> problems;
  run(d, &problems);
  CHECK(eval::format_problems(problems).find("cases.jsonl:1:1: error: \"inject\" must be a list of") != std::string::npos);
}

namespace {

void vary_suite(const SuiteDir& d) {
  d.write("catalog.json", kCatalog);
  d.write("s.suite", kSuiteHead);
  d.write("refunds.rules", "order_get at most 9\n");
  d.write("fixtures/a.json", R"({"customer": {"id": "c_1", "orders": ["ord_1", "ord_2", "ord_3"], "tier": 2}, "note": "x"})");
  d.write("cases.jsonl",
          R"({"case_id": "r1", "split": "designed", "input": "refund ord_1", "fixture": "fixtures/a.json", "fixture_version": "v2", "expected": {"tools": ["order_get", "refund_order"]}})" "\n");
}

std::string read_all(const fs::path& dir) {
  std::string out;
  for (const char* f : {"synthetic.jsonl", "review.md"}) out += run_test::slurp((dir / f).string()) + "\f";
  std::vector<fs::path> fixtures;
  if (fs::exists(dir / "fixtures"))
    for (const auto& e : fs::directory_iterator(dir / "fixtures")) fixtures.push_back(e.path());
  std::sort(fixtures.begin(), fixtures.end());
  for (const auto& f : fixtures) out += f.filename().string() + "\n" + run_test::slurp(f.string());
  return out;
}

}  // namespace

TEST_CASE("case vary: every kind, each derived case in the synthetic split with where it came from") {
  SuiteDir d("vary");
  vary_suite(d);
  eval::VaryOptions o;
  o.suite_path = d.path("s.suite");
  o.from = {"r1"};
  o.out_dir = d.path("synthetic");
  o.seed = 7;
  eval::VaryResult result;
  std::string errors;
  REQUIRE(eval::vary_cases(o, result, errors));
  std::map<std::string, int> kinds;
  std::istringstream lines(run_test::slurp(d.path("synthetic/synthetic.jsonl")));
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line);
    CHECK(j["split"] == "synthetic");
    CHECK(j["derived_from"] == "r1");
    ++kinds[j["variation"]["kind"].get<std::string>()];
  }
  // errors: 2 classes of each tool; empty … reorder: one per tool; fixture-missing: 3 fields;
  // fixture-reorder: 1; attempts: 1, 2 and 3 failures of each tool.
  CHECK(kinds == std::map<std::string, int>{{"attempts", 6}, {"empty", 2}, {"errors", 4}, {"extra-fields", 2},
                                            {"fixture-missing", 3}, {"fixture-reorder", 1}, {"missing-fields", 2},
                                            {"reorder", 2}});
  CHECK(result.cases == 22);
  CHECK(result.fixtures == 4);
  CHECK(result.sampled == 5);
  std::string review = run_test::slurp(d.path("synthetic/review.md"));
  CHECK(review.rfind("# Review sample: 5 of 22 synthetic cases (seed 7)\n", 0) == 0);
  CHECK(std::count(review.begin(), review.end(), '\n') == 10);  // title, blank, two lines, blank, five cases
  // The derived cases are cases of the suite: eval reads them, fixtures included.
  d.write("s.suite", kSuiteHead + "cases \"synthetic/*.jsonl\"\n");
  d.write("runs.jsonl", "");
  eval::EvalReport r = run(d);
  CHECK(r.cases.size() == 23);
  CHECK(errors.empty());
}

TEST_CASE("case vary: the same seed gives the same bytes, another seed other choices") {
  SuiteDir d("varyseed");
  vary_suite(d);
  auto vary = [&](std::uint64_t seed, const std::string& out) {
    eval::VaryOptions o;
    o.suite_path = d.path("s.suite");
    o.from = {"r1"};
    o.out_dir = d.path(out);
    o.seed = seed;
    eval::VaryResult result;
    std::string errors;
    REQUIRE(eval::vary_cases(o, result, errors));
    std::string all = read_all(d.dir / out);
    fs::remove_all(d.dir / out);
    return all;
  };
  // The derived fixtures' paths name the output folder: compare runs into the same one.
  std::string a = vary(7, "out"), b = vary(7, "out"), c = vary(8, "out");
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("case vary: unknown kinds and cases are errors") {
  SuiteDir d("varybad");
  vary_suite(d);
  eval::VaryOptions o;
  o.suite_path = d.path("s.suite");
  o.from = {"nope"};
  o.out_dir = d.path("x");
  eval::VaryResult result;
  std::string errors;
  CHECK_FALSE(eval::vary_cases(o, result, errors));
  CHECK(errors.find("no case 'nope' in the suite's cases") != std::string::npos);
  o.from = {"r1"};
  o.kinds = {"bogus"};
  errors.clear();
  CHECK_FALSE(eval::vary_cases(o, result, errors));
  CHECK(errors.find("unknown kind 'bogus'") != std::string::npos);
}

namespace {

void grader_suite(const SuiteDir& d, const std::string& graders, const std::string& gates = "") {
  d.write("catalog.json", kCatalog);
  d.write("s.suite", kSuiteHead + graders + gates);
  d.write("refunds.rules", "order_get at most 9\n");
  d.write("cases.jsonl", R"({"case_id": "c1", "input": "hello"})" "\n");
  d.write("runs.jsonl", run_record("c1", R"({"type": "assistant_message", "content": "hi"})"));
}

}  // namespace

TEST_CASE("graders: an answer, a failure, a timeout and bad output, each reported on the case") {
  SuiteDir d("graders");
  grader_suite(d,
               "grader good command \"cat > input.json; echo '{\\\"score\\\": 0.8, \\\"pass\\\": true, \\\"reason\\\": \\\"fine\\\"}'\"\n"
               "grader broken command \"echo oops >&2; exit 3\"\n"
               "grader slow command \"sleep 5\" timeout 1s\n"
               "grader chatty command \"echo hello\"\n",
               "gate good >= 75%\ngate mean(good) >= 0.8\n");
  eval::EvalReport r = run(d);
  const auto& c = case_of(r, "c1");
  REQUIRE(c.graders.size() == 4);
  CHECK(c.graders[0].score == std::optional<double>(0.8));
  CHECK(c.graders[0].pass == std::optional<bool>(true));
  CHECK(c.graders[0].reason == "fine");
  CHECK(c.graders[1].error == "exited with status 3 (oops)");
  CHECK(c.graders[2].error == "timed out after 1s");
  CHECK(c.graders[3].error.rfind("invalid output: expected a JSON object", 0) == 0);
  // The grader saw the case, the run and the fixture.
  auto input = nlohmann::json::parse(run_test::slurp(d.path("input.json")));
  CHECK(input["grader"] == "good");
  CHECK(input["case"]["case_id"] == "c1");
  CHECK(input["run"]["steps"][0]["content"] == "hi");
  CHECK(input["fixture"].is_null());
  // Its own dimension, gates on it, never blended: the case passes whatever the graders say.
  CHECK(r.overall.graders.at("good").pass_share == std::optional<double>(1.0));
  CHECK(r.overall.graders.at("broken").errors == 1);
  CHECK(r.gates_pass());
  CHECK(c.pass);
  std::string text = eval::report_text(r);
  CHECK(text.find("graders (each its own dimension):") != std::string::npos);
  CHECK(text.find("  c1   slow   timed out after 1s\n") != std::string::npos);
  CHECK(eval::report_junit(r).find("classname=\"datasets.graders.slow\" name=\"c1\"><error message=\"timed out after 1s\"") !=
        std::string::npos);
  CHECK(eval::report_json(r).find("\"error\": \"timed out after 1s\"") != std::string::npos);
}

TEST_CASE("graders: answers are cached by (grader, case, run digest); a changed run asks again") {
  SuiteDir d("cache");
  grader_suite(d, "grader counted command \"echo x >> count.txt; echo '{\\\"pass\\\": false, \\\"reason\\\": \\\"r\\\"}'\"\n"
                  "grader failing command \"echo x >> failed.txt; exit 1\"\n");
  std::string cache = d.path("cache");
  eval::EvalReport first = run(d, nullptr, cache);
  CHECK_FALSE(case_of(first, "c1").graders[0].cached);
  eval::EvalReport second = run(d, nullptr, cache);
  CHECK(case_of(second, "c1").graders[0].cached);
  CHECK(case_of(second, "c1").graders[0].pass == std::optional<bool>(false));
  CHECK(case_of(second, "c1").graders[0].reason == "r");
  CHECK(run_test::slurp(d.path("count.txt")) == "x\n");       // asked once
  CHECK(run_test::slurp(d.path("failed.txt")) == "x\nx\n");   // failures are not cached
  d.write("runs.jsonl", run_record("c1", R"({"type": "assistant_message", "content": "hello there"})"));
  eval::EvalReport third = run(d, nullptr, cache);
  CHECK_FALSE(case_of(third, "c1").graders[0].cached);
  CHECK(run_test::slurp(d.path("count.txt")) == "x\nx\n");
}

TEST_CASE("a gate may name a grader of the suite, and only one") {
  SuiteDir d("gatenames");
  grader_suite(d, "", "gate helpfulness >= 75%\n");
  std::vector<eval::EvalProblem> problems;
  run(d, &problems);
  CHECK(eval::format_problems(problems).find("error[S005]: unknown gate metric 'helpfulness'") != std::string::npos);
  grader_suite(d, "grader selection command \"true\"\n");
  run(d, &problems);
  CHECK(eval::format_problems(problems).find("error[S014]: grader 'selection' has the name of a gate metric") != std::string::npos);
}

TEST_CASE("graders: a score outside [0, 1] or not finite is no answer, never averaged into a pass") {
  SuiteDir d("score-range");
  d.write("catalog.json", kCatalog);
  d.write("refunds.rules", "order_get at most 9\n");
  d.write("cases.jsonl", R"({"case_id": "alpha", "input": "hello"})" "\n" R"({"case_id": "beta", "input": "hello"})" "\n");
  d.write("runs.jsonl", run_record("alpha", R"({"type": "assistant_message", "content": "hi"})") +
                            run_record("beta", R"({"type": "assistant_message", "content": "hi"})"));
  // alpha answers on a 0..100 scale, beta 0: their mean would be a passing 42.5.
  d.write("percent.sh", "if grep -q alpha; then echo '{\"score\": 85}'; else echo '{\"score\": 0}'; fi\n");
  d.write("huge.sh", "if grep -q alpha; then echo '{\"score\": 1e308}'; else echo '{\"score\": 1e400}'; fi\n");
  d.write("edges.sh", "if grep -q alpha; then echo '{\"score\": 1, \"pass\": true}'; else echo '{\"score\": -0.0}'; fi\n");
  d.write("negative.sh", "echo '{\"score\": -0.5, \"pass\": true}'\n");
  d.write("s.suite", kSuiteHead +
                         std::string("grader percent command \"sh percent.sh\"\n"
                                     "grader huge command \"sh huge.sh\"\n"
                                     "grader edges command \"sh edges.sh\"\n"
                                     "grader negative command \"sh negative.sh\"\n"
                                     "gate mean(percent) >= 0.4\ngate mean(huge) >= 0.5 if data\ngate edges >= 100%\n"));
  eval::EvalReport r = run(d);
  const auto& a = case_of(r, "alpha");
  const auto& b = case_of(r, "beta");
  REQUIRE(a.graders.size() == 4);
  CHECK(a.graders[0].error == "invalid output: \"score\" must be a number from 0 to 1, got \"{\\\"score\\\": 85}\"");
  CHECK_FALSE(a.graders[0].score);
  CHECK(b.graders[0].score == std::optional<double>(0.0));
  CHECK(a.graders[1].error.rfind("invalid output: \"score\" must be a number from 0 to 1", 0) == 0);
  CHECK(b.graders[1].error.rfind("invalid output: ", 0) == 0);  // 1e400: not even a JSON number
  CHECK(a.graders[2].error.empty());  // 0 and 1 are in range
  CHECK(b.graders[2].error.empty());
  CHECK(a.graders[3].error.rfind("invalid output: \"score\"", 0) == 0);
  CHECK_FALSE(a.graders[3].pass);  // a bad score takes its `pass` with it
  // Counted under "no answer"; the mean is of the answers in range only.
  CHECK(r.overall.graders.at("percent").errors == 1);
  CHECK(r.overall.graders.at("percent").mean_score == std::optional<double>(0.0));
  CHECK(r.overall.graders.at("huge").errors == 2);
  CHECK(r.overall.graders.at("negative").errors == 2);
  CHECK_FALSE(r.gates_pass());
  for (const auto& g : r.gates) {
    INFO(g.text);
    if (g.text.find("percent") != std::string::npos) CHECK(g.status == eval::GateStatus::fail);
    if (g.text.find("huge") != std::string::npos) CHECK(g.status == eval::GateStatus::no_data);
    if (g.text.find("edges") != std::string::npos) CHECK(g.status == eval::GateStatus::pass);
  }
  std::string text = eval::report_text(r);
  INFO(text);
  CHECK(text.find("  alpha percent  invalid output: \"score\" must be a number from 0 to 1") != std::string::npos);
}

TEST_CASE("graders: one killed for writing past the output limit is reported as such") {
  SuiteDir d("output-limit");
  grader_suite(d, "grader flood command \"head -c 3000000 /dev/zero; echo '{\\\"pass\\\": true}'\"\n");
  eval::EvalReport r = run(d);
  const auto& c = case_of(r, "c1");
  REQUIRE(c.graders.size() == 1);
  CHECK(c.graders[0].error == "output limit exceeded: more than 1048576 bytes (1 MiB) on standard output; killed");
  CHECK_FALSE(c.graders[0].pass);
  CHECK(r.overall.graders.at("flood").errors == 1);
}

TEST_CASE("the text and markdown reports write control characters of case ids and messages escaped") {
  SuiteDir d("control-chars");
  d.write("catalog.json", kCatalog);
  d.write("refunds.rules", "order_get at most 9\n");
  d.write("s.suite", kSuiteHead + std::string("grader shouty command \"printf 'bad\\\\033[2J\\\\n' >&2; exit 3\"\n"));
  // An id that would clear the screen and forge a passing line; a run no case has.
  const std::string id = "c\\u001b[31m\\nFAKE pass";
  d.write("cases.jsonl", R"({"case_id": ")" + id + R"(", "input": "hi", "expected": {"tools": ["order_get"]}})" "\n");
  d.write("runs.jsonl", run_record(id, R"({"type": "assistant_message", "content": "hi"})") +
                            run_record("x\\ty", R"({"type": "assistant_message", "content": "hi"})"));
  eval::EvalReport r = run(d);
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].case_id == "c\x1b[31m\nFAKE pass");
  for (const std::string& text : {eval::report_text(r), eval::report_markdown(r)}) {
    INFO(text);
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\t') == std::string::npos);
    CHECK(text.find("c\\x1b[31m\\nFAKE pass") != std::string::npos);
  }
  std::string text = eval::report_text(r);
  INFO(text);
  CHECK(text.find("exited with status 3 (bad\\x1b[2J)") != std::string::npos);
  CHECK(text.find("runs.jsonl:2 (x\\ty)\n") != std::string::npos);  // the unmatched run
}
