// Internal pieces of the evaluator shared by eval.cpp (loading, pipeline), judge.cpp (one run
// against one case) and gates.cpp (aggregation tables and gates).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/condition_eval.hpp"
#include "eval/eval.hpp"
#include "json/canon.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::eval {

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
  std::vector<std::uint32_t> programs;  // indices into EvalContext::programs
  bool stale = false;
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
  ArgumentValidator validate_arguments;  // set when the suite names a catalog
};

struct RunOutcome {
  std::uint64_t order = 0;
  std::size_t case_index = 0;
  CaseResult result;
};

// Judges runs against cases; one per thread (holds checkers and a scorer).
class CaseJudge {
 public:
  explicit CaseJudge(const EvalContext& ctx);
  void judge(const CaseSpec& c, const Trajectory& run, const nlohmann::json& meta, const std::string& where,
             CaseResult& out);

 private:
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

// Pass/fail of cases, tables overall / per segment / per split, and the gates.
void finish_report(const suite::Suite& suite, const nlohmann::json& baseline, EvalReport& report);
std::string gate_metric_text(const suite::Gate& g);
// Every gate-able metric of a group, by its gate text (`violations[critical]`, `p95(calls_per_success)`).
nlohmann::ordered_json metrics_json(const Dimensions& d);

}  // namespace trajcheck::eval
