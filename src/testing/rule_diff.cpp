// `trajcheck diff` (docs/rule-diff.md): pairing the rules of two files and telling, for each
// pair, which traces one accepts and the other rejects. Traces are enumerated over an alphabet
// of steps drawn from the two rules (their tools, globs instantiated, step types, the
// constants their `where` conditions compare with, failed calls, a fresh tool) and checked by
// ordinary Checkers over both compiled files, so a counterexample is one `check` confirms.
#include "trajcheck/rule_diff.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <cstdlib>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "ir/ir.hpp"
#include "trajcheck/json_string.hpp"
#include "language/frontend.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

std::string_view to_string(RuleChange c) {
  switch (c) {
    case RuleChange::unchanged: return "unchanged";
    case RuleChange::no_difference_found: return "no difference found";
    case RuleChange::widened: return "widened";
    case RuleChange::narrowed: return "narrowed";
    case RuleChange::changed: return "changed";
  }
  return "?";
}

namespace {

std::string rd_quote(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// One side: the compiled program (for checking) and the IR (for reading the rules).
struct RdSide {
  Source source;
  std::shared_ptr<const Program> program;
  ir::Module module;
  std::vector<std::string> write_tools;  // catalog tools of effect write
};

bool rd_load(const Source& src, const RuleDiffOptions& o, RdSide& side, std::string& error) {
  side.source = src;
  CompileOptions copts;
  copts.catalog_override = o.catalog;
  CompileResult r = compile(src, copts);
  if (!r.ok()) {
    error += format_diagnostics(r.source, r.diagnostics);
    if (error.empty() || error.back() != '\n') error += '\n';
    return false;
  }
  side.program = r.program;
  language::FrontendResult fr = language::parse_rules(src);
  side.module = std::move(fr.module);
  if (side.module.rules.size() != side.program->rules().size()) {
    error += fmt::format("{}: internal: the rules of the IR and of the program differ\n", src.name());
    return false;
  }
  if (side.program->catalog())
    for (const CatalogTool& t : side.program->catalog()->tools())
      if (t.effect == ToolEffect::write) side.write_tools.push_back(t.name);
  return true;
}

// ---------------------------------------------------------------------------------------
// The meaning of a rule as text, groups expanded: two rules with the same key accept the same
// traces (same file-level aliases and case rule, which the key includes).

const char* rd_op(ir::CompareOp op) {
  switch (op) {
    case ir::CompareOp::eq: return "==";
    case ir::CompareOp::ne: return "!=";
    case ir::CompareOp::lt: return "<";
    case ir::CompareOp::le: return "<=";
    case ir::CompareOp::gt: return ">";
    case ir::CompareOp::ge: return ">=";
  }
  return "?";
}

std::string rd_operand(const ir::Operand& o) {
  switch (o.kind) {
    case ir::Operand::Kind::none: return "_";
    case ir::Operand::Kind::path: return o.path.text;
    case ir::Operand::Kind::literal: return o.literal.text;
    case ir::Operand::Kind::variable: return "$" + o.variable;
    case ir::Operand::Kind::list: {
      std::string s = "[";
      for (const ir::Literal& l : o.list) s += l.text + ",";
      return s + "]";
    }
  }
  return "?";
}

std::string rd_cond(const ir::Module& m, ir::Id id) {
  if (id == ir::kNone) return "_";
  const ir::Cond& c = m.conds[id];
  switch (c.kind) {
    case ir::Cond::Kind::and_: return "(" + rd_cond(m, c.lhs) + " and " + rd_cond(m, c.rhs) + ")";
    case ir::Cond::Kind::or_: return "(" + rd_cond(m, c.lhs) + " or " + rd_cond(m, c.rhs) + ")";
    case ir::Cond::Kind::not_: return "not(" + rd_cond(m, c.lhs) + ")";
    case ir::Cond::Kind::compare: return "(" + rd_operand(c.a) + rd_op(c.op) + rd_operand(c.b) + ")";
    case ir::Cond::Kind::matches: return "(" + rd_operand(c.a) + " matches /" + c.regex + "/)";
    case ir::Cond::Kind::contains: return "(" + rd_operand(c.a) + " contains " + rd_operand(c.b) + ")";
    case ir::Cond::Kind::in: return "(" + rd_operand(c.a) + " in " + rd_operand(c.b) + ")";
    case ir::Cond::Kind::exists: return "(" + rd_operand(c.a) + " exists)";
    case ir::Cond::Kind::seen: return ir::seen_text(rd_operand(c.a), c.sources);
    case ir::Cond::Kind::valid: return "valid(" + rd_operand(c.a) + ")";
  }
  return "?";
}

std::string rd_pattern(const ir::Module& m, ir::Id id) {
  if (id == ir::kNone) return "_";
  const ir::Pattern& p = m.patterns[id];
  switch (p.kind) {
    case ir::Pattern::Kind::tool: return "tool:" + p.name;
    case ir::Pattern::Kind::glob: return "glob:" + p.name;
    case ir::Pattern::Kind::any_tool: return "any_tool";
    case ir::Pattern::Kind::any_step: return "any_step";
    case ir::Pattern::Kind::step_type: return "type:" + std::string(to_string(p.step_type));
    case ir::Pattern::Kind::or_: return "(" + rd_pattern(m, p.a) + " | " + rd_pattern(m, p.b) + ")";
    case ir::Pattern::Kind::not_: return "not(" + rd_pattern(m, p.a) + ")";
    case ir::Pattern::Kind::failed: return "failed(" + rd_pattern(m, p.a) + ")";
    case ir::Pattern::Kind::where: return "(" + rd_pattern(m, p.a) + " where " + rd_cond(m, p.b) + ")";
    case ir::Pattern::Kind::write: return "write";
  }
  return "?";
}

std::string rd_path(const ir::Module& m, ir::Id id) {
  if (id == ir::kNone) return "_";
  const ir::PathExpr& p = m.paths[id];
  std::string kids;
  for (ir::Id c : p.children) kids += rd_path(m, c) + ",";
  switch (p.kind) {
    case ir::PathExpr::Kind::atom: return rd_pattern(m, p.pattern);
    case ir::PathExpr::Kind::seq: return "seq(" + kids + ")";
    case ir::PathExpr::Kind::alt: return "alt(" + kids + ")";
    case ir::PathExpr::Kind::all_of: return "all(" + kids + ")";
    case ir::PathExpr::Kind::optional: return "opt(" + kids + ")";
    case ir::PathExpr::Kind::star: return "star(" + kids + ")";
    case ir::PathExpr::Kind::plus: return "plus(" + kids + ")";
  }
  return "?";
}

std::string rd_key(const RdSide& s, const ir::Rule& r) {
  std::string k = fmt::format("case={};", s.module.case_sensitive);
  for (const auto& [a, b] : s.module.aliases) k += "alias:" + a + "=" + b + ";";
  k += fmt::format("scope:{}:{}:{};", static_cast<int>(r.scope.kind), rd_pattern(s.module, r.scope.q), rd_pattern(s.module, r.scope.r));
  for (const ir::Statement& st : r.statements)
    k += fmt::format("st:{}:{}:{}:{}:{}:{}:{};", static_cast<int>(st.kind), rd_pattern(s.module, st.a), rd_pattern(s.module, st.b),
                     rd_pattern(s.module, st.ignoring), st.lo, st.hi, rd_path(s.module, st.path));
  if (k.find("write") != std::string::npos || k.find("valid(") != std::string::npos) {
    // What `write` and valid(…) mean comes from the catalog the file names.
    k += "catalog:" + s.module.catalog + ";";
    k += "write_tools:";
    for (const std::string& t : s.write_tools) k += t + ",";
  }
  return k;
}

// ---------------------------------------------------------------------------------------
// The alphabet of a rule pair.

struct RdAlphabet {
  std::set<std::string> tools;
  std::set<StepType> types;
  bool failing = false;
  // field -> values (JSON text); field is "arguments.x.y", "result.x", or a step field "decision".
  std::map<std::string, std::set<std::string>> values;
  // field -> the value that makes the conditions on it hold (the first constant compared
  // with, a sample of its regular expression, every `contains` literal joined), for one
  // variant of each tool with every field set at once (conditions joined by `and`).
  std::map<std::string, std::string> positive;
  std::map<std::string, std::vector<std::string>> contained;
  // context.* fields compared with constants: the trace contexts tried (none, each value alone,
  // every field at its first constant), each with every trace.
  std::map<std::string, std::set<std::string>> context_values;
  std::map<std::string, std::string> context_positive;
  std::set<std::string> inexact;
};

std::string rd_literal_json(const ir::Literal& l) {
  switch (l.kind) {
    case ir::Literal::Kind::null: return "null";
    case ir::Literal::Kind::boolean: return l.boolean ? "true" : "false";
    case ir::Literal::Kind::number: return fmt::format("{}", l.number);
    case ir::Literal::Kind::string: return rd_quote(l.string);
  }
  return "null";
}

// A field the traces can set: arguments.*, result.* and step fields. false for context/fixture
// and index segments.
bool rd_settable(const ir::FieldPath& p, RdAlphabet& a) {
  if (p.root == ir::FieldPath::Root::context || p.root == ir::FieldPath::Root::fixture) {
    a.inexact.insert(fmt::format("`{}` is not varied (the traces have no context or fixture)", p.text));
    return false;
  }
  for (const ir::PathSegment& s : p.segments)
    if (s.key.empty()) {
      a.inexact.insert(fmt::format("`{}`: indexed paths are not varied", p.text));
      return false;
    }
  if (p.root == ir::FieldPath::Root::step && !p.segments.empty()) {
    const std::string& f = p.segments.front().key;
    if (f == "type" || f == "tool" || f == "raw_tool" || f == "id" || f == "status") {
      if (f != "status") a.inexact.insert(fmt::format("`{}` is not varied beyond the steps built", p.text));
      if (f == "status") a.failing = true;
      return false;
    }
  }
  return true;
}

void rd_add_value(RdAlphabet& a, const ir::FieldPath& p, std::string json, bool positive = false) {
  if (p.root == ir::FieldPath::Root::context && !p.segments.empty() &&
      std::all_of(p.segments.begin(), p.segments.end(), [](const ir::PathSegment& g) { return !g.key.empty(); })) {
    std::string key;
    for (const ir::PathSegment& g : p.segments) key += (key.empty() ? "" : ".") + g.key;
    if (positive) a.context_positive.emplace(key, json);
    a.context_values[key].insert(std::move(json));
    return;
  }
  if (!rd_settable(p, a)) return;
  if (positive) a.positive.emplace(p.text, json);
  a.values[p.text].insert(std::move(json));
}

// One string the regular expression `re` (RE2 syntax) matches, or nothing: literals kept, a
// class gives its first member, an alternation its first branch, `?`/`*` nothing (or once,
// `once`), `+` once, `{n,m}` n times; checked with RE2 before it is used.
struct RdRegexSample {
  std::string_view re;
  std::size_t i = 0;
  bool once = false;
  bool ok = true;

  std::string alternation() {
    std::string first = sequence();
    while (i < re.size() && re[i] == '|') {
      ++i;
      sequence();
    }
    return first;
  }
  std::string sequence() {
    std::string out;
    while (ok && i < re.size() && re[i] != '|' && re[i] != ')') {
      std::string atom_text = atom();
      std::size_t times = 1;
      if (i < re.size()) {
        char q = re[i];
        if (q == '?' || q == '*') { times = once ? 1 : 0; ++i; }
        else if (q == '+') { times = 1; ++i; }
        else if (q == '{') {
          std::size_t e = re.find('}', i);
          if (e == std::string_view::npos) { ok = false; break; }
          times = static_cast<std::size_t>(std::atoi(std::string(re.substr(i + 1, e - i - 1)).c_str()));
          i = e + 1;
        }
        if (i < re.size() && (re[i] == '?' || re[i] == '+')) ++i;  // lazy / possessive
      }
      for (std::size_t t = 0; t < times; ++t) out += atom_text;
    }
    return out;
  }
  static std::string escape_class(char c) {
    switch (c) {
      case 's': return " ";
      case 'd': return "1";
      case 'w': case 'S': case 'D': return "a";
      case 'W': return " ";
      case 'b': case 'B': case 'A': case 'z': return "";
      case 'n': return "\n";
      case 't': return "\t";
      default: return std::string(1, c);
    }
  }
  std::string atom() {
    char c = re[i++];
    switch (c) {
      case '^': case '$': return "";
      case '.': return "a";
      case '\\': {
        if (i >= re.size()) { ok = false; return ""; }
        return escape_class(re[i++]);
      }
      case '(': {
        if (i < re.size() && re[i] == '?') {
          // (?:…), (?i), (?i:…)
          std::size_t e = i;
          while (e < re.size() && re[e] != ':' && re[e] != ')') ++e;
          if (e >= re.size()) { ok = false; return ""; }
          i = e + 1;
          if (re[e] == ')') return "";
        }
        std::string r = alternation();
        if (i >= re.size() || re[i] != ')') { ok = false; return ""; }
        ++i;
        return r;
      }
      case '[': {
        bool negated = i < re.size() && re[i] == '^';
        if (negated) ++i;
        std::string members;
        bool first = true;
        while (i < re.size() && (re[i] != ']' || first)) {
          first = false;
          if (re[i] == '\\' && i + 1 < re.size()) {
            members += escape_class(re[i + 1]);
            i += 2;
          } else {
            members += re[i++];
          }
        }
        if (i >= re.size()) { ok = false; return ""; }
        ++i;
        if (!negated) return members.empty() ? "" : std::string(1, members[0]);
        for (char pick : std::string("axq0 Z_")) if (members.find(pick) == std::string::npos) return std::string(1, pick);
        ok = false;
        return "";
      }
      default: return std::string(1, c);
    }
  }
};

std::optional<std::string> rd_regex_sample(std::string_view re) {
  for (bool once : {false, true}) {
    RdRegexSample g{re};
    g.once = once;
    std::string s = g.alternation();
    if (!g.ok || g.i != re.size()) continue;
    RE2 compiled{re2::StringPiece(re.data(), re.size()), RE2::Quiet};
    if (compiled.ok() && RE2::PartialMatch(s, compiled)) return s;
  }
  return std::nullopt;
}

void rd_walk_cond(const ir::Module& m, ir::Id id, RdAlphabet& a) {
  if (id == ir::kNone) return;
  const ir::Cond& c = m.conds[id];
  using K = ir::Cond::Kind;
  using O = ir::Operand::Kind;
  switch (c.kind) {
    case K::and_:
    case K::or_:
    case K::not_:
      rd_walk_cond(m, c.lhs, a);
      rd_walk_cond(m, c.rhs, a);
      return;
    case K::compare: {
      const ir::Operand* path = c.a.kind == O::path ? &c.a : c.b.kind == O::path ? &c.b : nullptr;
      const ir::Operand* lit = c.a.kind == O::literal ? &c.a : c.b.kind == O::literal ? &c.b : nullptr;
      if (c.a.kind == O::variable || c.b.kind == O::variable) {
        a.inexact.insert("binds a variable ($x): values are tried from constants only");
        if (path) rd_add_value(a, path->path, "\"v1\"");
        if (path) rd_add_value(a, path->path, "\"v2\"");
        return;
      }
      if (!path || !lit) {
        a.inexact.insert(fmt::format("compares two fields ({})", rd_cond(m, id)));
        if (c.a.kind == O::path) rd_add_value(a, c.a.path, "\"v1\"");
        if (c.b.kind == O::path) rd_add_value(a, c.b.path, "\"v1\"");
        return;
      }
      rd_add_value(a, path->path, rd_literal_json(lit->literal), c.op == ir::CompareOp::eq);
      if (lit->literal.kind == ir::Literal::Kind::number) {
        if (c.op == ir::CompareOp::gt) rd_add_value(a, path->path, fmt::format("{}", lit->literal.number + 1), true);
        if (c.op == ir::CompareOp::ge || c.op == ir::CompareOp::le) rd_add_value(a, path->path, rd_literal_json(lit->literal), true);
        if (c.op == ir::CompareOp::lt) rd_add_value(a, path->path, fmt::format("{}", lit->literal.number - 1), true);
        rd_add_value(a, path->path, fmt::format("{}", lit->literal.number - 1));
        rd_add_value(a, path->path, fmt::format("{}", lit->literal.number + 1));
        if (c.op != ir::CompareOp::eq && c.op != ir::CompareOp::ne)
          a.inexact.insert(fmt::format("`{}`: numbers are tried at the constant and one either side", path->path.text));
      } else {
        rd_add_value(a, path->path, "\"other_value\"");
      }
      return;
    }
    case K::in:
      if (c.b.kind != O::list) a.inexact.insert(fmt::format("`{}` is compared with a field", rd_operand(c.a)));
      if (c.a.kind == O::path) {
        for (const ir::Literal& l : c.b.list) rd_add_value(a, c.a.path, rd_literal_json(l), true);
        rd_add_value(a, c.a.path, "\"other_value\"");
      }
      return;
    case K::exists:
      if (c.a.kind == O::path) rd_add_value(a, c.a.path, "\"v1\"");
      return;
    case K::matches:
      a.inexact.insert(fmt::format("`{}` matches a regular expression: only sampled values are tried", c.a.path.text));
      if (c.a.kind == O::path) {
        rd_add_value(a, c.a.path, "\"other_value\"");
        if (std::optional<std::string> sample = rd_regex_sample(c.regex)) rd_add_value(a, c.a.path, rd_quote(*sample), true);
      }
      return;
    case K::contains:
      a.inexact.insert(fmt::format("`{}` contains …: only sampled values are tried", c.a.path.text));
      if (c.a.kind == O::path && c.b.kind == O::literal) {
        rd_add_value(a, c.a.path, rd_literal_json(c.b.literal));
        rd_add_value(a, c.a.path, "\"other_value\"");
        if (c.b.literal.kind == ir::Literal::Kind::string && rd_settable(c.a.path, a))
          a.contained[c.a.path.text].push_back(c.b.literal.string);
      }
      return;
    case K::seen: a.inexact.insert("seen(…) depends on earlier results: only sampled results are tried"); return;
    case K::valid: a.inexact.insert("valid(…) depends on the catalog's schemas: only sampled arguments are tried"); return;
  }
}

std::string rd_instantiate_glob(const std::string& g) {
  std::string s;
  for (char ch : g) s += (ch == '*' || ch == '?') ? std::string("x") : std::string(1, ch);
  return s;
}

void rd_walk_pattern(const RdSide& side, ir::Id id, RdAlphabet& a) {
  if (id == ir::kNone) return;
  const ir::Module& m = side.module;
  const ir::Pattern& p = m.patterns[id];
  switch (p.kind) {
    case ir::Pattern::Kind::tool: a.tools.insert(p.name); return;
    case ir::Pattern::Kind::glob: a.tools.insert(rd_instantiate_glob(p.name)); return;
    case ir::Pattern::Kind::any_tool: return;
    case ir::Pattern::Kind::any_step: a.types.insert(StepType::user_message); return;
    case ir::Pattern::Kind::step_type: a.types.insert(p.step_type); return;
    case ir::Pattern::Kind::or_:
      rd_walk_pattern(side, p.a, a);
      rd_walk_pattern(side, p.b, a);
      return;
    case ir::Pattern::Kind::not_: a.types.insert(StepType::user_message); rd_walk_pattern(side, p.a, a); return;
    case ir::Pattern::Kind::failed: a.failing = true; rd_walk_pattern(side, p.a, a); return;
    case ir::Pattern::Kind::where:
      rd_walk_pattern(side, p.a, a);
      rd_walk_cond(m, p.b, a);
      return;
    case ir::Pattern::Kind::write:
      for (const std::string& t : side.write_tools) a.tools.insert(t);
      if (side.write_tools.empty()) a.inexact.insert("`write` without a catalog of write tools");
      return;
  }
}

void rd_walk_path(const RdSide& side, ir::Id id, RdAlphabet& a) {
  if (id == ir::kNone) return;
  const ir::PathExpr& p = side.module.paths[id];
  if (p.kind == ir::PathExpr::Kind::atom) rd_walk_pattern(side, p.pattern, a);
  for (ir::Id c : p.children) rd_walk_path(side, c, a);
}

void rd_walk_rule(const RdSide& side, const ir::Rule& r, RdAlphabet& a) {
  rd_walk_pattern(side, r.scope.q, a);
  rd_walk_pattern(side, r.scope.r, a);
  for (const ir::Statement& st : r.statements) {
    rd_walk_pattern(side, st.a, a);
    rd_walk_pattern(side, st.b, a);
    rd_walk_pattern(side, st.ignoring, a);
    rd_walk_path(side, st.path, a);
    using SK = ir::StatementKind;
    if (st.kind == SK::retries) a.failing = true;
    if (!r.variables.empty()) a.inexact.insert("binds a variable ($x): values are tried from constants only");
  }
}

struct RdSymbol {
  std::string json;   // the native step
  std::string label;  // how it is printed
  bool core = false;  // a step as written, with every condition made true, or failing: searched deeper
};

// Sets `field` (arguments.a.b / result.a / a step field) of a step built as a JSON object.
void rd_set(nlohmann::ordered_json& step, const std::string& field, const std::string& value_json) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  for (std::size_t i = 0; i <= field.size(); ++i)
    if (i == field.size() || field[i] == '.') {
      parts.push_back(field.substr(b, i - b));
      b = i + 1;
    }
  nlohmann::ordered_json* at = &step;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    at = &(*at)[parts[i]];
    if (!at->is_object()) *at = nlohmann::ordered_json::object();
  }
  (*at)[parts.back()] = nlohmann::ordered_json::parse(value_json);
}

std::vector<RdSymbol> rd_symbols(const RdAlphabet& a) {
  std::vector<RdSymbol> out;
  std::set<std::string> seen;
  auto add = [&](nlohmann::ordered_json step, std::string label, bool core = false) {
    std::string j = step.dump();
    if (seen.insert(j).second) out.push_back({std::move(j), std::move(label), core});
    else if (core)
      for (RdSymbol& s : out)
        if (s.json == j) s.core = true;
  };
  auto variants = [&](const nlohmann::ordered_json& base, const std::string& label, bool tool) {
    add(base, label, true);
    for (const auto& [field, values] : a.values) {
      bool args = field.rfind("arguments.", 0) == 0 || field.rfind("result.", 0) == 0;
      if (args && !tool) continue;
      for (const std::string& v : values) {
        nlohmann::ordered_json s = base;
        std::string f = field.rfind("args.", 0) == 0 ? "arguments." + field.substr(5) : field;
        rd_set(s, f, v);
        auto pos = a.positive.find(field);
        add(s, label + " " + f + "=" + v, a.values.size() == 1 && pos != a.positive.end() && pos->second == v);
      }
    }
    if (tool && a.values.size() > 1) {
      std::map<std::string, std::string> all = a.positive;
      for (const auto& [field, parts] : a.contained) {
        std::string joined;
        for (const std::string& p : parts) joined += (joined.empty() ? "" : " ") + p;
        all[field] = rd_quote(joined);
      }
      if (all.size() > 1) {
        nlohmann::ordered_json s = base;
        std::string l = label;
        for (const auto& [field, v] : all) {
          std::string f = field.rfind("args.", 0) == 0 ? "arguments." + field.substr(5) : field;
          rd_set(s, f, v);
          l += " " + f + "=" + v;
        }
        add(s, l, true);
      }
    }
    if (tool && a.failing) {
      nlohmann::ordered_json s = base;
      s["status"] = "error";
      add(s, label + " (fails)", true);
    }
  };
  for (const std::string& t : a.tools) {
    nlohmann::ordered_json s = {{"type", "tool_call"}, {"tool", t}};
    variants(s, t, true);
  }
  {
    nlohmann::ordered_json s = {{"type", "tool_call"}, {"tool", "other_tool"}};
    variants(s, "other_tool", true);
  }
  for (StepType t : a.types) {
    if (t == StepType::tool_call || t == StepType::other) continue;
    nlohmann::ordered_json s = {{"type", std::string(to_string(t))}};
    if (t == StepType::user_message || t == StepType::assistant_message || t == StepType::final_answer ||
        t == StepType::system_message)
      s["content"] = "text";
    variants(s, std::string(to_string(t)), false);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The search.

struct RdRunner {
  const RdSide* old_side = nullptr;
  const RdSide* new_side = nullptr;
  int old_rule = -1, new_rule = -1;  // -1: absent (accepts every trace)
  std::unique_ptr<Checker> old_checker, new_checker;
  TraceParser parser{NormalizeOptions{}};
  ToolTable tools;
  Trajectory trace{&tools};
  std::vector<RuleResult> results;
  std::uint64_t checked = 0;

  static bool accepts(Checker* c, int rule, const Trajectory& t, std::vector<RuleResult>& results) {
    if (!c || rule < 0) return true;
    c->check(t, results);
    for (const RuleResult& r : results)
      if (r.rule == static_cast<std::uint32_t>(rule) && r.status == VerdictStatus::violated) return false;
    return true;
  }

  std::vector<std::string> contexts{""};  // JSON objects; "": none
  std::size_t context = 0;                // the one record() and classify() use

  std::string record(const std::vector<RdSymbol>& sym, const std::vector<std::uint32_t>& word) const {
    std::string r = "{\"trace_id\":\"counterexample\",";
    if (!contexts[context].empty()) r += "\"context\":" + contexts[context] + ",";
    r += "\"steps\":[";
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (i) r += ',';
      r += sym[word[i]].json;
    }
    return r + "]}";
  }

  // 0: same verdict, 1: new accepts / old rejects, 2: old accepts / new rejects.
  int classify(const std::vector<RdSymbol>& sym, const std::vector<std::uint32_t>& word) {
    ++checked;
    std::string rec = record(sym, word);
    ParseOutcome o = parser.parse_value(rec, RecordOrigin{"<diff>", 1, 1, 0}, trace);
    if (!o.ok()) return 0;
    bool oa = accepts(old_checker.get(), old_rule, trace, results);
    bool na = accepts(new_checker.get(), new_rule, trace, results);
    if (oa == na) return 0;
    return na ? 1 : 2;
  }
};

void rd_search(RdRunner& run, const std::vector<RdSymbol>& sym, const RuleDiffOptions& o, RuleDiffEntry& e) {
  const std::uint64_t k = sym.size();
  // The budget counts checks: each trace is checked once per context tried.
  const std::uint64_t budget = std::max<std::uint64_t>(1, o.exhaustive_budget / run.contexts.size());
  e.alphabet = static_cast<std::uint32_t>(k);
  // The longest length whose traces all fit in the budget.
  std::uint32_t exh = 0;
  {
    std::uint64_t total = 0, level = 1;
    while (exh < o.max_steps) {
      level *= k;
      if (total + level > budget) break;
      total += level;
      ++exh;
    }
  }
  e.exhaustive_steps = exh;
  e.searched_steps = o.max_steps;
  auto found = [&](int c, const std::vector<std::uint32_t>& w) {
    DiffTrace t;
    for (std::uint32_t s : w) t.steps.push_back(sym[s].label);
    t.record = run.record(sym, w);
    t.context = run.contexts[run.context];
    if (c == 1 && !e.has_widening) {
      e.has_widening = true;
      e.widening = std::move(t);
    } else if (c == 2 && !e.has_narrowing) {
      e.has_narrowing = true;
      e.narrowing = std::move(t);
    }
  };
  auto try_word = [&](const std::vector<std::uint32_t>& w) {
    for (run.context = 0; run.context < run.contexts.size(); ++run.context) {
      int c = run.classify(sym, w);
      if (c) found(c, w);
    }
    run.context = 0;
    return e.has_widening && e.has_narrowing;
  };
  // Every trace over the whole alphabet, shortest first, while the budget lasts.
  for (std::uint32_t len = 0; len <= exh; ++len) {
    std::vector<std::uint32_t> w(len, 0);
    while (true) {
      if (try_word(w)) return;
      std::size_t i = 0;
      while (i < len && ++w[i] == k) w[i++] = 0;
      if (i == len) break;
    }
  }
  // Then every trace over the core steps (each step as written, with its conditions made true, or
  // failing), deeper than over the whole alphabet, and shortest first.
  std::vector<std::uint32_t> core;
  for (std::uint32_t s = 0; s < k; ++s)
    if (sym[s].core) core.push_back(s);
  if (core.size() < k && !core.empty()) {
    std::uint64_t total = 0, level = 1;
    std::uint32_t deep = 0;
    while (deep < o.max_steps) {
      level *= core.size();
      if (total + level > budget) break;
      total += level;
      ++deep;
    }
    e.core_steps = deep;
    for (std::uint32_t len = exh + 1; len <= deep; ++len) {
      std::vector<std::uint32_t> idx(len, 0), w(len);
      while (true) {
        for (std::uint32_t i = 0; i < len; ++i) w[i] = core[idx[i]];
        if (try_word(w)) return;
        std::size_t i = 0;
        while (i < len && ++idx[i] == core.size()) idx[i++] = 0;
        if (i == len) break;
      }
    }
  }
  // Families are built from the core steps (all steps when there are no others).
  std::vector<std::uint32_t> fam_symbols = core;
  if (fam_symbols.empty())
    for (std::uint32_t s = 0; s < k; ++s) fam_symbols.push_back(s);
  std::set<std::vector<std::uint32_t>> tried;
  for (std::uint32_t len = std::max(exh, e.core_steps) + 1; len <= o.max_steps; ++len) {
    // Families: s^len, s^(len-1) t, t s^(len-1), (s t)^…
    for (std::uint32_t s : fam_symbols)
      for (std::uint32_t t : fam_symbols) {
        std::vector<std::uint32_t> fam[4];
        fam[0].assign(len, s);
        fam[1].assign(len, s);
        fam[1].back() = t;
        fam[2].assign(len, s);
        fam[2].front() = t;
        fam[3].resize(len);
        for (std::uint32_t i = 0; i < len; ++i) fam[3][i] = i % 2 ? t : s;
        for (auto& w : fam)
          if (tried.insert(w).second && try_word(w)) return;
      }
  }
}

RuleDiffEntry rd_compare(const RdSide& os, int oi, const RdSide& ns, int ni, const RuleDiffOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  RuleDiffEntry e;
  if (oi >= 0) {
    e.old_name = os.program->rules()[oi].name;
    e.old_location = os.program->rules()[oi].location;
  }
  if (ni >= 0) {
    e.new_name = ns.program->rules()[ni].name;
    e.new_location = ns.program->rules()[ni].location;
  }
  RdAlphabet a;
  if (oi >= 0) rd_walk_rule(os, os.module.rules[oi], a);
  if (ni >= 0) rd_walk_rule(ns, ns.module.rules[ni], a);
  if (oi >= 0 && ni >= 0) {
    const RuleInfo& x = os.program->rules()[oi];
    const RuleInfo& y = ns.program->rules()[ni];
    if (x.severity != y.severity) e.notes.push_back(fmt::format("severity {} -> {}", to_string(x.severity), to_string(y.severity)));
    if (x.message != y.message) e.notes.push_back("message changed");
    if (rd_key(os, os.module.rules[oi]) == rd_key(ns, ns.module.rules[ni])) {
      e.change = RuleChange::unchanged;
      e.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return e;
    }
  }
  std::vector<RdSymbol> sym = rd_symbols(a);
  RdRunner run;
  run.old_side = &os;
  run.new_side = &ns;
  run.old_rule = oi;
  run.new_rule = ni;
  if (oi >= 0) run.old_checker = std::make_unique<Checker>(os.program);
  if (ni >= 0) run.new_checker = std::make_unique<Checker>(ns.program);
  if (!a.context_values.empty()) {
    std::set<std::string> seen_contexts;
    auto add_context = [&](const std::map<std::string, std::string>& fields) {
      nlohmann::ordered_json c = nlohmann::ordered_json::object();
      for (const auto& [f, v] : fields) rd_set(c, f, v);
      if (seen_contexts.insert(c.dump()).second) run.contexts.push_back(c.dump());
    };
    for (const auto& [f, values] : a.context_values) {
      for (const std::string& v : values) add_context({{f, v}});
      add_context({{f, "\"other_value\""}});
    }
    if (a.context_positive.size() > 1) add_context(a.context_positive);
  }
  rd_search(run, sym, o, e);
  e.traces_checked = run.checked;
  e.change = e.has_widening && e.has_narrowing ? RuleChange::changed
             : e.has_widening                  ? RuleChange::widened
             : e.has_narrowing                 ? RuleChange::narrowed
                                               : RuleChange::no_difference_found;
  if (e.change == RuleChange::no_difference_found ||
      ((e.change == RuleChange::widened || e.change == RuleChange::narrowed) && oi >= 0 && ni >= 0)) {
    e.inexact.assign(a.inexact.begin(), a.inexact.end());
    if (e.exhaustive_steps < e.searched_steps)
      e.inexact.push_back(fmt::format("every trace was tried up to {} step{} only{}; longer ones from families of steps as written (runs of one step, a run then one other step, two steps alternating)",
                                      e.exhaustive_steps, e.exhaustive_steps == 1 ? "" : "s",
                                      e.core_steps > e.exhaustive_steps ? fmt::format(", every trace of steps as written (conditions true) up to {}", e.core_steps) : std::string()));
    e.inexact.push_back(fmt::format("traces longer than {} steps were not tried", e.searched_steps));
  }
  e.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return e;
}

}  // namespace

RuleDiffResult diff_rules(const Source& old_rules, const Source& new_rules, const RuleDiffOptions& options) {
  RuleDiffResult res;
  res.old_file = std::string(old_rules.name());
  res.new_file = std::string(new_rules.name());
  res.max_steps = options.max_steps;
  RdSide os, ns;
  bool ok = rd_load(old_rules, options, os, res.error);
  ok = rd_load(new_rules, options, ns, res.error) && ok;
  if (!ok) return res;
  const auto& orules = os.program->rules();
  const auto& nrules = ns.program->rules();
  std::vector<int> pair_of_old(orules.size(), -1);
  std::vector<bool> new_taken(nrules.size(), false);
  std::vector<std::string> how(orules.size());
  for (std::size_t i = 0; i < orules.size(); ++i)
    for (std::size_t j = 0; j < nrules.size(); ++j)
      if (!new_taken[j] && orules[i].name == nrules[j].name) {
        pair_of_old[i] = static_cast<int>(j);
        new_taken[j] = true;
        how[i] = "name";
        break;
      }
  for (std::size_t i = 0; i < orules.size(); ++i) {
    if (pair_of_old[i] >= 0) continue;
    std::string k = rd_key(os, os.module.rules[i]);
    for (std::size_t j = 0; j < nrules.size(); ++j)
      if (!new_taken[j] && rd_key(ns, ns.module.rules[j]) == k) {
        pair_of_old[i] = static_cast<int>(j);
        new_taken[j] = true;
        how[i] = "meaning";
        break;
      }
  }
  // An unnamed statement is named by its text, so an edit renames it: such rules left over on
  // both sides are paired in file order when their scope and statement kinds are the same.
  auto unnamed = [](const ir::Rule& r) { return r.statements.size() == 1 && r.name == r.statements.front().text; };
  auto shape = [](const ir::Rule& r) {
    std::string k = std::to_string(static_cast<int>(r.scope.kind)) + ":";
    for (const ir::Statement& st : r.statements) k += std::to_string(static_cast<int>(st.kind)) + ",";
    return k;
  };
  for (std::size_t i = 0; i < orules.size(); ++i) {
    if (pair_of_old[i] >= 0 || !unnamed(os.module.rules[i])) continue;
    for (std::size_t j = 0; j < nrules.size(); ++j)
      if (!new_taken[j] && unnamed(ns.module.rules[j]) && shape(ns.module.rules[j]) == shape(os.module.rules[i])) {
        pair_of_old[i] = static_cast<int>(j);
        new_taken[j] = true;
        how[i] = "position";
        break;
      }
  }
  for (std::size_t i = 0; i < orules.size(); ++i) {
    RuleDiffEntry e = rd_compare(os, static_cast<int>(i), ns, pair_of_old[i], options);
    e.paired_by = pair_of_old[i] >= 0 ? how[i] : "removed";
    res.rules.push_back(std::move(e));
  }
  for (std::size_t j = 0; j < nrules.size(); ++j)
    if (!new_taken[j]) {
      RuleDiffEntry e = rd_compare(os, -1, ns, static_cast<int>(j), options);
      e.paired_by = "added";
      res.rules.push_back(std::move(e));
    }
  return res;
}

namespace {

std::string rd_title(const RuleDiffEntry& e) {
  if (e.paired_by == "added") return fmt::format("{} (added)", e.new_name);
  if (e.paired_by == "removed") return fmt::format("{} (removed)", e.old_name);
  if (e.old_name == e.new_name) return e.new_name;
  return fmt::format("{} (was {})", e.new_name, e.old_name);
}

void rd_text_trace(std::string& out, const char* what, const DiffTrace& t) {
  out += fmt::format("    {} ({} step{}):\n", what, t.steps.size(), t.steps.size() == 1 ? "" : "s");
  if (!t.context.empty()) out += fmt::format("      context {}\n", t.context);
  if (t.steps.empty()) out += "      (the empty trace)\n";
  for (std::size_t i = 0; i < t.steps.size(); ++i) out += fmt::format("      {}. {}\n", i + 1, t.steps[i]);
}

nlohmann::ordered_json rd_json_trace(const RuleDiffEntry& e, bool widening) {
  if (widening ? !e.has_widening : !e.has_narrowing) return nullptr;
  const DiffTrace& t = widening ? e.widening : e.narrowing;
  nlohmann::ordered_json j;
  if (!t.context.empty()) j["context"] = nlohmann::ordered_json::parse(t.context);
  j["steps"] = t.steps;
  j["trace"] = nlohmann::ordered_json::parse(t.record);
  return j;
}

}  // namespace

std::string format_rule_diff(const RuleDiffResult& r, RuleDiffFormat format, bool timings) {
  std::map<std::string, int> counts;
  for (const RuleDiffEntry& e : r.rules) counts[std::string(to_string(e.change))]++;
  if (format == RuleDiffFormat::json) {
    nlohmann::ordered_json j;
    j["old"] = r.old_file;
    j["new"] = r.new_file;
    j["max_steps"] = r.max_steps;
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (const RuleDiffEntry& e : r.rules) {
      nlohmann::ordered_json x;
      x["old_name"] = e.old_name.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.old_name);
      x["new_name"] = e.new_name.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.new_name);
      x["old_location"] = e.old_location;
      x["new_location"] = e.new_location;
      x["paired_by"] = e.paired_by;
      x["change"] = std::string(to_string(e.change));
      x["new_accepts_old_rejects"] = rd_json_trace(e, true);
      x["old_accepts_new_rejects"] = rd_json_trace(e, false);
      if (e.change != RuleChange::unchanged) {
        x["exhaustive_steps"] = e.exhaustive_steps;
        x["core_steps"] = e.core_steps;
        x["searched_steps"] = e.searched_steps;
        x["alphabet"] = e.alphabet;
        x["traces_checked"] = e.traces_checked;
      }
      x["not_exhaustive_because"] = e.inexact;
      x["notes"] = e.notes;
      if (timings) x["milliseconds"] = e.milliseconds;
      rules.push_back(std::move(x));
    }
    j["rules"] = std::move(rules);
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    for (const char* k : {"unchanged", "no difference found", "widened", "narrowed", "changed"}) s[k] = counts[k];
    j["summary"] = std::move(s);
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format("diff {} -> {}\n", r.old_file, r.new_file);
  for (const RuleDiffEntry& e : r.rules) {
    if (e.change == RuleChange::unchanged && e.notes.empty() && e.paired_by == "name") continue;
    out += fmt::format("{}: {}\n", to_string(e.change), rd_title(e));
    if (e.paired_by == "meaning") out += "    paired by meaning (renamed)\n";
    if (e.paired_by == "position") out += "    paired by position (unnamed statements of the same kind)\n";
    for (const std::string& n : e.notes) out += fmt::format("    note: {}\n", n);
    if (e.has_widening) rd_text_trace(out, "NEW accepts, OLD rejects", e.widening);
    if (e.has_narrowing) rd_text_trace(out, "OLD accepts, NEW rejects", e.narrowing);
    if (e.change == RuleChange::unchanged) continue;
    if (e.change == RuleChange::no_difference_found)
      out += fmt::format("    no difference found up to {} steps{}\n", e.searched_steps, e.inexact.empty() ? "" : "; not exhaustive because:");
    else if (e.paired_by == "added" || e.paired_by == "removed")
      continue;  // the missing side accepts every trace: there is no other way
    else if (e.change != RuleChange::changed && !e.inexact.empty())
      out += "    no trace the other way was found; the search was not exhaustive because:\n";
    if (e.change != RuleChange::changed)
      for (const std::string& why : e.inexact) out += fmt::format("      - {}\n", why);
  }
  out += fmt::format("{} rule{}: {} widened, {} narrowed, {} changed, {} no difference found, {} unchanged\n", r.rules.size(),
                     r.rules.size() == 1 ? "" : "s", counts["widened"], counts["narrowed"], counts["changed"],
                     counts["no difference found"], counts["unchanged"]);
  return out;
}

}  // namespace trajcheck
