// Steady state of the checker: once a Checker has seen a trace, checking traces of any
// length allocates nothing per step (allocation count independent of length).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "compiler/program.hpp"
#include "trajcheck/monitor.hpp"
#include "reference/builders.hpp"

// Counting allocations replaces the global operator new/delete, which AddressSanitizer also
// replaces (its mismatch checks then fire on library-internal allocations): under ASan this
// test is left out; the Release run of the same suite keeps it.
#if defined(__SANITIZE_ADDRESS__)  // GCC
#define TRAJCHECK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define TRAJCHECK_TEST_ASAN 1
#endif
#endif
#if !defined(TRAJCHECK_TEST_ASAN)

namespace {
std::atomic<long> g_allocs{0};
}

void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

// The allocations `f()` makes.
template <class F>
long allocations_of(F&& f) {
  const long before = g_allocs.load();
  f();
  return g_allocs.load() - before;
}

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;

TEST_CASE("no per-step allocation once the checker is warm") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::precedes, b.tool("login"), b.tool("write")));
  b.rule(IrBuilder::st(K::forbid, b.where(b.tool("write"), b.matches("arguments.q", "^zz"))));
  auto c = IrBuilder::st(K::count, b.where(b.any(), b.cmp("arguments.n", ir::CompareOp::ge, lit_num(0))));
  c.hi = ir::kUnbounded - 1;
  b.rule(c);
  auto r = IrBuilder::st(K::in_a_row, b.tool("write"));
  r.hi = 1000000;
  b.rule(r);
  auto rt = IrBuilder::st(K::retries, b.any());
  rt.hi = 1000000;
  b.rule(rt);
  b.rule(IrBuilder::st(K::forbid, b.tool("nope")), ir::ScopeKind::between, b.tool("login"), b.tool("commit"));
  auto e = IrBuilder::st(K::expect, ir::kNone);
  e.path = b.node(ir::PathExpr::Kind::seq, {b.atom(b.tool("login")), b.node(ir::PathExpr::Kind::star, {b.atom(b.any())})});
  b.rule(e);
  // Parametric rules (§5) whose steps binding nothing are logged and caught up lazily, under
  // scopes: the logs and the segment log of bottom reuse their capacity too.
  ir::Id write_o = b.where(b.tool("write"), b.cmp_var("arguments.order_id", "o"));
  b.rule(IrBuilder::st(K::only, b.or_(write_o, b.or_(b.tool("login"), b.tool("commit")))), ir::ScopeKind::after,
         b.tool("login"));
  b.rule(IrBuilder::st(K::forbid, write_o), ir::ScopeKind::between, b.type(StepType::assistant_message),
         b.tool("commit"));
  b.rule(IrBuilder::st(K::precedes, b.type(StepType::assistant_message), write_o), ir::ScopeKind::after_until,
         b.tool("commit"), b.tool("login"));
  // An `expect` beside a binding statement: its slices' automaton states are shared classes.
  auto bound_count = IrBuilder::st(K::count, write_o);
  bound_count.hi = ir::kUnbounded - 1;
  ir::Rule& flow = b.rule(bound_count);
  auto fe = IrBuilder::st(K::expect, ir::kNone);
  fe.path = b.node(ir::PathExpr::Kind::seq,
                   {b.atom(b.tool("login")), b.node(ir::PathExpr::Kind::star, {b.atom(b.tool("commit"))})});
  flow.statements.push_back(fe);
  // Adjacency with a free side and `in a row` with a free alternative: lazy too (prefix data
  // over the log of steps binding nothing, which reuses its capacity).
  b.rule(IrBuilder::st(K::immediately_precedes, b.or_(b.tool("login"), b.tool("commit")), write_o));
  b.rule(IrBuilder::st(K::immediately_followed_by, write_o, b.type(StepType::assistant_message)),
         ir::ScopeKind::after, b.tool("login"));
  auto row = IrBuilder::st(K::in_a_row, b.or_(write_o, b.tool("commit")));
  row.hi = 1000000;
  b.rule(row);
  // `no duplicate` with a free alternative: a failed write binds its order id, a successful
  // one (same key) binds nothing, so slices' own keys wait for free steps (KeyWaiters) and
  // free repeats are logged once: pooled storage too.
  ir::Id write_failed_o = b.where(b.tool("write"), b.cand(b.cmp("status", ir::CompareOp::eq, lit_str("error")),
                                                          b.cmp_var("arguments.order_id", "o")));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(write_failed_o, b.tool("write"))));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(write_o, b.tool("commit"))), ir::ScopeKind::before, ir::kNone, b.tool("nope"));
  // `retries` with a free alternative (per-tool logs of the free calls and successes) and
  // `no duplicate` with one where segments open per slice (`after write until …` opens at a
  // binding step; the log's last step per key and its range maxima reuse their storage).
  auto retry = IrBuilder::st(K::retries, b.or_(write_failed_o, b.tool("write")));
  retry.hi = 0;
  b.rule(retry, ir::ScopeKind::after, b.tool("login"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(write_failed_o, b.tool("write"))), ir::ScopeKind::after_until,
         b.tool("write"), b.tool("nope"));
  b.rule(IrBuilder::st(K::no_duplicate, b.or_(write_o, b.tool("commit"))), ir::ScopeKind::after, b.tool("login"));
  auto make = [](StepsBuilder& t, int n) {
    t.t.clear();
    t.context(R"({"user":"u"})");
    t.call("login");
    for (int i = 0; i < n; ++i) {
      // Five order ids, each bound in both traces: the values interned are the same.
      static const char* kArgs[] = {R"({"q":"abc","n":3,"order_id":"o0"})", R"({"q":"abc","n":3,"order_id":"o1"})",
                                    R"({"q":"abc","n":3,"order_id":"o2"})", R"({"q":"abc","n":3,"order_id":"o3"})",
                                    R"({"q":"abc","n":3,"order_id":"o4"})"};
      t.call("write", kArgs[i % 5], i % 3 == 0);
      t.message(StepType::assistant_message, "ok", R"({"latency_ms":5})");
      t.call("commit");
    }
  };
  std::vector<Diagnostic> diags;
  auto program_compiled = b.build(&diags);
  auto program = as_program(program_compiled);
  for (const Diagnostic& d : diags) MESSAGE(d.code << ": " << d.message);
  REQUIRE(program != nullptr);
  const auto& specs = program_compiled->specs;
  REQUIRE(specs.size() == 19);
  for (std::size_t r = 7; r < 19; ++r) CHECK(!specs[r].binders.empty());  // the parametric rules
  Checker checker(program);
  std::vector<RuleResult> out;
  StepsBuilder small, large;
  make(small, 15);  // every order id bound by a failed write too
  make(large, 5000);
  checker.check(large.t, out);  // warm up: buffers reach their largest size
  const long small_allocs = allocations_of([&] { checker.check(small.t, out); });
  const long large_allocs = allocations_of([&] { checker.check(large.t, out); });
  CHECK(out[0].status == VerdictStatus::satisfied);
  CHECK(out[6].status == VerdictStatus::satisfied);
  REQUIRE(out.size() >= 16);
  CHECK(out[11].status == VerdictStatus::satisfied);
  CHECK(out[12].status == VerdictStatus::satisfied);
  CHECK(out[13].status == VerdictStatus::satisfied);
  CHECK(out[10].status == VerdictStatus::satisfied);
  CHECK(out[7].status == VerdictStatus::satisfied);
  // Every write is outside the segments (assistant message .. commit): no value is bound in
  // one, so the scoped parametric rule is vacuous (§5).
  CHECK(out[8].status == VerdictStatus::vacuous);
  CHECK(out[9].status == VerdictStatus::violated);  // the first write after the first commit
  CHECK(out[9].steps == std::vector<std::uint32_t>{4});
  // The free-alternative `no duplicate` rules: a successful write repeats the failed one of
  // its order id (same key) later in that slice; `commit` repeats in every slice.
  // The retries rule: each order's failed write is retried by the next write (a free
  // success); the scoped `no duplicate` rules: the same repeats, segment by segment.
  int violated[5] = {0, 0, 0, 0, 0};
  for (const RuleResult& res : out)
    if (res.rule >= 14 && res.status == VerdictStatus::violated) ++violated[res.rule - 14];
  for (int k = 0; k < 5; ++k) CHECK_MESSAGE(violated[k] == 5, "rule " << 14 + k);
  CHECK(large_allocs == small_allocs);
  CHECK(large_allocs < 100);  // the violated bindings' slices only (25)
}

// The result entries of one trace are reused for the next, witness lists and all: a checker
// that keeps checking into the same vector allocates nothing for them once warm, violations
// included.
TEST_CASE("no per-trace allocation for the results once warm, violations included") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.tool("write")));
  b.rule(IrBuilder::st(K::precedes, b.tool("login"), b.tool("write")));
  b.rule(IrBuilder::st(K::require, b.tool("nope")));
  std::vector<Diagnostic> diags;
  auto program = as_program(b.build(&diags));
  REQUIRE(program != nullptr);
  Checker checker(program);
  std::vector<RuleResult> out;
  StepsBuilder t;
  for (int i = 0; i < 50; ++i) t.call("write");
  checker.check(t.t, out);  // warm up
  const long allocs = allocations_of([&] { checker.check(t.t, out); });
  REQUIRE(out.size() == 3);
  CHECK(out[0].status == VerdictStatus::violated);
  CHECK(out[0].steps.size() == 50);
  CHECK(out[1].status == VerdictStatus::violated);
  CHECK(out[2].status == VerdictStatus::violated);
  CHECK(allocs == 0);
}

// Guard mode: once a Monitor has run a trace as long as the next one, check_call + observe
// allocate nothing per step (the steps' texts go to the trace's arena, whose capacity is
// kept across reset()).
TEST_CASE("no per-step allocation in the monitor once warm") {
  CompileResult r = compile(Source("guard.rules", R"(rule approve: approval precedes refund_order
rule no_delete: forbid delete_*
rule few_lookups: order_get at most 1000000
rule per_order: order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o
rule per_order_limit: refund_order where arguments.order_id == $o at most 1000000
rule big: forbid refund_order where arguments.amount > 1000
rule retry: retries of order_get at most 1000000
rule row: order_get at most 1000000 in a row
rule after_login: after login: forbid drop_table
rule notify: refund_order followed by notify
)"));
  REQUIRE(r.ok());
  Monitor mon(r.program, R"({"user":"u1"})");
  std::vector<Violation> v;
  static const char* kArgs[] = {R"({"order_id":"o0","amount":5})", R"({"order_id":"o1","amount":5})",
                                R"({"order_id":"o2","amount":5})", R"({"order_id":"o3","amount":5})"};
  auto run = [&](int n) {
    mon.reset(R"({"user":"u1"})");
    mon.observe(MonitorStep::call("login", "{}", "{}"), v);
    MonitorStep approval;
    approval.type = StepType::approval;
    mon.observe(approval, v);
    for (int i = 0; i < n; ++i) {
      const char* args = kArgs[i % 4];
      mon.check_call("order_get", args, v);
      mon.observe(MonitorStep::call("order_get", args, R"({"status":"ok"})", i % 5 == 0), v);
      mon.check_call("refund_order", args, v);
      mon.observe(MonitorStep::call("refund_order", args, R"({"status":"ok"})"), v);
      mon.observe(MonitorStep::call("notify", "{}", "{}"), v);
    }
  };
  run(4000);  // warm: every buffer at the size of the longest trace
  const long small_allocs = allocations_of([&] { run(40); });
  const long large_allocs = allocations_of([&] { run(4000); });
  CHECK(large_allocs == small_allocs);
  CHECK(large_allocs < 50);
  std::vector<RuleResult> results;
  mon.finish(results);
  for (const RuleResult& res : results) CHECK(res.status != VerdictStatus::violated);  // a quiet trace
}

// The same with violations on most steps, reported by check_call and again by observe (warn
// mode): the Violations the caller's vector held are reused, binding text and witnesses too.
TEST_CASE("no per-step allocation in the monitor once warm, violations included") {
  CompileResult r = compile(Source("guard.rules", R"(rule no_delete: forbid delete_*
rule one_refund: refund_order where arguments.order_id == $o at most 1
rule approved: approval where order_id == $o precedes refund_order where arguments.order_id == $o
rule few: refund_order at most 2
)"));
  REQUIRE(r.ok());
  Monitor mon(r.program);
  std::vector<Violation> v;
  static const char* kArgs[] = {R"({"order_id":"o0"})", R"({"order_id":"o1"})", R"({"order_id":"o2"})"};
  long reported = 0;
  auto run = [&](int n) {
    mon.reset();
    for (int i = 0; i < n; ++i) {
      const char* args = kArgs[i % 3];
      mon.check_call("refund_order", args, v);
      reported += static_cast<long>(v.size());
      mon.observe(MonitorStep::call("refund_order", args, "{}"), v);
      reported += static_cast<long>(v.size());
      mon.check_call("delete_order", args, v);
      reported += static_cast<long>(v.size());
      mon.observe(MonitorStep::call("delete_order", args, "{}"), v);
    }
  };
  run(3000);
  const long small_allocs = allocations_of([&] { run(30); });
  reported = 0;
  const long large_allocs = allocations_of([&] { run(3000); });
  CHECK(reported > 4 * 3000);  // refund: three rules, each violated per call; delete: one
  CHECK(large_allocs == small_allocs);
  CHECK(large_allocs < 50);
}

#endif  // !TRAJCHECK_TEST_ASAN
