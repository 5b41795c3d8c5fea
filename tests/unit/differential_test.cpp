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
#include "reference/generator.hpp"
// The reference checker lives in the test tree and is compiled into this test only.
#include "reference/reference_checker.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;

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

DiffStats run_differential(Gen& g, int modules) {
  DiffStats st;
  StepsBuilder t;
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

// Turns: every trace says which adjacent steps share a turn, and the statements that order
// by turn (precedes, followed by, never followed by, immediately …) are forced in turn, with
// free alternatives so the slices' catch-up over steps binding nothing meets shared turns.
TEST_CASE("ordering by turn agrees with the reference, lazy slices included") {
  const auto [seed, modules] = soak(8484, 600, 8);
  int total = 0;
  for (K kind : {K::precedes, K::followed_by, K::never_followed_by, K::immediately_precedes,
                 K::immediately_followed_by}) {
    Gen g = free_alternative_gen(seed + static_cast<std::uint64_t>(kind), kind, 20);
    g.shared_turns = 100;
    g.status_binder = 0;
    DiffStats st = run_differential(g, modules);
    CHECK_MESSAGE(st.mismatches == 0, "kind " << static_cast<int>(kind));
    CHECK(st.parametric_entries > 100);
    total += st.traces;
  }
  MESSAGE("traces with turns " << total);
}

// Mentions (`contains $o`): a statement's B looks for the values its A bound, inside a text or
// an array, with free alternatives and shared turns, under every scope.
TEST_CASE("mentions of bound values agree with the reference") {
  const auto [seed, modules] = soak(5151, 500, 8);
  int total = 0, entries = 0;
  for (K kind : {K::precedes, K::followed_by, K::never_followed_by, K::immediately_followed_by, K::requires_,
                 K::excludes}) {
    Gen g(seed + static_cast<std::uint64_t>(kind));
    g.force_kind = static_cast<int>(kind);
    g.param_percent = 100;
    g.mention = 70;
    g.max_len = 14;
    DiffStats st = run_differential(g, modules);
    CHECK_MESSAGE(st.mismatches == 0, "kind " << static_cast<int>(kind));
    total += st.traces;
    entries += st.parametric_entries;
  }
  CHECK(entries > 100);
  MESSAGE("traces " << total << ", violated bindings " << entries);
}
