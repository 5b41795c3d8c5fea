#include <doctest/doctest.h>

#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;
using V = VerdictStatus;
using W = std::vector<std::uint32_t>;

namespace {
ir::Id by_order(IrBuilder& b, ir::Id base) { return b.where(base, b.cmp_var("arguments.order_id", "o")); }
std::string arg(const char* o) { return std::string(R"({"order_id":")") + o + "\"}"; }
}  // namespace

TEST_CASE("batched approvals: immediately precedes holds per order") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::immediately_precedes, by_order(b, b.tool("approval_request")),
                       by_order(b, b.tool("approval"))));
  TraceBuilder t;
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
  TraceBuilder t;
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
  TraceBuilder t;
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
  TraceBuilder t;
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
  TraceBuilder none;
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
  TraceBuilder t1;
  t1.call("refund", arg("a"), true);
  c.check(t1.t, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == V::violated);
  TraceBuilder t2;
  t2.call("refund", arg("a"));  // not failed: binds nothing
  c.check(t2.t, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == V::vacuous);
  TraceBuilder t3;
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
