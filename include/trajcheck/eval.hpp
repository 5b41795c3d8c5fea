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
#include <utility>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {
namespace suite {
struct Suite;  // a parsed .suite file (the library's own)
}  // namespace suite

namespace eval {

struct Violation {
  std::string rule;
  std::string severity;  // critical|error|warning|info
  std::string source;    // rules/refunds.rules:12:5
  std::string message;
  std::vector<std::uint32_t> steps;
};

// One case and what its run did. Numbers absent where the dimension does not apply.
struct CaseResult {
  std::string case_id;
  std::string split;                                   // designed | production | synthetic | …
  std::vector<std::pair<std::string, std::string>> segments;  // field -> value (suite order)
  std::map<std::string, std::string> fields;           // every scalar field of the case
  std::string status;                                  // judged | stale | unmatched
  std::string run;                                     // file:line of the run record
  std::string expected_control, control;               // control flow expected / observed
  bool retried = false;                                // a failed call was retried
  std::optional<double> selection, overall;             // overall: score's weighted selection/order
  std::uint32_t arguments_matched = 0, arguments_total = 0;
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
};

// The six dimensions of a group of cases. Ratios in [0, 1]; absent when no case applies.
struct Efficiency {
  std::uint32_t cases = 0;  // successful, gate-passing cases it is computed over
  std::uint64_t calls = 0, duplicates = 0, retries = 0, write_calls = 0, read_calls = 0, unused_reads = 0;
  // duplicates_per_100: per 100 cases (the rubric's unit); duplicates_per_100_calls: per 100 calls.
  std::optional<double> calls_per_success, duplicates_per_100, duplicates_per_100_calls, tokens_per_success,
      cost_per_success, latency_per_success, retries_per_success, write_share, read_volume_per_success,
      unused_read_share;
  std::uint32_t loop_depth = 0;  // the deepest run of one tool called in a row
  std::map<std::string, std::uint32_t> retries_by_class;
  std::vector<double> calls_series, cost_series, tokens_series, latency_series, retries_series,
      loop_series, read_volume_series;  // per case, for percentiles and the histogram
};

struct Dimensions {
  std::uint32_t cases = 0;  // judged cases in the group
  std::optional<double> selection, arguments, order, recovery, outcome;
  std::uint32_t selection_n = 0, arguments_n = 0, order_n = 0, recovery_n = 0, outcome_n = 0;
  std::optional<double> overall;  // the mean of the cases' `score` overall (a gate metric, not a dimension)
  std::uint32_t overall_n = 0;
  Efficiency efficiency;
  std::map<std::string, std::uint32_t> violations;  // severity -> count
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
  std::string status;      // pass | fail | no data (only for `if data` gates: else no data fails)
  std::string note;        // why there is no value, when there is none
};

struct EvalReport {
  std::string suite_name, suite_file, catalog_version;
  std::vector<std::string> segment_fields;
  std::vector<CaseResult> cases;               // in case-file order
  std::vector<std::string> unmatched_runs;     // "file:line (trace_id)"
  std::vector<std::string> rules_files;
  Dimensions overall;
  std::vector<GroupRow> segments, splits;
  std::vector<GateResult> gates;               // critical first, then suite order
  std::uint64_t records = 0, rejected = 0, warnings = 0;  // warnings: located, written to err
  bool gates_pass() const {
    for (const auto& g : gates)
      if (g.status == "fail") return false;
    return true;
  }
  // Cases judged: neither stale nor without a run.
  std::size_t judged() const {
    std::size_t n = 0;
    for (const auto& c : cases) n += c.status == "judged";
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
};

struct CompareRow {
  std::string dimension;      // selection, arguments, order, recovery, outcome
  std::string group;          // "overall", "task_type=refund", "split=designed"
  std::optional<double> a, b, delta;  // each report's own value; delta = b - a
  std::optional<double> lo, hi;       // bootstrap CI of the paired delta
  std::size_t paired = 0;             // cases judged in both runs that count for the row
};

struct CompareReport {
  std::string a_name, b_name;
  std::vector<CompareRow> rows;
  std::vector<std::string> pass_to_fail, fail_to_pass;
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

struct CaseNewOptions {
  std::string case_id, note, split = "production", catalog_version;
  std::vector<std::pair<std::string, std::string>> fields;  // extra scalar fields (task_type=…)
  const suite::Suite* suite = nullptr;  // for the control patterns (parse_suite); else act/answer only
};

// One JSONL line (with a trailing newline): input = the first user message, expected tools
// and path = the trace's tool calls in order, expected control = the trace's control flow.
std::string case_from_trace(const Trajectory& trace, const CaseNewOptions& options);

}  // namespace eval
}  // namespace trajcheck
