// Differential test: the compiled checker against the slow reference checker on seeded
// random rules (every statement form under every scope kind, ignoring, where-conditions,
// random PATHs) and random traces; status and witnesses must agree exactly.
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "reference/builders.hpp"
// The reference checker lives in the test tree and is compiled into this test only.
#include "reference/reference_checker.cpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;

namespace {

struct Gen {
  std::mt19937_64 rng;
  IrBuilder b;

  explicit Gen(std::uint64_t seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }

  ir::Id cond(int depth) {
    using Op = ir::CompareOp;
    int k = pick(depth > 0 ? 16 : 13);
    switch (k) {
      case 0: return b.cmp("arguments.id", Op::eq, lit_num(1));
      case 1: return b.cmp("arguments.id", Op::eq, lit_str("1"));
      case 2: return b.cmp("arguments.id", Op::ne, lit_num(1));
      case 3: return b.cmp("arguments.id", static_cast<Op>(2 + pick(4)), lit_num(1 + pick(2)));
      case 4: return b.exists("arguments.id");
      case 5: return b.cmp("decision", Op::eq, lit_str("approved"));
      case 6: return b.cmp("status", Op::eq, lit_str("error"));
      case 7: return b.contains("arguments.tags", lit_str("p"));
      case 8: return b.in("arguments.id", {lit_num(2), lit_str("x")});
      case 9: return b.matches("content", "^h");
      case 10: return b.cmp("result.ok", Op::eq, lit_bool(true));
      case 11: return b.cmp("context.user", Op::eq, lit_str("u1"));
      case 12: return b.cmp_paths("arguments.id", Op::eq, "arguments.tags[0]");
      case 13: return b.cand(cond(depth - 1), cond(depth - 1));
      case 14: return b.cor(cond(depth - 1), cond(depth - 1));
      default: return b.cnot(cond(depth - 1));
    }
  }

  ir::Id tool_pattern() {
    static const char* kTools[] = {"a", "b", "c", "d_x"};
    int k = pick(7);
    if (k < 4) return b.tool(kTools[k]);
    if (k == 4) return b.glob("d_*");
    if (k == 5) return b.glob("?");
    return b.any();
  }

  ir::Id pattern(int depth) {
    int k = pick(depth > 0 ? 12 : 8);
    switch (k) {
      case 0: case 1: case 2: case 3: return tool_pattern();
      case 4: return b.type(chance(50) ? StepType::approval : StepType::user_message);
      case 5: return b.type(StepType::assistant_message);
      case 6: return chance(20) ? b.step() : b.any();
      case 7: return b.failed(tool_pattern());
      case 8: return b.or_(pattern(depth - 1), pattern(depth - 1));
      case 9: return b.not_(pattern(depth - 1));
      default: return b.where(pattern(depth - 1), cond(1));
    }
  }

  ir::Id path(int depth) {
    int k = pick(depth > 0 ? 9 : 1);
    switch (k) {
      case 0: case 1: case 2: return b.atom(chance(80) ? tool_pattern() : pattern(1));
      case 3: return b.node(ir::PathExpr::Kind::seq, {path(depth - 1), path(depth - 1), path(depth - 1)});
      case 4: return b.node(ir::PathExpr::Kind::seq, {path(depth - 1), path(depth - 1)});
      case 5: return b.node(ir::PathExpr::Kind::alt, {path(depth - 1), path(depth - 1)});
      case 6: {
        auto kind = std::array{ir::PathExpr::Kind::optional, ir::PathExpr::Kind::star,
                               ir::PathExpr::Kind::plus}[pick(3)];
        return b.node(kind, {path(depth - 1)});
      }
      case 7: return b.node(ir::PathExpr::Kind::all_of, {path(depth - 1), path(depth - 1)});
      default: return b.node(ir::PathExpr::Kind::all_of, {path(0), path(depth - 1), path(0)});
    }
  }

  ir::Statement statement() {
    auto kind = static_cast<K>(pick(18));
    ir::Statement s = IrBuilder::st(kind, pattern(2));
    switch (kind) {
      case K::precedes: case K::immediately_precedes: case K::followed_by:
      case K::immediately_followed_by: case K::requires_: case K::never_followed_by:
      case K::excludes:
        s.b = pattern(2);
        break;
      case K::count:
        switch (pick(4)) {
          case 0: s.lo = 0; s.hi = pick(3); break;                    // at most
          case 1: s.lo = 1 + pick(2); s.hi = ir::kUnbounded; break;   // at least
          case 2: s.lo = s.hi = pick(3); break;                       // exactly
          default: s.lo = 1 + pick(2); s.hi = s.lo + pick(2); break;  // between
        }
        break;
      case K::in_a_row: case K::retries: s.hi = pick(3); break;
      case K::expect: case K::expect_exactly: s.a = ir::kNone; s.path = path(3); break;
      default: break;
    }
    if (chance(30)) s.ignoring = pattern(1);
    s.text = std::to_string(static_cast<int>(kind));
    return s;
  }

  void module() {
    b = IrBuilder{};
    int rules = 1 + pick(3);
    for (int r = 0; r < rules; ++r) {
      auto scope = static_cast<ir::ScopeKind>(pick(5));
      ir::Id q = ir::kNone, rr = ir::kNone;
      if (scope == ir::ScopeKind::after || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        q = pattern(1);
      if (scope == ir::ScopeKind::before || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        rr = pattern(1);
      ir::Rule& rule = b.rule(statement(), scope, q, rr);
      if (chance(20)) rule.statements.push_back(statement());
    }
  }

  void trace(TraceBuilder& t) {
    static const char* kTools[] = {"a", "b", "c", "d_x", "d_y"};
    static const char* kArgs[] = {"", "{}", R"({"id":1})", R"({"id":1.0})", R"({"id":"1"})",
                                  R"({"id":2,"tags":["p","q"]})", R"({"tags":["p"],"id":"x"})",
                                  R"({"b":1,"a":{"y":[1,2],"x":null}})", R"({"a":{"x":null,"y":[1.0,2]},"b":1.0})",
                                  R"({"id":"p","tags":["p"]})"};
    t.t.clear();
    if (chance(50)) t.context(R"({"user":"u1"})");
    int n = pick(11);
    for (int i = 0; i < n; ++i) {
      int k = pick(10);
      if (k < 6) {
        t.call(kTools[pick(5)], kArgs[pick(10)], chance(35), chance(50) ? R"({"ok":true})" : "");
      } else if (k == 6) {
        t.message(StepType::user_message, chance(50) ? "hello" : "bye");
      } else if (k == 7) {
        t.message(StepType::assistant_message, "ok");
      } else if (k == 8) {
        t.message(StepType::approval, "", chance(50) ? R"({"decision":"approved"})" : R"({"decision":"denied"})");
      } else {
        t.message(StepType::approval_request);
      }
    }
  }
};

std::string describe(const Trajectory& t) {
  std::string s;
  for (std::size_t i = 0; i < t.steps().size(); ++i) {
    const Step& st = t.steps()[i];
    s += std::to_string(i) + ": " + std::string(to_string(st.type));
    if (st.type == StepType::tool_call)
      s += " " + std::string(t.text(st.tool_name)) + " " + std::string(t.text(st.arguments)) +
           " status=" + std::string(to_string(st.status)) + " result=" + std::string(t.text(st.result));
    s += " " + std::string(t.text(st.content)) + " " + std::string(t.text(st.extra)) + "\n";
  }
  return s + "context: " + std::string(t.context()) + "\n";
}

std::string verdict_text(VerdictStatus s, const std::vector<std::uint32_t>& w) {
  std::string out(to_string(s));
  for (auto i : w) out += " " + std::to_string(i);
  return out;
}

}  // namespace

TEST_CASE("compiled checker agrees with the reference on random rules and traces") {
  Gen g(20261130);
  TraceBuilder t;
  int traces = 0, mismatches = 0;
  int by_status[3] = {0, 0, 0};
  for (int m = 0; m < 4000 && mismatches < 5; ++m) {
    g.module();
    std::vector<Diagnostic> diags;
    CompileOptions options;
    options.max_automaton_states = 100000;
    auto program = g.b.compile(&diags, options);
    REQUIRE_MESSAGE(program != nullptr, "module " << m << " did not compile");
    Checker checker(program);
    std::vector<RuleResult> got;
    for (int k = 0; k < 5; ++k) {
      g.trace(t);
      ++traces;
      checker.check(t.t, got);
      auto want = reference::check(g.b.m, t.t);
      REQUIRE(got.size() == want.size());
      for (std::size_t r = 0; r < want.size(); ++r) {
        ++by_status[static_cast<int>(want[r].status)];
        if (got[r].status != want[r].status || got[r].steps != want[r].steps) {
          ++mismatches;
          MESSAGE("module " << m << " trace " << k << " rule " << r << "\n"
                  << static_cast<const Program&>(*program).dump_automaton() << describe(t.t)
                  << "compiled:  " << verdict_text(got[r].status, got[r].steps) << "\n"
                  << "reference: " << verdict_text(want[r].status, want[r].steps));
        }
      }
    }
  }
  CHECK(mismatches == 0);
  CHECK(traces >= 10000);
  // The generator must exercise every verdict, or agreement would mean little.
  CHECK(by_status[0] > 1000);
  CHECK(by_status[1] > 1000);
  CHECK(by_status[2] > 1000);
  MESSAGE("traces " << traces << ", satisfied " << by_status[0] << ", violated " << by_status[1]
                    << ", vacuous " << by_status[2]);
}
