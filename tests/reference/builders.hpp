// Test helpers: build rule IR modules and trajectories by hand (no parser needed), and
// compile a module into a Program through the compiler's builder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "ir/ir.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::testing {

inline ir::FieldPath field_path(const std::string& text) {
  ir::FieldPath p;
  p.text = text;
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  std::size_t from = 1;
  if (parts[0] == "arguments" || parts[0] == "args") p.root = ir::FieldPath::Root::arguments;
  else if (parts[0] == "result") p.root = ir::FieldPath::Root::result;
  else if (parts[0] == "context") p.root = ir::FieldPath::Root::context;
  else from = 0;
  for (std::size_t i = from; i < parts.size(); ++i) {
    std::string part = parts[i];
    auto br = part.find('[');
    ir::PathSegment seg;
    seg.key = part.substr(0, br);
    if (!seg.key.empty()) p.segments.push_back(seg);
    while (br != std::string::npos) {
      auto close = part.find(']', br);
      ir::PathSegment ix;
      ix.index = std::stoll(part.substr(br + 1, close - br - 1));
      p.segments.push_back(ix);
      br = part.find('[', close);
    }
  }
  return p;
}

inline ir::Literal lit_str(std::string s) {
  ir::Literal l;
  l.kind = ir::Literal::Kind::string;
  l.string = s;
  l.text = "\"" + s + "\"";
  return l;
}
inline ir::Literal lit_num(double d) {
  ir::Literal l;
  l.kind = ir::Literal::Kind::number;
  l.number = d;
  l.text = std::to_string(d);
  return l;
}
inline ir::Literal lit_bool(bool b) {
  ir::Literal l;
  l.kind = ir::Literal::Kind::boolean;
  l.boolean = b;
  l.text = b ? "true" : "false";
  return l;
}
inline ir::Literal lit_null() { return ir::Literal{}; }

// A compiled form wrapped as the public Program (null stays null).
inline std::shared_ptr<const Program> as_program(std::shared_ptr<const detail::ProgramImpl> compiled) {
  return compiled ? std::make_shared<const Program>(std::move(compiled)) : nullptr;
}

struct IrBuilder {
  ir::Module m;

  ir::Id pat(ir::Pattern p) {
    m.patterns.push_back(std::move(p));
    return static_cast<ir::Id>(m.patterns.size() - 1);
  }
  ir::Id tool(const std::string& name) {
    ir::Pattern p;
    p.kind = ir::Pattern::Kind::tool;
    p.name = name;
    return pat(p);
  }
  ir::Id glob(const std::string& g) {
    ir::Pattern p;
    p.kind = ir::Pattern::Kind::glob;
    p.name = g;
    return pat(p);
  }
  ir::Id any() { ir::Pattern p; p.kind = ir::Pattern::Kind::any_tool; return pat(p); }
  ir::Id step() { ir::Pattern p; p.kind = ir::Pattern::Kind::any_step; return pat(p); }
  ir::Id type(StepType t) {
    ir::Pattern p;
    p.kind = ir::Pattern::Kind::step_type;
    p.step_type = t;
    return pat(p);
  }
  ir::Id or_(ir::Id a, ir::Id b) { ir::Pattern p; p.kind = ir::Pattern::Kind::or_; p.a = a; p.b = b; return pat(p); }
  ir::Id not_(ir::Id a) { ir::Pattern p; p.kind = ir::Pattern::Kind::not_; p.a = a; return pat(p); }
  ir::Id failed(ir::Id a) { ir::Pattern p; p.kind = ir::Pattern::Kind::failed; p.a = a; return pat(p); }
  ir::Id where(ir::Id a, ir::Id c) { ir::Pattern p; p.kind = ir::Pattern::Kind::where; p.a = a; p.b = c; return pat(p); }

  ir::Id cond(ir::Cond c) {
    m.conds.push_back(std::move(c));
    return static_cast<ir::Id>(m.conds.size() - 1);
  }
  static ir::Operand path_op(const std::string& text) {
    ir::Operand o;
    o.kind = ir::Operand::Kind::path;
    o.path = field_path(text);
    return o;
  }
  static ir::Operand lit_op(ir::Literal l) {
    ir::Operand o;
    o.kind = ir::Operand::Kind::literal;
    o.literal = std::move(l);
    return o;
  }
  ir::Id cmp(const std::string& path, ir::CompareOp op, ir::Literal l) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::compare;
    c.op = op;
    c.a = path_op(path);
    c.b = lit_op(std::move(l));
    return cond(c);
  }
  ir::Id cmp_paths(const std::string& a, ir::CompareOp op, const std::string& b) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::compare;
    c.op = op;
    c.a = path_op(a);
    c.b = path_op(b);
    return cond(c);
  }
  ir::Id cmp_var(const std::string& path, const std::string& var) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::compare;
    c.op = ir::CompareOp::eq;
    c.a = path_op(path);
    c.b.kind = ir::Operand::Kind::variable;
    c.b.variable = var;
    return cond(c);
  }
  // `PATH contains $var`: a mention of the variable (docs/language.md §5).
  ir::Id contains_var(const std::string& path, const std::string& var) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::contains;
    c.a = path_op(path);
    c.b.kind = ir::Operand::Kind::variable;
    c.b.variable = var;
    return cond(c);
  }
  ir::Id matches(const std::string& path, const std::string& re) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::matches;
    c.a = path_op(path);
    c.regex = re;
    return cond(c);
  }
  ir::Id contains(const std::string& path, ir::Literal l) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::contains;
    c.a = path_op(path);
    c.b = lit_op(std::move(l));
    return cond(c);
  }
  ir::Id in(const std::string& path, std::vector<ir::Literal> list) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::in;
    c.a = path_op(path);
    c.b.kind = ir::Operand::Kind::list;
    c.b.list = std::move(list);
    return cond(c);
  }
  ir::Id exists(const std::string& path) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::exists;
    c.a = path_op(path);
    return cond(c);
  }
  ir::Id seen(const std::string& path, std::uint8_t sources = ir::kSeenAll) {
    ir::Cond c;
    c.kind = ir::Cond::Kind::seen;
    c.sources = sources;
    c.a = path_op(path);
    return cond(c);
  }
  ir::Id cand(ir::Id a, ir::Id b) { ir::Cond c; c.kind = ir::Cond::Kind::and_; c.lhs = a; c.rhs = b; return cond(c); }
  ir::Id cor(ir::Id a, ir::Id b) { ir::Cond c; c.kind = ir::Cond::Kind::or_; c.lhs = a; c.rhs = b; return cond(c); }
  ir::Id cnot(ir::Id a) { ir::Cond c; c.kind = ir::Cond::Kind::not_; c.lhs = a; return cond(c); }

  ir::Id path(ir::PathExpr p) {
    m.paths.push_back(std::move(p));
    return static_cast<ir::Id>(m.paths.size() - 1);
  }
  ir::Id atom(ir::Id pattern) { ir::PathExpr p; p.kind = ir::PathExpr::Kind::atom; p.pattern = pattern; return path(p); }
  ir::Id node(ir::PathExpr::Kind k, std::vector<ir::Id> ch) {
    ir::PathExpr p;
    p.kind = k;
    p.children = std::move(ch);
    return path(p);
  }

  static ir::Statement st(ir::StatementKind k, ir::Id a, ir::Id b = ir::kNone) {
    ir::Statement s;
    s.kind = k;
    s.a = a;
    s.b = b;
    return s;
  }
  ir::Rule& rule(ir::Statement s, ir::ScopeKind scope = ir::ScopeKind::global, ir::Id q = ir::kNone,
                 ir::Id r = ir::kNone, std::string name = "") {
    ir::Rule r_;
    r_.name = name.empty() ? "rule" + std::to_string(m.rules.size()) : name;
    r_.scope.kind = scope;
    r_.scope.q = q;
    r_.scope.r = r;
    r_.statements.push_back(std::move(s));
    m.rules.push_back(std::move(r_));
    return m.rules.back();
  }

  std::shared_ptr<const Program> compile(std::vector<Diagnostic>* diags = nullptr,
                                         CompileOptions options = {}) const {
    return as_program(build(diags, options));
  }
  // The compiled form itself, for tests of the compiler's decisions.
  std::shared_ptr<const detail::ProgramImpl> build(std::vector<Diagnostic>* diags = nullptr,
                                                   CompileOptions options = {}) const {
    std::vector<Diagnostic> local;
    Source src("test.rules", "");
    return detail::build_program(m, src, options, diags ? *diags : local);
  }
};

// A Trajectory assembled step by step, without a reader (trajcheck/testing.hpp's TraceBuilder
// is the public one, which writes a record and reads it).
struct StepsBuilder {
  ToolTable tools;
  Trajectory t{&tools};

  Step& call(const std::string& name, const std::string& args = "", bool failed = false,
             const std::string& result = "") {
    Step& s = t.add_step(StepType::tool_call);
    s.turn = static_cast<std::uint32_t>(t.steps().size() - 1);  // a turn of its own, as a reader gives
    s.tool = tools.intern(name);
    s.tool_name = t.store(name);
    s.raw_tool = s.tool_name;
    s.arguments = t.store(args);
    s.result = t.store(result);
    s.status = failed ? StepStatus::error : StepStatus::ok;
    return s;
  }
  Step& message(StepType type, const std::string& content = "", const std::string& extra = "") {
    Step& s = t.add_step(type);
    s.turn = static_cast<std::uint32_t>(t.steps().size() - 1);
    s.content = t.store(content);
    s.extra = t.store(extra);
    return s;
  }
  void context(const std::string& json) { t.set_context(t.store(json)); }
};

inline std::vector<RuleResult> run(const std::shared_ptr<const Program>& p, const Trajectory& t) {
  Checker c(p);
  std::vector<RuleResult> out;
  c.check(t, out);
  return out;
}

}  // namespace trajcheck::testing
