// trajcheck/rule_tests.hpp — tests of rules files (`trajcheck test`, docs/testing-rules.md):
// test files of cases beside the rules, each a trace and the verdicts the rules must reach on
// it, run with pass/fail per case and, on request, coverage of the rules by the tests.
//
//   trajcheck::RuleTestFile f = trajcheck::parse_rule_test_file(
//       trajcheck::Source("refunds.rules.test.json", text));
//   std::cerr << trajcheck::format_diagnostics(f.source, f.diagnostics);
//   trajcheck::RuleTestRun run = trajcheck::run_rule_tests(paths, options);
//   trajcheck::write_rule_test_report(run, trajcheck::RuleTestFormat::text, out);
//
// Nothing throws: problems are located diagnostics of the test file they belong to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

// ---------------------------------------------------------------------------------------
// The test file

enum class ExpectedVerdict : std::uint8_t { violated, satisfied, vacuous, holds };
std::string_view to_string(ExpectedVerdict v);

struct RuleExpectation {
  std::string rule;             // as written
  ExpectedVerdict verdict = ExpectedVerdict::holds;
  bool has_steps = false;       // {"violated": [..]}: exactly these witness steps
  std::vector<std::uint32_t> steps;  // sorted, unique
  SourceRange at;               // the member's name in the test file
};

struct RuleTestCase {
  std::string name;
  SourceRange at;               // the case object
  // The trace: a native record built from `steps` (+ `context`), an inline value of any
  // format (`trace` given as JSON), or a file (`trace` given as a string, resolved against
  // the test file's folder), with an optional trace id.
  std::string record;           // JSON text of the inline trace (empty for a file)
  SourceRange trace_at;         // `steps` or `trace`
  std::string trace_file;
  std::optional<std::string> trace_id;
  std::string fixture;          // JSON text, empty: none
  std::vector<std::string> error_patterns;  // the file's, then the case's
  std::vector<RuleExpectation> expect;
  bool others_hold = false;
};

struct RuleTestFile {
  Source source;
  std::vector<std::string> rules;        // rules files, resolved against the file's folder
  std::vector<SourceRange> rules_at;     // per entry of `rules` (the file's start when defaulted)
  std::vector<RuleTestCase> cases;
  std::vector<Diagnostic> diagnostics;   // errors: the file is not run
  bool ok() const { return !has_errors(diagnostics); }
};

// Parses a test file (JSON, docs/testing-rules.md). Rule names are checked when the cases run,
// against the compiled rules.
RuleTestFile parse_rule_test_file(Source source);

// The closest of `names` to `name` (edit distance, ignoring case and `_`/`-`), or empty when
// none is close enough to suggest.
std::string closest_name(std::string_view name, const std::vector<std::string>& names);

// ---------------------------------------------------------------------------------------
// Running

struct RuleTestOptions {
  bool coverage = false;
};

struct StepText {
  std::uint32_t index = 0;
  std::string text;  // describe_step (report.hpp)
};

struct RuleCheck {
  std::string rule;
  std::string location;  // the rule's, "rules/refunds.rules:12:1"
  ExpectedVerdict expected = ExpectedVerdict::holds;
  bool expected_steps = false;
  std::vector<std::uint32_t> steps;         // expected witness steps (expected_steps)
  VerdictStatus actual = VerdictStatus::vacuous;
  std::vector<std::uint32_t> actual_steps;  // witness steps when violated
  bool from_others = false;                 // checked through `"others": "holds"`
  bool passed = false;
};

struct RuleTestCaseResult {
  std::string name;
  std::string location;            // "file:line:col" of the case
  bool passed = false;
  std::vector<RuleCheck> checks;   // expectations, then the failing `others` (passing ones omitted)
  std::vector<StepText> steps;     // descriptions of every step a check mentions
};

struct RuleTestFileResult {
  std::string file;
  std::vector<std::string> rules;
  bool ran = false;                        // false: the file or its rules had errors
  std::vector<RuleTestCaseResult> cases;
};

struct PathPositionCoverage {
  std::string atom;  // the position's pattern
  bool reached = false;
};

// A transition of an `expect` automaton: from a position (or the start: before the first call)
// to a position that may follow it (or the end: the trace ends there, accepted). Transitions
// show what positions do not: an optional part skipped, a repeated part taken again.
struct PathTransitionCoverage {
  std::string from, to;  // atoms; "(start)" and "(end)"
  std::uint32_t from_position = 0, to_position = 0;  // 1-based; 0: start / end
  bool taken = false;
};

struct StatementCoverage {
  std::string text;
  bool measured = true;   // its own verdict (rules with several statements)
  bool violated = false;
  bool is_expect = false;
  bool paths_measured = false;  // an `expect` whose positions were followed
  std::vector<PathPositionCoverage> positions;
  std::vector<PathTransitionCoverage> transitions;
};

struct RuleCoverage {
  std::string file, name, location;
  bool tested = false;  // some test file checks these rules
  bool violated = false, held = false;
  bool parametric = false;
  std::vector<StatementCoverage> statements;
};

struct CoverageSummary {
  std::uint64_t rules = 0, violated = 0, held = 0;
  std::uint64_t statements = 0, statements_covered = 0;  // of rules with several statements
  std::uint64_t positions = 0, positions_reached = 0;
  std::uint64_t transitions = 0, transitions_taken = 0;
  std::uint64_t not_measured = 0;                        // statements and PATHs
  std::uint64_t items() const { return 2 * rules + statements + positions + transitions; }
  std::uint64_t covered() const {
    return violated + held + statements_covered + positions_reached + transitions_taken;
  }
  // Percentage rounded down to one decimal (as printed).
  double percent() const;
  bool at_least(double p) const;  // covered / items >= p / 100 (exactly); true with no items
};

struct RuleTestRun {
  std::vector<std::string> errors;  // formatted, located diagnostics and other errors, in order
  std::vector<std::string> warnings;
  std::vector<RuleTestFileResult> files;
  std::uint64_t cases = 0, passed = 0, failed = 0;
  bool coverage = false;
  std::vector<RuleCoverage> rules;  // with coverage: every rule of every rules file involved
  CoverageSummary summary;
  bool bad_input() const { return !errors.empty() || cases == 0; }
};

// Finds the test files of `paths` (docs/testing-rules.md) and runs them.
RuleTestRun run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& options);

enum class RuleTestFormat : std::uint8_t { text, json, junit };
bool parse_rule_test_format(std::string_view name, RuleTestFormat* out);
// The report on standard output (errors and warnings are the caller's to print).
std::string format_rule_test_report(const RuleTestRun& run, RuleTestFormat format, bool quiet = false);

}  // namespace trajcheck
