// `explain --emit ir`: a stable, readable text form of the rule IR (tables by id, then
// rules), so tests can compare IRs and users can see what a file compiled to.
#include <fmt/format.h>

#include "language/frontend.hpp"
#include "language/parser.hpp"

namespace trajcheck::language {

namespace {

std::string_view pattern_kind(ir::Pattern::Kind k) {
  using K = ir::Pattern::Kind;
  switch (k) {
    case K::tool: return "tool";
    case K::glob: return "glob";
    case K::any_tool: return "any_tool";
    case K::any_step: return "any_step";
    case K::step_type: return "step_type";
    case K::or_: return "or";
    case K::not_: return "not";
    case K::failed: return "failed";
    case K::where: return "where";
    case K::write: return "write";
  }
  return "?";
}

std::string_view cond_kind(ir::Cond::Kind k) {
  using K = ir::Cond::Kind;
  switch (k) {
    case K::and_: return "and";
    case K::or_: return "or";
    case K::not_: return "not";
    case K::compare: return "compare";
    case K::matches: return "matches";
    case K::contains: return "contains";
    case K::in: return "in";
    case K::exists: return "exists";
    case K::seen: return "seen";
    case K::valid: return "valid";
  }
  return "?";
}

std::string_view path_kind(ir::PathExpr::Kind k) {
  using K = ir::PathExpr::Kind;
  switch (k) {
    case K::atom: return "atom";
    case K::seq: return "seq";
    case K::alt: return "alt";
    case K::all_of: return "all_of";
    case K::optional: return "optional";
    case K::star: return "star";
    case K::plus: return "plus";
  }
  return "?";
}

std::string_view scope_kind(ir::ScopeKind k) {
  switch (k) {
    case ir::ScopeKind::global: return "global";
    case ir::ScopeKind::after: return "after";
    case ir::ScopeKind::before: return "before";
    case ir::ScopeKind::between: return "between";
    case ir::ScopeKind::after_until: return "after_until";
  }
  return "?";
}

std::string id_text(ir::Id id, char prefix) {
  return id == ir::kNone ? std::string("-") : fmt::format("{}{}", prefix, id);
}

std::string step_type_name(StepType t) {
  switch (t) {
    case StepType::tool_call: return "tool_call";
    case StepType::user_message: return "user_message";
    case StepType::assistant_message: return "assistant_message";
    case StepType::approval_request: return "approval_request";
    case StepType::approval: return "approval";
    case StepType::final_answer: return "final_answer";
    case StepType::system_message: return "system_message";
    case StepType::other: return "other";
  }
  return "other";
}

std::string operand_text(const ir::Operand& o) {
  switch (o.kind) {
    case ir::Operand::Kind::none: return "-";
    case ir::Operand::Kind::path: {
      static constexpr const char* kRoots[] = {"arguments", "result", "context", "fixture", "step"};
      std::string segs;
      for (const auto& s : o.path.segments) {
        if (!segs.empty()) segs += ',';
        segs += s.key.empty() && s.index >= 0 ? fmt::format("[{}]", s.index) : detail::quote_string(s.key);
      }
      return fmt::format("path({}:{})", kRoots[static_cast<int>(o.path.root)], segs);
    }
    default: return detail::print_operand(o);
  }
}

}  // namespace

std::string dump_ir(const ir::Module& m) {
  std::string out;
  if (!m.workflow.empty()) out += fmt::format("workflow {}\n", detail::quote_string(m.workflow));
  if (!m.catalog.empty()) out += fmt::format("catalog {}\n", detail::quote_string(m.catalog));
  out += fmt::format("case_sensitive {}\n", m.case_sensitive ? "true" : "false");
  for (const auto& [from, to] : m.aliases)
    out += fmt::format("alias {} -> {}\n", detail::quote_string(from), detail::quote_string(to));
  for (std::size_t i = 0; i < m.patterns.size(); ++i) {
    const ir::Pattern& p = m.patterns[i];
    out += fmt::format("p{} = {}", i, pattern_kind(p.kind));
    switch (p.kind) {
      case ir::Pattern::Kind::tool:
      case ir::Pattern::Kind::glob: out += " " + detail::quote_string(p.name); break;
      case ir::Pattern::Kind::step_type: out += " " + step_type_name(p.step_type); break;
      case ir::Pattern::Kind::or_: out += fmt::format(" {} {}", id_text(p.a, 'p'), id_text(p.b, 'p')); break;
      case ir::Pattern::Kind::not_:
      case ir::Pattern::Kind::failed: out += " " + id_text(p.a, 'p'); break;
      case ir::Pattern::Kind::where: out += fmt::format(" {} {}", id_text(p.a, 'p'), id_text(p.b, 'c')); break;
      default: break;
    }
    out += '\n';
  }
  for (std::size_t i = 0; i < m.conds.size(); ++i) {
    const ir::Cond& c = m.conds[i];
    static constexpr const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    out += fmt::format("c{} = {}", i, cond_kind(c.kind));
    switch (c.kind) {
      case ir::Cond::Kind::and_:
      case ir::Cond::Kind::or_: out += fmt::format(" {} {}", id_text(c.lhs, 'c'), id_text(c.rhs, 'c')); break;
      case ir::Cond::Kind::not_: out += " " + id_text(c.lhs, 'c'); break;
      case ir::Cond::Kind::compare:
        out += fmt::format(" {} {} {}", operand_text(c.a), kOps[static_cast<int>(c.op)], operand_text(c.b));
        break;
      case ir::Cond::Kind::matches: out += fmt::format(" {} /{}/", operand_text(c.a), c.regex); break;
      case ir::Cond::Kind::contains:
      case ir::Cond::Kind::in: out += fmt::format(" {} {}", operand_text(c.a), operand_text(c.b)); break;
      case ir::Cond::Kind::seen:
        out += " " + operand_text(c.a);
        if (c.sources != ir::kSeenAll) out += " from " + ir::seen_sources_text(c.sources);
        break;
      case ir::Cond::Kind::exists:
      case ir::Cond::Kind::valid: out += " " + operand_text(c.a); break;
    }
    out += '\n';
  }
  for (std::size_t i = 0; i < m.paths.size(); ++i) {
    const ir::PathExpr& p = m.paths[i];
    out += fmt::format("x{} = {}", i, path_kind(p.kind));
    if (p.kind == ir::PathExpr::Kind::atom) out += " " + id_text(p.pattern, 'p');
    for (ir::Id c : p.children) out += " " + id_text(c, 'x');
    out += '\n';
  }
  for (const ir::Rule& r : m.rules) {
    out += fmt::format("rule {} [{}]\n", detail::quote_string(r.name), to_string(r.severity));
    if (!r.message.empty()) out += fmt::format("  message {}\n", detail::quote_string(r.message));
    if (!r.tags.empty()) {
      out += "  tags";
      for (const auto& t : r.tags) out += " " + t;
      out += '\n';
    }
    out += fmt::format("  scope {}", scope_kind(r.scope.kind));
    if (r.scope.q != ir::kNone) out += " q=" + id_text(r.scope.q, 'p');
    if (r.scope.r != ir::kNone) out += " r=" + id_text(r.scope.r, 'p');
    out += '\n';
    if (!r.variables.empty()) {
      out += "  variables";
      for (const auto& v : r.variables) out += " $" + v;
      out += '\n';
    }
    for (const ir::Statement& s : r.statements) {
      out += fmt::format("  {}", detail::statement_kind_name(s.kind));
      if (s.a != ir::kNone) out += " a=" + id_text(s.a, 'p');
      if (s.b != ir::kNone) out += " b=" + id_text(s.b, 'p');
      if (s.ignoring != ir::kNone) out += " ignoring=" + id_text(s.ignoring, 'p');
      if (s.path != ir::kNone) out += " path=" + id_text(s.path, 'x');
      if (s.kind == ir::StatementKind::count)
        out += fmt::format(" lo={} hi={}", s.lo, s.hi == ir::kUnbounded ? std::string("inf") : std::to_string(s.hi));
      if (s.kind == ir::StatementKind::in_a_row || s.kind == ir::StatementKind::retries)
        out += fmt::format(" hi={}", s.hi);
      out += "  # " + s.text + "\n";
    }
  }
  return out;
}

}  // namespace trajcheck::language
