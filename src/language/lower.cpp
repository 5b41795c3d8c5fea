// AST -> rule IR: block structure, semantic checks (every problem reported, not the first),
// desugaring, group inlining, alias resolution and name normalization.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <re2/re2.h>

#include "language/parser.hpp"
#include "util/glob.hpp"

namespace trajcheck::language::detail {

namespace {

using ast::Id;
using LineKind = ast::Line::Kind;

// A rule before lowering: a named rule, or one bare statement (possibly under a scope).
struct Unit {
  bool named = false;
  std::string name;
  SourceRange name_range;
  RuleSeverity severity = RuleSeverity::error;
  std::string message;
  std::vector<std::string> tags;
  std::optional<ast::Scope> scope;
  std::vector<Id> statements;
  SourceRange range;
};

std::string_view kind_word(LineKind k) {
  switch (k) {
    case LineKind::workflow: return "workflow";
    case LineKind::catalog: return "catalog";
    case LineKind::alias: return "alias";
    case LineKind::group: return "group";
    case LineKind::case_sensitive: return "case sensitive";
    case LineKind::rule: return "rule";
    case LineKind::scope: return "scope";
    case LineKind::statement: return "statement";
    case LineKind::message: return "message";
    case LineKind::tag: return "tag";
    default: return "line";
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  if (a.size() > 64 || b.size() > 64) return 99;
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1] ? 1u : 0u)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

class Lowerer {
 public:
  Lowerer(const Source& source, const ast::File& file, const FrontendOptions& options, ir::Module& module,
          std::vector<Diagnostic>& diags)
      : file_(file), max_nesting_(options.max_nesting), m_(module), diags_(diags),
        outside_aliases_{options.command_line_aliases, options.other_files_aliases} {
    (void)source;  // ranges are offsets into it; kept in the signature for future notes
  }

  void run() {
    collect_declarations();
    build_units();
    lower_units();
    report_unused();
    // A file without a rule checks nothing: every trace passes it. Say so (a gate that passes
    // on nothing must be loud); `check` refuses a run with no rule at all.
    if (units_.empty() && !has_errors(diags_)) warning("W007", {0, 0}, "the file has no rules: it checks nothing, and every trace passes it");
  }

  ir::Id lower_path_root(Id path) {
    for (const auto& [from, to] : m_.aliases) aliases_[from] = to;
    return lower_path(path);
  }

 private:
  void error(const char* code, SourceRange r, std::string msg) { diags_.push_back(make_error(code, r, std::move(msg))); }
  void warning(const char* code, SourceRange r, std::string msg) { diags_.push_back(make_warning(code, r, std::move(msg))); }

  std::string normalize(std::string_view name) const {
    std::size_t b = 0, e = name.size();
    while (b < e && (name[b] == ' ' || name[b] == '\t')) ++b;
    while (e > b && (name[e - 1] == ' ' || name[e - 1] == '\t')) --e;
    std::string out(name.substr(b, e - b));
    if (!m_.case_sensitive)
      for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
  }

  // ---- declarations ----
  void collect_declarations() {
    for (std::uint32_t i : file_.top)
      if (file_.lines[i].kind == LineKind::case_sensitive) m_.case_sensitive = true;
    std::optional<SourceRange> workflow_at, catalog_at;
    std::map<std::string, SourceRange> alias_at;
    std::vector<std::pair<std::string, std::string>> raw_aliases;
    for (std::uint32_t i : file_.top) {
      const ast::Line& l = file_.lines[i];
      switch (l.kind) {
        case LineKind::workflow:
          if (workflow_at) duplicate_decl(l, "workflow", *workflow_at);
          else { workflow_at = l.range; m_.workflow = l.text; }
          break;
        case LineKind::catalog:
          if (catalog_at) duplicate_decl(l, "catalog", *catalog_at);
          else { catalog_at = l.range; m_.catalog = l.text; m_.catalog_range = l.text_range; }
          break;
        case LineKind::alias: {
          std::string from = normalize(l.text), to = normalize(l.text2);
          if (from == to) {
            error("E004", l.range, fmt::format("alias '{}' maps a name to itself", l.text));
          } else if (auto it = alias_at.find(from); it != alias_at.end()) {
            Diagnostic d = make_error("E004", l.text_range, fmt::format("duplicate alias for '{}'", l.text));
            d.notes.push_back({it->second, "first defined here"});
            diags_.push_back(std::move(d));
          } else {
            alias_at[from] = l.text_range;
            raw_aliases.push_back({from, to});
            alias_line_[from] = i;
          }
          break;
        }
        case LineKind::group: {
          std::string name = normalize(l.text);
          if (auto it = groups_.find(name); it != groups_.end()) {
            Diagnostic d = make_error("E003", l.text_range, fmt::format("duplicate group '{}'", l.text));
            d.notes.push_back({file_.lines[it->second].text_range, "first defined here"});
            diags_.push_back(std::move(d));
          } else {
            groups_[name] = i;
          }
          break;
        }
        default: break;
      }
      if (l.kind == LineKind::workflow || l.kind == LineKind::catalog || l.kind == LineKind::alias ||
          l.kind == LineKind::group || l.kind == LineKind::case_sensitive)
        no_block(l);
    }
    // Resolve chains (a = b, b = c gives a -> c); a name that leads into a cycle is an error.
    // Each name's end is found once and remembered, so a chain of n aliases costs O(n log n).
    std::map<std::string, std::string> direct(raw_aliases.begin(), raw_aliases.end());
    std::map<std::string, std::optional<std::string>> end_of;  // nullopt: leads into a cycle
    auto resolve = [&](const std::string& start) -> const std::optional<std::string>& {
      std::vector<std::string> path;
      std::set<std::string> on_path;
      std::optional<std::string> end;
      std::string cur = start;
      for (;;) {
        if (auto known = end_of.find(cur); known != end_of.end()) {
          end = known->second;
          break;
        }
        auto next = direct.find(cur);
        if (next == direct.end()) {
          end = cur;
          break;
        }
        if (!on_path.insert(cur).second) break;  // a cycle: end stays nullopt
        path.push_back(cur);
        cur = next->second;
      }
      for (const std::string& p : path) end_of[p] = end;
      return end_of[start];
    };
    for (const auto& [from, to] : raw_aliases) {
      const std::optional<std::string>& end = resolve(from);
      if (!end || *end == from) {
        error("E004", file_.lines[alias_line_[from]].range, fmt::format("alias cycle through '{}'", from));
        continue;
      }
      aliases_[from] = *end;
      alias_targets_.insert(*end);
      m_.aliases.push_back({from, *end});
    }
    // The aliases from outside the file, normalized as its names are (its case rule is known
    // now); the first for one name wins, as the reader takes them.
    for (const auto& [from, to] : outside_aliases_.command_line) command_line_aliases_.emplace(normalize(from), normalize(to));
    for (const auto& [from, to] : outside_aliases_.other_files) other_files_aliases_.emplace(normalize(from), normalize(to));
  }

  void duplicate_decl(const ast::Line& l, const char* what, SourceRange first) {
    Diagnostic d = make_error("E019", l.range, fmt::format("duplicate '{}' declaration", what));
    d.notes.push_back({first, "first declared here"});
    diags_.push_back(std::move(d));
  }

  void no_block(const ast::Line& l) {
    if (l.children.empty()) return;
    const ast::Line& c = file_.lines[l.children.front()];
    if (c.kind == LineKind::error) return;
    error("E012", {c.begin, c.range.end},
          fmt::format("unexpected indented block: a {} line takes no block", kind_word(l.kind)));
  }

  // ---- block structure ----
  void build_units() {
    for (std::uint32_t i : file_.top) {
      const ast::Line& l = file_.lines[i];
      switch (l.kind) {
        case LineKind::statement: {
          Unit u;
          u.statements.push_back(l.statement);
          u.range = l.range;
          units_.push_back(std::move(u));
          no_block(l);
          break;
        }
        case LineKind::scope: bare_scope(l); break;
        case LineKind::rule: named_rule(l); break;
        case LineKind::message:
        case LineKind::tag:
          error("E012", l.range, fmt::format("a '{}' line belongs in a rule body, below the rule's statement",
                                             kind_word(l.kind)));
          break;
        default: break;
      }
    }
  }

  void bare_scope(const ast::Line& l) {
    if (l.statement != ast::kNone) {
      Unit u;
      u.scope = l.scope;
      u.statements.push_back(l.statement);
      u.range = l.range;
      units_.push_back(std::move(u));
      if (!l.children.empty() && file_.lines[l.children.front()].kind != LineKind::error) {
        const ast::Line& c = file_.lines[l.children.front()];
        error("E012", c.range, "unexpected indented block: the scope already has its statement on its line");
      }
      return;
    }
    bool any = false;
    for (std::uint32_t ci : l.children) {
      const ast::Line& c = file_.lines[ci];
      if (c.kind == LineKind::error) { any = true; continue; }
      if (c.kind != LineKind::statement) {
        error("E012", c.range, fmt::format("a scope block holds statements only, not a '{}' line{}", kind_word(c.kind),
                                           c.kind == LineKind::message || c.kind == LineKind::tag
                                               ? " (use a named rule for a message or tags)" : ""));
        continue;
      }
      any = true;
      Unit u;
      u.scope = l.scope;
      u.statements.push_back(c.statement);
      u.range = c.range;
      units_.push_back(std::move(u));
      no_block(c);
    }
    if (!any) error("E012", l.range, "expected a statement after ':' or an indented block of statements");
  }

  void named_rule(const ast::Line& l) {
    Unit u;
    u.named = true;
    u.name = l.text;
    u.name_range = l.text_range;
    u.range = l.range;
    if (l.severity) u.severity = *l.severity;
    u.scope = l.scope;
    bool broken = false;  // a syntax error inside: do not pile up structure errors
    bool inline_stmt = l.statement != ast::kNone;
    if (inline_stmt) u.statements.push_back(l.statement);
    std::optional<SourceRange> message_at;
    bool trailer = false;  // a message or tag line has been seen
    for (std::uint32_t ci : l.children) {
      const ast::Line& c = file_.lines[ci];
      switch (c.kind) {
        case LineKind::error: broken = true; break;
        case LineKind::statement:
          if (inline_stmt) {
            error("E012", c.range, "the rule already has its statement on its header line");
          } else if (trailer) {
            error("E012", c.range, "statements come before the rule's message and tag lines");
          } else if (u.scope && l.scope) {
            u.statements.push_back(c.statement);  // the block of an inline `rule r: after q:`
          } else if (u.scope) {
            error("E012", c.range, "a rule with a scope holds its statements in the scope's block");
          } else {
            u.statements.push_back(c.statement);
          }
          no_block(c);
          break;
        case LineKind::scope:
          if (u.scope || !u.statements.empty()) {
            error("E012", c.range, "a rule has one scope, and its statements go in the scope's block");
            break;
          }
          u.scope = c.scope;
          if (c.statement != ast::kNone) {
            u.statements.push_back(c.statement);
            no_block(c);
          } else {
            for (std::uint32_t gi : c.children) {
              const ast::Line& gl = file_.lines[gi];
              if (gl.kind == LineKind::error) { broken = true; continue; }
              if (gl.kind != LineKind::statement) {
                error("E012", gl.range, fmt::format("a scope block holds statements only, not a '{}' line{}",
                                                    kind_word(gl.kind),
                                                    gl.kind == LineKind::message || gl.kind == LineKind::tag
                                                        ? " (message and tag lines go at the rule body's indentation)"
                                                        : ""));
                continue;
              }
              u.statements.push_back(gl.statement);
              no_block(gl);
            }
            if (c.children.empty()) error("E012", c.range, "expected a statement after ':' or an indented block");
          }
          break;
        case LineKind::message:
          trailer = true;
          if (message_at) {
            Diagnostic d = make_error("E019", c.range, "duplicate 'message' in a rule");
            d.notes.push_back({*message_at, "first given here"});
            diags_.push_back(std::move(d));
          } else {
            message_at = c.range;
            u.message = c.text;
          }
          no_block(c);
          break;
        case LineKind::tag:
          trailer = true;
          for (const auto& t : c.tags)
            if (std::find(u.tags.begin(), u.tags.end(), t) == u.tags.end()) u.tags.push_back(t);
          no_block(c);
          break;
        default:
          error("E012", c.range, fmt::format("a '{}' line is only allowed at the top level of the file",
                                             kind_word(c.kind)));
          break;
      }
    }
    if (u.statements.empty()) {
      if (!broken) error("E012", l.range, fmt::format("rule '{}' has no statement", u.name));
      return;
    }
    units_.push_back(std::move(u));
  }

  // ---- patterns ----
  std::uint32_t depth_of(ir::Id id) const { return id < depth_.size() ? depth_[id] : 1; }

  ir::Id intern_pattern(ir::Pattern p) {
    // Groups inline patterns into each other, so a chain of groups can nest far deeper than
    // any one line; the IR is walked recursively later, hence the same limit as the parser.
    std::uint32_t depth = 1;
    if (p.a != ir::kNone) depth = std::max(depth, depth_of(p.a) + 1);
    if (p.b != ir::kNone && p.kind == ir::Pattern::Kind::or_) depth = std::max(depth, depth_of(p.b) + 1);
    if (depth > max_nesting_ + 32) {
      if (!depth_reported_)
        error("E010", p.range, fmt::format("pattern nesting is deeper than {} levels once groups are inlined",
                                           max_nesting_));
      depth_reported_ = true;
      return p.a;
    }
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", static_cast<int>(p.kind), p.name,
                                  static_cast<int>(p.step_type), p.a, p.b);
    auto [it, fresh] = pattern_ids_.try_emplace(std::move(key), static_cast<ir::Id>(m_.patterns.size()));
    if (fresh) {
      m_.patterns.push_back(std::move(p));
      depth_.resize(m_.patterns.size(), 1);
      depth_.back() = depth;
    }
    return it->second;
  }

  // Balanced, so a 10^6-way `a | b | …` gives a tree of depth 20, not 10^6.
  ir::Id balanced_or(const std::vector<ir::Id>& ids, std::size_t b, std::size_t e, SourceRange r) {
    if (e - b == 1) return ids[b];
    std::size_t mid = b + (e - b) / 2;
    ir::Pattern p;
    p.kind = ir::Pattern::Kind::or_;
    p.a = balanced_or(ids, b, mid, r);
    p.b = balanced_or(ids, mid, e, r);
    p.range = r;
    return intern_pattern(std::move(p));
  }

  // Recursion through groups is bounded here, before it could exhaust the stack.
  ir::Id lower_pattern(Id id) {
    if (lower_depth_ >= 2 * max_nesting_ + 64) {
      if (!depth_reported_)
        error("E010", file_.patterns[id].range,
              fmt::format("pattern nesting is deeper than {} levels once groups are inlined", max_nesting_));
      depth_reported_ = true;
      ir::Pattern any;
      any.kind = ir::Pattern::Kind::any_step;
      return intern_pattern(std::move(any));
    }
    ++lower_depth_;
    ir::Id result = lower_pattern_at(id);
    --lower_depth_;
    return result;
  }

  ir::Id lower_pattern_at(Id id) {
    const ast::Pattern& p = file_.patterns[id];
    using K = ast::Pattern::Kind;
    ir::Pattern out;
    out.range = p.range;
    switch (p.kind) {
      case K::paren: return lower_pattern(p.children[0]);
      case K::or_: {
        std::vector<ir::Id> ids;
        for (Id c : p.children) ids.push_back(lower_pattern(c));
        return balanced_or(ids, 0, ids.size(), p.range);
      }
      case K::not_:
      case K::failed:
        out.kind = p.kind == K::not_ ? ir::Pattern::Kind::not_ : ir::Pattern::Kind::failed;
        out.a = lower_pattern(p.children[0]);
        return intern_pattern(std::move(out));
      case K::where: {
        ir::Id base = lower_pattern(p.children[0]);
        std::vector<ir::Id> conds;
        for (Id c : p.conds) conds.push_back(lower_cond(c));
        out.kind = ir::Pattern::Kind::where;
        out.a = base;
        out.b = balanced_cond(conds, 0, conds.size(), ir::Cond::Kind::and_, p.range);
        return intern_pattern(std::move(out));
      }
      case K::keyword:
        if (p.text == "any" || p.text == "tool_call") {
          out.kind = ir::Pattern::Kind::any_tool;
        } else if (p.text == "step") {
          out.kind = ir::Pattern::Kind::any_step;
        } else if (p.text == "write") {
          out.kind = ir::Pattern::Kind::write;  // catalog effect (§7)
        } else {
          out.kind = ir::Pattern::Kind::step_type;
          out.step_type = p.text == "user_message"        ? StepType::user_message
                        : p.text == "assistant_message"   ? StepType::assistant_message
                        : p.text == "approval_request"    ? StepType::approval_request
                        : p.text == "approval"            ? StepType::approval
                                                          : StepType::final_answer;
        }
        return intern_pattern(std::move(out));
      case K::quoted:
        out.kind = ir::Pattern::Kind::tool;
        used_names_.insert(normalize(p.text));
        out.name = resolve_alias(normalize(p.text));
        used_names_.insert(out.name);
        return intern_pattern(std::move(out));
      case K::name: {
        std::string name = normalize(p.text);
        if (auto g = groups_.find(name); g != groups_.end()) return lower_group(name, g->second, p.range);
        check_unknown_group(p.text, name, p.range);
        if (name.find_first_of("*?") != std::string::npos) {
          out.kind = ir::Pattern::Kind::glob;
          out.name = name;
        } else {
          out.kind = ir::Pattern::Kind::tool;
          out.name = resolve_alias(name);
        }
        used_names_.insert(name);
        used_names_.insert(out.name);
        if (out.kind == ir::Pattern::Kind::glob) used_globs_.push_back(name);
        return intern_pattern(std::move(out));
      }
    }
    return ir::kNone;
  }

  // The canonical name of `name`: the traces' names pass the command line's aliases, then the
  // file's own, then the other files', in chains (reading options, NormalizeOptions::aliases);
  // so does a rule's name. A cycle among them is the reader's error; the steps are bounded.
  std::string resolve_alias(const std::string& name) {
    std::string cur = name;
    auto in = [&cur](const std::map<std::string, std::string>& m) -> const std::string* {
      auto it = m.find(cur);
      return it == m.end() ? nullptr : &it->second;
    };
    for (std::size_t step = 0; step <= command_line_aliases_.size() + aliases_.size() + other_files_aliases_.size(); ++step) {
      const std::string* to = in(command_line_aliases_);
      if (!to) to = in(aliases_);
      if (!to) to = in(other_files_aliases_);
      if (!to) break;
      cur = *to;
    }
    return cur;
  }

  ir::Id lower_group(const std::string& name, std::uint32_t line, SourceRange use) {
    used_groups_.insert(name);
    if (auto it = group_ids_.find(name); it != group_ids_.end()) {
      // A group with `$variables` makes every rule that uses it parametric.
      const auto& vars = group_variables_[name];
      variables_.insert(vars.begin(), vars.end());
      return it->second;
    }
    if (group_stack_.size() >= max_nesting_) {
      if (!depth_reported_) error("E010", use, fmt::format("groups nest deeper than {} levels", max_nesting_));
      depth_reported_ = true;
      ir::Pattern any;
      any.kind = ir::Pattern::Kind::any_step;
      return intern_pattern(std::move(any));
    }
    if (!group_stack_.insert(name).second) {
      error("E018", use, fmt::format("group '{}' refers to itself", name));
      ir::Pattern none;
      none.kind = ir::Pattern::Kind::not_;
      ir::Pattern all;
      all.kind = ir::Pattern::Kind::any_step;
      none.a = intern_pattern(std::move(all));
      return intern_pattern(std::move(none));
    }
    std::set<std::string> outer;
    outer.swap(variables_);
    ir::Id id = lower_pattern(file_.lines[line].pattern);
    group_variables_[name] = variables_;
    variables_.insert(outer.begin(), outer.end());
    group_stack_.erase(name);
    group_ids_[name] = id;
    return id;
  }

  void check_unknown_group(std::string_view written, const std::string& name, SourceRange r) {
    // A typo keeps the first letter and is close in length and spelling; anything else is
    // taken to be a tool name, so real tools are never flagged for resembling a group.
    if (groups_.empty() || name.size() < 5 || name.find_first_of("*?") != std::string::npos) return;
    if (aliases_.count(name) || alias_targets_.count(name)) return;
    for (const auto& [g, line] : groups_) {
      (void)line;
      if (g.size() < 5 || g[0] != name[0]) continue;
      // A prefix (plural, suffix) is a different name by design, not a typo.
      if (g.compare(0, name.size(), name) == 0 || name.compare(0, g.size(), g) == 0) continue;
      std::size_t d = edit_distance(name, g);
      if (d >= 1 && d <= (name.size() >= 8 ? 2u : 1u)) {
        Diagnostic diag = make_error("E002", r, fmt::format("unknown group '{}'", written));
        diag.notes.push_back({file_.lines[groups_[g]].text_range,
                              fmt::format("did you mean '{}'? (a tool of this name is written quoted: \"{}\")",
                                          g, written)});
        diags_.push_back(std::move(diag));
        return;
      }
    }
  }

  // ---- conditions ----
  ir::Id add_cond(ir::Cond c) {
    m_.conds.push_back(std::move(c));
    return static_cast<ir::Id>(m_.conds.size() - 1);
  }

  ir::Id balanced_cond(const std::vector<ir::Id>& ids, std::size_t b, std::size_t e, ir::Cond::Kind k, SourceRange r) {
    if (e - b == 1) return ids[b];
    std::size_t mid = b + (e - b) / 2;
    ir::Cond c;
    c.kind = k;
    c.lhs = balanced_cond(ids, b, mid, k, r);
    c.rhs = balanced_cond(ids, mid, e, k, r);
    c.range = r;
    return add_cond(std::move(c));
  }

  void note_variables(const ir::Operand& o) {
    if (o.kind == ir::Operand::Kind::variable) variables_.insert(o.variable);
  }

  static bool is_null(const ir::Operand& o) {
    return o.kind == ir::Operand::Kind::literal && o.literal.kind == ir::Literal::Kind::null;
  }

  ir::Id lower_cond(Id id) {
    const ast::Cond& c = file_.conds[id];
    using K = ast::Cond::Kind;
    ir::Cond out;
    out.range = c.range;
    out.a = c.a;
    out.b = c.b;
    note_variables(c.a);
    note_variables(c.b);
    switch (c.kind) {
      case K::paren: return lower_cond(c.children[0]);
      case K::and_:
      case K::or_: {
        std::vector<ir::Id> ids;
        for (Id ch : c.children) ids.push_back(lower_cond(ch));
        return balanced_cond(ids, 0, ids.size(), c.kind == K::and_ ? ir::Cond::Kind::and_ : ir::Cond::Kind::or_,
                             c.range);
      }
      case K::not_:
        out.kind = ir::Cond::Kind::not_;
        out.lhs = lower_cond(c.children[0]);
        break;
      case K::compare:
        out.kind = ir::Cond::Kind::compare;
        out.op = c.op;
        if (c.a.kind != ir::Operand::Kind::path && c.b.kind != ir::Operand::Kind::path)
          error("E016", c.range, "a comparison needs a field path on at least one side");
        else if (is_null(c.a) || is_null(c.b))
          warning("W012", c.range,
                  "a comparison with null is never true (null makes every comparison false): "
                  "to test for a field's absence, write 'not PATH exists'");
        break;
      case K::matches: {
        out.kind = ir::Cond::Kind::matches;
        out.regex = c.regex;
        RE2::Options opts;
        opts.set_log_errors(false);
        RE2 re(c.regex, opts);
        if (!re.ok()) error("E008", c.regex_range, fmt::format("invalid regex: {}", re.error()));
        break;
      }
      case K::contains:
        out.kind = ir::Cond::Kind::contains;
        if (is_null(c.b)) warning("W012", c.range, "'contains null' is never true (null makes every comparison false)");
        break;
      case K::in:
        out.kind = ir::Cond::Kind::in;
        if (c.b.kind == ir::Operand::Kind::list && !c.b.list.empty() &&
            std::all_of(c.b.list.begin(), c.b.list.end(),
                        [](const ir::Literal& l) { return l.kind == ir::Literal::Kind::null; }))
          warning("W012", c.range, "'in' a list of nulls is never true (null makes every comparison false)");
        break;
      case K::exists: out.kind = ir::Cond::Kind::exists; break;
      case K::seen:
        out.kind = ir::Cond::Kind::seen;
        out.sources = c.sources ? c.sources : ir::kSeenAll;
        break;
      case K::valid: {
        out.kind = ir::Cond::Kind::valid;
        const ir::FieldPath& p = c.a.path;
        bool arguments = p.root == ir::FieldPath::Root::arguments && p.segments.empty();
        bool tool = p.root == ir::FieldPath::Root::step && p.segments.size() == 1 && p.segments[0].key == "tool";
        if (!arguments && !tool)
          error("E020", c.a.range, fmt::format("valid(...) takes arguments or tool, not {}", p.text));
        break;
      }
    }
    return add_cond(std::move(out));
  }

  // ---- PATH ----
  ir::Id lower_path(Id id) {
    const ast::PathNode& n = file_.paths[id];
    using K = ast::PathNode::Kind;
    if (n.kind == K::group) return lower_path(n.children[0]);
    ir::PathExpr out;
    out.range = n.range;
    switch (n.kind) {
      case K::atom:
        out.kind = ir::PathExpr::Kind::atom;
        out.pattern = lower_pattern(n.pattern);
        break;
      case K::seq: out.kind = ir::PathExpr::Kind::seq; break;
      case K::alt: out.kind = ir::PathExpr::Kind::alt; break;
      case K::all_of: out.kind = ir::PathExpr::Kind::all_of; break;
      case K::optional: out.kind = ir::PathExpr::Kind::optional; break;
      case K::star: out.kind = ir::PathExpr::Kind::star; break;
      case K::plus: out.kind = ir::PathExpr::Kind::plus; break;
      case K::group: break;
    }
    for (Id c : n.children) out.children.push_back(lower_path(c));
    m_.paths.push_back(std::move(out));
    return static_cast<ir::Id>(m_.paths.size() - 1);
  }

  // ---- pattern facts for warnings (conservative: "true" means certainly) ----
  bool matches_nothing(ir::Id id) const {
    const ir::Pattern& p = m_.patterns[id];
    using K = ir::Pattern::Kind;
    switch (p.kind) {
      case K::not_: return matches_everything(p.a);
      case K::or_: return matches_nothing(p.a) && matches_nothing(p.b);
      case K::where: return matches_nothing(p.a);
      case K::failed: {
        const ir::Pattern& a = m_.patterns[p.a];
        return a.kind == K::step_type || matches_nothing(p.a);
      }
      default: return false;
    }
  }
  bool matches_everything(ir::Id id) const {
    const ir::Pattern& p = m_.patterns[id];
    using K = ir::Pattern::Kind;
    switch (p.kind) {
      case K::any_step: return true;
      case K::not_: return matches_nothing(p.a);
      case K::or_: return matches_everything(p.a) || matches_everything(p.b);
      default: return false;
    }
  }
  bool matches_every_tool(ir::Id id) const {
    const ir::Pattern& p = m_.patterns[id];
    using K = ir::Pattern::Kind;
    switch (p.kind) {
      case K::any_step:
      case K::any_tool: return true;
      case K::glob: return p.name == "*";
      case K::or_: return matches_every_tool(p.a) || matches_every_tool(p.b);
      default: return false;
    }
  }

  bool has_unparenthesized_where(Id id) const {
    const ast::Pattern& p = file_.patterns[id];
    if (p.kind == ast::Pattern::Kind::where) return true;
    if (p.kind == ast::Pattern::Kind::or_ || p.kind == ast::Pattern::Kind::not_ || p.kind == ast::Pattern::Kind::failed)
      for (Id c : p.children)
        if (has_unparenthesized_where(c)) return true;
    return false;
  }

  // ---- statements and rules ----
  ir::Scope lower_scope(const ast::Scope& s) {
    ir::Scope out;
    out.kind = s.kind;
    out.range = s.range;
    out.text = print_scope(file_, s);
    if (s.q != ast::kNone) out.q = lower_pattern(s.q);
    if (s.r != ast::kNone) out.r = lower_pattern(s.r);
    if (s.kind == ir::ScopeKind::between && has_unparenthesized_where(s.q))
      error("E017", file_.patterns[s.q].range,
            "in 'between Q and R', a Q with 'where' is written in parentheses: between (Q where …) and R");
    if (out.q != ir::kNone && matches_nothing(out.q))
      warning("W004", file_.patterns[s.q].range, "the scope never opens: this pattern matches no step");
    else if ((s.kind == ir::ScopeKind::between || s.kind == ir::ScopeKind::after_until) && out.q != ir::kNone &&
             out.q == out.r)
      // A step that matches R does not open a segment (§4): with R the same pattern, none does.
      warning("W004", file_.patterns[s.q].range,
              "the scope never opens: a step that would open it also closes it (the same pattern opens and closes)");
    return out;
  }

  ir::Statement lower_statement(Id id, const std::string& scope_key) {
    const ast::Statement& s = file_.statements[id];
    using K = ir::StatementKind;
    ir::Statement out;
    out.kind = s.kind;
    out.range = s.range;
    out.text = print_statement(file_, id);
    if (s.a != ast::kNone) out.a = lower_pattern(s.a);
    if (s.b != ast::kNone) out.b = lower_pattern(s.b);
    if (s.path != ast::kNone) out.path = lower_path(s.path);
    if (s.ignoring != ast::kNone) {
      out.ignoring = lower_pattern(s.ignoring);
      bool ordering = s.kind == K::precedes || s.kind == K::immediately_precedes || s.kind == K::followed_by ||
                      s.kind == K::immediately_followed_by || s.kind == K::never_followed_by;
      if (!ordering)
        error("E015", file_.patterns[s.ignoring].range,
              "'ignoring' applies only to ordering and adjacency statements (precedes, followed by, "
              "immediately …, never followed by)");
    }
    switch (s.form) {
      case ast::CountForm::at_most: out.lo = 0; out.hi = s.first.value; break;
      case ast::CountForm::at_least: out.lo = s.first.value; out.hi = ir::kUnbounded; break;
      case ast::CountForm::exactly: out.lo = out.hi = s.first.value; break;
      case ast::CountForm::between: out.lo = s.first.value; out.hi = s.second.value; break;
      case ast::CountForm::none: break;
    }
    if (s.kind == K::retries || s.kind == K::in_a_row) out.lo = 0;
    check_statement(s, out, scope_key);
    return out;
  }

  void check_statement(const ast::Statement& s, const ir::Statement& st, const std::string& scope_key) {
    using K = ir::StatementKind;
    auto nothing = [&](ir::Id p) { return p != ir::kNone && matches_nothing(p); };
    SourceRange ra = s.a != ast::kNone ? file_.patterns[s.a].range : s.range;
    SourceRange rb = s.b != ast::kNone ? file_.patterns[s.b].range : s.range;
    bool bad_count = s.first.too_large || s.second.too_large;
    if (s.kind == K::count && !bad_count) {
      if (st.lo > st.hi) {
        error("E007", {s.first.range.begin, s.second.range.end},
              fmt::format("empty count range: between {} and {} (the lower bound is above the upper)", st.lo, st.hi));
        return;
      }
      if (st.lo == 0 && st.hi == ir::kUnbounded) {
        warning("W003", s.first.range, "this statement can never be violated: every count is at least 0");
      } else if (nothing(st.a)) {
        if (st.lo == 0) warning("W003", ra, "this statement can never be violated: the pattern matches no step");
        else warning("W006", ra, "this statement can never be satisfied: the pattern matches no step");
      }
      // Contradictory bounds on one pattern in one scope.
      auto key = std::make_pair(scope_key, st.a);
      auto it = bounds_.find(key);
      if (it == bounds_.end()) {
        bounds_[key] = {st.lo, st.hi, s.range};
      } else {
        Bounds& b = it->second;
        std::uint64_t lo = std::max(b.lo, st.lo), hi = std::min(b.hi, st.hi);
        if (lo > hi) {
          Diagnostic d = make_error("E006", s.range,
                                    fmt::format("impossible count: together with an earlier statement on the same "
                                                "pattern in this scope, no count satisfies both"));
          d.notes.push_back({b.first, "the earlier statement"});
          diags_.push_back(std::move(d));
        } else {
          b.lo = lo;
          b.hi = hi;
        }
      }
      return;
    }
    switch (s.kind) {
      case K::forbid:
        if (nothing(st.a)) warning("W003", ra, "this statement can never be violated: the pattern matches no step");
        break;
      case K::require:
        if (nothing(st.a)) warning("W006", ra, "this statement can never be satisfied: the pattern matches no step");
        break;
      case K::only:
        if (matches_every_tool(st.a))
          warning("W003", ra, "this statement can never be violated: the pattern allows every tool call");
        break;
      case K::precedes:
      case K::immediately_precedes:
        if (nothing(st.b)) warning("W004", rb, "this statement is never activated: the pattern matches no step");
        break;
      case K::followed_by:
      case K::immediately_followed_by:
      case K::never_followed_by:
        if (nothing(st.a)) warning("W004", ra, "this statement is never activated: the pattern matches no step");
        break;
      case K::requires_:
        if (nothing(st.a)) warning("W004", ra, "this statement is never activated: the pattern matches no step");
        else if (st.a == st.b)
          warning("W003", s.range, "this statement can never be violated: a step matching A is itself the B");
        break;
      case K::excludes:
        if (nothing(st.a) && nothing(st.b))
          warning("W004", s.range, "this statement is never activated: neither pattern matches a step");
        break;
      case K::in_a_row:
      case K::retries:
        if (nothing(st.a)) warning("W003", ra, "this statement can never be violated: the pattern matches no step");
        break;
      default: break;
    }
  }

  void lower_units() {
    std::map<std::string, SourceRange> named_at;
    std::map<std::string, SourceRange> bare_at;
    for (const Unit& u : units_) {
      ir::Rule rule;
      rule.severity = u.severity;
      rule.message = u.message;
      rule.tags = u.tags;
      rule.range = u.range;
      variables_.clear();
      std::string scope_key;
      if (u.scope) {
        rule.scope = lower_scope(*u.scope);
        scope_key = rule.scope.text;
      }
      for (Id s : u.statements) rule.statements.push_back(lower_statement(s, scope_key));
      rule.variables.assign(variables_.begin(), variables_.end());
      if (u.named) {
        rule.name = u.name;
        if (auto it = named_at.find(u.name); it != named_at.end()) {
          Diagnostic d = make_error("E005", u.name_range, fmt::format("duplicate rule name '{}'", u.name));
          d.notes.push_back({it->second, "first defined here"});
          diags_.push_back(std::move(d));
          continue;
        }
        named_at[u.name] = u.name_range;
      } else {
        rule.name = rule.scope.text.empty() ? rule.statements[0].text
                                            : rule.scope.text + ": " + rule.statements[0].text;
        if (auto it = bare_at.find(rule.name); it != bare_at.end()) {
          Diagnostic d = make_warning("W005", u.range, "the same statement appears twice; it is checked once");
          d.notes.push_back({it->second, "first written here"});
          diags_.push_back(std::move(d));
          continue;
        }
        bare_at[rule.name] = u.range;
      }
      m_.rules.push_back(std::move(rule));
    }
    // A named rule whose name equals a bare statement's name would be ambiguous in reports.
    for (const auto& [name, r] : named_at)
      if (auto it = bare_at.find(name); it != bare_at.end())
        error("E005", r, fmt::format("rule name '{}' is also the name of a bare statement", name));
  }

  void report_unused() {
    for (const auto& [name, line] : groups_) {
      // Past the nesting limit (E010) lowering stopped early, so the groups it did not reach
      // are not known to be unused.
      if (used_groups_.count(name) || depth_reported_) continue;
      warning("W002", file_.lines[line].text_range, fmt::format("group '{}' is never used", file_.lines[line].text));
      // Still lower it, so its own problems (regexes, unknown names) are reported.
      lower_group(name, line, file_.lines[line].text_range);
      used_groups_.erase(name);
    }
    for (const auto& [from, to] : aliases_) {
      bool used = used_names_.count(from) || used_names_.count(to);
      for (std::size_t i = 0; !used && i < used_globs_.size(); ++i)
        used = trajcheck::detail::glob_match(used_globs_[i], to) ||
               trajcheck::detail::glob_match(used_globs_[i], from);
      if (!used)
        warning("W001", file_.lines[alias_line_[from]].range,
                fmt::format("alias '{}' = '{}' is not used by any rule", from, to));
    }
  }

  struct Bounds {
    std::uint64_t lo, hi;
    SourceRange first;
  };

  const ast::File& file_;
  std::uint32_t max_nesting_;
  ir::Module& m_;
  std::vector<std::uint32_t> depth_;  // nesting depth of each pattern of m_ (index = id)
  bool depth_reported_ = false;
  std::uint32_t lower_depth_ = 0;
  std::vector<Diagnostic>& diags_;
  std::map<std::string, std::uint32_t> groups_;       // normalized name -> line
  std::map<std::string, std::string> aliases_;        // observed -> canonical (resolved)
  struct {
    std::vector<std::pair<std::string, std::string>> command_line, other_files;  // FrontendOptions, as given
  } outside_aliases_;
  std::map<std::string, std::string> command_line_aliases_, other_files_aliases_;  // normalized
  std::set<std::string> alias_targets_;               // the canonical names of aliases_
  std::map<std::string, std::uint32_t> alias_line_;
  std::map<std::string, ir::Id> group_ids_;
  std::map<std::string, std::set<std::string>> group_variables_;
  std::set<std::string> group_stack_;
  std::set<std::string> used_groups_;
  std::set<std::string> used_names_;
  std::vector<std::string> used_globs_;
  std::unordered_map<std::string, ir::Id> pattern_ids_;
  std::set<std::string> variables_;
  std::map<std::pair<std::string, ir::Id>, Bounds> bounds_;
  std::vector<Unit> units_;
};

}  // namespace

void lower_file(const Source& source, const ast::File& file, const FrontendOptions& options, ir::Module& module,
                std::vector<Diagnostic>& diags) {
  Lowerer(source, file, options, module, diags).run();
}

ir::Id lower_path(const Source& source, const ast::File& file, ast::Id path, ir::Module& module,
                  std::vector<Diagnostic>& diags) {
  Lowerer l(source, file, FrontendOptions{}, module, diags);
  return l.lower_path_root(path);
}

}  // namespace trajcheck::language::detail
