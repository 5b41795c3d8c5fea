#include <doctest/doctest.h>

#include "compiler/automaton.hpp"
#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using PK = ir::PathExpr::Kind;

namespace {
detail::Nfa build(const IrBuilder& b, ir::Id root, std::uint32_t cap = 4096, bool* ok = nullptr) {
  detail::Nfa nfa;
  std::string error;
  bool built = detail::build_nfa(b.m, root, [](ir::Id id) { return id; }, cap, nfa, error);
  if (ok) *ok = built;
  else REQUIRE(built);
  return nfa;
}
bool bit(const std::vector<std::uint64_t>& s, std::uint32_t p) { return s[p / 64] >> (p % 64) & 1; }
}  // namespace

TEST_CASE("Glushkov sets of a -> b* -> c?") {
  IrBuilder b;
  ir::Id root = b.node(PK::seq, {b.atom(b.tool("a")), b.node(PK::star, {b.atom(b.tool("b"))}),
                                 b.node(PK::optional, {b.atom(b.tool("c"))})});
  auto n = build(b, root);
  REQUIRE(n.positions == 3);
  CHECK(bit(n.first, 0));
  CHECK_FALSE(bit(n.first, 1));
  CHECK(bit(n.last, 0));
  CHECK(bit(n.last, 1));
  CHECK(bit(n.last, 2));
  CHECK_FALSE(n.nullable);
  auto follow = [&](std::uint32_t p, std::uint32_t q) { return (n.follow_of(p)[q / 64] >> (q % 64) & 1) != 0; };
  CHECK(follow(0, 1));
  CHECK(follow(0, 2));
  CHECK(follow(1, 1));
  CHECK(follow(1, 2));
  CHECK_FALSE(follow(2, 0));
  CHECK(n.atoms.size() == 3);
}

TEST_CASE("all-of expands to every order of whole units") {
  IrBuilder b;
  ir::Id root = b.node(PK::all_of, {b.node(PK::seq, {b.atom(b.tool("a")), b.atom(b.tool("b"))}),
                                    b.atom(b.tool("c")), b.atom(b.tool("d"))});
  auto n = build(b, root);
  CHECK(n.positions == 6 * 4);  // 3! orders of 4 atoms
  CHECK(n.atoms.size() == 4);
}

TEST_CASE("the position cap is enforced before expanding") {
  IrBuilder b;
  std::vector<ir::Id> kids;
  for (int i = 0; i < 12; ++i) kids.push_back(b.atom(b.tool("t" + std::to_string(i))));
  bool ok = true;
  build(b, b.node(PK::all_of, kids), 4096, &ok);  // 12! orders: must not be attempted
  CHECK_FALSE(ok);
  build(b, b.node(PK::all_of, {kids[0], kids[1], kids[2], kids[3], kids[4], kids[5], kids[6], kids[7]}),
        0xffffffffu, &ok);  // 8! x 8 positions: over the hard cap whatever the option says
  CHECK_FALSE(ok);
  build(b, b.node(PK::all_of, {kids[0], kids[1], kids[2]}), 18, &ok);
  CHECK(ok);
  build(b, b.node(PK::all_of, {kids[0], kids[1], kids[2]}), 17, &ok);
  CHECK_FALSE(ok);
}

TEST_CASE("more than 64 positions use several bitset words") {
  IrBuilder b;
  std::vector<ir::Id> seq;
  for (int i = 0; i < 100; ++i) seq.push_back(b.atom(b.tool(i % 2 ? "a" : "b")));
  auto n = build(b, b.node(PK::seq, seq));
  CHECK(n.words == 2);
  CHECK(bit(n.last, 99));
  CHECK((n.follow_of(63)[1] & 1) == 1);  // 63 -> 64 crosses a word
}

TEST_CASE("dump_automaton shows the classifier columns and each automaton") {
  IrBuilder b;
  auto s = IrBuilder::st(ir::StatementKind::expect, ir::kNone);
  s.path = b.node(PK::seq, {b.atom(b.glob("get_*")), b.atom(b.tool("refund"))});
  b.rule(s);
  auto p = b.compile();
  std::string dump = p->dump_automaton();
  CHECK(dump.find("c0 = glob get_*") != std::string::npos);
  CHECK(dump.find("nfa: 2 positions, start {0}, accept {1}") != std::string::npos);
  CHECK(dump.find("0: p0 -> {1}") != std::string::npos);
}
