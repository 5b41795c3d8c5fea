// The `.suite` front end: every statement, gate expressions, control patterns compiled by the
// rule compiler, and diagnostics with codes and positions.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include "suite/suite.hpp"

using namespace trajcheck;
using trajcheck::suite::GateOp;

namespace {

suite::SuiteResult parse(const std::string& text) { return suite::parse_suite(Source("dir/t.suite", text)); }

std::string codes(const suite::SuiteResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) {
    auto lc = r.source.line_col(d.range.begin);
    s += d.code + "@" + std::to_string(lc.line) + ":" + std::to_string(lc.column) + " ";
  }
  return s;
}

}  // namespace

TEST_CASE("a full suite parses into its parts") {
  auto r = parse(
      "suite \"support-agent\"   # name\n"
      "cases \"cases/*.jsonl\", \"more/x.jsonl\"\n"
      "runs \"runs/candidate.jsonl\"\n"
      "rules \"rules/refunds.rules\", \"rules/guardrails.rules\"\n"
      "catalog \"catalog/tools-v3.json\"\n"
      "baseline \"reports/release-41.json\"\n"
      "segment by task_type, severity\n"
      "\n"
      "control handoff = transfer_to_human_agents\n"
      "control clarify = assistant_message where content matches /\\?\\s*$/\n"
      "control refuse  = assistant_message where content matches /(?i)\\b(can(not|'t)|unable to)\\b/\n"
      "gate violations[critical] == 0\n"
      "gate selection >= 95%\n"
      "gate completion >= 90%\n"
      "gate duplicates_per_100 <= 1\n"
      "gate p95(calls_per_success) <= baseline * 1.10\n"
      "gate cost_per_success <= 0.05\n"
      "gate selection >= 90% per task_type\n"
      "gate loop_depth < 4\n"
      "gate outcome > baseline - 2%\n");
  REQUIRE_MESSAGE(r.ok(), codes(r));
  const auto& s = r.suite;
  CHECK(s.name == "support-agent");
  CHECK(s.directory == "dir");
  REQUIRE(s.cases.size() == 2);
  CHECK(s.cases[1].text == "more/x.jsonl");
  CHECK(s.runs.size() == 1);
  CHECK(s.rules.size() == 2);
  CHECK(s.catalog->text == "catalog/tools-v3.json");
  CHECK(s.baseline->text == "reports/release-41.json");
  REQUIRE(s.segments.size() == 2);
  CHECK(s.segments[1].text == "severity");
  REQUIRE(s.controls.size() == 3);
  CHECK(s.controls[2].name == "refuse");
  REQUIRE(s.control_program);
  CHECK(s.control_program->rules().size() == 3);
  REQUIRE(s.gates.size() == 9);
  CHECK(s.gates[0].critical());
  CHECK(s.gates[0].op == GateOp::eq);
  CHECK(s.gates[1].value == doctest::Approx(0.95));
  CHECK(s.gates[1].percent);
  CHECK(s.gates[2].metric == "outcome");  // completion is outcome
  CHECK(s.gates[4].function == "p95");
  CHECK(s.gates[4].metric == "calls_per_success");
  CHECK(s.gates[4].baseline);
  CHECK(s.gates[4].baseline_op == '*');
  CHECK(s.gates[4].value == doctest::Approx(1.10));
  CHECK(s.gates[5].value == doctest::Approx(0.05));
  CHECK_FALSE(s.gates[5].percent);
  CHECK(s.gates[6].per == "task_type");
  CHECK(s.gates[7].op == GateOp::lt);
  CHECK(s.gates[8].op == GateOp::gt);
  CHECK(s.gates[8].baseline_op == '-');
  CHECK(s.gates[8].value == doctest::Approx(0.02));
  CHECK(s.gates[6].text == "selection >= 90% per task_type");
}

TEST_CASE("suite errors carry codes and positions, all of them") {
  auto r = parse(
      "suite \"a\"\n"
      "suite \"b\"\n"
      "cases \"c.jsonl\"\n"
      "segment task_type\n"
      "control escalate = x\n"
      "control handoff = x\n"
      "control handoff = y\n"
      "gate speed >= 1\n"
      "gate selection[critical] == 0\n"
      "gate violations[fatal] == 0\n"
      "gate p95(selection) <= 1\n"
      "gate p42(calls_per_success) <= 1\n"
      "gate selection >= baseline\n"
      "gate selection => 1\n"
      "  runs \"x\"\n"
      "frobnicate\n");
  CHECK(codes(r) ==
        "S002@2:1 S001@4:9 S003@5:9 S004@7:9 S005@8:6 S006@9:16 S007@11:10 S007@12:6 "
        "S009@13:19 S001@14:16 S008@15:1 S001@16:1 ");
  CHECK_FALSE(r.ok());
}

TEST_CASE("`if data` lets a gate hold without data; nothing else after it") {
  auto r = parse("cases \"c.jsonl\"\ngate cost_per_success <= 1 if data\ngate selection >= 90% per kind if data\n"
                 "gate selection >= 90%\n");
  REQUIRE_MESSAGE(r.ok(), codes(r));
  REQUIRE(r.suite.gates.size() == 3);
  CHECK(r.suite.gates[0].if_data);
  CHECK(r.suite.gates[0].per.empty());
  CHECK(r.suite.gates[1].if_data);
  CHECK(r.suite.gates[1].per == "kind");
  CHECK_FALSE(r.suite.gates[2].if_data);
  auto bad = parse("cases \"c.jsonl\"\ngate cost_per_success <= 1 if\ngate selection >= 1 if data per kind\n");
  CHECK(codes(bad) == "S001@2:30 S001@3:29 ");  // where `data` belongs; at `per` after `if data`
  CHECK(bad.diagnostics[0].message.find("expected 'data' after 'if'") != std::string::npos);
}

TEST_CASE("a suite without cases is an error") {
  auto r = parse("suite \"x\"\nruns \"r.jsonl\"\n");
  CHECK(codes(r) == "S010@1:1 ");
}

TEST_CASE("control patterns are compiled by the rule compiler, with positions in the suite") {
  auto r = parse("cases \"c.jsonl\"\ncontrol clarify = assistant_message where content matches /(/\n");
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() >= 1);
  CHECK(r.diagnostics[0].code[0] == 'E');  // the rule compiler's code
  auto lc = r.source.line_col(r.diagnostics[0].range.begin);
  CHECK(lc.line == 2);
  CHECK(lc.column > 40);  // points at the regex, not at a rewritten line
  auto text = format_diagnostic(r.source, r.diagnostics[0]);
  CHECK(text.find("control clarify") != std::string::npos);  // echoes the suite's own line
}

TEST_CASE("pattern syntax errors use the rule language's messages") {
  auto r = parse("cases \"c.jsonl\"\ncontrol refuse = assistant_message where\n");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "S001");
  CHECK(r.diagnostics[0].message.find("expected a condition after 'where'") != std::string::npos);
}

TEST_CASE("keywords are whole words and strings decode escapes") {
  auto r = parse("suite \"a \\\"b\\\" \\u00e9\"\ncases \"x.jsonl\"\nsegment by suite_kind, gate_owner\n");
  REQUIRE_MESSAGE(r.ok(), codes(r));
  CHECK(r.suite.name == "a \"b\" \xc3\xa9");
  CHECK(r.suite.segments[0].text == "suite_kind");
}

TEST_CASE("a surrogate pair in a suite string is one UTF-8 character, as in rules files") {
  auto r = parse("suite \"go \\ud83d\\ude80\"\ncases \"x.jsonl\"\n");
  REQUIRE_MESSAGE(r.ok(), codes(r));
  CHECK(r.suite.name == "go \xf0\x9f\x9a\x80");
}

TEST_CASE("deep nesting in a control pattern is a diagnostic, not a crash") {
  std::string deep(5000, '(');
  auto r = parse("cases \"c.jsonl\"\ncontrol handoff = " + deep + "x\n");
  CHECK_FALSE(r.ok());
  CHECK(codes(r).find("S001@2:") == 0);
}

TEST_CASE("order min length and overall weights: score's settings, once each") {
  auto r = parse("cases \"c.jsonl\"\norder min length 3\noverall weights 0.5, 0.5\ngate overall >= 90%\n");
  REQUIRE_MESSAGE(r.ok(), codes(r));
  CHECK(r.suite.order_min_length == 3);
  CHECK(r.suite.selection_weight == 0.5);
  CHECK(r.suite.order_weight == 0.5);
  REQUIRE(r.suite.gates.size() == 1);
  CHECK(r.suite.gates[0].metric == "overall");
  auto d = parse("cases \"c.jsonl\"\norder min length 3\norder min length 2\noverall weights 0, 0\n"
                 "overall weights 1\norder min 2\n");
  CHECK(codes(d) == "S002@3:1 S013@4:1 S001@5:18 S001@6:11 ");
  auto defaults = parse("cases \"c.jsonl\"\n");
  CHECK(defaults.suite.order_min_length == 0);
  CHECK(defaults.suite.selection_weight == 0.6);
}

TEST_CASE("numbers too large for a double, or weights whose sum is not finite, are S013 where they are written") {
  const std::string huge(309, '9');         // above DBL_MAX: read as 0 before
  const std::string big = "1" + std::string(308, '0');  // 1e308: finite, but two of them sum to infinity
  auto r = parse("cases \"c.jsonl\"\noverall weights " + huge + ", 0.4\n");
  CHECK(codes(r) == "S013@2:17 ");
  REQUIRE(!r.diagnostics.empty());
  CHECK(r.diagnostics[0].message == "the number 999999999999… (309 digits) is out of range");
  auto sum = parse("cases \"c.jsonl\"\noverall weights " + big + ", " + big + "\n");
  CHECK(codes(sum) == "S013@2:1 ");
  CHECK(sum.suite.selection_weight == 0.6);  // left at the defaults
  auto one_big = parse("cases \"c.jsonl\"\noverall weights " + big + ", 1\n");
  CHECK(one_big.ok());
  auto gate = parse("cases \"c.jsonl\"\ngate selection >= " + huge + "%\n");
  CHECK(codes(gate) == "S013@2:19 ");
  CHECK(gate.suite.gates.empty());
  auto order = parse("cases \"c.jsonl\"\norder min length " + huge + "\n");
  CHECK(codes(order) == "S013@2:18 ");
  auto timeout = parse("cases \"c.jsonl\"\ngrader g command \"true\" timeout " + huge + "s\n");
  CHECK(codes(timeout) == "S013@2:33 ");
}

TEST_CASE("fixtures and graders parse into their parts") {
  auto r = parse(
      "cases \"c.jsonl\"\n"
      "fixtures \"fixtures/\" version \"v3\"\n"
      "gate helpfulness >= 80%\n"           // a grader declared further down
      "gate p95(helpfulness) >= 0.5\n"
      "grader helpfulness command \"python3 graders/helpful.py\" timeout 30s\n"
      "grader quick command \"true\" timeout 250ms\n"
      "grader plain command \"x\"\n");
  INFO(codes(r));
  REQUIRE(r.ok());
  REQUIRE(r.suite.fixtures);
  CHECK(r.suite.fixtures->text == "fixtures/");
  CHECK(r.suite.fixtures_version == "v3");
  REQUIRE(r.suite.graders.size() == 3);
  CHECK(r.suite.graders[0].name == "helpfulness");
  CHECK(r.suite.graders[0].command == "python3 graders/helpful.py");
  CHECK(r.suite.graders[0].timeout_seconds == 30);
  CHECK(r.suite.graders[1].timeout_seconds == doctest::Approx(0.25));
  CHECK(r.suite.graders[2].timeout_seconds == 30);
  REQUIRE(r.suite.gates.size() == 2);
  CHECK(r.suite.gates[0].grader);
  CHECK(r.suite.gates[1].function == "p95");
  auto unversioned = parse("cases \"c.jsonl\"\nfixtures \"f/\"\n");
  REQUIRE(unversioned.ok());
  CHECK(unversioned.suite.fixtures_version.empty());
}

TEST_CASE("fixtures and grader mistakes are located diagnostics") {
  auto r = parse(
      "cases \"c.jsonl\"\n"
      "fixtures \"a/\" version \"v1\"\n"
      "fixtures \"b/\"\n"
      "fixtures version \"v1\"\n"
      "grader g command \"x\" timeout 0s\n"
      "grader g2 command \"x\" timeout 30\n"
      "grader selection command \"x\"\n"
      "grader h command \"x\"\n"
      "grader h command \"y\"\n"
      "grader k \"x\"\n"
      "gate nothing >= 1\n");
  CHECK(codes(r) == "S002@3:1 S001@4:10 S014@5:30 S001@6:33 S014@7:8 S002@9:8 S001@10:10 S005@11:6 ");
}

TEST_CASE("variations parse like graders, in a list of their own") {
  auto r = parse(
      "cases \"c.jsonl\"\n"
      "variation paraphrase command \"python3 vary/p.py\" timeout 60s\n"
      "variation terse command \"x\"\n"
      "grader paraphrase command \"y\"\n"      // a grader may share a variation's name
      "variation selection command \"z\"\n");  // gate metric names are the graders' concern
  INFO(codes(r));
  REQUIRE(r.ok());
  REQUIRE(r.suite.variations.size() == 3);
  CHECK(r.suite.variations[0].name == "paraphrase");
  CHECK(r.suite.variations[0].command == "python3 vary/p.py");
  CHECK(r.suite.variations[0].timeout_seconds == 60);
  CHECK(r.suite.variations[1].timeout_seconds == 30);
  CHECK(r.suite.graders.size() == 1);
  auto bad = parse(
      "cases \"c.jsonl\"\n"
      "variation p command \"x\" timeout 0s\n"
      "variation q command \"x\"\n"
      "variation q command \"y\"\n"
      "variation r \"x\"\n"
      "variation\n");
  CHECK(codes(bad) == "S014@2:33 S002@4:11 S001@5:13 S001@6:10 ");
}

TEST_CASE("one table of gate metrics: the parser accepts each, series take functions, docs list each") {
  for (const suite::GateMetric& m : suite::gate_metrics()) {
    CAPTURE(m.name);
    CHECK(suite::is_gate_metric(m.name));
    CHECK_FALSE(m.meaning.empty());
    std::string text = "cases \"c.jsonl\"\ngate " + std::string(m.name) + " >= 0\n";
    CHECK(parse(text).ok());
    std::string p95 = "cases \"c.jsonl\"\ngate p95(" + std::string(m.name) + ") >= 0\n";
    CHECK(parse(p95).ok() == (m.kind == suite::MetricKind::series));
    if (!m.alias_of.empty()) CHECK(suite::is_gate_metric(m.alias_of));
  }
  CHECK(suite::find_gate_metric("argument_validity")->kind == suite::MetricKind::share);
  CHECK(suite::find_gate_metric("arguments_validity") == nullptr);
  auto r = parse("cases \"c.jsonl\"\ngate argument_validity >= 98%\n");
  REQUIRE(r.ok());
  CHECK(r.suite.gates[0].metric == "argument_validity");
  CHECK(r.suite.gates[0].value == doctest::Approx(0.98));
  // docs/eval.md documents every metric, written as code.
  std::ifstream in(std::string(TRAJCHECK_SOURCE_DIR) + "/docs/eval.md");
  std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(docs.empty());
  for (const suite::GateMetric& m : suite::gate_metrics()) {
    CAPTURE(m.name);
    CHECK(docs.find("`" + std::string(m.name) + "`") != std::string::npos);
  }
  // The editor's suite grammar highlights every metric: its alternation names each of them.
  std::ifstream gin(std::string(TRAJCHECK_SOURCE_DIR) + "/editors/vscode/syntaxes/trajcheck-suite.tmLanguage.json");
  std::string grammar((std::istreambuf_iterator<char>(gin)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(grammar.empty());
  for (const suite::GateMetric& m : suite::gate_metrics()) {
    CAPTURE(m.name);
    const std::string name(m.name);
    CHECK((grammar.find("(?:" + name + "|") != std::string::npos || grammar.find("|" + name + "|") != std::string::npos ||
           grammar.find("|" + name + ")") != std::string::npos));
  }
}

TEST_CASE("violations[NAME]: a severity, else a rule or a tag that eval resolves") {
  auto r = parse("cases \"c.jsonl\"\ngate violations[no_cross_tenant] == 0\ngate violations[error] <= 2\n"
                 "gate violations[fatal] == 0\n");
  REQUIRE(r.ok());
  const auto& g = r.suite.gates;
  CHECK(g[0].rule == "no_cross_tenant");
  CHECK(g[0].severity.empty());
  CHECK(r.source.line_col(g[0].index_range.begin).column == 17);
  CHECK_FALSE(g[0].critical());  // until eval finds the rule [critical]
  CHECK(g[1].severity == "error");
  CHECK(g[1].rule.empty());
  CHECK(g[2].rule == "fatal");  // no severity: a rule or a tag, or eval's S006
  auto bad = parse("cases \"c.jsonl\"\ngate selection[no_cross_tenant] == 0\n");
  CHECK(codes(bad) == "S006@2:16 ");
}
