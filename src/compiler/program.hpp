// The compiled program (internal view): interned tool columns, the step classifier's
// pattern table, compiled conditions, PATH automata and one spec per rule statement.
// Immutable once built; shared by every Checker thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/automaton.hpp"
#include "compiler/conditions.hpp"
#include "ir/ir.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::detail {

// A classifier column on tool names: an exact name or a glob, evaluated once per
// distinct tool of a trace (cached by tool id in the Checker), not once per step.
struct ToolColumn {
  bool glob = false;
  std::string text;
  bool write = false;  // `write`: the tool is one of ProgramImpl::write_tools (catalog, §7)
};

struct PatternNode {
  ir::Pattern::Kind kind = ir::Pattern::Kind::any_step;
  std::uint32_t a = kNoId, b = kNoId;  // child patterns; where: b is a condition
  StepType step_type = StepType::tool_call;
  std::uint32_t column = kNoId;        // tool / glob
  std::string text;                    // for dumps
  // Parametric rules (§5). A binder is `P where … and PATH == $v`: it matches a step when
  // P and the rest of the condition (b, or none) hold and PATH has a scalar value, which
  // the step then binds. `parametric`: the pattern is a binder or an `|` over one, so its
  // truth depends on the slice's value.
  bool binder = false;
  bool parametric = false;
  CondOperand bind;
  std::string variable;
  // A mention is a binder whose variable conjunct is `PATH contains $v`: it binds no value of
  // its own; in the slice of a value bound by another pattern, it matches a step when P and
  // the rest hold and PATH contains the value (a substring of a string, an element of an
  // array). `bind` is PATH.
  bool mention = false;
};

// Parametric rules (§5): what a step binding nothing does to a slice's monitor of this
// statement, decided at compile time so such steps cost O(1) per rule, not O(live bindings).
// In a slice, binder-only patterns are false on such a step, so its effect depends only on
// the step and the monitor's state. `none`: it never changes the monitor. `lazy`: the Checker
// logs the step indices that matter (NbEvents, checker/monitor.hpp) once per rule, and a
// slice applies a whole range of them in one summarised catch-up when it is next touched
// (StatementMonitor::catch_up). Every statement kind is one or the other: no step binding
// nothing is ever fed to every live slice.
enum class NbEffect : std::uint8_t { none, lazy };

struct StatementSpec {
  ir::StatementKind kind = ir::StatementKind::forbid;
  NbEffect nb = NbEffect::none;
  std::uint32_t a = kNoId, b = kNoId, ignoring = kNoId;  // compiled pattern ids
  std::uint64_t lo = 0, hi = ir::kUnbounded;
  std::uint32_t nfa = kNoId;  // index into ProgramImpl::nfas
  std::string text;
};

struct RuleSpec {
  ir::ScopeKind scope = ir::ScopeKind::global;
  std::uint32_t q = kNoId, r = kNoId;
  std::string scope_text;
  std::vector<StatementSpec> statements;
  std::string variable;                // parametric: the one `$name`, empty otherwise
  std::vector<std::uint32_t> binders;  // binder patterns of the statements, in order (mentions included)
  std::vector<std::uint32_t> mentions;  // those of them that are mentions (PatternNode::mention)
  bool uses_valid = false;             // a statement pattern tests valid(…) (witness details)
};

// What trajcheck::Program wraps: everything the Checker runs.
struct ProgramImpl {
  std::string dump_automaton() const;

  std::vector<RuleInfo> infos;
  std::string workflow_name;
  std::string ast_dump, ir_dump;
  bool case_sensitive = false;
  std::uint64_t max_bindings = 1000000;  // CompileOptions::max_bindings
  std::vector<std::pair<std::string, std::string>> aliases;  // observed -> canonical, normalized
  std::vector<ToolColumn> columns;
  std::vector<PatternNode> patterns;
  std::vector<CondNode> conds;
  std::vector<Nfa> nfas;
  std::vector<RuleSpec> specs;
  // The tool catalog (§7), attached by compiler/catalog_checks.cpp; null without one.
  std::shared_ptr<const Catalog> catalog;
  std::vector<std::string> write_tools;  // normalized names of its effect-write tools, sorted
};

// Builds the program from a front-end module, appending its own diagnostics (E1xx).
// Returns null when any error was added.
std::shared_ptr<ProgramImpl> build_program(const ir::Module& module, const Source& source,
                                           const CompileOptions& options,
                                           std::vector<Diagnostic>& diagnostics);

}  // namespace trajcheck::detail
