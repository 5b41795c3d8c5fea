#include <doctest/doctest.h>

#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;
using S = ir::ScopeKind;
using V = VerdictStatus;
using W = std::vector<std::uint32_t>;

namespace {
StepsBuilder calls(std::initializer_list<const char*> names) {
  StepsBuilder t;
  for (const char* n : names) t.call(n);
  return t;
}
}  // namespace

TEST_CASE("before R: forbid equals precedes; no R covers the whole trace") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.tool("refund")), S::before, ir::kNone, b.tool("approve"));
  b.rule(IrBuilder::st(K::precedes, b.tool("approve"), b.tool("refund")));
  auto p = b.compile();
  for (auto t : {calls({"refund", "approve", "refund"}), calls({"approve", "refund"}), calls({"refund"}),
                 calls({"x"})}) {
    auto r = run(p, t.t);
    CHECK((r[0].status == V::violated) == (r[1].status == V::violated));
    CHECK(r[0].steps == r[1].steps);
  }
  CHECK(run(p, calls({"x"}).t)[0].status == V::satisfied);  // forbid is never vacuous
}

TEST_CASE("after Q opens at the first Q, includes it; never opened is vacuous") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.tool("x")), S::after, b.tool("x"));
  auto p = b.compile();
  auto r = run(p, calls({"a", "x", "x"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{1, 2});
  CHECK(run(p, calls({"a"}).t)[0].status == V::vacuous);
}

TEST_CASE("between checks only closed segments; after-until also the open one") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.tool("w")), S::between, b.tool("in"), b.tool("out"));
  b.rule(IrBuilder::st(K::forbid, b.tool("w")), S::after_until, b.tool("in"), b.tool("out"));
  auto p = b.compile();
  // segment [1,3) closed at 3; "w" at 4 is outside; segment from 5 never closes.
  auto r = run(p, calls({"w", "in", "w", "out", "w", "in", "w"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{2});
  CHECK(r[1].status == V::violated);
  CHECK(r[1].steps == W{2, 6});
  r = run(p, calls({"in", "w"}).t);
  CHECK(r[0].status == V::vacuous);
  CHECK(r[1].status == V::violated);
}

TEST_CASE("a further Q inside an open segment is ignored; a step matching Q and R does not open") {
  IrBuilder b;
  auto s = IrBuilder::st(K::count, b.tool("in"));
  s.hi = 1;
  b.rule(s, S::between, b.tool("in"), b.tool("out"));
  b.rule(IrBuilder::st(K::require, b.tool("x")), S::between, b.any(), b.tool("out"));
  auto p = b.compile();
  auto r = run(p, calls({"in", "in", "out"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{1});
  r = run(p, calls({"out", "x", "out"}).t);  // "out" matches Q (any) and R: opens at 1 only
  CHECK(r[1].status == V::satisfied);
}

TEST_CASE("segment verdicts combine: violated if any, else satisfied if any, else vacuous") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::precedes, b.tool("a"), b.tool("b")), S::between, b.tool("in"), b.tool("out"));
  auto p = b.compile();
  CHECK(run(p, calls({"in", "out", "in", "a", "b", "out"}).t)[0].status == V::satisfied);
  CHECK(run(p, calls({"in", "out", "in", "out"}).t)[0].status == V::vacuous);
  auto r = run(p, calls({"in", "a", "b", "out", "in", "b", "out"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{5});
}

TEST_CASE("a rule with several statements combines them") {
  IrBuilder b;
  ir::Rule& rule = b.rule(IrBuilder::st(K::forbid, b.tool("x")));
  rule.statements.push_back(IrBuilder::st(K::forbid, b.tool("y")));
  rule.statements.push_back(IrBuilder::st(K::precedes, b.tool("p"), b.tool("q")));
  auto p = b.compile();
  auto r = run(p, calls({"y", "x", "y"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{0, 1, 2});
  CHECK(run(p, calls({"z"}).t)[0].status == V::satisfied);
}

TEST_CASE("the checker is reset between traces and early exit keeps later witnesses") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::require, b.tool("x")));
  b.rule(IrBuilder::st(K::excludes, b.tool("x"), b.tool("y")));
  b.rule(IrBuilder::st(K::forbid, b.tool("y")));
  Checker c(b.compile());
  std::vector<RuleResult> out;
  auto t1 = calls({"x", "y", "y"});
  c.check(t1.t, out);
  CHECK(out[0].status == V::satisfied);
  CHECK(out[1].steps == W{0, 1});
  CHECK(out[2].steps == W{1, 2});
  auto t2 = calls({"z"});
  c.check(t2.t, out);
  CHECK(out[0].status == V::violated);
  CHECK(out[1].status == V::vacuous);
  CHECK(out[2].status == V::satisfied);
}

TEST_CASE("aliases apply to tool names before matching") {
  IrBuilder b;
  b.m.aliases.push_back({"search", "search_documents"});
  b.rule(IrBuilder::st(K::forbid, b.tool("search_documents")));
  auto r = run(b.compile(), calls({"search", "other"}).t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{0});
}

TEST_CASE("a million-step trace is checked in one linear pass") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::precedes, b.tool("login"), b.tool("write")));
  b.rule(IrBuilder::st(K::followed_by, b.tool("write"), b.tool("commit")));
  auto s = IrBuilder::st(K::count, b.where(b.tool("write"), b.cmp("arguments.n", ir::CompareOp::gt, lit_num(5))));
  s.hi = 1000000;
  b.rule(s);
  b.rule(IrBuilder::st(K::never_followed_by, b.tool("logout"), b.any()), S::between, b.tool("login"), b.tool("commit"));
  auto e = IrBuilder::st(K::expect, ir::kNone);
  e.path = b.node(ir::PathExpr::Kind::seq, {b.atom(b.tool("login")),
                                             b.node(ir::PathExpr::Kind::star, {b.node(ir::PathExpr::Kind::seq,
                                                 {b.atom(b.tool("write")), b.atom(b.tool("commit"))})})});
  b.rule(e);
  auto nodup = IrBuilder::st(K::no_duplicate, b.tool("write"));
  b.rule(nodup);
  StepsBuilder t;
  t.call("login");
  const std::uint32_t n = 1000000;
  for (std::uint32_t i = 1; i + 1 < n; i += 2) {
    t.call("write", "{\"n\":" + std::to_string(i % 10) + ",\"k\":" + std::to_string(i) + "}");
    t.call("commit");
  }
  t.call("x");
  REQUIRE(t.t.steps().size() == n);
  auto r = run(b.compile(), t.t);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[1].status == V::satisfied);
  CHECK(r[2].status == V::satisfied);
  CHECK(r[3].status == V::vacuous);
  CHECK(r[4].status == V::satisfied);
  CHECK(r[5].status == V::satisfied);
}

TEST_CASE("a checker without a program checks no rules") {
  Checker c(nullptr);
  std::vector<RuleResult> out{RuleResult{}};
  auto t = calls({"a"});
  c.check(t.t, out);
  CHECK(out.empty());
}

TEST_CASE("tool ids of a different table with the same ids are not confused") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.tool("x")));
  Checker c(b.compile());
  std::vector<RuleResult> out;
  {
    auto t = calls({"x"});
    c.check(t.t, out);
    CHECK(out[0].status == V::violated);
  }
  for (int i = 0; i < 3; ++i) {  // fresh tables, likely at the same address, id 0 = "y"
    auto t = calls({"y"});
    c.check(t.t, out);
    CHECK(out[0].status == V::satisfied);
  }
}
