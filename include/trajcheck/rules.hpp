// trajcheck/rules.hpp — compile a rules file once, check many traces against it.
//
//   trajcheck::CompileResult r = trajcheck::compile(
//       trajcheck::Source("refunds.rules", text));
//   std::cerr << trajcheck::format_diagnostics(r.source, r.diagnostics);
//   if (!r.ok()) return 2;
//   trajcheck::Checker checker(r.program);        // one per thread
//   std::vector<trajcheck::RuleResult> results;
//   checker.check(trajectory, results);           // one entry per rule (and per binding)
//
// A Program is immutable and may be shared by any number of threads. A Checker holds one
// trace's state; it is reset, not reallocated, between traces, and belongs to one thread.
// No exception crosses this API: compile problems are diagnostics.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {

class Catalog;  // trajcheck/catalog.hpp
class Program;
namespace detail {
struct ProgramImpl;  // the compiled form; internal
}

struct CompileOptions {
  // Cap on the states of one PATH automaton; past it the rule is an error (E-code in
  // docs/language.md), never a hang.
  std::uint32_t max_automaton_states = 4096;
  // Nesting depth limit for parentheses in patterns, conditions and paths.
  std::uint32_t max_nesting = 256;
  // A catalog file to use instead of (or in absence of) the file's `catalog` line.
  std::string catalog_override;
  // Cap on the values one parametric rule keeps a slice for in one trace (§5); a value
  // first bound past it gets no slice; its bindings are counted in RuleResult::bindings_dropped.
  std::uint64_t max_bindings = 1000000;
  // The tool names known to have been called (`lint --traces`, `check --strict`: the tools
  // the traces call), normalized as the file's rules are (case-folded unless `case sensitive`,
  // aliases applied). When set and no catalog is in use, a rule's tool name or glob that
  // matches none of them is warning W008, with a "did you mean" note; with a catalog the
  // catalog decides (E202) and these names are candidates for its note too. Unset: no check.
  std::optional<std::vector<std::string>> seen_tools;
  // Aliases that rename the traces' tool names besides the file's own (observed, canonical):
  // the command line's (`--alias`), which win over the file's for one observed name, and the
  // other rules files' of the same run (compile_rule_set sets them), which the file's own win
  // over. A rule's tool name that one of them renames means its canonical name, as with the
  // file's own aliases: the traces never show it under the observed name.
  std::vector<std::pair<std::string, std::string>> command_line_aliases, other_files_aliases;
};

struct CompileResult {
  Source source;
  std::shared_ptr<const Program> program;  // null when any error was reported
  std::vector<Diagnostic> diagnostics;     // sorted by position
  bool ok() const { return program != nullptr; }
};

CompileResult compile(Source source, const CompileOptions& options = {});

// The canonical layout of a rules file (`trajcheck fmt`): comments kept, one statement a
// line. Empty, with the diagnostics, when the file does not parse.
std::string format_rules(const Source& source, std::vector<Diagnostic>& diagnostics);

enum class VerdictStatus : std::uint8_t { satisfied, violated, vacuous };
std::string_view to_string(VerdictStatus s);

enum class RuleSeverity : std::uint8_t { info, warning, error, critical };
std::string_view to_string(RuleSeverity s);
// Accepts "critical", "error", "warning", "info"; false when unknown.
bool parse_rule_severity(std::string_view name, RuleSeverity* out);

struct RuleInfo {
  std::string name;
  RuleSeverity severity = RuleSeverity::error;
  std::string message;
  std::vector<std::string> tags;
  std::string location;  // "rules/refunds.rules:12:5"
};

struct RuleResult {
  std::uint32_t rule = 0;  // index into Program::rules()
  VerdictStatus status = VerdictStatus::satisfied;
  std::vector<std::uint32_t> steps;  // witness step indices, sorted, no repeats
  std::vector<std::pair<std::string, std::string>> binding;  // parametric: var -> value (JSON)
  // Parametric: bindings (step, value) of this trace left unchecked because the value came
  // after CompileOptions::max_bindings others (set on every entry of the rule; 0 = none).
  std::uint64_t bindings_dropped = 0;
  // Per witness (parallel to `steps`) why it is one, empty for a witness without a reason;
  // empty when no witness has one. Rules using valid(…): the call's catalog error
  // ("arguments.order_id: …"). On a trace whose calls share turns: a call whose side of a
  // scope boundary is unknown, or a PATH turn too large to try in every order (docs/language.md).
  std::vector<std::string> details;
};

// A compiled rules file, made by compile(). Immutable; share it through shared_ptr.
class Program {
 public:
  // Wraps the compiler's output (compile() does this; the type is internal).
  explicit Program(std::shared_ptr<const detail::ProgramImpl> compiled);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::vector<RuleInfo>& rules() const;
  const std::string& workflow() const;
  // The file's `alias OBSERVED = CANONICAL` lines, observed -> canonical, both normalized
  // like trace tool names, in file order. A checker applies them itself; a caller that parses
  // traces for several programs puts them in NormalizeOptions::aliases (as `check` does).
  const std::vector<std::pair<std::string, std::string>>& tool_aliases() const;
  // The file says `case sensitive`: tool names are compared as written, not case-folded.
  bool case_sensitive_names() const;
  // The tool catalog the rules use (their `catalog` line or CompileOptions::catalog_override),
  // or null.
  const std::shared_ptr<const Catalog>& catalog() const;
  // Stage dumps for `trajcheck explain`.
  std::string dump_ast() const;
  std::string dump_ir() const;
  std::string dump_automaton() const;

 private:
  friend class Checker;  // run the compiled form
  friend class Monitor;
  std::shared_ptr<const detail::ProgramImpl> compiled_;
};

class Checker {
 public:
  explicit Checker(std::shared_ptr<const Program> program);
  ~Checker();
  Checker(Checker&&) noexcept;
  Checker& operator=(Checker&&) noexcept;

  // Checks one trajectory. `out` is cleared and filled with one entry per rule, in
  // rules-file order (several for a parametric rule violated by several bindings).
  void check(const Trajectory& trace, std::vector<RuleResult>& out);

  // The environment fixture (a JSON document's text) that `fixture.*` paths read in the
  // traces checked from now on; empty (the default): none, every `fixture.*` path is absent.
  // eval sets each case's fixture before checking its run.
  void set_fixture(std::string_view fixture);

 private:
  friend class Monitor;  // runs the same Impl one step at a time
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trajcheck
