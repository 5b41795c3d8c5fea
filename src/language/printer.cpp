// Canonical text of AST parts: the rule names of bare statements, `trajcheck fmt`, and
// the AST dump of `explain --emit ast`. One spelling per meaning (never -> forbid,
// `or` -> `|`, args -> arguments, once -> 1), user parentheses kept.
#include <fmt/format.h>

#include "trajcheck/json_string.hpp"
#include "language/parser.hpp"

namespace trajcheck::language::detail {

using ast::Id;

std::string quote_string(std::string_view value) {
  std::string out;
  append_json_string(out, value, /*escape_del=*/true);
  return out;
}

namespace {

bool is_keyword(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "forbid", "never", "require", "precedes", "immediately", "is", "followed", "requires",
      "excludes", "starts", "ends", "only", "no", "at", "exactly", "between", "retries", "expect",
      "ignoring", "after", "before", "until", "rule", "message", "tag", "alias", "group", "workflow",
      "catalog", "case", "where", "or", "and", "not", "failed", "any", "step", "tool_call",
      "user_message", "assistant_message", "approval_request", "approval", "final_answer", "write"};
  for (auto k : kWords)
    if (k == w) return true;
  return false;
}

bool name_plain(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

}  // namespace

// A quoted name prints bare when the bare form reads back as the same exact tool name.
std::string quote_name_if_needed(std::string_view name) {
  bool bare = !name.empty() && !is_keyword(name) &&
              (std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (std::size_t i = 0; bare && i < name.size(); ++i) {
    char c = name[i];
    if (c == '-' && i + 1 < name.size() && name[i + 1] == '>') {
      bare = false;
      continue;
    }
    if (name_plain(c)) continue;
    if (c == ':' && i + 1 < name.size() && name_plain(name[i + 1])) continue;
    bare = false;
  }
  return bare ? std::string(name) : quote_string(name);
}

std::string print_operand(const ir::Operand& o) {
  switch (o.kind) {
    case ir::Operand::Kind::path: return o.path.text;
    case ir::Operand::Kind::variable: return "$" + o.variable;
    case ir::Operand::Kind::literal:
      return o.literal.kind == ir::Literal::Kind::string ? quote_string(o.literal.string) : o.literal.text;
    case ir::Operand::Kind::list: {
      std::string out = "[";
      for (std::size_t i = 0; i < o.list.size(); ++i) {
        if (i) out += ", ";
        const ir::Literal& l = o.list[i];
        out += l.kind == ir::Literal::Kind::string ? quote_string(l.string) : l.text;
      }
      return out + "]";
    }
    case ir::Operand::Kind::none: break;
  }
  return "";
}

std::string print_cond(const ast::File& file, Id id) {
  const ast::Cond& c = file.conds[id];
  using K = ast::Cond::Kind;
  switch (c.kind) {
    case K::and_:
    case K::or_: {
      std::string out;
      for (std::size_t i = 0; i < c.children.size(); ++i) {
        if (i) out += c.kind == K::and_ ? " and " : " or ";
        out += print_cond(file, c.children[i]);
      }
      return out;
    }
    case K::not_: return "not " + print_cond(file, c.children[0]);
    case K::paren: return "(" + print_cond(file, c.children[0]) + ")";
    case K::compare: {
      static constexpr const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      return fmt::format("{} {} {}", print_operand(c.a), kOps[static_cast<int>(c.op)], print_operand(c.b));
    }
    case K::matches: return fmt::format("{} matches /{}/", print_operand(c.a), c.regex);
    case K::contains: return fmt::format("{} contains {}", print_operand(c.a), print_operand(c.b));
    case K::in: return fmt::format("{} in {}", print_operand(c.a), print_operand(c.b));
    case K::exists: return fmt::format("{} exists", print_operand(c.a));
    case K::seen: return ir::seen_text(print_operand(c.a), c.sources);
    case K::valid: return fmt::format("valid({})", print_operand(c.a));
  }
  return "";
}

std::string print_pattern(const ast::File& file, Id id) {
  const ast::Pattern& p = file.patterns[id];
  using K = ast::Pattern::Kind;
  switch (p.kind) {
    case K::name: return p.text;
    case K::keyword: return p.text;
    // Quotes stay: a bare spelling could name a group, a glob or a keyword instead.
    case K::quoted: return quote_string(p.text);
    case K::or_: {
      std::string out;
      for (std::size_t i = 0; i < p.children.size(); ++i) {
        if (i) out += " | ";
        out += print_pattern(file, p.children[i]);
      }
      return out;
    }
    case K::not_: return "not " + print_pattern(file, p.children[0]);
    case K::failed: return "failed " + print_pattern(file, p.children[0]);
    case K::where: {
      std::string out = print_pattern(file, p.children[0]);
      for (Id c : p.conds) out += " where " + print_cond(file, c);
      return out;
    }
    case K::paren: return "(" + print_pattern(file, p.children[0]) + ")";
  }
  return "";
}

namespace {
bool path_name_needs_space(const ast::File& file, Id id) {
  const ast::PathNode& c = file.paths[id];
  if (c.kind != ast::PathNode::Kind::atom || c.pattern == ast::kNone) return false;
  const ast::Pattern& p = file.patterns[c.pattern];
  return p.kind == ast::Pattern::Kind::name && !p.text.empty() &&
         std::string_view("_-.:/").find(p.text.back()) != std::string_view::npos;
}
}  // namespace

std::string print_path(const ast::File& file, Id id) {
  const ast::PathNode& n = file.paths[id];
  using K = ast::PathNode::Kind;
  switch (n.kind) {
    case K::atom: return print_pattern(file, n.pattern);
    case K::seq:
    case K::alt: {
      std::string out;
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += n.kind == K::seq ? " -> " : " | ";
        out += print_path(file, n.children[i]);
      }
      return out;
    }
    case K::all_of: {
      std::string out = "{";
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += ", ";
        out += print_path(file, n.children[i]);
      }
      return out + "}";
    }
    case K::group: return "(" + print_path(file, n.children[0]) + ")";
    // After a bare name that ends in a separator (`search_`), `*` and `?` are written apart:
    // `search_*` would read as the glob it is everywhere else (W009).
    case K::optional: return print_path(file, n.children[0]) + (path_name_needs_space(file, n.children[0]) ? " ?" : "?");
    case K::star: return print_path(file, n.children[0]) + (path_name_needs_space(file, n.children[0]) ? " *" : "*");
    case K::plus: return print_path(file, n.children[0]) + "+";
  }
  return "";
}

namespace {

std::string count_text(const ast::Count& c) {
  return c.text == "once" ? "1" : c.text == "twice" ? "2" : c.text;
}

}  // namespace

std::string print_statement(const ast::File& file, Id id) {
  const ast::Statement& s = file.statements[id];
  using K = ir::StatementKind;
  auto a = [&] { return print_pattern(file, s.a); };
  auto b = [&] { return print_pattern(file, s.b); };
  std::string out;
  switch (s.kind) {
    case K::forbid: out = "forbid " + a(); break;
    case K::require: out = "require " + a(); break;
    case K::count:
      switch (s.form) {
        case ast::CountForm::at_most: out = a() + " at most " + count_text(s.first); break;
        case ast::CountForm::at_least: out = a() + " at least " + count_text(s.first); break;
        case ast::CountForm::exactly: out = a() + " exactly " + count_text(s.first); break;
        default: out = a() + " between " + count_text(s.first) + " and " + count_text(s.second); break;
      }
      break;
    case K::precedes: out = a() + " precedes " + b(); break;
    case K::immediately_precedes: out = a() + " immediately precedes " + b(); break;
    case K::followed_by: out = a() + " is followed by " + b(); break;
    case K::immediately_followed_by: out = a() + " is immediately followed by " + b(); break;
    case K::requires_: out = a() + " requires " + b(); break;
    case K::never_followed_by: out = a() + " is never followed by " + b(); break;
    case K::excludes: out = a() + " excludes " + b(); break;
    case K::starts_with: out = "starts with " + a(); break;
    case K::ends_with: out = "ends with " + a(); break;
    case K::only: out = "only " + a(); break;
    case K::no_duplicate: out = "no duplicate " + a(); break;
    case K::in_a_row: out = a() + " at most " + count_text(s.first) + " in a row"; break;
    case K::retries: out = "retries of " + a() + " at most " + count_text(s.first); break;
    case K::expect: out = "expect " + print_path(file, s.path); break;
    case K::expect_exactly: out = "expect exactly " + print_path(file, s.path); break;
  }
  if (s.ignoring != ast::kNone) out += " ignoring " + print_pattern(file, s.ignoring);
  return out;
}

std::string print_scope(const ast::File& file, const ast::Scope& s) {
  switch (s.kind) {
    case ir::ScopeKind::after: return "after " + print_pattern(file, s.q);
    case ir::ScopeKind::before: return "before " + print_pattern(file, s.r);
    case ir::ScopeKind::between:
      return "between " + print_pattern(file, s.q) + " and " + print_pattern(file, s.r);
    case ir::ScopeKind::after_until:
      return "after " + print_pattern(file, s.q) + " until " + print_pattern(file, s.r);
    case ir::ScopeKind::global: break;
  }
  return "";
}

std::string print_line(const ast::File& file, const ast::Line& l) {
  using LineKind = ast::Line::Kind;
  auto scope_and_stmt = [&]() {
    std::string out = print_scope(file, *l.scope) + ":";
    if (l.statement != ast::kNone) out += " " + print_statement(file, l.statement);
    return out;
  };
  switch (l.kind) {
    case LineKind::workflow: return "workflow " + quote_string(l.text);
    case LineKind::catalog: return "catalog " + quote_string(l.text);
    case LineKind::alias:
      return "alias " + quote_name_if_needed(l.text) + " = " + quote_name_if_needed(l.text2);
    case LineKind::group: return "group " + l.text + " = " + print_pattern(file, l.pattern);
    case LineKind::case_sensitive: return "case sensitive";
    case LineKind::message: return "message " + quote_string(l.text);
    case LineKind::tag: {
      std::string out = "tag ";
      for (std::size_t i = 0; i < l.tags.size(); ++i) {
        if (i) out += ", ";
        out += l.tags[i];
      }
      return out;
    }
    case LineKind::rule: {
      std::string out = "rule " + l.text;
      if (l.severity) out += fmt::format(" [{}]", to_string(*l.severity));
      out += ":";
      if (l.scope) out += " " + scope_and_stmt();
      else if (l.statement != ast::kNone) out += " " + print_statement(file, l.statement);
      return out;
    }
    case LineKind::scope: return scope_and_stmt();
    case LineKind::statement: return print_statement(file, l.statement);
    case LineKind::blank:
    case LineKind::comment:
    case LineKind::error: break;
  }
  return "";
}

std::string_view statement_kind_name(ir::StatementKind kind) {
  static constexpr std::string_view kKinds[] = {
      "forbid", "require", "count", "precedes", "immediately_precedes", "followed_by",
      "immediately_followed_by", "requires", "never_followed_by", "excludes", "starts_with",
      "ends_with", "only", "no_duplicate", "in_a_row", "retries", "expect", "expect_exactly"};
  return kKinds[static_cast<int>(kind)];
}

std::string dump_ast(const ast::File& file) {
  std::string out;
  static constexpr const char* kKinds[] = {"blank", "comment", "error", "workflow", "catalog",
                                           "alias", "group", "case_sensitive", "rule", "scope",
                                           "statement", "message", "tag"};
  // Walk the block tree with an explicit stack (depth is small, but the file may be long).
  std::vector<std::pair<std::uint32_t, int>> stack;
  for (auto it = file.top.rbegin(); it != file.top.rend(); ++it) stack.push_back({*it, 0});
  while (!stack.empty()) {
    auto [i, depth] = stack.back();
    stack.pop_back();
    const ast::Line& l = file.lines[i];
    std::string pad(static_cast<std::size_t>(depth) * 2, ' ');
    out += fmt::format("{}{} @{}: {}\n", pad, kKinds[static_cast<int>(l.kind)], l.number, print_line(file, l));
    if (l.kind == ast::Line::Kind::group) out += fmt::format("{}  pattern: {}\n", pad, print_pattern(file, l.pattern));
    if (l.scope) out += fmt::format("{}  scope: {}\n", pad, print_scope(file, *l.scope));
    if (l.statement != ast::kNone) {
      const ast::Statement& s = file.statements[l.statement];
      out += fmt::format("{}  statement {}", pad, statement_kind_name(s.kind));
      if (s.a != ast::kNone) out += " a=(" + print_pattern(file, s.a) + ")";
      if (s.b != ast::kNone) out += " b=(" + print_pattern(file, s.b) + ")";
      if (s.ignoring != ast::kNone) out += " ignoring=(" + print_pattern(file, s.ignoring) + ")";
      if (s.path != ast::kNone) out += " path=(" + print_path(file, s.path) + ")";
      static constexpr const char* kForms[] = {"", "at_most", "at_least", "exactly", "between"};
      if (s.form == ast::CountForm::between)
        out += fmt::format(" count=between {} {}", s.first.value, s.second.value);
      else if (s.form != ast::CountForm::none)
        out += fmt::format(" count={} {}", kForms[static_cast<int>(s.form)], s.first.value);
      out += "\n";
    }
    for (auto it = l.children.rbegin(); it != l.children.rend(); ++it) stack.push_back({*it, depth + 1});
  }
  return out;
}

}  // namespace trajcheck::language::detail
