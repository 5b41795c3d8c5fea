// Internal pieces of the evaluator shared by eval.cpp (loading, pipeline), judge.cpp (one run
// against one case) and gates.cpp (aggregation tables and gates).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/condition_eval.hpp"
#include "eval/eval.hpp"
#include "json/canon.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::eval {

// The scoring dimensions of a case, in report order.
inline constexpr const char* kDimensions[] = {"selection", "arguments", "argument_validity", "order", "recovery", "outcome"};

// A report's optional number: the number, or null.
inline nlohmann::ordered_json number_or_null(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// A failure the case's environment injects: the `attempt`-th call of `tool` fails with `cls`.
struct Injection {
  std::string tool;  // normalized
  std::uint32_t attempt = 1;
  std::string cls;
  std::optional<bool> retryable, uncertain;  // else from the catalog's vocabulary
};

struct CaseSpec {
  std::string id, origin, split, catalog_version;
  std::map<std::string, std::string> fields;
  bool has_tools = false;
  std::vector<std::string> tools;
  std::string path;
  std::vector<std::pair<std::string, std::string>> arguments;  // normalized tool -> JSON object
  std::string control;
  std::string output;  // JSON of expected.output, or empty
  std::vector<std::string> rules;
  std::vector<std::string> invariants;  // expected.invariants: rule names that must hold
  std::vector<std::uint32_t> programs;  // indices into EvalContext::programs
  // "fixture" (relative to the suite), "fixture_version", and the fixture's JSON text once loaded.
  std::string fixture_path, fixture_version;
  std::shared_ptr<const std::string> fixture;
  std::vector<Injection> inject;
  std::string record;  // the case's JSON object, for graders
  std::string stale;  // why the case is stale (catalog or fixture version); empty: it is not
};

// Hook for argument validity against a tool catalog's JSON Schema (issue 5): when set, a
// call counts as matching only if the validator accepts it (nullopt: no schema for the tool).
using ArgumentValidator =
    std::function<std::optional<bool>(std::string_view tool, std::string_view arguments_json)>;

struct EvalContext {
  const suite::Suite* suite = nullptr;
  std::vector<CaseSpec> cases;
  std::unordered_map<std::string, std::size_t> case_index;
  std::vector<std::shared_ptr<const Program>> programs;
  std::unordered_map<std::string, std::size_t> program_index;
  std::vector<std::uint32_t> suite_programs;
  std::set<std::string> write_tools;
  std::set<std::string> read_tools;  // catalog `effect: read` (retrieval volume)
  std::shared_ptr<const Catalog> catalog;  // error vocabularies and operation keys
  ArgumentValidator validate_arguments;  // set when the suite names a catalog
};

struct RunOutcome {
  std::uint64_t order = 0;
  std::size_t case_index = 0;
  CaseResult result;
  std::string run_json;  // the run in normalized JSON, when the suite has graders
};

// Every judged run of a case: the case's own result, then its repeats; none unless judged.
inline std::vector<const CaseResult*> runs_of(const CaseResult& c) {
  std::vector<const CaseResult*> out;
  if (c.status != CaseStatus::judged) return out;
  out.push_back(&c);
  for (const CaseResult& r : c.repeats) out.push_back(&r);
  return out;
}

// The name of run `k` (from 0) of a case: its id, with "(run 2)" when the case has several runs.
inline std::string run_name(const CaseResult& c, std::size_t k) {
  return c.runs() > 1 ? c.case_id + " (run " + std::to_string(k + 1) + ")" : c.case_id;
}

// Runs the suite's graders on every judged run of every case (`jobs` at a time), with the
// cache of `cache_dir` (empty: none); fills each run's `graders`. `run_json`: per case, per run.
void run_graders(const EvalContext& ctx, const std::vector<std::vector<std::string>>& run_json, const std::string& cache_dir,
                 unsigned jobs, EvalReport& report);

// Judges runs against cases; one per thread (holds checkers and a scorer).
class CaseJudge {
 public:
  explicit CaseJudge(const EvalContext& ctx);
  void judge(const CaseSpec& c, const Trajectory& run, const nlohmann::json& meta, const std::string& where,
             CaseResult& out);

 private:
  struct Call {
    std::string_view tool;
    bool failed = false;
    std::string cls;  // the error class of a failed call
    std::string_view arguments;
  };
  bool judge_injections(const CaseSpec& c, const std::vector<Call>& calls, CaseResult& out);
  void retrieval(const Trajectory& run, const nlohmann::json& meta, CaseResult& out);
  const EvalContext& ctx_;
  std::vector<std::unique_ptr<Checker>> checkers_;  // lazily, per program
  std::unique_ptr<Checker> control_checker_;
  Scorer scorer_;
  json::ArgCanon canon_;
  std::vector<RuleResult> results_;
  ToolTable expected_tools_;
  Trajectory expected_{&expected_tools_};  // expected.tools as a trajectory, for score's ordering
  simdjson::dom::parser json_;
  detail::Provenance later_;  // values used after a read call (retrieval volume)
};

// Observed control flow of a run (docs/eval.md): the suite's handoff, clarify, refuse
// patterns on the run's final agent turn, else act when a tool was called, else answer.
std::string classify_control(const suite::Suite& suite, const std::vector<RuleResult>& control_results,
                             const Trajectory& run);

// What makes `report` no `eval --format json` report compare or a baseline can read
// ("cases[3].case_id: expected a string, got number"); empty when it is one.
std::string report_shape_error(const nlohmann::json& report);
// Parses `text`, the report read from `name`: false with `error` (a line, ending in a newline)
// when it is no JSON — located `name:LINE:COL` — or no report (report_shape_error).
bool parse_report(const std::string& name, std::string_view text, nlohmann::json& out, std::string& error);

// Pass/fail of cases, tables overall / per segment / per split, and the gates.
void finish_report(const suite::Suite& suite, const nlohmann::json& baseline, EvalReport& report);
std::string gate_metric_text(const suite::Gate& g);
// Every gate-able metric of a group, by its gate text (`violations[critical]`, `p95(calls_per_success)`).
// `violation_keys`: the rules' names and tags (EvalReport::violation_keys), one `violations[…]` each.
nlohmann::ordered_json metrics_json(const Dimensions& d,
                                    const std::vector<std::pair<std::string, bool>>& violation_keys);

}  // namespace trajcheck::eval
