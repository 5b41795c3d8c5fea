// The rules test-file reader (`trajcheck test`, docs/testing-rules.md): what it accepts, and a
// located error for everything it does not; rule-name suggestions; the coverage percentage.
#include <doctest/doctest.h>

#include <string>

#include "trajcheck/rule_tests.hpp"

using namespace trajcheck;

namespace {

RuleTestFile parse_rtf(const std::string& text, const std::string& name = "dir/refunds.rules.test.json") {
  return parse_rule_test_file(Source(name, text));
}

std::string rtf_errors(const RuleTestFile& f) { return format_diagnostics(f.source, f.diagnostics); }

// The first diagnostic as "line:col: message".
std::string first_error(const RuleTestFile& f) {
  if (f.diagnostics.empty()) return "";
  LineCol lc = f.source.line_col(f.diagnostics[0].range.begin);
  return std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + f.diagnostics[0].message;
}

}  // namespace

TEST_CASE("a test file: default rules file, inline steps, a trace file, every verdict") {
  RuleTestFile f = parse_rtf(R"({
  "error_patterns": ["^Error"],
  "cases": [
    {"name": "inline", "context": {"cwd": "/app"},
     "steps": [{"type": "tool_call", "tool": "order_get"}],
     "expect": {"b": "satisfied", "a": {"violated": [4, 2, 4]}, "c": "vacuous", "d": "holds", "e": "violated"},
     "others": "holds", "fixture": {"k": 1}, "error_patterns": ["^Fail"]},
    {"name": "file", "trace": "../traces/t.jsonl", "trace_id": "t1", "expect": {"a": "holds"}}
  ]})");
  REQUIRE_MESSAGE(f.ok(), rtf_errors(f));
  REQUIRE(f.rules.size() == 1);
  CHECK(f.rules[0] == "dir/refunds.rules");
  REQUIRE(f.cases.size() == 2);
  const RuleTestCase& a = f.cases[0];
  CHECK(a.name == "inline");
  CHECK(a.trace_file.empty());
  CHECK(a.record.find("\"trace_id\":\"inline\"") != std::string::npos);
  CHECK(a.record.find("\"cwd\":\"/app\"") != std::string::npos);
  CHECK(a.others_hold);
  CHECK(a.fixture == R"({"k":1})");
  CHECK(a.error_patterns == std::vector<std::string>{"^Error", "^Fail"});
  // In file order (not nlohmann's sorted order), steps sorted and unique.
  REQUIRE(a.expect.size() == 5);
  CHECK(a.expect[0].rule == "b");
  CHECK(a.expect[0].verdict == ExpectedVerdict::satisfied);
  CHECK(a.expect[1].rule == "a");
  CHECK(a.expect[1].verdict == ExpectedVerdict::violated);
  CHECK(a.expect[1].has_steps);
  CHECK(a.expect[1].steps == std::vector<std::uint32_t>{2, 4});
  CHECK(a.expect[2].verdict == ExpectedVerdict::vacuous);
  CHECK(a.expect[3].verdict == ExpectedVerdict::holds);
  CHECK(a.expect[4].verdict == ExpectedVerdict::violated);
  CHECK_FALSE(a.expect[4].has_steps);
  // The expectation is located at its rule name.
  LineCol lc = f.source.line_col(a.expect[1].at.begin);
  CHECK(lc.line == 6);
  const RuleTestCase& b = f.cases[1];
  CHECK(b.trace_file == "traces/t.jsonl");  // resolved against the test file's folder
  REQUIRE(b.trace_id.has_value());
  CHECK(*b.trace_id == "t1");
  CHECK_FALSE(b.others_hold);
}

TEST_CASE("a test file naming its rules files") {
  RuleTestFile f = parse_rtf(R"({"rules": ["a.rules", "../b.rules"], "cases": [
    {"name": "x", "trace": {"trace_id": "t", "steps": []}, "expect": {"r": "holds"}}]})",
                             "x/suite.test.json");
  REQUIRE_MESSAGE(f.ok(), rtf_errors(f));
  CHECK(f.rules == std::vector<std::string>{"x/a.rules", "b.rules"});
  CHECK(f.cases[0].record == R"({"steps":[],"trace_id":"t"})");
}

TEST_CASE("every mistake is a located error") {
  struct Bad {
    const char* text;
    const char* error;
  };
  const Bad bad[] = {
      {R"([1])", "1:1: a test file is an object with \"cases\", not an array"},
      {R"({"extra": 1, "cases": []})", "1:2: unknown member \"extra\" of a test file (cases, rules, error_patterns, description)"},
      {R"({"cases": []})", "1:11: \"cases\" is empty: the file tests nothing"},
      {R"({"rules": 3, "cases": []})", "1:11: \"rules\" must be a string or an array of strings, not a number"},
      {R"({"cases": [{"steps": [], "expect": {"r": "holds"}}]})", "1:12: a case needs a \"name\""},
      {R"({"cases": [{"name": "n", "expect": {"r": "holds"}}]})",
       "1:12: a case needs its trace: \"steps\" (native steps) or \"trace\" (a file, or a trace inline)"},
      {R"({"cases": [{"name": "n", "steps": [], "trace": "t.json", "expect": {"r": "holds"}}]})",
       "1:39: a case has \"steps\" or a \"trace\", not both"},
      {R"({"cases": [{"name": "n", "steps": {}, "expect": {"r": "holds"}}]})",
       "1:35: \"steps\" must be an array of native steps, not an object"},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": "held"}}]})",
       "1:55: unknown verdict \"held\" for rule 'r': expected \"violated\", {\"violated\": [STEPS]}, \"satisfied\", \"vacuous\" or \"holds\""},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": {"violated": [1.5]}}}]})",
       "1:69: a witness step of 'r' must be a step number (0-based, as `check` prints #N)"},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": {"violated": []}}}]})",
       "1:68: 'r' is expected violated at no step: list its witness steps, or write \"violated\""},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": {"satisfied": true}}}]})",
       "1:55: the verdict of rule 'r' must be \"violated\", {\"violated\": [STEPS]}, \"satisfied\", \"vacuous\" or \"holds\""},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {}}]})", "1:49: \"expect\" names no rule: the case would check nothing"},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": "holds"}, "others": "hold"}]})",
       "1:75: \"others\" must be \"holds\" (every rule not named holds) or \"unchecked\""},
      {R"({"cases": [{"name": "n", "steps": [], "trace_id": "t", "expect": {"r": "holds"}}]})",
       "1:39: \"trace_id\" picks a trace of a \"trace\" file; this case has none"},
      {R"({"cases": [{"name": "n", "trace": 3, "expect": {"r": "holds"}}]})",
       "1:35: \"trace\" must be a file name or a trace (an object or an array), not a number"},
      {R"({"cases": [{"name": "n", "steps": [], "expect": {"r": "holds"}}, {"name": "n", "steps": [], "expect": {"r": "holds"}}]})",
       "1:75: two cases are named \"n\""},
      {"{\"cases\": [\n  {\"name\": \"n\",}]}", "2:16: not valid JSON: syntax error while parsing object key - unexpected '}'; expected string literal"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.text);
    RuleTestFile f = parse_rtf(b.text);
    CHECK_FALSE(f.ok());
    CHECK(first_error(f) == b.error);
  }
}

TEST_CASE("a file not named RULES.test.json must name its rules") {
  RuleTestFile f = parse_rtf(R"({"cases": [{"name": "n", "steps": [], "expect": {"r": "holds"}}]})", "tests.json");
  CHECK_FALSE(f.ok());
  CHECK(first_error(f) == "1:1: the test file names no rules file: add \"rules\", or name the file RULES.test.json");
}

TEST_CASE("closest_name: case, - and _, small edits; nothing when nothing is close") {
  const std::vector<std::string> names = {"refund_needs_approval", "order_get at most 1", "no_sudo"};
  CHECK(closest_name("refund_need_approval", names) == "refund_needs_approval");
  CHECK(closest_name("Refund-Needs-Approval", names) == "refund_needs_approval");
  CHECK(closest_name("order_get at most 2", names) == "order_get at most 1");
  CHECK(closest_name("no_sudo_ever_again_please", names).empty());
  CHECK(closest_name("x", {}).empty());
}

TEST_CASE("the coverage percentage rounds down and compares exactly") {
  CoverageSummary s;
  s.rules = 1000;  // 2000 items
  s.violated = 1000;
  s.held = 999;
  CHECK(s.items() == 2000);
  CHECK(s.covered() == 1999);
  CHECK(s.percent() == doctest::Approx(99.9));
  CHECK_FALSE(s.at_least(100));
  CHECK(s.at_least(99.95));
  CHECK_FALSE(s.at_least(99.96));
  s.held = 1000;
  CHECK(s.percent() == doctest::Approx(100.0));
  CHECK(s.at_least(100));
  CoverageSummary none;
  CHECK(none.at_least(100));
}

TEST_CASE("values nested too deep are an error, not a deep recursion") {
  std::string deep = R"({"cases": [{"name": "n", "trace": )" + std::string(5000, '[') + std::string(5000, ']') +
                     R"(, "expect": {"r": "holds"}}]})";
  RuleTestFile f = parse_rtf(deep);
  CHECK_FALSE(f.ok());
  CHECK(first_error(f) == "1:288: values nested deeper than 256 levels");
  // A bracket inside a string is no nesting.
  RuleTestFile g = parse_rtf(R"({"cases": [{"name": "[[[[{{{{", "steps": [], "expect": {"r": "holds"}}]})");
  CHECK(g.ok());
}
