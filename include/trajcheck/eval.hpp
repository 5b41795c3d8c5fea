// trajcheck/eval.hpp — evaluation suites (`trajcheck eval`), comparing two runs of one
// (`trajcheck compare`) and turning a trace into a regression case (`trajcheck case new`).
//
//   trajcheck::eval::EvalOptions o;
//   o.suite_path = "evals/refunds.suite";
//   o.jobs = 4;
//   trajcheck::eval::EvalReport report;
//   std::vector<trajcheck::eval::EvalProblem> problems;
//   bool ok = trajcheck::eval::run_eval(o, report, problems);
//   std::cerr << trajcheck::eval::format_problems(problems, /*color=*/false);
//   if (!ok) return 2;
//   std::cout << trajcheck::eval::report_json(report);      // or text, markdown, junit, html
//   return report.rejected ? 2 : report.passed() ? 0 : 1;
//
// Cases are joined with runs, checked with the suite's rules, scored with the metrics
// library, classified by control flow, aggregated into the six dimensions of docs/eval.md
// (overall, per segment, per split) and judged by the gates. An EvalReport holds everything
// a report needs; the report functions only format it. Nothing throws: problems are values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {
namespace suite {
struct Suite;  // a parsed .suite file (the library's own)
}  // namespace suite

namespace eval {

struct Violation {
  std::string rule;
  std::string severity;  // critical|error|warning|info
  std::vector<std::string> tags;  // the rule's tags
  std::string source;    // rules/refunds.rules:12:5
  std::string message;
  std::vector<std::uint32_t> steps;
};

// One failure the case's environment injected, and how the run met it.
struct InjectionResult {
  std::string tool, error_class;
  std::uint32_t attempt = 0;
  bool observed = false;   // the attempt-th call of the tool failed with that class
  bool retryable = false, uncertain = false;
  bool recovered = false;  // observed, and none of `problems`
  std::vector<std::string> problems;  // why the recovery is wrong; or, unobserved, what the run did
};

// One failed tool call of a run, for the recovery tables (per error class, per tool).
struct FailureEvent {
  std::string tool, error_class;
  bool injected = false;             // an observed injection
  std::optional<bool> recovered;     // absent when the case is not judged on recovery
};

// What one external grader said of one case's run (`{"score", "pass", "reason"}` on its
// standard output), or why it said nothing.
struct GraderResult {
  std::string grader;
  std::optional<double> score;
  std::optional<bool> pass;
  std::string reason;
  std::string error;    // it failed, timed out or wrote no such object: why (no score, no pass)
  bool cached = false;  // read from the grader cache, not run
};

// Whether a case was judged: a run answered it (judged), its catalog or fixture version
// differs from the suite's (stale), or no run answered it (unmatched).
enum class CaseStatus : std::uint8_t { judged, stale, unmatched };
// A gate's verdict; no_data only for `if data` gates (else a gate without data fails).
enum class GateStatus : std::uint8_t { pass, fail, no_data };
// The words the reports write: "judged", "stale", "unmatched"; "pass", "fail", "no data".
std::string_view to_string(CaseStatus status);
std::string_view to_string(GateStatus status);

// One case and what its run did. Numbers absent where the dimension does not apply.
struct CaseResult {
  std::string case_id;
  std::string split;                                   // designed | production | synthetic | …
  std::vector<std::pair<std::string, std::string>> segments;  // field -> value (suite order)
  std::map<std::string, std::string> fields;           // every scalar field of the case
  CaseStatus status = CaseStatus::unmatched;
  std::string run;                                     // file:line of the run record
  std::string expected_control, control;               // control flow expected / observed
  bool retried = false;                                // a failed call was retried
  std::optional<double> selection, overall;             // overall: score's weighted selection/order
  std::uint32_t arguments_matched = 0, arguments_total = 0;
  // Argument validity: the run's calls of catalog tools, and those whose arguments the tool's
  // JSON Schema accepts (every call, expected or not; no schema accepts any). 0 without a catalog.
  std::uint32_t schema_valid = 0, schema_calls = 0;
  std::optional<double> order;
  bool failed_call = false;                            // the run has a failed tool call
  std::optional<bool> recovery;                        // only when failed_call
  std::optional<bool> outcome;
  bool pass = false;                                   // successful and gate-passing (docs/eval.md)
  std::vector<std::string> problems;                   // why the case does not pass
  // Efficiency of the run.
  std::uint32_t calls = 0, duplicates = 0, retries = 0, loop_depth = 0, write_calls = 0;
  // Retrieval: calls of catalog `effect: read` tools, the bytes of their results, and those
  // none of whose result values is used later (a later call's arguments, the final answer).
  // Absent without a catalog.
  std::uint32_t read_calls = 0, unused_reads = 0;
  std::optional<std::uint64_t> read_volume;
  std::map<std::string, std::uint32_t> retries_by_class;
  std::optional<double> tokens, cost, latency_ms;
  std::vector<Violation> violations;
  std::string explanation;                             // the scorer's explanation
  // The run's tools against the expected tools or path (score's): expected tools it did not
  // call, tools it called that were not expected (for a case that expects no tool: every tool
  // it called), expected tools called out of order.
  std::vector<std::string> missing_tools, extra_tools, misordered_tools;
  bool tools_differ() const { return !missing_tools.empty() || !extra_tools.empty() || !misordered_tools.empty(); }
  std::string fixture;                                 // the case's "fixture", if any
  std::vector<InjectionResult> injections;             // the case's "inject", in order
  std::vector<FailureEvent> failures;                  // the run's failed calls, in order
  std::vector<std::string> unknown_errors;             // "tool: class" outside the catalog's vocabulary
  std::vector<GraderResult> graders;                   // the suite's graders, in suite order
  // A case run k times (several runs carry its case id): the runs after the first, each judged
  // alike, in the order read. This result is the first run's; `pass` is each run's own.
  // Empty with one run, and for a stale or unmatched case.
  std::vector<CaseResult> repeats;

  // The case's judged runs (0 unless judged) and those that pass.
  std::uint32_t runs() const {
    return status == CaseStatus::judged ? 1 + static_cast<std::uint32_t>(repeats.size()) : 0;
  }
  std::uint32_t runs_passed() const {
    if (status != CaseStatus::judged) return 0;
    std::uint32_t n = pass;
    for (const CaseResult& r : repeats) n += r.pass;
    return n;
  }
  // The case's verdict: every run passes (pass^k; with one run, that run's `pass`).
  bool pass_all() const { return runs() > 0 && runs_passed() == runs(); }
  // Some runs pass and some fail.
  bool flaky() const {
    const std::uint32_t p = runs_passed();
    return p > 0 && p < runs();
  }
};

// A row of a recovery table: the failed calls of one error class (or one tool).
struct RecoveryRow {
  std::string key;
  std::uint32_t failures = 0, injected = 0, judged = 0, recovered = 0;
  std::optional<double> share() const {
    if (judged == 0) return std::nullopt;
    return static_cast<double>(recovered) / static_cast<double>(judged);
  }
};

// The six dimensions of a group of cases. Ratios in [0, 1]; absent when no case applies.
struct Efficiency {
  std::uint32_t cases = 0;  // successful (outcome true), gate-passing runs it is computed over
  std::uint64_t calls = 0, duplicates = 0, retries = 0, write_calls = 0, read_calls = 0, unused_reads = 0;
  // duplicates_per_100: per 100 cases (the rubric's unit); duplicates_per_100_calls: per 100 calls.
  std::optional<double> calls_per_success, duplicates_per_100, duplicates_per_100_calls, tokens_per_success,
      cost_per_success, latency_per_success, retries_per_success, write_share, read_volume_per_success,
      unused_read_share;
  std::uint32_t loop_depth = 0;  // the most repetitions in a row of one call or cycle of calls (docs/metrics.md)
  std::map<std::string, std::uint32_t> retries_by_class;
  std::vector<double> calls_series, cost_series, tokens_series, latency_series, retries_series,
      loop_series, read_volume_series;  // per case, for percentiles and the histogram
};

// One grader over a group of cases: a dimension of its own, never blended into the six.
struct GraderDimension {
  std::uint32_t cases = 0;   // judged cases it ran on
  std::uint32_t passed = 0, failed = 0, errors = 0;  // pass true / pass false / no answer
  std::optional<double> pass_share;  // passed / (passed + failed): the bare gate metric
  std::optional<double> mean_score;
  std::vector<double> scores;        // for mean(…), pNN(…), max(…) gates
};

struct Dimensions {
  std::uint32_t cases = 0;  // judged cases in the group
  // Judged runs (k per case). The six dimensions, the violations and the efficiency figures
  // count every run; pass@k, pass^k and the pass rate are over cases.
  std::uint32_t runs = 0;
  // pass_at_k: the share of cases with a passing run; pass_all_k (pass^k): of cases whose every
  // run passes; pass_rate: the mean over cases of passed runs / runs. Absent without cases.
  std::optional<double> pass_at_k, pass_all_k, pass_rate;
  std::uint32_t flaky = 0;  // cases with a passing and a failing run
  std::optional<double> selection, arguments, order, recovery, outcome;
  std::uint32_t selection_n = 0, arguments_n = 0, order_n = 0, recovery_n = 0, outcome_n = 0;
  // Schema-valid calls / calls of catalog tools (argument_validity_n of them).
  std::optional<double> argument_validity;
  std::uint32_t argument_validity_n = 0;
  std::optional<double> overall;  // the mean of the cases' `score` overall (a gate metric, not a dimension)
  std::uint32_t overall_n = 0;
  Efficiency efficiency;
  std::map<std::string, std::uint32_t> violations;  // severity -> count
  std::map<std::string, std::uint32_t> violations_by_rule, violations_by_tag;  // rule name / tag -> count
  std::map<std::string, GraderDimension> graders;   // by grader name
};

struct GroupRow {
  std::string field;  // segment field, or "split"
  std::string value;
  Dimensions dims;
};

struct GateResult {
  std::string text;        // `selection >= 95%`
  std::string metric;      // canonical metric text, `p95(calls_per_success)`
  std::string segment;     // for per-FIELD gates: "task_type=refund"; empty overall
  std::optional<double> value, threshold;
  bool critical = false;
  bool percent = false;
  bool grader_share = false;  // the bare metric of a grader: the share of cases it passes
  GateStatus status = GateStatus::no_data;
  std::string note;        // why there is no value, when there is none
};

// One file a report was computed from, by its SHA-256: `compare` warns when two reports were
// not computed from the same rules, cases, catalog and fixtures.
struct InputDigest {
  std::string kind;    // cases | catalog | rules | fixture
  std::string file;    // as the suite names it, joined to the suite's folder
  std::string sha256;  // 64 hex digits of the file's bytes
};

struct EvalReport {
  std::string suite_name, suite_file, catalog_version;
  std::vector<std::string> segment_fields;
  std::vector<CaseResult> cases;               // in case-file order
  std::vector<std::string> unmatched_runs;     // "file:line (trace_id)"
  std::vector<std::string> rules_files;
  std::vector<InputDigest> inputs;             // cases files, catalog, rules files, fixtures
  // The names a `violations[NAME]` gate may use besides the severities: every rule's name
  // (false) and every tag (true) of the rules files, sorted; the metrics maps list each.
  std::vector<std::pair<std::string, bool>> violation_keys;
  Dimensions overall;
  std::vector<GroupRow> segments, splits;
  std::vector<GateResult> gates;               // critical first, then suite order
  // Recovery tables over the judged cases' failed calls, shown when some case injects a
  // failure or the catalog declares an error vocabulary (`show_recovery`).
  bool show_recovery = false;
  std::vector<RecoveryRow> recovery_by_class, recovery_by_tool;
  // Error classes outside the catalog's vocabulary: "tool: class" -> cases that met it.
  std::map<std::string, std::vector<std::string>> unknown_errors;
  // Injections that no run met: "case: tool attempt N (class): what happened".
  std::vector<std::string> injections_not_observed;
  std::vector<std::string> graders;            // the suite's graders, in suite order
  // Runs per judged case: the most (k) and the fewest; they differ when some case has fewer
  // runs (each such case is a located warning). 0 when no case was judged.
  std::uint32_t k = 0, k_fewest = 0;
  std::uint64_t records = 0, rejected = 0, warnings = 0;  // warnings: located, written to err
  bool gates_pass() const {
    for (const auto& g : gates)
      if (g.status == GateStatus::fail) return false;
    return true;
  }
  // Cases judged: neither stale nor without a run (a case run k times counts once).
  std::size_t judged() const {
    std::size_t n = 0;
    for (const auto& c : cases) n += c.status == CaseStatus::judged;
    return n;
  }
  // The release decision: some case was judged and no gate failed (a run that judged
  // nothing does not pass, whatever its gates say).
  bool passed() const { return judged() > 0 && gates_pass(); }
};

struct EvalOptions {
  std::string suite_path;
  std::vector<std::string> runs;  // --runs: replaces the suite's runs
  NormalizeOptions reading;       // how run records are read (format, aliases, error patterns)
  std::string baseline;           // --baseline: replaces the suite's baseline
  unsigned jobs = 1;
  // Where graders' answers are kept, by (grader, case, run digest): a re-run asks only for
  // what changed. Empty: `.trajcheck-cache/graders` in the suite's folder. "-": no cache.
  std::string grader_cache;
};

// A problem found while preparing or running a suite, for the caller to format: a
// diagnostic in a file (the suite, a rules file, a catalog), or a whole message line
// ("cases.jsonl:3:1: error: …").
struct EvalProblem {
  std::shared_ptr<const Source> source;  // set: `diagnostic` is a position in it
  Diagnostic diagnostic;
  std::string text;                      // no source: the message, with its newline
};
// For people: each problem as a compiler-style diagnostic or its line, in order.
std::string format_problems(const std::vector<EvalProblem>& problems, bool color = false);

// Runs the suite. On bad input (a suite or rules file that does not compile, unreadable
// cases, …) adds the problems and returns false; problems that concern some records only
// (rejected run records) are added and counted in the report, and the run goes on.
bool run_eval(const EvalOptions& options, EvalReport& report, std::vector<EvalProblem>& problems);

// Why a run that judged no case fails ("no case was judged: 12 cases, 11 without a run, 1
// stale"), for every report format and the command line; empty when some case was judged.
std::string nothing_judged(const EvalReport& r);

// Reports.
std::string report_text(const EvalReport& r);
std::string report_json(const EvalReport& r);
std::string report_markdown(const EvalReport& r);
std::string report_junit(const EvalReport& r);
std::string report_html(const EvalReport& r);


// ---------------------------------------------------------------------------------------
// Comparing two reports

// More resamples than this is bad input (the bootstrap's time and memory grow with them).
constexpr unsigned kMaxResamples = 1000000;

struct CompareOptions {
  std::uint64_t seed = 1;     // the bootstrap is reproducible for a given seed
  unsigned resamples = 2000;  // at most kMaxResamples
  double confidence = 0.95;
  // --require-same: inputs that differ (input_differences) are an error, not a warning.
  bool require_same = false;
};

struct CompareRow {
  // selection, arguments, argument_validity, order, recovery, outcome, overall (shares: higher
  // is better), then calls_per_success, duplicates_per_100, tokens_per_success,
  // cost_per_success, latency_per_success (over cases both runs passed: lower is better).
  std::string dimension;
  std::string group;          // "overall", "task_type=refund", "split=designed"
  std::optional<double> a, b, delta;  // each report's own value; delta = b - a
  std::optional<double> lo, hi;       // bootstrap CI of the paired delta
  std::size_t paired = 0;             // cases judged in both runs that count for the row
  bool share = true;                  // a share in [0, 1] (printed in %, the delta in points)
  bool lower_is_better = false;       // the efficiency figures
  // The interval lies entirely on the worse side of 0 (below for a share, above for an
  // efficiency figure).
  bool regressed = false;
};

struct CompareReport {
  std::string a_name, b_name;
  std::vector<CompareRow> rows;
  std::vector<std::string> pass_to_fail, fail_to_pass;
  // "outcome", "calls_per_success": the rows of the `overall` group that regressed — what
  // --fail-on-regression fails on, with pass_to_fail.
  std::vector<std::string> regressions;
  // Where the two reports' inputs differ ("rules rules/refunds.rules: the files differ"), in
  // order of kind and file; empty when both carry the same digests.
  std::vector<std::string> input_differences;
  std::size_t paired_cases = 0;
  CompareOptions options;
};

// Reads a report file for compare_reports: only a regular file of at most 1 GiB
// (docs/limits.md); false with `error` set to the reason ("is a directory", …).
bool read_report_file(const std::string& path, std::string& out, std::string& error);

// Parses both reports (`eval --format json`) and compares them; false with `error` set on
// bad input.
bool compare_reports(const std::string& a_name, const std::string& a_json, const std::string& b_name,
                     const std::string& b_json, const CompareOptions& options, CompareReport& out,
                     std::string& error);

// --fail-on-regression: a dimension of the overall group regressed, or a case flipped pass -> fail.
inline bool compare_regressed(const CompareReport& r) { return !r.regressions.empty() || !r.pass_to_fail.empty(); }

std::string compare_text(const CompareReport& r);
std::string compare_json(const CompareReport& r);
std::string compare_markdown(const CompareReport& r);
std::string compare_html(const CompareReport& r);


// ---------------------------------------------------------------------------------------
// Regression cases

// A suite parsed for its control patterns (`case new --suite`); `suite` is null when it has
// errors (then `diagnostics` says why).
struct SuiteFile {
  Source source;
  std::vector<Diagnostic> diagnostics;
  std::shared_ptr<const suite::Suite> suite;
  bool ok() const { return suite != nullptr; }
};
SuiteFile parse_suite_file(Source source);
// The suite's `fixtures "DIR"` folder (relative to the suite's folder) and `version`; empty
// when the suite declares none.
std::string suite_fixtures_dir(const SuiteFile& suite);
std::string suite_fixtures_version(const SuiteFile& suite);
// The suite's `rules` files as compiled programs (globs relative to the suite); false with
// the problems in `errors` when one cannot be read or compiled.
bool compile_suite_rules(const SuiteFile& suite, std::vector<std::shared_ptr<const Program>>& out,
                         std::string& errors);


struct CaseNewOptions {
  std::string case_id, note, split = "production", catalog_version;
  std::vector<std::pair<std::string, std::string>> fields;  // extra scalar fields (task_type=…)
  const suite::Suite* suite = nullptr;  // for the control patterns (parse_suite); else act/answer only
  // The case's environment fixture: its "fixture" file name (relative to the suite), its
  // "fixture_version", and its JSON text (for the rules' `fixture.*`). Empty: no fixture.
  std::string fixture_path, fixture_version, fixture;
  // expected.invariants: the rules the reviewer names; when none are named, the rules of
  // `rules` (the suite's) that held on the trace — satisfied, not vacuous, never violated.
  std::vector<std::string> invariants;
  std::vector<std::shared_ptr<const Program>> rules;
};

// One JSONL line (with a trailing newline): input = the first user message, expected tools
// and path = the trace's tool calls in order, expected control = the trace's control flow,
// expected invariants, the fixture and the reviewer's note.
std::string case_from_trace(const Trajectory& trace, const CaseNewOptions& options);

// Copies the fixture `file` (a JSON document) into the suite's fixtures folder as
// CASE-ID.json — never replacing a different file there — and sets `o`'s fixture_path,
// fixture_version (`version`, else the suite's) and fixture. False with `error` set otherwise
// (no fixtures folder, a case id that is no file name, unreadable or invalid JSON).
bool copy_case_fixture(const SuiteFile& suite, const std::string& file, const std::string& version,
                       CaseNewOptions& o, std::string& error);

// ---------------------------------------------------------------------------------------
// Synthetic variations (`trajcheck case vary`)

struct VaryOptions {
  std::string suite_path;
  std::vector<std::string> from;   // the source cases' ids
  std::vector<std::string> kinds;  // of variation_kinds() or the suite's `variation` names; empty: all
  std::uint64_t seed = 1;          // the same seed gives the same bytes
  std::string out_dir;             // synthetic.jsonl, fixtures/, review.md
  unsigned sample = 5;             // derived cases in the review sample
  unsigned per_kind = 3;           // fixture-missing: fields removed per source case
  // Where the suite's variation commands' answers are kept: empty = .trajcheck-cache/variations
  // beside the suite, "-" = nowhere (every command runs).
  std::string cache;
};

struct VaryResult {
  std::size_t cases = 0, fixtures = 0, sampled = 0;
  std::vector<std::string> case_ids;
};

// errors, empty, extra-fields, missing-fields, reorder, fixture-missing, fixture-reorder, attempts.
const std::vector<std::string>& variation_kinds();

// Derives synthetic cases (split `synthetic`, with `derived_from` and `variation`) from the
// suite's cases named by `from`, and writes them with their fixtures and a seeded review
// sample into `out_dir`. False with the problems in `errors` on bad input.
bool vary_cases(const VaryOptions& options, VaryResult& result, std::string& errors);

}  // namespace eval
}  // namespace trajcheck
