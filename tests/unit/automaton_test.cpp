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

TEST_CASE("all-of holds each element once per set of elements done before it") {
  IrBuilder b;
  ir::Id root = b.node(PK::all_of, {b.node(PK::seq, {b.atom(b.tool("a")), b.atom(b.tool("b"))}),
                                    b.atom(b.tool("c")), b.atom(b.tool("d"))});
  auto n = build(b, root);
  CHECK(n.positions == 4 * 4);  // 4 atoms, each in 2^(3-1) contexts (not 3! orders)
  CHECK_FALSE(n.nullable);
  CHECK(n.atoms.size() == 4);
}

TEST_CASE("the position cap is enforced before building") {
  IrBuilder b;
  std::vector<ir::Id> kids;
  for (int i = 0; i < 16; ++i) kids.push_back(b.atom(b.tool("t" + std::to_string(i))));
  bool ok = true;
  std::vector<ir::Id> twelve(kids.begin(), kids.begin() + 12);
  build(b, b.node(PK::all_of, twelve), 4096, &ok);  // 12 x 2^11 = 24576 positions
  CHECK_FALSE(ok);
  build(b, b.node(PK::all_of, kids), 0xffffffffu, &ok);  // 16 x 2^15: over the hard cap whatever the option says
  CHECK_FALSE(ok);
  auto n = build(b, b.node(PK::all_of, twelve), 24576, &ok);
  CHECK(ok);
  CHECK(n.positions == 24576);
  std::vector<ir::Id> six(kids.begin(), kids.begin() + 6);
  n = build(b, b.node(PK::all_of, six), 4096, &ok);  // was 6! x 6 = 4320 as permutations
  CHECK(ok);
  CHECK(n.positions == 6 * 32);
  build(b, b.node(PK::all_of, {kids[0], kids[1], kids[2]}), 12, &ok);
  CHECK(ok);
  build(b, b.node(PK::all_of, {kids[0], kids[1], kids[2]}), 11, &ok);
  CHECK_FALSE(ok);
}

TEST_CASE("all-of with nullable elements: empty group and skipped elements") {
  IrBuilder b;
  ir::Id a = b.atom(b.tool("a")), c = b.atom(b.tool("c"));
  auto n = build(b, b.node(PK::all_of, {b.node(PK::optional, {a}), b.node(PK::star, {c})}));
  CHECK(n.nullable);
  CHECK(n.positions == 4);
  // Every position may end the word: the other element may be empty.
  for (std::uint32_t p = 0; p < n.positions; ++p) CHECK((n.last[0] >> p & 1) == 1);
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
