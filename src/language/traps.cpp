// Warnings for the documented traps of the language (docs/language.md §8, W009–W011): text
// that parses and means something other than what it most likely says. They read the syntax
// tree, where every node is one place in the source, so each trap is reported once however
// often a group holding it is used.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "language/parser.hpp"
#include "trajcheck/trace.hpp"
#include "util/suggest.hpp"

namespace trajcheck::language::detail {
namespace {

// The fields of a step that a `where` reads by their bare name: the normalized core, the
// documented fields of approvals and calls, and what the readers keep of common sources.
constexpr std::array<std::string_view, 28> kTrapStepFields = {
    "type",     "tool",      "raw_tool",  "status",  "id",         "content",        "turn",
    "decision", "tool_call_id", "policy", "latency_ms", "parent_id", "tokens",       "cost",
    "error",    "is_error",  "error_class", "call_type", "name",    "role",           "model",
    "timestamp", "uuid",     "span_id",   "trace_id", "metadata",  "arguments_invalid", "reason"};

bool trap_is_step_field(std::string_view key) {
  return std::find(kTrapStepFields.begin(), kTrapStepFields.end(), key) != kTrapStepFields.end();
}

std::string_view trap_slice(const Source& src, SourceRange r) {
  const std::string& t = src.text();
  if (r.begin > r.end || r.end > t.size()) return {};
  return std::string_view(t).substr(r.begin, r.end - r.begin);
}

std::string_view trap_trim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

class TrapChecker {
 public:
  TrapChecker(const Source& src, const ast::File& file, std::vector<Diagnostic>& diags)
      : src_(src), f_(file), diags_(diags) {
    bool cs = false;
    for (const ast::Line& l : f_.lines)
      if (l.kind == ast::Line::Kind::case_sensitive) cs = true;
    for (const ast::Line& l : f_.lines)
      if (l.kind == ast::Line::Kind::group) groups_.emplace(normalize_tool_name(l.text, cs), l.pattern);
    case_sensitive_ = cs;
  }

  void run() {
    for (const ast::PathNode& n : f_.paths) {
      if (n.kind == ast::PathNode::Kind::star || n.kind == ast::PathNode::Kind::optional) path_glob(n);
      if (n.kind == ast::PathNode::Kind::alt) path_where_after_alt(n);
    }
    for (const ast::Pattern& p : f_.patterns)
      if (p.kind == ast::Pattern::Kind::or_) where_after_alt(p);
    for (const ast::Pattern& p : f_.patterns) {
      if (p.kind != ast::Pattern::Kind::where || p.children.empty()) continue;
      if (!calls_only(p.children[0], 0)) continue;
      for (ast::Id c : p.conds) step_fields(c, 0);
    }
  }

 private:
  // W009: `search_*` in a PATH is the tool `search_` repeated; elsewhere it is a glob. No
  // tool name ends in a separator, so such a name was meant as a glob's stem.
  void path_glob(const ast::PathNode& n) {
    if (n.children.empty()) return;
    const ast::PathNode& child = f_.paths[n.children[0]];
    if (child.kind != ast::PathNode::Kind::atom || child.pattern == ast::kNone) return;
    const ast::Pattern& p = f_.patterns[child.pattern];
    if (p.kind != ast::Pattern::Kind::name || p.text.empty()) return;
    if (n.range.end == 0 || n.range.end - 1 != p.range.end) return;  // `search_ *`: written apart
    if (std::string_view("_-.:/").find(p.text.back()) == std::string_view::npos) return;
    if (groups_.count(normalize_tool_name(p.text, case_sensitive_))) return;  // a group: the user's name
    const bool star = n.kind == ast::PathNode::Kind::star;
    const char op = star ? '*' : '?';
    Diagnostic d = make_warning(
        "W009", SourceRange{p.range.begin, n.range.end},
        fmt::format("in a PATH, '{0}{1}' is the tool '{0}' {2}, not the glob '{0}{1}': after a name, '{1}' is the "
                    "PATH's {3}",
                    p.text, op, star ? "repeated (zero or more times)" : "made optional",
                    star ? "repetition" : "optional"));
    d.notes.push_back({std::nullopt, fmt::format("for the glob, write `group {0}any = {0}{1}` and use `{0}any` in the "
                                                 "PATH (`{0}any+` for one or more); for the {2}, write `{0} {1}`",
                                                 p.text, op, star ? "repetition" : "optional tool")});
    diags_.push_back(std::move(d));
  }

  // W010: `A | B where C` conditions B only.
  void where_after_alt(const ast::Pattern& p) {
    if (p.children.size() < 2) return;
    const ast::Pattern& last = f_.patterns[p.children.back()];
    if (last.kind != ast::Pattern::Kind::where || last.children.empty()) return;
    for (std::size_t i = 0; i + 1 < p.children.size(); ++i)
      if (f_.patterns[p.children[i]].kind == ast::Pattern::Kind::where) return;  // each has its own
    const ast::Pattern& b = f_.patterns[last.children[0]];
    report_where_after_alt(p.range, last.range, b.range, trap_slice(src_, b.range));
  }

  // The same in a PATH: `expect A | B where C`.
  void path_where_after_alt(const ast::PathNode& n) {
    if (n.children.size() < 2) return;
    auto where_of = [&](ast::Id id) -> const ast::Pattern* {
      const ast::PathNode& c = f_.paths[id];
      if (c.kind != ast::PathNode::Kind::atom || c.pattern == ast::kNone) return nullptr;
      const ast::Pattern& p = f_.patterns[c.pattern];
      return p.kind == ast::Pattern::Kind::where ? &p : nullptr;
    };
    const ast::Pattern* last = where_of(n.children.back());
    if (last == nullptr || last->children.empty()) return;
    for (std::size_t i = 0; i + 1 < n.children.size(); ++i)
      if (where_of(n.children[i]) != nullptr) return;
    const ast::Pattern& b = f_.patterns[last->children[0]];
    report_where_after_alt(n.range, last->range, b.range, trap_slice(src_, b.range));
  }

  void report_where_after_alt(SourceRange alt, SourceRange where, SourceRange b, std::string_view b_text) {
    const std::string_view head = trap_trim(trap_slice(src_, SourceRange{alt.begin, b.end}));
    const std::string_view cond = trap_trim(trap_slice(src_, SourceRange{b.end, where.end}));
    const std::string_view before = trap_trim(trap_slice(src_, SourceRange{alt.begin, where.begin}));
    std::uint32_t at = b.end;  // the `where` keyword, past the blanks before it
    while (at < where.end && (src_.text()[at] == ' ' || src_.text()[at] == '\t')) ++at;
    Diagnostic d = make_warning("W010", SourceRange{at, where.end},
                                fmt::format("`{}` applies to '{}' only, not to every alternative before it "
                                            "(`where` binds tighter than `|`)",
                                            cond.substr(0, cond.find(' ')), b_text));
    d.notes.push_back({std::nullopt, fmt::format("to condition every alternative, write `({}) {}`; to keep this "
                                                 "meaning without the warning, write `{} ({} {})`",
                                                 head, cond, before, b_text, cond)});
    diags_.push_back(std::move(d));
  }

  // Whether a pattern matches tool calls only: their data is under `arguments.` and
  // `result.`, where approvals and other steps carry theirs as fields of the step.
  // Groups are decided once (memo_); past the nesting limit the answer is "no" (E010 there).
  bool calls_only(ast::Id id, std::uint32_t depth) {
    if (id == ast::kNone || id >= f_.patterns.size() || depth > 256) return false;
    const ast::Pattern& p = f_.patterns[id];
    switch (p.kind) {
      case ast::Pattern::Kind::quoted: return true;
      case ast::Pattern::Kind::keyword: return p.text == "any" || p.text == "tool_call" || p.text == "write";
      case ast::Pattern::Kind::name: {
        auto g = groups_.find(normalize_tool_name(p.text, case_sensitive_));
        if (g == groups_.end()) return true;
        auto [it, fresh] = memo_.emplace(g->second, false);  // false while in progress: a cycle (E018)
        if (!fresh) return it->second;
        bool yes = calls_only(g->second, depth + 1);
        memo_[g->second] = yes;
        return yes;
      }
      case ast::Pattern::Kind::or_:
        for (ast::Id c : p.children)
          if (!calls_only(c, depth + 1)) return false;
        return !p.children.empty();
      case ast::Pattern::Kind::failed:
      case ast::Pattern::Kind::where:
      case ast::Pattern::Kind::paren: return !p.children.empty() && calls_only(p.children[0], depth + 1);
      case ast::Pattern::Kind::not_: return false;
    }
    return false;
  }

  void step_fields(ast::Id id, std::uint32_t depth) {
    if (id == ast::kNone || id >= f_.conds.size() || depth > 512) return;
    const ast::Cond& c = f_.conds[id];
    for (ast::Id child : c.children) step_fields(child, depth + 1);
    if (c.kind == ast::Cond::Kind::valid) return;  // valid(arguments) / valid(tool): no field
    step_field(c.a);
    step_field(c.b);
  }

  // W011: `where amount > 100` on a tool call reads a field of the step itself, which no
  // step has.
  void step_field(const ir::Operand& o) {
    if (o.kind != ir::Operand::Kind::path || o.path.root != ir::FieldPath::Root::step) return;
    if (o.path.segments.empty() || o.path.segments[0].key.empty()) return;
    const std::string& key = o.path.segments[0].key;
    if (trap_is_step_field(key)) return;
    std::vector<std::string> fields(kTrapStepFields.begin(), kTrapStepFields.end());
    std::string near = trajcheck::detail::did_you_mean(key, fields);
    std::string instead = near.empty() ? "arguments." + o.path.text : near + o.path.text.substr(key.size());
    diags_.push_back(make_warning(
        "W011", o.path.range,
        fmt::format("'{}' reads the field '{}' of the step itself, which no step type has (a call's arguments are "
                    "under `arguments.`); did you mean '{}'?",
                    o.path.text, key, instead)));
  }

  const Source& src_;
  const ast::File& f_;
  std::vector<Diagnostic>& diags_;
  std::map<std::string, ast::Id> groups_;
  std::map<ast::Id, bool> memo_;
  bool case_sensitive_ = false;
};

}  // namespace

void check_traps(const Source& source, const ast::File& file, std::vector<Diagnostic>& diags) {
  TrapChecker(source, file, diags).run();
}

}  // namespace trajcheck::language::detail
