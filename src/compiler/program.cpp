// Builds the immutable Program from the rule IR: dedupes patterns and conditions into
// classifier columns, precompiles globs and RE2 regexes, builds PATH automata (capped).
#include "compiler/program.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <re2/re2.h>

#include "compiler/regex_prefilter.hpp"

namespace trajcheck {

std::string_view to_string(VerdictStatus s) {
  switch (s) {
    case VerdictStatus::satisfied: return "satisfied";
    case VerdictStatus::violated: return "violated";
    case VerdictStatus::vacuous: return "vacuous";
  }
  return "";
}

namespace detail {

namespace {

std::string literal_key(const ir::Literal& l) {
  switch (l.kind) {
    case ir::Literal::Kind::null: return "null";
    case ir::Literal::Kind::boolean: return l.boolean ? "true" : "false";
    case ir::Literal::Kind::number: return fmt::format("{}", l.number);
    case ir::Literal::Kind::string: {
      std::string s = "\"";
      for (char c : l.string) {
        if (c == '"' || c == '\\') s += '\\';
        s += c;
      }
      return s + "\"";
    }
  }
  return "";
}

std::string path_key(const ir::FieldPath& p) {
  static constexpr const char* kRoots[] = {"arguments", "result", "context", "fixture", ""};
  std::string s = kRoots[static_cast<int>(p.root)];
  for (const ir::PathSegment& seg : p.segments) {
    if (seg.index >= 0) {
      s += fmt::format("[{}]", seg.index);
    } else {
      if (!s.empty()) s += '.';
      s += seg.key;
    }
  }
  return s;
}

constexpr const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};

struct Builder {
  const ir::Module& m;
  const Source& source;
  const CompileOptions& options;
  ProgramImpl& p;
  std::vector<Diagnostic>& diags;
  std::vector<std::uint32_t> pattern_map, cond_map;
  std::unordered_map<std::string, std::uint32_t> pattern_keys, cond_keys, column_keys;

  void error(const char* code, SourceRange range, std::string message) {
    diags.push_back(Diagnostic{Severity::error, code, range, std::move(message), {}});
  }

  std::uint32_t column(bool glob, const std::string& text) {
    std::string key = (glob ? "g:" : "t:") + text;
    auto it = column_keys.find(key);
    if (it != column_keys.end()) return it->second;
    auto id = static_cast<std::uint32_t>(p.columns.size());
    p.columns.push_back(ToolColumn{glob, text});
    column_keys.emplace(key, id);
    return id;
  }

  CondOperand operand(const ir::Operand& o) {
    CondOperand c;
    switch (o.kind) {
      case ir::Operand::Kind::none: break;
      case ir::Operand::Kind::literal:
        c.kind = CondOperand::Kind::literal;
        c.literal = o.literal;
        break;
      case ir::Operand::Kind::list:
        c.kind = CondOperand::Kind::list;
        c.list = o.list;
        break;
      case ir::Operand::Kind::variable:
        error("E102", o.range,
              fmt::format("`${}` can only be bound as a conjunct `PATH == ${}` of a statement's "
                          "where-condition (not under `or`/`not`, nor with another operator)",
                          o.variable, o.variable));
        break;
      case ir::Operand::Kind::path: {
        c.kind = CondOperand::Kind::path;
        c.root = o.path.root;
        c.segments = o.path.segments;
        if (c.root == ir::FieldPath::Root::step && !c.segments.empty() && c.segments[0].index < 0) {
          const std::string& k = c.segments[0].key;
          static const std::pair<const char*, StepField> kFields[] = {
              {"type", StepField::type},     {"tool", StepField::tool},
              {"raw_tool", StepField::raw_tool}, {"status", StepField::status},
              {"id", StepField::id},         {"content", StepField::content},
              {"turn", StepField::turn}};
          for (const auto& [name, field] : kFields)
            if (k == name) c.field = field;
          // A front end that left these as step fields still means the documents.
          auto reroot = [&](ir::FieldPath::Root r) {
            c.root = r;
            c.segments.erase(c.segments.begin());
          };
          if (k == "arguments" || k == "args") reroot(ir::FieldPath::Root::arguments);
          else if (k == "result") reroot(ir::FieldPath::Root::result);
          else if (k == "context") reroot(ir::FieldPath::Root::context);
          else if (k == "fixture") reroot(ir::FieldPath::Root::fixture);
        }
        break;
      }
    }
    return c;
  }

  std::string operand_key(const ir::Operand& o) {
    switch (o.kind) {
      case ir::Operand::Kind::none: return "";
      case ir::Operand::Kind::path: return path_key(o.path);
      case ir::Operand::Kind::literal: return literal_key(o.literal);
      case ir::Operand::Kind::variable: return "$" + o.variable;
      case ir::Operand::Kind::list: {
        std::string s = "[";
        for (std::size_t i = 0; i < o.list.size(); ++i) s += (i ? ", " : "") + literal_key(o.list[i]);
        return s + "]";
      }
    }
    return "";
  }

  std::uint32_t cond(ir::Id id, std::uint32_t depth) {
    if (id >= m.conds.size() || depth > options.max_nesting + 64) {
      error("E106", {}, "malformed rule IR: bad condition reference");
      return kNoId;
    }
    if (cond_map[id] != kNoId) return cond_map[id];
    const ir::Cond& c = m.conds[id];
    CondNode n;
    n.kind = c.kind;
    n.op = c.op;
    switch (c.kind) {
      case ir::Cond::Kind::and_:
      case ir::Cond::Kind::or_:
        n.a = cond(c.lhs, depth + 1);
        n.b = cond(c.rhs, depth + 1);
        if (n.a == kNoId || n.b == kNoId) return kNoId;
        n.text = fmt::format("({} {} {})", p.conds[n.a].text,
                             c.kind == ir::Cond::Kind::and_ ? "and" : "or", p.conds[n.b].text);
        break;
      case ir::Cond::Kind::not_:
        n.a = cond(c.lhs, depth + 1);
        if (n.a == kNoId) return kNoId;
        n.text = fmt::format("not {}", p.conds[n.a].text);
        break;
      case ir::Cond::Kind::compare:
        n.text = fmt::format("{} {} {}", operand_key(c.a), kOps[static_cast<int>(c.op)], operand_key(c.b));
        break;
      case ir::Cond::Kind::matches: {
        n.text = fmt::format("{} matches /{}/", operand_key(c.a), c.regex);
        RE2::Options ro;
        ro.set_log_errors(false);
        auto re = std::make_shared<RE2>(c.regex, ro);
        if (!re->ok()) error("E105", c.range, fmt::format("invalid regular expression: {}", re->error()));
        else n.prefilter = RegexPrefilter::build(*re);
        n.regex = std::move(re);
        break;
      }
      case ir::Cond::Kind::contains:
        n.text = fmt::format("{} contains {}", operand_key(c.a), operand_key(c.b));
        break;
      case ir::Cond::Kind::in:
        n.text = fmt::format("{} in {}", operand_key(c.a), operand_key(c.b));
        break;
      case ir::Cond::Kind::exists:
        n.text = fmt::format("{} exists", operand_key(c.a));
        break;
      case ir::Cond::Kind::seen:
        n.text = ir::seen_text(operand_key(c.a), c.sources);
        n.sources = c.sources;
        break;
      case ir::Cond::Kind::valid:
        n.text = fmt::format("valid({})", operand_key(c.a));
        break;
    }
    n.lhs = operand(c.a);
    n.rhs = operand(c.b);
    auto it = cond_keys.find(n.text);
    if (it != cond_keys.end()) return cond_map[id] = it->second;
    auto cid = static_cast<std::uint32_t>(p.conds.size());
    cond_keys.emplace(n.text, cid);
    p.conds.push_back(std::move(n));
    return cond_map[id] = cid;
  }

  bool has_variable(ir::Id id, std::uint32_t depth) const {
    if (id >= m.conds.size() || depth > options.max_nesting + 64) return false;
    const ir::Cond& c = m.conds[id];
    if (c.a.kind == ir::Operand::Kind::variable || c.b.kind == ir::Operand::Kind::variable) return true;
    bool nested = c.kind == ir::Cond::Kind::and_ || c.kind == ir::Cond::Kind::or_ || c.kind == ir::Cond::Kind::not_;
    return nested && (has_variable(c.lhs, depth + 1) ||
                      (c.kind != ir::Cond::Kind::not_ && has_variable(c.rhs, depth + 1)));
  }
  void conjuncts(ir::Id id, std::vector<ir::Id>& out, std::uint32_t depth) const {
    if (id < m.conds.size() && m.conds[id].kind == ir::Cond::Kind::and_ && depth <= options.max_nesting + 64) {
      conjuncts(m.conds[id].lhs, out, depth + 1);
      conjuncts(m.conds[id].rhs, out, depth + 1);
    } else {
      out.push_back(id);
    }
  }
  // `P where C1 and PATH == $v and C2`: the binding conjunct is taken out of the condition;
  // so is a mention, `PATH contains $v` (PatternNode::mention); every other use of a
  // variable is reported (E102) by operand().
  std::uint32_t binder(const ir::Pattern& pt, PatternNode n, const std::string& base_text, std::uint32_t depth) {
    const std::size_t diags_before = diags.size();
    std::vector<ir::Id> parts;
    conjuncts(pt.b, parts, depth);
    const ir::Cond* binding = nullptr;
    std::uint32_t rest = kNoId;
    for (ir::Id c : parts) {
      const ir::Cond& k = m.conds[c];
      bool binds = (k.kind == ir::Cond::Kind::compare && k.op == ir::CompareOp::eq &&
                    ((k.a.kind == ir::Operand::Kind::path && k.b.kind == ir::Operand::Kind::variable) ||
                     (k.b.kind == ir::Operand::Kind::path && k.a.kind == ir::Operand::Kind::variable))) ||
                   (k.kind == ir::Cond::Kind::contains && k.a.kind == ir::Operand::Kind::path &&
                    k.b.kind == ir::Operand::Kind::variable);
      if (binds && binding == nullptr) {
        binding = &k;
        continue;
      }
      if (binds) {  // a second binding conjunct: operand() would say it is not one
        const ir::Operand& first = binding->a.kind == ir::Operand::Kind::variable ? binding->a : binding->b;
        const ir::Operand& again = k.a.kind == ir::Operand::Kind::variable ? k.a : k.b;
        error("E102", again.range,
              first.variable == again.variable
                  ? fmt::format("`${}` is bound already by an earlier conjunct of this pattern: a pattern binds its "
                                "variable once",
                                again.variable)
                  : fmt::format("this pattern binds `${}` already: a pattern binds one variable, with one "
                                "`PATH == $name` or `PATH contains $name` conjunct",
                                first.variable));
        return kNoId;
      }
      std::uint32_t id = cond(c, depth + 1);
      if (id == kNoId) return kNoId;
      if (rest == kNoId) {
        rest = id;
      } else {
        CondNode both;
        both.kind = ir::Cond::Kind::and_;
        both.a = rest;
        both.b = id;
        both.text = fmt::format("({} and {})", p.conds[rest].text, p.conds[id].text);
        rest = static_cast<std::uint32_t>(p.conds.size());
        p.conds.push_back(std::move(both));
      }
    }
    if (binding == nullptr) {
      if (diags.size() > diags_before) return kNoId;  // operand() already said why
      error("E102", pt.range,
            "a variable binds only as a conjunct `PATH == $name` (or is looked for as `PATH contains $name`) of "
            "a where-condition");
      return kNoId;
    }
    const ir::Operand& path = binding->a.kind == ir::Operand::Kind::path ? binding->a : binding->b;
    const ir::Operand& var = binding->a.kind == ir::Operand::Kind::variable ? binding->a : binding->b;
    n.b = rest;
    n.binder = n.parametric = true;
    n.mention = binding->kind == ir::Cond::Kind::contains;
    n.bind = operand(path);
    n.variable = var.variable;
    const char* op = n.mention ? "contains" : "==";
    n.text = fmt::format("({} where {}{} {} ${})", base_text, rest == kNoId ? "" : p.conds[rest].text + " and ",
                         path_key(path.path), op, var.variable);
    // The rest of the condition by its text: its `and` nodes are not deduplicated.
    std::string key = fmt::format("{}|{}|{}|{}|${}", n.mention ? "mention" : "bind", n.a,
                                  rest == kNoId ? "" : p.conds[rest].text, path_key(path.path), n.variable);
    return intern(std::move(n), std::move(key));
  }

  // Patterns are deduplicated by structure (kind, children's ids, column, condition), not by
  // text: a chain of groups each using the one before twice shares its sub-patterns, so its
  // text would double per link.
  std::uint32_t intern(PatternNode n) {
    std::string key = fmt::format("{}|{}|{}|{}|{}", static_cast<int>(n.kind), n.a, n.b, n.column,
                                  static_cast<int>(n.step_type));
    return intern(std::move(n), std::move(key));
  }
  std::uint32_t intern(PatternNode n, std::string key) {
    auto it = pattern_keys.find(key);
    if (it != pattern_keys.end()) return it->second;
    auto pid = static_cast<std::uint32_t>(p.patterns.size());
    pattern_keys.emplace(std::move(key), pid);
    p.patterns.push_back(std::move(n));
    return pid;
  }

  // How a pattern appears inside another's text (dumps only): spelled out while short, else
  // by its number, so texts stay small however patterns nest.
  std::string text_of(std::uint32_t id) const {
    if (id == kNoId) return "?";
    const std::string& t = p.patterns[id].text;
    return t.size() <= kMaxInlineText ? t : fmt::format("p{}", id);
  }
  static constexpr std::size_t kMaxInlineText = 200;

  // Whether IR pattern `id` carries a variable where `failed` may push down to it: a `where`
  // whose condition has one, or an `|` or `failed` over such a pattern.
  bool binds_under(ir::Id id, std::uint32_t depth) const {
    if (id >= m.patterns.size() || depth > options.max_nesting + 64) return false;
    const ir::Pattern& pt = m.patterns[id];
    switch (pt.kind) {
      case ir::Pattern::Kind::where: return pt.b < m.conds.size() && has_variable(pt.b, 0);
      case ir::Pattern::Kind::or_: return binds_under(pt.a, depth + 1) || binds_under(pt.b, depth + 1);
      case ir::Pattern::Kind::failed: return binds_under(pt.a, depth + 1);
      default: return false;
    }
  }

  // `failed P` over a pattern that binds: `failed (X where C)` is `(failed X) where C`, and
  // `failed (A | B)` is `failed A | failed B`, so the binder itself tests the status and a
  // call that did not fail binds nothing.
  std::uint32_t failed_of(ir::Id id, std::uint32_t depth) {
    if (id >= m.patterns.size() || depth > options.max_nesting + 64) {
      error("E106", {}, "malformed rule IR: bad pattern reference");
      return kNoId;
    }
    const ir::Pattern& pt = m.patterns[id];
    PatternNode n;
    n.kind = ir::Pattern::Kind::failed;
    if (pt.kind == ir::Pattern::Kind::failed) return failed_of(pt.a, depth + 1);
    if (pt.kind == ir::Pattern::Kind::or_ && binds_under(id, depth)) {
      n.kind = ir::Pattern::Kind::or_;
      n.a = failed_of(pt.a, depth + 1);
      n.b = failed_of(pt.b, depth + 1);
      if (n.a == kNoId || n.b == kNoId) return kNoId;
      n.text = fmt::format("({} | {})", text_of(n.a), text_of(n.b));
      n.parametric = p.patterns[n.a].parametric || p.patterns[n.b].parametric;
      return intern(std::move(n));
    }
    if (pt.kind == ir::Pattern::Kind::where && binds_under(id, depth)) {
      std::uint32_t base = failed_of(pt.a, depth + 1);
      if (base == kNoId) return kNoId;
      if (p.patterns[base].parametric) {
        error("E102", pt.range, "a pattern that binds a variable cannot be refined by another `where`");
        return kNoId;
      }
      PatternNode w;
      w.kind = ir::Pattern::Kind::where;
      w.a = base;
      return binder(pt, std::move(w), text_of(base), depth);
    }
    n.a = pattern(id, depth + 1);
    if (n.a == kNoId) return kNoId;
    n.text = "failed " + text_of(n.a);
    return intern(std::move(n));
  }

  void collect_binders(std::uint32_t id, std::vector<std::uint32_t>& out) const {
    if (id == kNoId || !p.patterns[id].parametric) return;
    const PatternNode& n = p.patterns[id];
    if (n.binder) {
      if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
      return;
    }
    collect_binders(n.a, out);
    collect_binders(n.b, out);
  }

  std::uint32_t pattern(ir::Id id, std::uint32_t depth = 0) {
    if (id == ir::kNone) return kNoId;
    if (id >= m.patterns.size() || depth > options.max_nesting + 64) {
      error("E106", {}, "malformed rule IR: bad pattern reference");
      return kNoId;
    }
    if (pattern_map[id] != kNoId) return pattern_map[id];
    const ir::Pattern& pt = m.patterns[id];
    PatternNode n;
    n.kind = pt.kind;
    n.step_type = pt.step_type;
    auto child = [&](ir::Id c) { return text_of(pattern(c, depth + 1)); };
    switch (pt.kind) {
      case ir::Pattern::Kind::tool:
      case ir::Pattern::Kind::glob:
        n.column = column(pt.kind == ir::Pattern::Kind::glob, pt.name);
        n.text = pt.kind == ir::Pattern::Kind::glob ? "glob " + pt.name : pt.name;
        break;
      case ir::Pattern::Kind::any_tool: n.text = "any"; break;
      case ir::Pattern::Kind::any_step: n.text = "step"; break;
      case ir::Pattern::Kind::step_type: n.text = std::string(to_string(pt.step_type)); break;
      case ir::Pattern::Kind::or_: {
        std::string ta = child(pt.a), tb = child(pt.b);
        n.a = pattern(pt.a, depth + 1);
        n.b = pattern(pt.b, depth + 1);
        n.text = fmt::format("({} | {})", ta, tb);
        n.parametric = (n.a != kNoId && p.patterns[n.a].parametric) ||
                       (n.b != kNoId && p.patterns[n.b].parametric);
        break;
      }
      case ir::Pattern::Kind::failed:
        if (binds_under(pt.a, depth + 1)) {
          // `failed` only filters by status, so it may bind (§5): pushed down to the binder.
          std::uint32_t f = failed_of(pt.a, depth + 1);
          if (f != kNoId) pattern_map[id] = f;
          return f;
        }
        [[fallthrough]];
      case ir::Pattern::Kind::not_: {
        std::string ta = child(pt.a);
        n.a = pattern(pt.a, depth + 1);
        if (n.a != kNoId && p.patterns[n.a].parametric) {
          error("E102", pt.range, "a pattern that binds a variable cannot be negated");
          return kNoId;
        }
        n.text = fmt::format("{} {}", pt.kind == ir::Pattern::Kind::not_ ? "not" : "failed", ta);
        break;
      }
      case ir::Pattern::Kind::where: {
        std::string ta = child(pt.a);
        n.a = pattern(pt.a, depth + 1);
        if (n.a != kNoId && p.patterns[n.a].parametric) {
          error("E102", pt.range, "a pattern that binds a variable cannot be refined by another `where`");
          return kNoId;
        }
        if (pt.b < m.conds.size() && has_variable(pt.b, 0)) {
          std::uint32_t b = binder(pt, std::move(n), ta, depth);
          if (b != kNoId) pattern_map[id] = b;
          return b;
        }
        n.b = cond(pt.b, depth + 1);
        n.text = fmt::format("({} where {})", ta, n.b == kNoId ? "?" : p.conds[n.b].text);
        break;
      }
      case ir::Pattern::Kind::write:
        // Resolved against the catalog's effects by catalog/compile_hook.cpp (E104 without one).
        n.text = "write";
        if (auto it = column_keys.find("w:"); it != column_keys.end()) {
          n.column = it->second;
        } else {
          n.column = static_cast<std::uint32_t>(p.columns.size());
          p.columns.push_back(ToolColumn{false, "<catalog effect write>", true});
          column_keys.emplace("w:", n.column);
        }
        break;
    }
    if ((n.kind == ir::Pattern::Kind::or_ && (n.a == kNoId || n.b == kNoId)) ||
        ((n.kind == ir::Pattern::Kind::not_ || n.kind == ir::Pattern::Kind::failed ||
          n.kind == ir::Pattern::Kind::where) && n.a == kNoId) ||
        (n.kind == ir::Pattern::Kind::where && n.b == kNoId))
      return kNoId;
    return pattern_map[id] = intern(std::move(n));
  }

  void parametric_checks(const ir::Rule& r, RuleSpec& spec) {
    auto param = [&](std::uint32_t id) { return id != kNoId && p.patterns[id].parametric; };
    if (param(spec.q) || param(spec.r))
      error("E102", r.scope.range, "a scope pattern cannot bind a variable; bind it in the statement");
    for (const StatementSpec& st : spec.statements) {
      if (param(st.ignoring))
        error("E102", r.range, "an `ignoring` pattern cannot bind a variable");
      collect_binders(st.a, spec.binders);
      collect_binders(st.b, spec.binders);
      if (st.nfa != kNoId)
        for (std::uint32_t a : p.nfas[st.nfa].atoms)
          if (param(a)) error("E102", r.range, "a PATH atom cannot bind a variable");
    }
    bool binds = false;
    for (std::uint32_t b : spec.binders) {
      const std::string& v = p.patterns[b].variable;
      if (spec.variable.empty()) spec.variable = v;
      else if (spec.variable != v)
        error("E102", r.range, fmt::format("a rule binds one variable; this one binds ${} and ${}", spec.variable, v));
      if (p.patterns[b].mention) spec.mentions.push_back(b);
      else binds = true;
    }
    // A mention looks for values bound elsewhere: with no `PATH == $v`, no value ever is.
    if (!spec.binders.empty() && !binds)
      error("E102", r.range,
            fmt::format("`${0}` is only looked for (`contains ${0}`), never bound: bind it with `PATH == ${0}` in "
                        "another pattern of the rule",
                        spec.variable));
  }

  // Whether pattern `id` (or a condition under it) uses valid(…): its rule's witnesses then
  // carry the call's catalog error as their detail.
  bool cond_uses_valid(std::uint32_t id) const {
    if (id == kNoId) return false;
    const CondNode& c = p.conds[id];
    return c.kind == ir::Cond::Kind::valid || cond_uses_valid(c.a) || cond_uses_valid(c.b);
  }
  // Memoized per pattern: patterns are shared (a chain of groups is a DAG whose paths double
  // per link), so an unmemoized walk would be exponential.
  std::vector<std::int8_t> uses_valid_memo;  // -1 not known yet
  bool uses_valid(std::uint32_t id) {
    if (id == kNoId) return false;
    if (uses_valid_memo.size() < p.patterns.size()) uses_valid_memo.resize(p.patterns.size(), -1);
    if (uses_valid_memo[id] >= 0) return uses_valid_memo[id] != 0;
    const PatternNode& n = p.patterns[id];
    const bool r = (n.kind == ir::Pattern::Kind::where && cond_uses_valid(n.b)) || uses_valid(n.a) ||
                   (n.kind == ir::Pattern::Kind::or_ && uses_valid(n.b));
    uses_valid_memo[id] = r ? 1 : 0;
    return r;
  }

  // A pattern that matches only steps binding the slice's value: a binder or `|` of them.
  bool bind_only(std::uint32_t id) const {
    if (id == kNoId) return true;
    const PatternNode& n = p.patterns[id];
    if (n.binder) return true;
    return n.kind == ir::Pattern::Kind::or_ && n.parametric && bind_only(n.a) && bind_only(n.b);
  }

  // What a step binding nothing does to each statement's monitor in a slice (see NbEffect).
  // Mirrors StatementMonitor::step with binder-only patterns false; `lazy` statements have a
  // range summary in StatementMonitor::catch_up.
  void classify_non_binding(RuleSpec& spec) const {
    if (spec.binders.empty()) return;
    using K = ir::StatementKind;
    for (StatementSpec& st : spec.statements) {
      bool a = bind_only(st.a), b = bind_only(st.b);
      NbEffect e = NbEffect::lazy;
      switch (st.kind) {
        case K::forbid: case K::require: case K::count: case K::precedes: case K::followed_by:
        case K::requires_: case K::never_followed_by: case K::excludes:
          if (a && b) e = NbEffect::none;
          break;
        // no duplicate with a free alternative: the free steps' keys are logged once per rule
        // (with the step that last had each key, where segments open per slice), and a
        // slice's own keys wait for the first free step with that key (KeyWaiters).
        case K::no_duplicate:
          if (a) e = NbEffect::none;
          break;
        // retries with a free alternative: per tool, the free calls and successes are logged;
        // a slice's chain is the log's except on the tools of its own calls, until a free
        // success (StatementMonitor::catch_up_retries).
        case K::retries:
          if (a) e = NbEffect::none;
          break;
        // Adjacency and runs: only the first step of a missed range depends on the slice
        // (its flag / pending A / count); the rest is prefix data over the shared log.
        case K::immediately_precedes: case K::immediately_followed_by: case K::in_a_row:
        case K::starts_with: case K::ends_with: case K::only: break;
        // PATH atoms never bind (E102): steps binding nothing may be letters, which the
        // Checker applies once per distinct automaton state (ExpectClasses).
        case K::expect: case K::expect_exactly:
          if (st.nfa == kNoId) e = NbEffect::none;
          break;
      }
      st.nb = e;
    }
  }

  void build() {
    pattern_map.assign(m.patterns.size(), kNoId);
    cond_map.assign(m.conds.size(), kNoId);
    p.workflow_name = m.workflow;
    p.case_sensitive = m.case_sensitive;
    p.aliases = m.aliases;
    for (const ir::Rule& r : m.rules) {
      RuleInfo info;
      info.name = r.name;
      info.severity = r.severity;
      info.message = r.message;
      info.tags = r.tags;
      LineCol lc = source.line_col(r.range.begin);
      info.location = fmt::format("{}:{}:{}", source.name(), lc.line, lc.column);
      p.infos.push_back(std::move(info));
      RuleSpec spec;
      spec.scope = r.scope.kind;
      spec.scope_text = r.scope.text;
      spec.q = pattern(r.scope.q);
      spec.r = pattern(r.scope.r);
      bool needs_q = r.scope.kind == ir::ScopeKind::after || r.scope.kind == ir::ScopeKind::between ||
                     r.scope.kind == ir::ScopeKind::after_until;
      bool needs_r = r.scope.kind == ir::ScopeKind::before || r.scope.kind == ir::ScopeKind::between ||
                     r.scope.kind == ir::ScopeKind::after_until;
      if ((needs_q && spec.q == kNoId) || (needs_r && spec.r == kNoId))
        error("E106", r.scope.range, "malformed rule IR: scope without its pattern");
      for (const ir::Statement& s : r.statements) {
        const std::size_t diags_before = diags.size();
        StatementSpec st;
        st.kind = s.kind;
        st.a = pattern(s.a);
        st.b = pattern(s.b);
        st.ignoring = pattern(s.ignoring);
        st.lo = s.lo;
        st.hi = s.hi;
        st.text = s.text;
        bool binary = s.kind == ir::StatementKind::precedes ||
                      s.kind == ir::StatementKind::immediately_precedes ||
                      s.kind == ir::StatementKind::followed_by ||
                      s.kind == ir::StatementKind::immediately_followed_by ||
                      s.kind == ir::StatementKind::requires_ ||
                      s.kind == ir::StatementKind::never_followed_by ||
                      s.kind == ir::StatementKind::excludes;
        bool path = s.kind == ir::StatementKind::expect || s.kind == ir::StatementKind::expect_exactly;
        if (path) {
          Nfa nfa;
          std::string message;
          if (s.path >= m.paths.size()) {
            error("E106", s.range, "malformed rule IR: expect without a PATH");
          } else if (!build_nfa(m, s.path, [&](ir::Id id) {
                       std::uint32_t c = pattern(id);
                       return c == kNoId ? 0u : c;
                     }, options.max_automaton_states, nfa, message)) {
            error("E101", s.range, message);
          } else {
            st.nfa = static_cast<std::uint32_t>(p.nfas.size());
            p.nfas.push_back(std::move(nfa));
          }
        } else if ((st.a == kNoId || (binary && st.b == kNoId)) && diags.size() == diags_before) {
          error("E106", s.range, "malformed rule IR: statement without its pattern");
        }
        spec.statements.push_back(std::move(st));
      }
      for (const StatementSpec& st : spec.statements)
        spec.uses_valid = spec.uses_valid || uses_valid(st.a) || uses_valid(st.b);
      parametric_checks(r, spec);
      classify_non_binding(spec);
      p.specs.push_back(std::move(spec));
    }
  }
};

const char* kind_name(ir::StatementKind k) {
  static constexpr const char* kNames[] = {
      "forbid", "require", "count", "precedes", "immediately precedes", "followed by",
      "immediately followed by", "requires", "never followed by", "excludes", "starts with",
      "ends with", "only", "no duplicate", "in a row", "retries", "expect", "expect exactly"};
  return kNames[static_cast<int>(k)];
}

std::string bound(std::uint64_t v) { return v == ir::kUnbounded ? "inf" : std::to_string(v); }

}  // namespace

std::shared_ptr<ProgramImpl> build_program(const ir::Module& module, const Source& source,
                                           const CompileOptions& options,
                                           std::vector<Diagnostic>& diagnostics) {
  auto program = std::make_shared<ProgramImpl>();
  program->max_bindings = options.max_bindings;
  std::size_t before = diagnostics.size();
  Builder b{module, source, options, *program, diagnostics, {}, {}, {}, {}, {}, {}};
  b.build();
  for (std::size_t i = before; i < diagnostics.size(); ++i)
    if (diagnostics[i].severity == Severity::error) return nullptr;
  return program;
}

std::string ProgramImpl::dump_automaton() const {
  std::string out = "classifier\n  tool columns (evaluated once per distinct tool):\n";
  for (std::size_t i = 0; i < columns.size(); ++i)
    out += fmt::format("    c{} = {}{}\n", i, columns[i].glob ? "glob " : "", columns[i].text);
  out += "  patterns (each evaluated at most once per step):\n";
  for (std::size_t i = 0; i < patterns.size(); ++i)
    out += fmt::format("    p{} = {}{}\n", i, patterns[i].text,
                       patterns[i].column != kNoId ? fmt::format("  [c{}]", patterns[i].column) : "");
  if (!conds.empty()) out += "  conditions:\n";
  for (std::size_t i = 0; i < conds.size(); ++i) out += fmt::format("    k{} = {}\n", i, conds[i].text);
  auto pname = [&](std::uint32_t id) { return id == kNoId ? std::string("-") : fmt::format("p{}", id); };
  static constexpr const char* kScopes[] = {"global", "after", "before", "between", "after until"};
  for (std::size_t r = 0; r < specs.size(); ++r) {
    const RuleSpec& s = specs[r];
    out += fmt::format("rule {} \"{}\"\n  scope: {}", r, infos[r].name, kScopes[static_cast<int>(s.scope)]);
    if (s.q != kNoId) out += " q=" + pname(s.q);
    if (s.r != kNoId) out += " r=" + pname(s.r);
    out += "\n";
    if (!s.binders.empty()) {
      out += fmt::format("  parametric ${}: one slice state per value bound by", s.variable);
      for (std::uint32_t b : s.binders)
        if (!patterns[b].mention) out += " " + pname(b);
      if (!s.mentions.empty()) {
        out += ", looked for (contains) by";
        for (std::uint32_t m : s.mentions) out += " " + pname(m);
      }
      out += "; steps binding nothing: logged once, slices catch up\n";
    }
    for (const StatementSpec& st : s.statements) {
      out += fmt::format("  statement \"{}\": {}", st.text, kind_name(st.kind));
      if (st.a != kNoId) out += " a=" + pname(st.a);
      if (st.b != kNoId) out += " b=" + pname(st.b);
      if (st.ignoring != kNoId) out += " ignoring=" + pname(st.ignoring);
      switch (st.kind) {
        case ir::StatementKind::count:
          out += fmt::format("\n    counter: {} <= count <= {}", bound(st.lo), bound(st.hi));
          break;
        case ir::StatementKind::in_a_row:
        case ir::StatementKind::retries:
          out += fmt::format("\n    counter: run <= {}", bound(st.hi));
          break;
        default: break;
      }
      out += "\n";
      if (st.nfa != kNoId) out += nfas[st.nfa].dump(pname);
    }
  }
  return out;
}

}  // namespace detail

Program::Program(std::shared_ptr<const detail::ProgramImpl> compiled) : compiled_(std::move(compiled)) {}
Program::~Program() = default;
const std::vector<RuleInfo>& Program::rules() const { return compiled_->infos; }
const std::string& Program::workflow() const { return compiled_->workflow_name; }
const std::vector<std::pair<std::string, std::string>>& Program::tool_aliases() const {
  return compiled_->aliases;
}
bool Program::case_sensitive_names() const { return compiled_->case_sensitive; }
const std::shared_ptr<const Catalog>& Program::catalog() const { return compiled_->catalog; }
std::string Program::dump_ast() const { return compiled_->ast_dump; }
std::string Program::dump_ir() const { return compiled_->ir_dump; }
std::string Program::dump_automaton() const { return compiled_->dump_automaton(); }

}  // namespace trajcheck
