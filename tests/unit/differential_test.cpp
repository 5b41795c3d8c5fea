// Differential test: the compiled checker against the slow reference checker on seeded
// random rules (every statement form under every scope kind, ignoring, where-conditions,
// random PATHs) and random traces; status and witnesses must agree exactly.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <algorithm>
#include <random>
#include <tuple>

#include "compiler/program.hpp"
#include "reference/builders.hpp"
// The reference checker lives in the test tree and is compiled into this test only.
#include "reference/reference_checker.hpp"

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
      case 12: return chance(50) ? b.cmp_paths("arguments.id", Op::eq, "arguments.tags[0]") : b.seen("arguments.id");
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
    int k = big_groups && depth == 3 && chance(80) ? 7 : pick(depth > 0 ? 9 : 1);
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
      case 7:
        if (big_groups && depth == 3) {  // 5–8 elements, some of them groups themselves
          std::vector<ir::Id> kids;
          int n = 5 + pick(4);
          for (int i = 0; i < n; ++i)
            kids.push_back(chance(15) ? b.node(ir::PathExpr::Kind::all_of, {path(0), path(0), path(0)})
                                      : path(chance(70) ? 0 : 1));
          return b.node(ir::PathExpr::Kind::all_of, kids);
        }
        return b.node(ir::PathExpr::Kind::all_of, {path(depth - 1), path(depth - 1)});
      default: return b.node(ir::PathExpr::Kind::all_of, {path(0), path(depth - 1), path(0)});
    }
  }

  int param_percent = 25;
  int max_len = 10;
  bool global_only = false;  // every rule global
  bool scoped_only = false;  // every rule after / before / between / after until
  bool big_groups = false;   // all-of groups of 5–8 elements, nested ones
  int extra_expect = 0;      // percent of rules given an extra `expect` statement
  int free_alt = 15;         // percent of binders given a free alternative (`| tool`)
  int status_binder = 0;     // percent of binders also testing `status` (a call binds or not by its outcome)
  int failed_binder = 0;     // percent of binders wrapped in `failed` (only a failed call binds)
  int force_kind = -1;       // every statement of this kind (ir::StatementKind), when >= 0

  ir::Id binder() {
    ir::Id bind = b.cmp_var(chance(80) ? "arguments.id" : "arguments.tags[0]", "o");
    ir::Id c = chance(30) ? b.cand(cond(0), bind) : bind;
    if (status_binder > 0 && chance(status_binder)) {
      ir::Id failed = b.cmp("status", ir::CompareOp::eq, lit_str("error"));
      c = b.cand(chance(50) ? failed : b.cnot(failed), c);
    }
    ir::Id w = b.where(chance(70) ? tool_pattern() : b.type(StepType::approval), c);
    if (failed_binder > 0 && chance(failed_binder)) w = b.failed(w);
    return chance(free_alt) ? b.or_(w, tool_pattern()) : w;
  }

  ir::Statement statement() {
    auto kind = big_groups ? (chance(50) ? K::expect : K::expect_exactly) : static_cast<K>(pick(18));
    if (force_kind >= 0) kind = static_cast<K>(force_kind);
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
    if (kind != K::expect && kind != K::expect_exactly && chance(param_percent)) {
      // Parametric (§5): bind $o on the statement's patterns.
      s.a = chance(70) ? binder() : s.a;
      if (s.b != ir::kNone && chance(70)) s.b = binder();
    }
    if (chance(30)) s.ignoring = pattern(1);
    s.text = std::to_string(static_cast<int>(kind));
    return s;
  }

  void module() {
    b = IrBuilder{};
    int rules = 1 + pick(3);
    for (int r = 0; r < rules; ++r) {
      auto scope = global_only ? ir::ScopeKind::global
                   : scoped_only ? static_cast<ir::ScopeKind>(1 + pick(4))
                                 : static_cast<ir::ScopeKind>(pick(5));
      ir::Id q = ir::kNone, rr = ir::kNone;
      if (scope == ir::ScopeKind::after || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        q = pattern(1);
      if (scope == ir::ScopeKind::before || scope == ir::ScopeKind::between || scope == ir::ScopeKind::after_until)
        rr = pattern(1);
      ir::Rule& rule = b.rule(statement(), scope, q, rr);
      if (chance(20)) rule.statements.push_back(statement());
      if (extra_expect > 0 && chance(extra_expect)) {  // an `expect` beside the (maybe binding) statement
        ir::Statement e = IrBuilder::st(chance(50) ? K::expect : K::expect_exactly, ir::kNone);
        e.path = path(2);
        if (chance(20)) e.ignoring = pattern(1);
        e.text = "expect";
        rule.statements.push_back(e);
      }
    }
  }

  void trace(TraceBuilder& t) {
    static const char* kTools[] = {"a", "b", "c", "d_x", "d_y"};
    static const char* kArgs[] = {"", "{}", R"({"id":1})", R"({"id":1.0})", R"({"id":"1"})",
                                  R"({"id":2,"tags":["p","q"]})", R"({"tags":["p"],"id":"x"})",
                                  R"({"b":1,"a":{"y":[1,2],"x":null}})", R"({"a":{"x":null,"y":[1.0,2]},"b":1.0})",
                                  R"({"id":"p","tags":["p"]})"};
    t.t.clear();
    if (chance(50)) t.context(chance(50) ? R"({"user":"u1"})" : R"({"user":"u1","ids":["p",1]})");
    int n = pick(max_len + 1);
    for (int i = 0; i < n; ++i) {
      int k = pick(10);
      if (k < 6) {
        static const char* kResults[] = {"", R"({"ok":true})", R"({"id":1,"items":[{"id":"x"}]})", R"("p")",
                                         R"({"a":{"b":[2.0,null]}})"};
        t.call(kTools[pick(5)], kArgs[pick(10)], chance(35), kResults[pick(5)]);
      } else if (k == 6) {
        t.message(StepType::user_message, std::array{"hello", "bye", "order x 12"}[pick(3)]);
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

namespace {

struct DiffStats {
  int traces = 0, mismatches = 0, parametric_entries = 0, lazy_rules = 0, lazy_scoped = 0, lazy_expect = 0;
  // Lazy statements whose steps binding nothing matter through a free side / alternative:
  // `immediately …` (shared adjacency prefix data) and `in a row` (the log's runs).
  int lazy_free_adjacent = 0, lazy_free_row = 0;
  // `no duplicate` with a free alternative (global / before: the log's keys and waiters).
  int lazy_free_nodup = 0;
  // `retries` with a free alternative (per-tool logs of free calls and successes).
  int lazy_free_retries = 0;
  int by_status[3] = {0, 0, 0};
};

// A case's generator seed and number of modules; TRAJCHECK_DIFF_SEED (plus the case's own
// offset, so cases stay apart) and TRAJCHECK_DIFF_MODULES override them for longer soak runs.
std::pair<std::uint64_t, int> soak(std::uint64_t seed, int modules, int offset) {
  if (const char* e = std::getenv("TRAJCHECK_DIFF_SEED")) seed = std::strtoull(e, nullptr, 10) + offset;
  if (const char* e = std::getenv("TRAJCHECK_DIFF_MODULES")) modules = std::atoi(e);
  return {seed, modules};
}

DiffStats run_differential(Gen& g, int modules) {
  DiffStats st;
  TraceBuilder t;
  int& traces = st.traces;
  int& mismatches = st.mismatches;
  int& parametric_entries = st.parametric_entries;
  int* by_status = st.by_status;
  for (int m = 0; m < modules && mismatches < 5; ++m) {
    g.module();
    std::vector<Diagnostic> diags;
    CompileOptions options;
    options.max_automaton_states = 100000;
    auto program_compiled = g.b.build(&diags, options);
    auto program = as_program(program_compiled);
    REQUIRE_MESSAGE(program != nullptr, "module " << m << " did not compile");
    for (const auto& spec : program_compiled->specs) {
      const bool lazy = !spec.binders.empty();  // every parametric rule is lazy
      st.lazy_rules += lazy;
      st.lazy_scoped += lazy && spec.scope != ir::ScopeKind::global;
      const auto& pats = program_compiled->patterns;
      std::function<bool(std::uint32_t)> bind_only = [&](std::uint32_t id) {
        if (id == detail::kNoId) return true;
        const detail::PatternNode& n = pats[id];
        return n.binder || (n.kind == ir::Pattern::Kind::or_ && n.parametric && bind_only(n.a) && bind_only(n.b));
      };
      for (const auto& sts : spec.statements) {
        st.lazy_expect += lazy && (sts.kind == K::expect || sts.kind == K::expect_exactly);
        const bool free_side = !bind_only(sts.a) || !bind_only(sts.b);
        st.lazy_free_adjacent += lazy && free_side &&
                                 (sts.kind == K::immediately_precedes || sts.kind == K::immediately_followed_by);
        st.lazy_free_row += lazy && free_side && sts.kind == K::in_a_row;
        st.lazy_free_nodup += lazy && free_side && sts.kind == K::no_duplicate;
        st.lazy_free_retries += lazy && free_side && sts.kind == K::retries;
      }
    }
    Checker checker(program);
    std::vector<RuleResult> got;
    for (int k = 0; k < 5; ++k) {
      g.trace(t);
      ++traces;
      checker.check(t.t, got);
      auto want = reference::check_entries(g.b.m, t.t);
      // Entries compared in (rule, binding) order: the order of bindings is not specified.
      auto key = [](std::uint32_t rule, const std::string& binding) { return std::make_pair(rule, binding); };
      std::vector<std::tuple<std::uint32_t, std::string, std::string>> gv, wv;
      for (const RuleResult& r : got)
        gv.emplace_back(r.rule, r.binding.empty() ? "" : r.binding[0].second, verdict_text(r.status, r.steps));
      for (const auto& e : want) {
        wv.emplace_back(e.rule, e.binding, verdict_text(e.verdict.status, e.verdict.steps));
        ++by_status[static_cast<int>(e.verdict.status)];
        if (!e.binding.empty()) ++parametric_entries;
      }
      std::sort(gv.begin(), gv.end());
      std::sort(wv.begin(), wv.end());
      (void)key;
      if (gv != wv) {
        ++mismatches;
        std::string gs, ws;
        for (auto& [r, bnd, v] : gv) gs += "  rule " + std::to_string(r) + " [" + bnd + "] " + v + "\n";
        for (auto& [r, bnd, v] : wv) ws += "  rule " + std::to_string(r) + " [" + bnd + "] " + v + "\n";
        MESSAGE("module " << m << " trace " << k << "\n"
                << static_cast<const Program&>(*program).dump_automaton() << describe(t.t)
                << "compiled:\n" << gs << "reference:\n" << ws);
      }
    }
  }
  return st;
}

}  // namespace

TEST_CASE("compiled checker agrees with the reference on random rules and traces") {
  // Defaults are fixed (deterministic CI); the environment can widen a local search.
  const auto [seed, modules] = soak(20261130, 4000, 0);
  Gen g(seed);
  if (const char* e = std::getenv("TRAJCHECK_DIFF_MAXLEN")) g.max_len = std::atoi(e);
  DiffStats st = run_differential(g, modules);
  int traces = st.traces, parametric_entries = st.parametric_entries;
  int* by_status = st.by_status;
  CHECK(st.mismatches == 0);
  CHECK(traces >= 5 * modules);
  CHECK(traces >= (std::getenv("TRAJCHECK_DIFF_MODULES") ? 0 : 10000));
  // The generator must exercise every verdict, or agreement would mean little.
  CHECK(by_status[0] > 1000);
  CHECK(by_status[1] > 1000);
  CHECK(by_status[2] > 1000);
  CHECK(parametric_entries > 500);
  MESSAGE("traces " << traces << ", satisfied " << by_status[0] << ", violated " << by_status[1]
                    << ", vacuous " << by_status[2] << ", violated bindings " << parametric_entries);
}

// §5 lazy path: global parametric rules over longer traces, where most slices miss many
// steps binding nothing and must catch up exactly (adjacency breaks, a free A or B).
TEST_CASE("lazy parametric slices agree with the reference") {
  const auto [seed, modules] = soak(777, 3000, 1);
  Gen g(seed);
  g.global_only = true;
  g.param_percent = 90;
  g.max_len = 24;
  g.extra_expect = 30;
  g.free_alt = 30;
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.lazy_rules > modules / 2);
  CHECK(st.lazy_expect > modules / 4);
  CHECK(st.parametric_entries > 1000);
  CHECK(st.lazy_free_adjacent > modules / 20);
  CHECK(st.lazy_free_row > modules / 50);
  CHECK(st.lazy_free_nodup > modules / 50);
  MESSAGE("free-alternative no duplicate " << st.lazy_free_nodup);
  MESSAGE("lazy rules " << st.lazy_rules << ", lazy expect " << st.lazy_expect << ", free-side adjacency "
                        << st.lazy_free_adjacent << ", free-alternative in a row " << st.lazy_free_row << ", traces "
                        << st.traces << ", violated bindings " << st.parametric_entries);
}

// §5 lazy path under scopes (§4): slices catch up across segments opened and closed by
// steps binding nothing, take over the segments bottom closed, and summarise `only`,
// free sides of precedes / followed by / never followed by / excludes / requires, counts
// with a free alternative, and `expect` beside a binder (state classes).
TEST_CASE("lazy scoped parametric slices agree with the reference") {
  const auto [seed, modules] = soak(9090, 3000, 3);
  Gen g(seed);
  g.scoped_only = true;
  g.param_percent = 90;
  g.max_len = 30;
  g.extra_expect = 30;
  g.free_alt = 30;
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.lazy_scoped > modules / 2);
  CHECK(st.lazy_expect > modules / 4);
  CHECK(st.parametric_entries > 1000);
  CHECK(st.lazy_free_adjacent > modules / 20);
  CHECK(st.lazy_free_row > modules / 50);
  CHECK(st.lazy_free_nodup > modules / 200);
  MESSAGE("free-alternative no duplicate " << st.lazy_free_nodup);
  MESSAGE("lazy scoped rules " << st.lazy_scoped << ", lazy expect " << st.lazy_expect << ", free-side adjacency "
                               << st.lazy_free_adjacent << ", free-alternative in a row " << st.lazy_free_row
                               << ", traces " << st.traces << ", violated bindings " << st.parametric_entries);
}

// Parametric statements of one kind whose binders often have a free alternative (a call binds
// nothing) and often read the call's status (the same call binds or not by its outcome).
Gen free_alternative_gen(std::uint64_t seed, K kind, int max_len) {
  Gen g(seed);
  g.force_kind = static_cast<int>(kind);
  g.param_percent = 90;
  g.max_len = max_len;
  g.free_alt = 60;
  g.status_binder = 50;
  return g;
}

// §5 lazy `no duplicate` with a free alternative: a call of the same tool and arguments may
// bind a value or nothing depending on its outcome (`status` in the binder), so a slice's own
// key is repeated by a step binding nothing (KeyWaiters) and the other way round, in every
// scope (after / between / after … until: repeats searched by segment start).
TEST_CASE("lazy no duplicate with a free alternative agrees with the reference") {
  const auto [seed, modules] = soak(5151, 1500, 4);
  Gen g = free_alternative_gen(seed, K::no_duplicate, 24);
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.lazy_free_nodup > modules / 4);
  CHECK(st.parametric_entries > 500);
  MESSAGE("free-alternative no duplicate " << st.lazy_free_nodup << ", traces " << st.traces
                                           << ", violated bindings " << st.parametric_entries);
}

// §5 lazy `retries` with a free alternative, every scope: a call may bind a value or nothing
// depending on its outcome (`status` in the binder), so a slice's chain on a tool mixes its
// own calls and free ones, failed and successful.
TEST_CASE("lazy retries with a free alternative agree with the reference") {
  const auto [seed, modules] = soak(6262, 1500, 5);
  Gen g = free_alternative_gen(seed, K::retries, 40);
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.lazy_free_retries > modules / 4);
  CHECK(st.parametric_entries > 500);
  MESSAGE("free-alternative retries " << st.lazy_free_retries << ", traces " << st.traces
                                      << ", violated bindings " << st.parametric_entries);
}

// §5 `failed P` binding under every scope: only a failed call binds (a successful one is a
// step binding nothing, in every slice), and a segment in which the slice's value was never
// bound is vacuous, not satisfied.
TEST_CASE("failed binders under scopes agree with the reference") {
  const auto [seed, modules] = soak(7373, 1500, 6);
  Gen g(seed);
  g.scoped_only = true;
  g.param_percent = 90;
  g.failed_binder = 50;
  g.max_len = 16;
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.lazy_scoped > modules / 2);
  CHECK(st.parametric_entries > 500);
  CHECK(st.by_status[2] > 100);
  MESSAGE("lazy scoped rules " << st.lazy_scoped << ", traces " << st.traces << ", vacuous " << st.by_status[2]
                               << ", violated bindings " << st.parametric_entries);
}

// §4a all-of, built by subsets of elements done: large and nested groups against the
// reference's direct matching (which never builds an automaton).
TEST_CASE("large and nested all-of groups agree with the reference") {
  const auto [seed, modules] = soak(4242, 1500, 2);
  Gen g(seed);
  g.big_groups = true;
  g.param_percent = 0;
  g.max_len = 14;
  DiffStats st = run_differential(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.by_status[0] > 100);
  CHECK(st.by_status[1] > 100);
  MESSAGE("traces " << st.traces << ", satisfied " << st.by_status[0] << ", violated " << st.by_status[1]);
}
