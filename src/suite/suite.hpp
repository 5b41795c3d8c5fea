// The parsed `.suite` file of docs/eval.md: where cases, runs, rules, catalog and baseline are,
// the segment fields, the control-flow patterns (compiled by the rule compiler) and the
// release gates. Produced by parse_suite(); read by src/eval.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::suite {

struct Located {
  std::string text;   // decoded string / name
  SourceRange range;  // where it was written (for diagnostics)
};

enum class GateOp : std::uint8_t { eq, ne, le, ge, lt, gt };
std::string_view to_string(GateOp op);

struct Gate {
  std::string metric;              // selection, violations, calls_per_success, …
  std::string severity;            // violations[critical]: "critical"; else empty
  // violations[NAME] where NAME is no severity: a rule's name, or a tag of rules. The parser
  // leaves it in `rule` (it does not see the rules files); eval resolves it (resolve_rule_gates)
  // against the compiled rules: a rule of that name keeps `rule`, else a tag moves it to `tag`.
  std::string rule, tag;
  SourceRange index_range;         // where NAME is written
  bool rule_critical = false;      // the rule (or every rule of the tag) is [critical]
  std::string function;            // p95(calls_per_success): "p95"; else empty
  GateOp op = GateOp::ge;
  bool baseline = false;           // threshold relative to the baseline report
  char baseline_op = 0;            // '*', '+', '-' or 0 (baseline itself)
  double value = 0;                // literal threshold, or the factor/offset of baseline
  bool percent = false;            // written as a percentage (value already divided by 100)
  std::string per;                 // segmented gate: every value of this case field must pass
  bool if_data = false;            // `if data`: no value is not a failure (else a gate without data fails)
  std::string text;                // the canonical text, for reports
  SourceRange range;
  bool critical() const { return metric == "violations" && (severity == "critical" || rule_critical); }
  bool grader = false;             // the metric is a grader of the suite
};

struct Control {
  std::string name;                 // handoff, clarify, refuse
  std::string pattern_text;         // as written
  SourceRange range;
};

// `grader NAME command "…" timeout 30s`: an external command run per judged case; also
// `variation NAME command "…" timeout 30s`, one that `case vary` runs per source case to vary
// its input (a paraphrase).
struct Grader {
  std::string name, command;
  double timeout_seconds = 30;
  SourceRange range;  // the name
};

struct Suite {
  std::string name;
  std::string directory;            // the suite file's directory: paths are relative to it
  std::vector<Located> cases, runs, rules;
  // `case rules from "DIR", …`: folders besides the suite's own that a case's `rules` may name.
  std::vector<Located> case_rules_from;
  std::optional<Located> catalog, baseline;
  // `fixtures "DIR" version "V"`: the folder of the cases' environment fixtures (besides the
  // suite's own folder, where a case's "fixture" may lie) and their version (a case whose
  // "fixture_version" differs is stale). Version empty: not declared.
  std::optional<Located> fixtures;
  std::string fixtures_version;
  std::vector<Located> segments;
  std::vector<Control> controls;    // in file order
  // The control patterns compiled as one program: rule i is `forbid <pattern of controls[i]>`,
  // so its witnesses are exactly the steps the pattern matches. Null when no controls.
  std::shared_ptr<const Program> control_program;
  std::vector<Gate> gates;
  std::vector<Grader> graders;      // in file order; gates may name them as metrics
  std::vector<Grader> variations;   // `variation NAME command "…"`, in file order (case vary)
  // score's --min-order-length (`order min length N`) and --weights (`overall weights S, O`).
  std::uint32_t order_min_length = 0;
  double selection_weight = 0.6, order_weight = 0.4;
  std::optional<SourceRange> order_range, weights_range;  // where they were set
};

struct SuiteResult {
  Source source;
  Suite suite;
  std::vector<Diagnostic> diagnostics;  // sorted; S-codes for suite errors, E-codes from patterns
  bool ok() const { return !has_errors(diagnostics); }
};

// Parses and checks a suite file. Every problem is a diagnostic (S001…, docs/eval.md).
SuiteResult parse_suite(Source source);

// What a gate metric is: a share from 0 to 1 (shown as a percentage), a per-case series
// (bare = the mean; mean(…), pNN(…), max(…) apply), or a number (a count or a rate).
enum class MetricKind : std::uint8_t { share, series, number };

struct GateMetric {
  std::string_view name;
  MetricKind kind;
  std::string_view meaning;  // one line, for the language server's hover and completion
  std::string_view alias_of;  // `completion` is `outcome`: empty for the metric itself
};

// Every metric a gate may use (docs/eval.md lists the same), in the order reports list them:
// the suite parser, the evaluator's `metrics` map and the language server all read this table.
std::span<const GateMetric> gate_metrics();
// The table's entry of `name`, or null.
const GateMetric* find_gate_metric(std::string_view name);
// The metric names a gate may use, for diagnostics and the evaluator.
bool is_gate_metric(std::string_view name);

}  // namespace trajcheck::suite
