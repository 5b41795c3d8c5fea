// The evaluator of `trajcheck eval`: cases joined with runs, checked with the suite's rules,
// scored with the metrics library, classified by control flow, aggregated into the six
// dimensions of docs/eval.md (overall, per segment, per split) and judged by the gates.
// Everything a report needs is in EvalReport; src/eval/report_*.cpp only format it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "suite/suite.hpp"

namespace trajcheck::eval {

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
  std::string status;      // pass | fail | no data
  std::string note;
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
  std::uint64_t records = 0, rejected = 0;
  bool gates_pass() const {
    for (const auto& g : gates)
      if (g.status == "fail") return false;
    return true;
  }
};

struct EvalOptions {
  std::string suite_path;
  std::vector<std::string> runs;  // --runs: replaces the suite's runs
  std::string input_format = "auto";
  std::vector<std::string> aliases;
  std::vector<std::string> error_patterns;
  std::string baseline;           // --baseline: replaces the suite's baseline
  unsigned jobs = 1;
};

// Runs the suite. On bad input (a suite or rules file that does not compile, unreadable
// cases, rejected records) writes the diagnostics to `errors` and returns false, unless
// the problem only concerns some records, which are reported and counted.
bool run_eval(const EvalOptions& options, EvalReport& report, std::string& errors, bool color);

// Aggregation (exposed for tests and compare).
Dimensions aggregate(const std::vector<const CaseResult*>& cases);
std::optional<double> percentile(std::vector<double> values, double p);  // nearest rank
// The value of a gate's metric over `dims`; absent when no case applies.
std::optional<double> metric_value(const Dimensions& dims, const suite::Gate& gate);

// Reports.
std::string report_text(const EvalReport& r);
std::string report_json(const EvalReport& r);
std::string report_markdown(const EvalReport& r);
std::string report_junit(const EvalReport& r);
std::string report_html(const EvalReport& r);

}  // namespace trajcheck::eval
