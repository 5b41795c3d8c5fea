#include <doctest/doctest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;
using V = VerdictStatus;
using W = std::vector<std::uint32_t>;

namespace {
// Checks the one rule of `b` against `t`.
RuleResult one(const IrBuilder& b, const Trajectory& t) {
  std::vector<Diagnostic> d;
  auto p = b.compile(&d);
  REQUIRE(p != nullptr);
  auto r = run(p, t);
  REQUIRE(r.size() == 1);
  return r[0];
}
}  // namespace

TEST_CASE("forbid names every matching step; no match is satisfied, never vacuous") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::forbid, b.glob("delete_*")));
  StepsBuilder t;
  t.call("a");
  t.call("delete_x");
  t.call("delete_y");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{1, 2});
  StepsBuilder e;
  CHECK(one(b, e.t).status == V::satisfied);
}

TEST_CASE("require: violated without witness") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::require, b.tool("x")));
  StepsBuilder t;
  t.call("a");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps.empty());
  t.call("x");
  CHECK(one(b, t.t).status == V::satisfied);
}

TEST_CASE("counts: at most names the (N+1)th onward, the other forms name all") {
  IrBuilder b;
  auto s = IrBuilder::st(K::count, b.tool("x"));
  s.hi = 1;
  b.rule(s);
  StepsBuilder t;
  t.call("x");
  t.call("y");
  t.call("x");
  t.call("x");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{2, 3});

  IrBuilder c;
  auto s2 = IrBuilder::st(K::count, c.tool("x"));
  s2.lo = 4;
  c.rule(s2);
  r = one(c, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{0, 2, 3});

  IrBuilder e;
  auto s3 = IrBuilder::st(K::count, e.tool("x"));
  s3.lo = s3.hi = 3;
  e.rule(s3);
  CHECK(one(e, t.t).status == V::satisfied);
}

TEST_CASE("precedes: a step matching both sides does not precede itself") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::precedes, b.any(), b.tool("x")));
  StepsBuilder t;
  t.call("x");
  t.call("x");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{0});
  StepsBuilder none;
  none.call("y");
  CHECK(one(b, none.t).status == V::vacuous);
}

TEST_CASE("immediately precedes and ignoring") {
  IrBuilder b;
  auto s = IrBuilder::st(K::immediately_precedes, b.type(StepType::approval), b.tool("refund"));
  b.rule(s);
  s.ignoring = b.type(StepType::assistant_message);
  b.rule(s);
  StepsBuilder t;
  t.message(StepType::approval);
  t.message(StepType::assistant_message, "ok");
  t.call("refund");
  t.call("refund");
  auto p = b.compile();
  REQUIRE(p);
  auto r = run(p, t.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{2, 3});
  CHECK(r[1].status == V::violated);
  CHECK(r[1].steps == W{3});
}

TEST_CASE("followed by and immediately followed by") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::followed_by, b.tool("a"), b.tool("b")));
  b.rule(IrBuilder::st(K::immediately_followed_by, b.tool("a"), b.tool("b")));
  StepsBuilder t;
  t.call("a");
  t.call("c");
  t.call("b");
  t.call("a");
  t.call("b");
  t.call("a");
  auto r = run(b.compile(), t.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{5});
  CHECK(r[1].status == V::violated);
  CHECK(r[1].steps == W{0, 5});
}

TEST_CASE("requires counts the A step itself; excludes vacuous only when neither") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::requires_, b.any(), b.tool("x")));
  b.rule(IrBuilder::st(K::excludes, b.tool("x"), b.tool("y")));
  StepsBuilder t;
  t.call("x");
  auto r = run(b.compile(), t.t);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[1].status == V::satisfied);
  t.call("y");
  r = run(b.compile(), t.t);
  CHECK(r[1].status == V::violated);
  CHECK(r[1].steps == W{0, 1});
  StepsBuilder e;
  e.call("z");
  r = run(b.compile(), e.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{0});
  CHECK(r[1].status == V::vacuous);
}

TEST_CASE("never followed by: first A and each later B") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::never_followed_by, b.tool("t"), b.any()));
  StepsBuilder t;
  t.call("x");
  t.call("t");
  t.message(StepType::user_message, "hi");
  t.call("y");
  t.call("t");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{1, 3, 4});
}

TEST_CASE("starts/ends with on an empty segment: violated, no witness") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::starts_with, b.tool("a")));
  b.rule(IrBuilder::st(K::ends_with, b.tool("a")));
  b.rule(IrBuilder::st(K::starts_with, b.tool("a")), ir::ScopeKind::before, ir::kNone, b.tool("r"));
  StepsBuilder e;
  auto r = run(b.compile(), e.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps.empty());
  CHECK(r[1].status == V::violated);
  StepsBuilder t;
  t.call("r");
  t.call("a");
  r = run(b.compile(), t.t);
  CHECK(r[0].steps == W{0});
  CHECK(r[1].status == V::satisfied);
  CHECK(r[2].status == V::violated);  // R at step 0: an open, empty segment
  CHECK(r[2].steps.empty());
}

TEST_CASE("only: tool calls outside the allow-list") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::only, b.or_(b.tool("a"), b.tool("b"))));
  StepsBuilder t;
  t.call("a");
  t.message(StepType::user_message, "x");
  t.call("c");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{2});
}

TEST_CASE("no duplicate: deep equality, key order free, numbers by value, absent = {}") {
  IrBuilder b;
  b.rule(IrBuilder::st(K::no_duplicate, b.any()));
  StepsBuilder t;
  t.call("a", R"({"x":1,"y":{"b":[1,2],"a":"s"}})");
  t.call("a", R"({"y":{"a":"s","b":[1.0,2]},"x":1.0})");
  t.call("b", R"({"x":1})");
  t.call("a", R"({"x":"1"})");
  t.call("c", "");
  t.call("c", "{}");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{1, 5});
}

// Arguments of every shape the canonical key reads — flat objects of plain strings (read
// without a parse) in and out of key order, with escapes, bytes outside ASCII, blanks,
// numbers, nesting, repeated keys, text that is not JSON — are duplicates exactly when
// nlohmann_json finds them equal.
TEST_CASE("no duplicate: equal arguments by JSON equality, whatever their shape") {
  const char* pool[] = {
      R"({})", R"({"a":"x"})", R"({"a":"x","b":"y"})", R"({"b":"y","a":"x"})", R"({ "a" : "x" })",
      R"({"a":"\u0078"})", R"({"a":"x\"y"})", R"({"a":"x\\"})", R"({"a":"caf\u00e9"})", "{\"a\":\"caf\xc3\xa9\"}",
      R"({"a":1})", R"({"a":1.0})", R"({"a":"1"})", R"({"a":["x"]})", R"({"a":{"b":"x"}})",
      R"({"a":"x","a":"y"})", R"({"a":"x",})", R"({"a":"x"} )", R"({"ab":"x"})", R"({"a":"x","ab":"y"})",
      R"({"ab":"y","a":"x"})", R"({"":""})", R"({"a":""})", R"({"a":"x","b":null})", R"({"a":"}"})",
      R"({"a":"x"}x)", R"({"a":true})", R"({"a":"x","b":"y","c":"z"})", R"({"c":"z","a":"x","b":"y"})",
  };
  auto parsed = [](std::string_view text, nlohmann::json* out) {
    *out = nlohmann::json::parse(text, nullptr, false);
    return !out->is_discarded();
  };
  IrBuilder b;
  b.rule(IrBuilder::st(K::no_duplicate, b.any()));
  std::vector<Diagnostic> d;
  auto p = b.compile(&d);
  REQUIRE(p != nullptr);
  std::mt19937 rng(3);
  constexpr std::size_t n = sizeof pool / sizeof pool[0];
  for (int round = 0; round < 400; ++round) {
    std::string_view x = pool[rng() % n], y = pool[rng() % n];
    CAPTURE(x);
    CAPTURE(y);
    StepsBuilder t;
    t.call("a", std::string(x));
    t.call("a", std::string(y));
    nlohmann::json jx, jy;
    // Text that is not JSON is a key of its own bytes; repeated keys: the last one stands
    // for nlohmann, both for the checker (equal only to the same text).
    bool repeated = std::string_view(x).find(R"("a":"x","a")") != std::string_view::npos ||
                    std::string_view(y).find(R"("a":"x","a")") != std::string_view::npos;
    bool equal = parsed(x, &jx) && parsed(y, &jy) && !repeated ? jx == jy : x == y;
    auto r = run(p, t.t);
    REQUIRE(r.size() == 1);
    CHECK((r[0].status == V::violated) == equal);
  }
}

TEST_CASE("in a row: runs over tool calls only") {
  IrBuilder b;
  auto s = IrBuilder::st(K::in_a_row, b.tool("a"));
  s.hi = 2;
  b.rule(s);
  StepsBuilder t;
  t.call("a");
  t.message(StepType::assistant_message, "m");
  t.call("a");
  t.call("a");
  t.call("b");
  t.call("a");
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{3});
}

TEST_CASE("retries: chains per tool, other tools neither break nor reset") {
  IrBuilder b;
  auto s = IrBuilder::st(K::retries, b.any());
  s.hi = 1;
  b.rule(s);
  StepsBuilder t;
  t.call("a", "", true);   // 0: failure starts a's chain
  t.call("b", "", true);   // 1: b's own chain
  t.call("a", "", true);   // 2: retry 1 of a
  t.call("b");             // 3: retry 1 of b, success ends it
  t.call("a");             // 4: retry 2 of a: excess (a success still counts)
  t.call("a");             // 5: no chain
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{4});
}

TEST_CASE("retries: a success counts only while its tool's chain is active, which other tools' calls keep") {
  // The batch checker steps `retries` on a success only while a chain is active (idle()
  // otherwise): each witness here is a success or failure that a skipped step would lose.
  IrBuilder b;
  auto s = IrBuilder::st(K::retries, b.any());
  s.hi = 0;
  b.rule(s);
  StepsBuilder t;
  t.call("a", "", true);  // 0: a's chain starts
  t.call("b");            // 1: no chain of b: nothing
  t.call("a");            // 2: retry 1 of a: excess; the chain ends
  t.call("a");            // 3: no chain: nothing
  t.call("b", "", true);  // 4: b's chain starts
  t.call("c");            // 5: nothing
  t.call("b", "", true);  // 6: retry 1 of b
  t.call("b");            // 7: retry 2 of b; the chain ends
  t.call("b");            // 8: nothing
  auto r = one(b, t.t);
  CHECK(r.status == V::violated);
  CHECK(r.steps == W{2, 6, 7});
}

TEST_CASE("expect: letters are calls matching an atom; witness where stuck, none at early end") {
  IrBuilder b;
  ir::Id path = b.node(ir::PathExpr::Kind::seq,
                       {b.node(ir::PathExpr::Kind::alt,
                               {b.node(ir::PathExpr::Kind::seq, {b.atom(b.tool("c")), b.atom(b.tool("l"))}),
                                b.atom(b.tool("s"))}),
                        b.atom(b.tool("g")), b.atom(b.tool("r"))});
  auto s = IrBuilder::st(K::expect, ir::kNone);
  s.path = path;
  b.rule(s);
  s.kind = K::expect_exactly;
  b.rule(s);
  StepsBuilder ok;
  ok.call("c");
  ok.call("other");
  ok.call("l");
  ok.call("g");
  ok.call("r");
  auto r = run(b.compile(), ok.t);
  CHECK(r[0].status == V::satisfied);
  CHECK(r[1].status == V::violated);
  CHECK(r[1].steps == W{1});
  StepsBuilder early;
  early.call("s");
  early.call("g");
  r = run(b.compile(), early.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps.empty());
  StepsBuilder stuck;
  stuck.call("s");
  stuck.call("r");
  stuck.call("g");
  r = run(b.compile(), stuck.t);
  CHECK(r[0].status == V::violated);
  CHECK(r[0].steps == W{1});
}

TEST_CASE("expect all-of: each element once, whole units, any order") {
  IrBuilder b;
  ir::Id unit = b.node(ir::PathExpr::Kind::seq, {b.atom(b.tool("a")), b.atom(b.tool("b"))});
  ir::Id path = b.node(ir::PathExpr::Kind::seq,
                       {b.node(ir::PathExpr::Kind::all_of, {unit, b.atom(b.tool("c"))}), b.atom(b.tool("d"))});
  auto s = IrBuilder::st(K::expect, ir::kNone);
  s.path = path;
  b.rule(s);
  auto check = [&](std::vector<std::string> calls, V want, W steps) {
    StepsBuilder t;
    for (auto& c : calls) t.call(c);
    auto r = run(b.compile(), t.t);
    CHECK(r[0].status == want);
    CHECK(r[0].steps == steps);
  };
  check({"c", "a", "b", "d"}, V::satisfied, {});
  check({"a", "b", "c", "d"}, V::satisfied, {});
  check({"a", "c", "b", "d"}, V::violated, {1});
  check({"c", "c"}, V::violated, {1});
}

TEST_CASE("expect all-of of 8 elements (one a sequence): every order, whole units, once each") {
  IrBuilder b;
  std::vector<ir::Id> kids;
  for (int i = 0; i < 7; ++i) kids.push_back(b.atom(b.tool("t" + std::to_string(i))));
  kids.push_back(b.node(ir::PathExpr::Kind::seq, {b.atom(b.tool("x")), b.atom(b.tool("y"))}));
  auto s = IrBuilder::st(K::expect, ir::kNone);
  s.path = b.node(ir::PathExpr::Kind::all_of, kids);
  b.rule(s);
  auto program = b.compile();  // 9 atoms x 2^7 = 1152 positions: under the default cap
  REQUIRE(program != nullptr);
  auto check = [&](std::vector<std::string> calls, V want, W steps) {
    StepsBuilder t;
    for (auto& c : calls) t.call(c);
    auto r = run(program, t.t);
    CHECK(r[0].status == want);
    CHECK(r[0].steps == steps);
  };
  check({"t6", "x", "y", "t5", "t4", "t3", "t2", "t1", "t0"}, V::satisfied, {});
  check({"t0", "t1", "t2", "t3", "t4", "t5", "t6", "x", "y"}, V::satisfied, {});
  check({"t0", "t1", "x", "t2", "y"}, V::violated, {3});   // x y is a whole unit
  check({"t0", "t1", "t0"}, V::violated, {2});             // each element once
  check({"t0", "x", "y", "t1"}, V::violated, {});          // ended early: no witness
}

TEST_CASE("a PATH automaton over the state cap is an E101 error") {
  IrBuilder b;
  std::vector<ir::Id> kids;
  for (int i = 0; i < 6; ++i) kids.push_back(b.atom(b.tool("t" + std::to_string(i))));  // 6 x 2^5 = 192
  auto s = IrBuilder::st(K::expect, ir::kNone);
  s.path = b.node(ir::PathExpr::Kind::all_of, kids);
  b.rule(s);
  std::vector<Diagnostic> d;
  CompileOptions o;
  o.max_automaton_states = 191;
  CHECK(b.compile(&d, o) == nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E101");
  d.clear();
  o.max_automaton_states = 192;
  CHECK(b.compile(&d, o) != nullptr);
  d.clear();
  CHECK(b.compile(&d) != nullptr);  // the default cap (4096) takes a 6-element group
}
