#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "reference/builders.hpp"
// The reference checker lives in the test tree and is compiled into the tests that use it.
#include "reference/reference_checker.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;
using V = VerdictStatus;
using W = std::vector<std::uint32_t>;

namespace {
ir::Id by_order(IrBuilder& b, ir::Id base) { return b.where(base, b.cmp_var("arguments.order_id", "o")); }
// `tool where status OP "error" and arguments.order_id == $o`: only failed calls (eq) or only
// successful ones (ne) bind, so the same call binds a value or nothing by its outcome.
ir::Id by_order_if(IrBuilder& b, const char* tool, ir::CompareOp op) {
  return b.where(b.tool(tool), b.cand(b.cmp("status", op, lit_str("error")), b.cmp_var("arguments.order_id", "o")));
}
std::string arg(const char* o) { return std::string(R"({"order_id":")") + o + "\"}"; }
// TRAJCHECK_SOAK=short (set for the sanitizer build, where these soaks are several times
// slower): half the steps and one seed. The Release build runs them in full.
bool short_soak() {
  const char* e = std::getenv("TRAJCHECK_SOAK");
  return e && std::strcmp(e, "short") == 0;
}
int soak_steps(int full) { return short_soak() ? full / 2 : full; }
}  // namespace

TEST_CASE("batched approvals: immediately precedes holds per order") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::immediately_precedes, by_order(b, b.tool("approval_request")),
                       by_order(b, b.tool("approval"))));
  StepsBuilder t;
  t.call("approval_request", arg("a"));
  t.call("approval_request", arg("b"));
  t.call("approval", arg("a"));
  t.call("approval", arg("b"));
  auto p = b.compile();
  auto r = run(p, t.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[0].binding.empty());
  CHECK(p->dump_automaton().find("parametric $o: one slice state per value bound by p1 p3") != std::string::npos);
}

TEST_CASE("runs per value: two lookups of a around one of b form a run of 2") {
  IrBuilder b;
  auto s = IrBuilder::st(K::in_a_row, by_order(b, b.tool("order_get")));
  s.hi = 1;
  b.rule(s);
  StepsBuilder t;
  t.call("order_get", arg("a"));
  t.call("order_get", arg("b"));
  t.call("order_get", arg("a"));
  auto r = run(b.compile(), t.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{2});
  REQUIRE(r[0].binding.size() == 1);
  CHECK(r[0].binding[0] == std::make_pair(std::string("o"), std::string("\"a\"")));
}

TEST_CASE("one entry per violated binding; non-binding steps stay in every slice") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::precedes, by_order(b, b.tool("approve")), by_order(b, b.tool("refund"))));
  StepsBuilder t;
  t.call("approve", arg("a"));
  t.call("refund", arg("b"));
  t.call("refund", arg("a"));
  t.call("refund", R"({"order_id":7})");
  t.call("refund", R"({"order_id":7.0})");
  auto r = run(b.compile(), t.t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{1});
  CHECK(r[0].binding[0].second == "\"b\"");
  CHECK(r[1].steps == W{3, 4});  // 7 and 7.0 are one value
  CHECK(r[1].binding[0].second == "7");
}

TEST_CASE("counting per value; a rule nothing binds is vacuous") {
  IrBuilder b;
  auto s = IrBuilder::st(K::count, by_order(b, b.tool("order_get")));
  s.hi = 1;
  b.rule(s);
  StepsBuilder t;
  t.call("order_get", arg("a"));
  t.call("order_get", arg("b"));
  t.call("order_get");  // no order_id: binds nothing
  auto p = b.compile();
  auto r = run(p, t.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::satisfied);
  t.call("order_get", arg("b"));
  r = run(p, t.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{3});
  StepsBuilder none;
  none.call("x");
  r = run(p, none.t);
  REQUIRE(r.size() == 1);
  CHECK(r[0].status == V::vacuous);
}

TEST_CASE("slices are reused between traces without leaking state") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, by_order(b, b.failed(b.tool("refund")))));
  Checker c(b.compile());
  std::vector<RuleResult> out;
  StepsBuilder t1;
  t1.call("refund", arg("a"), true);
  c.check(t1.t, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == V::violated);
  StepsBuilder t2;
  t2.call("refund", arg("a"));  // not failed: binds nothing
  c.check(t2.t, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == V::vacuous);
  StepsBuilder t3;
  t3.call("x");
  t3.call("refund", arg("b"), true);
  c.check(t3.t, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == V::violated);
  CHECK(out[0].steps == W{1});
  CHECK(out[0].binding[0].second == "\"b\"");
}

TEST_CASE("unsupported variable uses are E102 errors") {
  IrBuilder b;
  // `not (x where id == $o)`: negating a binder
  b.rule(IrBuilder::st(K::forbid, b.not_(by_order(b, b.tool("x")))));
  // a variable under `or` in a condition
  b.rule(IrBuilder::st(K::forbid, b.where(b.tool("y"), b.cor(b.cmp_var("arguments.a", "o"), b.exists("arguments.b")))));
  // two variables in one rule
  b.rule(IrBuilder::st(K::precedes, by_order(b, b.tool("p")), b.where(b.tool("q"), b.cmp_var("arguments.x", "p"))));
  std::vector<Diagnostic> d;
  CHECK(b.compile(&d) == nullptr);
  REQUIRE(d.size() >= 3);
  for (const Diagnostic& x : d) CHECK(x.code == "E102");
}

// Steps binding nothing are applied to the slices lazily (NbEffect); with many live values
// and such steps between every binding step, verdicts must still be the reference's.
TEST_CASE("many bindings with steps binding nothing in between agree with the reference") {
  IrBuilder b;
  ir::Id get = by_order(b, b.tool("get")), refund = by_order(b, b.tool("refund"));
  b.rule(IrBuilder::st(K::immediately_precedes, get, refund));          // adjacency: last_step
  auto run3 = IrBuilder::st(K::in_a_row, get);
  run3.hi = 2;
  b.rule(run3);                                                          // last_tool
  b.rule(IrBuilder::st(K::precedes, b.tool("login"), refund));          // free A: last_a
  b.rule(IrBuilder::st(K::followed_by, refund, b.tool("notify")));      // free B: last_b
  b.rule(IrBuilder::st(K::requires_, refund, b.tool("notify")));        // free B: last_b
  b.rule(IrBuilder::st(K::ends_with, refund));                          // last_step
  auto ign = IrBuilder::st(K::immediately_followed_by, get, refund);
  ign.ignoring = b.tool("think");
  b.rule(ign);                                                           // ignoring applies
  auto at_most = IrBuilder::st(K::count, refund);
  at_most.hi = 1;
  b.rule(at_most);                                                       // none
  auto p_compiled = b.build();
  auto p = as_program(p_compiled);
  REQUIRE(p != nullptr);
  std::size_t parametric = 0;  // every parametric rule takes the O(1) path for steps binding nothing
  for (const auto& spec : p_compiled->specs) parametric += !spec.binders.empty();
  CHECK(parametric == 8);
  StepsBuilder t;
  std::uint64_t x = 12345;
  static const char* kFree[] = {"login", "notify", "think", "search"};
  const int steps = soak_steps(6000);
  for (int i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string o = "o" + std::to_string((x >> 33) % 1500);
    switch ((x >> 20) % 6) {
      case 0: case 1: t.call("get", arg(o.c_str())); break;
      case 2: t.call("refund", arg(o.c_str())); break;
      case 3: t.message(StepType::user_message, "hi"); break;
      default: t.call(kFree[(x >> 40) % 4]); break;
    }
  }
  auto got = run(p, t.t);
  auto want = reference::check_entries(b.m, t.t);
  std::vector<std::tuple<std::uint32_t, std::string, V, W>> gv, wv;
  for (const RuleResult& r : got) gv.emplace_back(r.rule, r.binding.empty() ? "" : r.binding[0].second, r.status, r.steps);
  for (const auto& e : want) wv.emplace_back(e.rule, e.binding, e.verdict.status, e.verdict.steps);
  std::sort(gv.begin(), gv.end());
  std::sort(wv.begin(), wv.end());
  CHECK(gv.size() > std::size_t(steps / 4));  // many violated bindings: the comparison is not trivial
  CHECK(gv == wv);
}

// The same under scopes opened and closed by steps binding nothing, with `only` and free
// sides that add witnesses: slices catch up across segments they missed (taking over the
// segments bottom closed) and must report the reference's witnesses exactly.
TEST_CASE("scoped, only and free-side parametric rules stay lazy and agree with the reference") {
  IrBuilder b;
  using S = ir::ScopeKind;
  ir::Id get = by_order(b, b.tool("get")), refund = by_order(b, b.tool("refund"));
  b.rule(IrBuilder::st(K::precedes, get, refund), S::between, b.tool("login"), b.tool("logout"));
  auto once = IrBuilder::st(K::count, refund);
  once.hi = 1;
  b.rule(once, S::after_until, b.tool("login"), b.tool("logout"));
  b.rule(IrBuilder::st(K::followed_by, refund, b.tool("notify")), S::between, b.tool("login"), b.tool("logout"));
  b.rule(IrBuilder::st(K::followed_by, b.tool("search"), refund), S::between, b.tool("login"), b.tool("logout"));
  b.rule(IrBuilder::st(K::precedes, get, b.tool("search")), S::after_until, b.tool("notify"), b.tool("logout"));
  b.rule(IrBuilder::st(K::only, b.or_(b.or_(get, refund), b.or_(b.tool("login"), b.tool("logout")))), S::between,
         b.tool("notify"), b.tool("login"));
  b.rule(IrBuilder::st(K::never_followed_by, b.tool("notify"), refund), S::after, b.tool("login"));
  b.rule(IrBuilder::st(K::excludes, get, b.tool("think")), S::before, ir::kNone, b.tool("stop"));
  auto in_row = IrBuilder::st(K::in_a_row, get);
  in_row.hi = 1;
  in_row.ignoring = b.tool("think");
  b.rule(in_row, S::between, b.tool("login"), b.tool("logout"));
  b.rule(IrBuilder::st(K::ends_with, b.or_(refund, b.tool("logout"))), S::after_until, b.tool("login"),
         b.tool("logout"));
  std::vector<Diagnostic> diags;
  auto p_compiled = b.build(&diags);
  auto p = as_program(p_compiled);
  for (const Diagnostic& d : diags) MESSAGE(d.code << " " << d.message);
  REQUIRE(p != nullptr);
  std::size_t parametric = 0;  // every parametric rule takes the O(1) path for steps binding nothing
  for (const auto& spec : p_compiled->specs) parametric += !spec.binders.empty();
  CHECK(parametric == 10);
  StepsBuilder t;
  std::uint64_t x = 777;
  static const char* kFree[] = {"login", "logout", "notify", "think", "search", "stop"};
  const int steps = soak_steps(5000);
  for (int i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string o = "o" + std::to_string((x >> 33) % 400);
    switch ((x >> 20) % 7) {
      case 0: case 1: t.call("get", arg(o.c_str())); break;
      case 2: t.call("refund", arg(o.c_str())); break;
      case 3: t.message(StepType::user_message, "hi"); break;
      default: {
        // stop (closes `before` for good) only late in the trace
        std::uint64_t k = (x >> 40) % (i < steps - 500 ? 5 : 6);
        t.call(kFree[k]);
        break;
      }
    }
  }
  auto got = run(p, t.t);
  auto want = reference::check_entries(b.m, t.t);
  std::vector<std::tuple<std::uint32_t, std::string, V, W>> gv, wv;
  for (const RuleResult& r : got) gv.emplace_back(r.rule, r.binding.empty() ? "" : r.binding[0].second, r.status, r.steps);
  for (const auto& e : want) wv.emplace_back(e.rule, e.binding, e.verdict.status, e.verdict.steps);
  std::sort(gv.begin(), gv.end());
  std::sort(wv.begin(), wv.end());
  CHECK(gv.size() > std::size_t(steps * 3 / 10));
  std::size_t violated_rules = 0;
  for (std::uint32_t r = 0; r < 10; ++r)
    violated_rules += std::any_of(gv.begin(), gv.end(), [&](const auto& e) {
      return std::get<0>(e) == r && std::get<2>(e) == V::violated;
    });
  CHECK(violated_rules >= 8);  // most rules find something: the witnesses are compared
  CHECK(gv == wv);
}

// `no duplicate` with a free alternative is lazy in every scope: a failed get binds its order
// and a successful one of the same order binds nothing (the same key), so a slice's own key
// is repeated by a free call (key waiters) and the other way round.
TEST_CASE("free-alternative no duplicate stays lazy and agrees with the reference") {
  IrBuilder b;
  using S = ir::ScopeKind;
  ir::Id refund = by_order(b, b.tool("refund"));
  ir::Id get_failed = by_order_if(b, "get", ir::CompareOp::eq);
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(get_failed, b.tool("get"))));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(refund, b.tool("search"))), S::before, ir::kNone, b.tool("stop"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(refund, b.tool("search"))), S::between, b.tool("login"),
         b.tool("logout"));  // segments open per slice: repeats searched by segment start
  auto p_compiled = b.build();
  auto p = as_program(p_compiled);
  REQUIRE(p != nullptr);
  const auto& specs = p_compiled->specs;
  for (std::size_t r = 0; r < 3; ++r) CHECK(specs[r].statements[0].nb == detail::NbEffect::lazy);
  StepsBuilder t;
  std::uint64_t x = 4242;
  static const char* kFree[] = {"login", "logout", "search", "stop"};
  for (int i = 0; i < 700; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string o = "o" + std::to_string((x >> 33) % 80);
    std::string q = "q" + std::to_string((x >> 45) % 150);
    switch ((x >> 20) % 6) {
      case 0: case 1: t.call("get", arg(o.c_str()), (x >> 50) % 3 == 0); break;
      case 2: t.call("refund", arg(o.c_str())); break;
      case 3: t.call("search", arg(q.c_str())); break;
      default: t.call(kFree[(x >> 40) % (i < 600 ? 3 : 4)]); break;  // stop only late
    }
  }
  auto got = run(p, t.t);
  auto want = reference::check_entries(b.m, t.t);
  std::vector<std::tuple<std::uint32_t, std::string, V, W>> gv, wv;
  for (const RuleResult& r : got) gv.emplace_back(r.rule, r.binding.empty() ? "" : r.binding[0].second, r.status, r.steps);
  for (const auto& e : want) wv.emplace_back(e.rule, e.binding, e.verdict.status, e.verdict.steps);
  std::sort(gv.begin(), gv.end());
  std::sort(wv.begin(), wv.end());
  CHECK(gv.size() > 100);
  CHECK(gv == wv);
}

namespace {
// The compiled checker's entries against the reference's, in (rule, binding) order.
void check_against_reference(IrBuilder& b, const std::shared_ptr<const Program>& p, const Trajectory& t,
                             std::size_t min_entries, std::size_t rules, std::size_t min_violated_rules) {
  auto got = run(p, t);
  auto want = reference::check_entries(b.m, t);
  std::vector<std::tuple<std::uint32_t, std::string, V, W>> gv, wv;
  for (const RuleResult& r : got) gv.emplace_back(r.rule, r.binding.empty() ? "" : r.binding[0].second, r.status, r.steps);
  for (const auto& e : want) wv.emplace_back(e.rule, e.binding, e.verdict.status, e.verdict.steps);
  std::sort(gv.begin(), gv.end());
  std::sort(wv.begin(), wv.end());
  CHECK(gv.size() > min_entries);
  std::size_t violated_rules = 0;
  for (std::uint32_t r = 0; r < rules; ++r)
    violated_rules += std::any_of(gv.begin(), gv.end(), [&](const auto& e) {
      return std::get<0>(e) == r && std::get<2>(e) == V::violated;
    });
  CHECK(violated_rules >= min_violated_rules);  // the witnesses are compared, not just "satisfied"
  for (std::uint32_t r = 0; r < rules; ++r)
    if (!std::any_of(gv.begin(), gv.end(), [&](const auto& e) { return std::get<0>(e) == r && std::get<2>(e) == V::violated; }))
      MESSAGE("rule " << r << " never violated");
  CHECK(gv == wv);
}

// Gets and refunds of 80 orders (a third failing), searches over 150 queries (a third
// failing), login / logout / stop, messages: values repeat and interleave, free calls fail
// and succeed.
void mixed_trace(StepsBuilder& t, std::uint64_t seed, int steps, int stop_after) {
  std::uint64_t x = seed;
  static const char* kFree[] = {"login", "logout", "search", "stop"};
  for (int i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string o = "o" + std::to_string((x >> 33) % 80);
    std::string q = "q" + std::to_string((x >> 45) % 150);
    const bool fails = (x >> 50) % 3 == 0;
    switch ((x >> 20) % 7) {
      case 0: case 1: t.call("get", arg(o.c_str()), fails); break;
      case 2: t.call("refund", arg(o.c_str()), fails); break;
      case 3: case 4: t.call("search", arg(q.c_str()), fails); break;
      case 5: t.message(StepType::user_message, "hi"); break;
      default: t.call(kFree[(x >> 40) % (i < stop_after ? 3 : 4)], "", fails); break;  // stop only late
    }
  }
}

// Every one of `rules` rules violated, and every entry equal to the reference's, on a mixed
// trace of `steps` steps (`stop` in its last 100) per seed.
void check_on_mixed_traces(IrBuilder& b, const std::shared_ptr<const Program>& p,
                           std::initializer_list<std::uint64_t> seeds, int steps, std::size_t rules) {
  for (std::uint64_t seed : seeds) {
    if (short_soak() && seed != *seeds.begin()) break;
    StepsBuilder t;
    mixed_trace(t, seed, steps, steps - 100);
    check_against_reference(b, p, t.t, 100, rules, rules);
  }
}
}  // namespace

// `no duplicate` with a free alternative under after / between / after … until, including
// scopes opened by a step that binds a value (`after get`, `between get and logout`): the
// slice's segment starts at its own step, so which earlier free calls count differs per
// slice (the log's repeats filtered by segment start, and waiters per segment).
TEST_CASE("scoped free-alternative no duplicate stays lazy and agrees with the reference") {
  IrBuilder b;
  using S = ir::ScopeKind;
  ir::Id get = by_order(b, b.tool("get")), refund = by_order(b, b.tool("refund"));
  ir::Id get_failed = by_order_if(b, "get", ir::CompareOp::eq);
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(refund, b.tool("search"))), S::after, b.tool("login"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(get, b.tool("search"))), S::after, b.tool("get"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(get_failed, b.tool("get"))), S::between, b.tool("login"),
         b.tool("logout"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(get, b.tool("search"))), S::between, b.tool("get"), b.tool("logout"));
  auto ign = IrBuilder::st(K::no_duplicate, b.or_(b.or_(refund, b.tool("search")), b.tool("get")));
  ign.ignoring = b.tool("stop");
  b.rule(ign, S::after_until, b.tool("search"), b.tool("logout"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(get_failed, b.tool("get"))), S::after_until, b.tool("refund"),
         b.tool("login"));
  auto p_compiled = b.build();
  auto p = as_program(p_compiled);
  REQUIRE(p != nullptr);
  for (const auto& spec : p_compiled->specs) CHECK(!spec.binders.empty());
  check_on_mixed_traces(b, p, {4243, 99, 123456}, 900, 6);
}

// `retries` with a free alternative (docs/language.md §3-§4: chains per tool, a successful retry
// still counts, other tools neither break nor reset a chain) in every scope: a free failed
// call extends its tool's chain in every slice, merged with the slice's own calls; the same
// get binds or not by its outcome, so own and free calls share a tool.
TEST_CASE("free-alternative retries stay lazy and agree with the reference") {
  IrBuilder b;
  using S = ir::ScopeKind;
  ir::Id get = by_order(b, b.tool("get")), refund = by_order(b, b.tool("refund"));
  ir::Id get_failed = by_order_if(b, "get", ir::CompareOp::eq);
  auto rt = [&](ir::Id pat, std::uint64_t hi) {
    auto s = IrBuilder::st(K::retries, pat);
    s.hi = hi;
    return s;
  };
  b.rule(rt(b.or_(get, b.tool("search")), 1));
  b.rule(rt(b.or_(get_failed, b.tool("get")), 0));
  b.rule(rt(b.or_(b.or_(refund, b.tool("search")), b.tool("login")), 2), S::before, ir::kNone, b.tool("stop"));
  b.rule(rt(b.or_(get, b.tool("search")), 1), S::after, b.tool("login"));
  b.rule(rt(b.or_(get_failed, b.tool("get")), 0), S::after, b.tool("get"));  // opens at a binding step
  b.rule(rt(b.or_(refund, b.tool("search")), 0), S::between, b.tool("login"), b.tool("logout"));
  b.rule(rt(b.or_(get_failed, b.tool("get")), 0), S::between, b.tool("refund"), b.tool("logout"));
  auto ign = rt(b.or_(b.or_(get, b.tool("search")), b.tool("refund")), 1);
  ign.ignoring = b.where(b.tool("search"), b.cmp("arguments.order_id", ir::CompareOp::eq, lit_str("q7")));
  b.rule(ign, S::after_until, b.tool("login"), b.tool("logout"));
  ir::Id refund_failed = by_order_if(b, "refund", ir::CompareOp::eq);
  b.rule(rt(b.or_(refund_failed, b.tool("refund")), 0), S::after_until, b.tool("get"), b.tool("stop"));
  // A slice's own successes and free failures of one tool: its chain restarts at the first free one.
  ir::Id refund_ok = by_order_if(b, "refund", ir::CompareOp::ne);
  b.rule(rt(b.or_(refund_ok, b.tool("refund")), 0));
  b.rule(rt(b.or_(refund_ok, b.tool("refund")), 1), S::between, b.tool("login"), b.tool("logout"));
  auto p_compiled = b.build();
  auto p = as_program(p_compiled);
  REQUIRE(p != nullptr);
  for (const auto& spec : p_compiled->specs) CHECK(!spec.binders.empty());
  check_on_mixed_traces(b, p, {777, 31337, 5}, 1200, 11);
}

TEST_CASE("the bindings limit is reported on every entry of the rule, never silent") {
  IrBuilder b;
  auto s = IrBuilder::st(K::count, by_order(b, b.tool("refund")));
  s.hi = 1;
  b.rule(s);
  b.rule(IrBuilder::st(K::forbid, b.tool("nothing")));
  CompileOptions o;
  o.max_bindings = 3;
  auto p = b.compile(nullptr, o);
  REQUIRE(p != nullptr);
  StepsBuilder t;
  for (const char* v : {"a", "b", "a", "c", "d", "e", "d"}) t.call("refund", arg(v));
  auto r = run(p, t.t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].status == V::violated);  // a twice; d and e were not given a slice
  CHECK(r[0].steps == W{2});
  CHECK(r[0].bindings_dropped == 3);  // d, e, d: each binding of a value without a slice
  CHECK(r[1].bindings_dropped == 0);
  StepsBuilder few;
  few.call("refund", arg("a"));
  r = run(p, few.t);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[0].bindings_dropped == 0);  // per trace, reset
}
