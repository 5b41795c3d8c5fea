#include <doctest/doctest.h>

#include <functional>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/condition_eval.hpp"
#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using Op = ir::CompareOp;

namespace {
// Whether `forbid any where C` fires on a single tool call with these fields.
bool holds(const std::function<ir::Id(IrBuilder&)>& make, const std::string& args,
           const std::string& result = "", const std::string& extra = "",
           const std::string& context = "", bool failed = false) {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.any(), make(b))));
  std::vector<Diagnostic> d;
  auto p = b.compile(&d);
  REQUIRE(p != nullptr);
  StepsBuilder t;
  if (!context.empty()) t.context(context);
  Step& s = t.call("order_get", args, failed, result);
  s.extra = t.t.store(extra);
  return run(p, t.t)[0].status == VerdictStatus::violated;
}
}  // namespace

TEST_CASE("numbers compare by value, strings as strings, kinds never mix") {
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::eq, lit_num(1)); }, R"({"n":1.0})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::eq, lit_num(1)); }, R"({"n":1})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::eq, lit_num(1)); }, R"({"n":"1"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::ne, lit_num(1)); }, R"({"n":"1"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::lt, lit_num(2)); }, R"({"n":-3})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::lt, lit_num(2)); }, R"({"n":"1"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.s", Op::lt, lit_str("b")); }, R"({"s":"abc"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::ge, lit_num(1e19)); }, R"({"n":18446744073709551615})"));
}

TEST_CASE("a number beyond the DOM's range (past 64 bits, past a double) hides no member") {
  // Every member of such arguments, results and context is read; the wide number itself as
  // the double it stands for (the largest double of its sign beyond a double's range).
  const std::string wide_args = R"({"recipient":"attacker","amount":5000,"reference":12345678901234567890123})";
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.recipient", Op::eq, lit_str("attacker")); }, wide_args));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.amount", Op::gt, lit_num(1000)); }, wide_args));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.reference", Op::gt, lit_num(1.2e22)); }, wide_args));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.reference", Op::eq, lit_num(12345678901234567890123.0)); }, wide_args));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.n", Op::lt, lit_num(-1.8e19)); }, R"({"n":-18446744073709551617})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.big", Op::gt, lit_num(1e308)); }, R"({"big":1e400,"s":"x"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.s", Op::eq, lit_str("x")); }, R"({"big":-2E+308,"s":"x"})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("arguments.tiny", Op::eq, lit_num(0)); }, R"({"tiny":1e-400,"big":[1e999]})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("result.status", Op::eq, lit_str("sent")); }, "",
              R"({"status":"sent","id":99999999999999999999999999})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("context.user", Op::eq, lit_str("u")); }, "", "", "",
              R"({"user":"u","quota":1e500})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("latency", Op::eq, lit_num(3)); }, "", "", R"({"latency":3,"n":123456789012345678901})"));
  // A number written as a string stays a string; a malformed document stays unread.
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.s", Op::gt, lit_num(1)); }, R"({"s":"1e400"})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.exists("arguments.x"); }, R"({"x":1e400,)"));
}

TEST_CASE("absent paths make every comparison false, including !=") {
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.x", Op::ne, lit_num(1)); }, R"({"n":1})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.x", Op::eq, lit_null()); }, ""));
  CHECK(holds([](IrBuilder& b) { return b.cnot(b.exists("arguments.x")); }, R"({"n":1})"));
  CHECK(holds([](IrBuilder& b) { return b.exists("arguments.x"); }, R"({"x":null})"));
}

TEST_CASE("null, objects and arrays make comparisons false") {
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.x", Op::eq, lit_null()); }, R"({"x":null})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.x", Op::ne, lit_num(1)); }, R"({"x":null})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp("arguments.x", Op::ne, lit_num(1)); }, R"({"x":{"a":1}})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.cmp_paths("arguments.x", Op::eq, "arguments.y"); },
                    R"({"x":[1],"y":[1]})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp_paths("arguments.x", Op::eq, "arguments.y[1]"); },
              R"({"x":2,"y":[1,2.0]})"));
}

TEST_CASE("matches is an unanchored RE2 search on strings only") {
  CHECK(holds([](IrBuilder& b) { return b.matches("arguments.q", "rd_[0-9]+"); }, R"({"q":"order ord_81 x"})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.matches("arguments.q", "^rd"); }, R"({"q":"ord_81"})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.matches("arguments.q", "1"); }, R"({"q":1})"));
}

TEST_CASE("contains: substring of strings, typed element of arrays") {
  CHECK(holds([](IrBuilder& b) { return b.contains("arguments.s", lit_str("ell")); }, R"({"s":"hello"})"));
  CHECK(holds([](IrBuilder& b) { return b.contains("arguments.a", lit_num(2)); }, R"({"a":[1,2.0]})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.contains("arguments.a", lit_str("2")); }, R"({"a":[1,2]})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.contains("arguments.o", lit_str("k")); }, R"({"o":{"k":1}})"));
}

TEST_CASE("in compares with typed equality against each list element") {
  CHECK(holds([](IrBuilder& b) { return b.in("arguments.x", {lit_str("a"), lit_num(3)}); }, R"({"x":3.0})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.in("arguments.x", {lit_str("3")}); }, R"({"x":3})"));
}

TEST_CASE("step fields, extra fields, result, context, index paths") {
  CHECK(holds([](IrBuilder& b) { return b.cmp("tool", Op::eq, lit_str("order_get")); }, ""));
  CHECK(holds([](IrBuilder& b) { return b.cmp("type", Op::eq, lit_str("tool_call")); }, ""));
  CHECK(holds([](IrBuilder& b) { return b.cmp("status", Op::eq, lit_str("error")); }, "", "", "", "", true));
  CHECK(holds([](IrBuilder& b) { return b.cmp("latency_ms", Op::gt, lit_num(100)); }, "", "", R"({"latency_ms":184})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("result.items[1].id", Op::eq, lit_str("b")); }, "",
              R"({"items":[{"id":"a"},{"id":"b"}]})"));
  CHECK(holds([](IrBuilder& b) { return b.cmp("context.user_id", Op::eq, lit_str("u")); }, "", "", "",
              R"({"user_id":"u"})"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.exists("result.items[2]"); }, "", R"({"items":[1,2]})"));
}

TEST_CASE("arguments that are not JSON objects or not JSON are handled without crashing") {
  CHECK_FALSE(holds([](IrBuilder& b) { return b.exists("arguments.x"); }, R"("not json {")"));
  CHECK_FALSE(holds([](IrBuilder& b) { return b.exists("arguments.x"); }, R"({broken)"));
}

TEST_CASE("compare_values and contains_value directly") {
  using detail::Value;
  Value one = detail::value_of(lit_num(1)), s1 = detail::value_of(lit_str("1"));
  CHECK(detail::compare_values(one, one, Op::le));
  CHECK_FALSE(detail::compare_values(one, s1, Op::eq));
  CHECK(detail::compare_values(one, s1, Op::ne));
  Value t = detail::value_of(lit_bool(true)), f = detail::value_of(lit_bool(false));
  CHECK(detail::compare_values(t, f, Op::ne));
  CHECK_FALSE(detail::compare_values(t, f, Op::gt));  // booleans have no order
  CHECK_FALSE(detail::compare_values(Value{}, Value{}, Op::eq));
}

TEST_CASE("an invalid regex is an E105 error; unsupported variables are E102, not ignored") {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.any(), b.matches("arguments.q", "(unclosed"))));
  std::vector<Diagnostic> d;
  CHECK(b.compile(&d) == nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E105");

  IrBuilder v;
  ir::Cond c;
  c.kind = ir::Cond::Kind::compare;
  c.op = ir::CompareOp::ne;  // a variable binds only through ==
  c.a = IrBuilder::path_op("arguments.order_id");
  c.b.kind = ir::Operand::Kind::variable;
  c.b.variable = "o";
  v.rule(IrBuilder::st(ir::StatementKind::forbid, v.where(v.any(), v.cond(c))));
  d.clear();
  CHECK(v.compile(&d) == nullptr);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E102");
}

TEST_CASE("seen(): earlier result leaves, context leaves, earlier user text (strings only)") {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id")))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  StepsBuilder t;
  t.context(R"({"tenant":{"ids":["c1"]}})");
  t.call("refund", R"({"id":"r1"})");                                  // 0: invented
  t.call("lookup", "", true, R"({"orders":[{"id":"r1"},{"n":7.0}]})");  // failed calls count
  t.call("refund", R"({"id":"r1"})");                                  // 1: seen in a result
  t.call("refund", R"({"id":7})");                                     // numbers by value
  t.call("refund", R"({"id":"c1"})");                                  // context leaf
  t.call("refund", R"({"id":"u9"})");                                  // 5: not yet said
  t.message(StepType::user_message, "please refund order u9 today");
  t.call("refund", R"({"id":"u9"})");                                  // substring of user text
  t.call("refund", R"({"id":"U9"})");                                  // 8: case-sensitive
  t.call("refund", R"({"id":"1"})");                                   // 9: substring of a leaf: no
  t.call("refund", R"({"id":{"o":1}})");                               // 10: objects never seen
  t.call("refund", R"({"x":1})");                                      // 11: absent: not seen
  t.call("refund", R"({"id":true})");                                  // 12: no true leaf
  auto r = run(p, t.t);
  CHECK(r[0].status == VerdictStatus::violated);
  CHECK(r[0].steps == std::vector<std::uint32_t>{0, 5, 8, 9, 10, 11, 12});
}

TEST_CASE("seen(): an array is seen when it has elements and every one is a scalar seen") {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("invite"), b.cnot(b.seen("arguments.to")))));
  b.rule(IrBuilder::st(ir::StatementKind::forbid,
                       b.where(b.tool("invite"), b.cnot(b.seen("arguments.to", ir::kSeenUser)))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  StepsBuilder t;
  t.context(R"({"team":["c@x"]})");
  t.message(StepType::user_message, "invite a@x please");
  t.call("lookup", "", false, R"({"people":[{"mail":"b@x"},{"n":3}]})");
  t.call("invite", R"({"to":["a@x"]})");                // 2: said by the user
  t.call("invite", R"({"to":["a@x","b@x","c@x",3]})");  // 3: user, result, context, a number
  t.call("invite", R"({"to":["a@x","z@x"]})");          // 4: one element never seen
  t.call("invite", R"({"to":[]})");                     // 5: empty: names nothing seen
  t.call("invite", R"({"to":["a@x",null]})");           // 6: null inside
  t.call("invite", R"({"to":["a@x",["b@x"]]})");        // 7: nested array
  t.call("invite", R"({"to":[{"mail":"b@x"}]})");       // 8: object inside
  auto r = run(p, t.t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].steps == std::vector<std::uint32_t>{4, 5, 6, 7, 8});
  // From the user only: step 3's elements from a result and the context are not enough.
  CHECK(r[1].steps == std::vector<std::uint32_t>{3, 4, 5, 6, 7, 8});
}

TEST_CASE("seen(PATH, sources): only the sources named, searched raw or indexed") {
  // user, result, context, two of them, all three: a refund's id is unseen unless its source is named.
  const std::uint8_t masks[] = {ir::kSeenUser, ir::kSeenResult, ir::kSeenContext, ir::kSeenUser | ir::kSeenContext,
                                ir::kSeenAll};
  for (const std::uint8_t mask : masks)
    for (int first : {0, 40}) {  // 40 questions first: the steps get indexed
      IrBuilder b;
      b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id", mask)))));
      auto p = b.compile();
      REQUIRE(p != nullptr);
      StepsBuilder t;
      t.context(R"({"tenant":"c1"})");
      t.call("lookup", "", false, R"({"id":"r1"})");
      t.message(StepType::user_message, "refund u9 please");
      for (int i = 0; i < first; ++i) t.call("refund", R"({"id":"u9"})");
      const auto at = static_cast<std::uint32_t>(2 + first);
      t.call("refund", R"({"id":"r1"})");
      t.call("refund", R"({"id":"c1"})");
      t.call("refund", R"({"id":"u9"})");
      std::vector<std::uint32_t> want;
      if (!(mask & ir::kSeenUser))
        for (int i = 0; i < first; ++i) want.push_back(static_cast<std::uint32_t>(2 + i));
      // positions: r1 = 0, c1 = 1, u9 = 2 among the last three refunds
      for (std::uint32_t k = 0; k < 3; ++k) {
        const std::uint8_t need = k == 0 ? ir::kSeenResult : k == 1 ? ir::kSeenContext : ir::kSeenUser;
        if (!(mask & need)) want.push_back(at + k);
      }
      auto r = run(p, t.t);
      CAPTURE(int(mask));
      CAPTURE(first);
      if (want.empty()) {
        CHECK(r[0].status != VerdictStatus::violated);
      } else {
        REQUIRE(r[0].status == VerdictStatus::violated);
        CHECK(r[0].steps == want);
      }
    }
}

// A plain string is first searched for in the raw results and user text; these are the texts
// where raw bytes and leaves differ. Asked once each (the raw search) and, in a second trace,
// after so many questions that the steps are indexed: the same verdicts either way.
TEST_CASE("seen(): keys, escapes and string results mean the same searched raw or indexed") {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id")))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  auto make = [](StepsBuilder& t, int questions_first) {
    t.call("lookup", "", false, R"({"k1":"v","nested":{"k2":[1,"x"]}})");  // k1, k2: keys only
    t.call("lookup", "", false, R"({"e":"\u0065sc","q":"a\"b"})");       // "esc", "a\"b" by escapes
    t.call("lookup", "", false, R"("whole")");                             // a string result
    t.message(StepType::user_message, "text k3 here");
    for (int i = 0; i < questions_first; ++i) t.call("refund", R"({"id":"absent"})");
    t.call("refund", R"({"id":"k1"})");     // a key: not seen
    t.call("refund", R"({"id":"k2"})");
    t.call("refund", R"({"id":"x"})");      // seen
    t.call("refund", R"({"id":"esc"})");    // seen (escaped in the raw text)
    t.call("refund", R"({"id":"a\"b"})");  // seen (not plain: the index decides)
    t.call("refund", R"({"id":"whole"})");  // seen
    t.call("refund", R"({"id":"k3"})");     // seen in user text
    t.call("refund", R"({"id":"nope"})");   // not seen
  };
  for (int first : {0, 40}) {
    StepsBuilder t;
    make(t, first);
    auto r = run(p, t.t);
    REQUIRE(r[0].status == VerdictStatus::violated);
    const auto at = static_cast<std::uint32_t>(4 + first);
    std::vector<std::uint32_t> want;
    for (int i = 0; i < first; ++i) want.push_back(static_cast<std::uint32_t>(4 + i));
    for (std::uint32_t k : {0u, 1u, 7u}) want.push_back(at + k);
    CHECK(r[0].steps == want);
  }
}

TEST_CASE("seen(): only the steps before the one that asks are looked at; a trace that never asks costs none") {
  using trajcheck::detail::Provenance;
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id")))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  StepsBuilder quiet;  // no refund: no step asks seen()
  quiet.context(R"({"id":"c1"})");
  for (int i = 0; i < 50; ++i) {
    quiet.call("lookup", "", false, R"({"orders":[{"id":"r1"}]})");
    quiet.message(StepType::user_message, "refund r1");
  }
  const std::uint64_t before = Provenance::steps_examined();
  CHECK(run(p, quiet.t)[0].status == VerdictStatus::satisfied);
  CHECK(Provenance::steps_examined() == before);

  StepsBuilder asks;  // one question at step 3, then 10 steps nobody asks about
  asks.call("lookup", "", false, R"({"id":"r1"})");
  asks.message(StepType::user_message, "and u9");
  asks.call("lookup", "", false, R"({"id":"r2"})");
  asks.call("refund", R"({"id":"u9"})");
  for (int i = 0; i < 10; ++i) asks.call("lookup", "", false, R"({"id":"r3"})");
  const std::uint64_t at = Provenance::steps_examined();
  CHECK(run(p, asks.t)[0].status == VerdictStatus::satisfied);
  CHECK(Provenance::steps_examined() - at == 3);
}

// Calls without a result and messages other than the user's cost the raw search nothing to
// read, but walking past them is work too: a long run of them is indexed (skipped for good)
// once, not walked again by every question. Counted in steps looked at, not timed.
TEST_CASE("seen(): many questions over steps with no text to search stay linear") {
  using trajcheck::detail::Provenance;
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id")))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  constexpr int kCalls = 4000;
  StepsBuilder t;
  t.call("lookup", "", false, R"({"id":"r1"})");
  for (int i = 0; i < kCalls; ++i) {
    t.call("refund", R"({"id":"absent"})");  // no result
    t.message(StepType::assistant_message, "working on it");
  }
  t.call("refund", R"({"id":"r1"})");  // seen, in the first step's result
  const std::uint64_t before = Provenance::steps_examined();
  const auto r = run(p, t.t);
  const std::uint64_t examined = Provenance::steps_examined() - before;
  REQUIRE(r[0].status == VerdictStatus::violated);
  CHECK(r[0].steps.size() == kCalls);  // every absent id, and not the last call's
  CHECK(examined <= 8 * (2 * kCalls + 2));  // walking every earlier step per question: ~16 000 000
}

namespace {
// Whether `seen(arguments.id)` holds for `id` asked right after one step with this result,
// searched raw (the first question of the trace) or from the index (after 40 questions,
// more than the raw search's budget allows).
bool seen_after(const std::string& result, const std::string& id, bool indexed) {
  IrBuilder b;
  b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.tool("refund"), b.cnot(b.seen("arguments.id")))));
  auto p = b.compile();
  REQUIRE(p != nullptr);
  StepsBuilder t;
  t.call("lookup", "", false, result);
  const int questions = indexed ? 40 : 0;
  for (int i = 0; i < questions; ++i) t.call("refund", R"({"id":"absent"})");
  t.call("refund", nlohmann::json{{"id", id}}.dump());
  const auto r = run(p, t.t);
  REQUIRE(r.size() == 1);
  const auto last = static_cast<std::uint32_t>(1 + questions);
  return std::find(r[0].steps.begin(), r[0].steps.end(), last) == r[0].steps.end();
}

// The reference: a string leaf of the parsed result equal to `id`.
bool has_leaf(const nlohmann::json& j, const std::string& id) {
  if (j.is_string()) return j.get<std::string>() == id;
  if (j.is_object() || j.is_array())
    for (const auto& e : j) if (has_leaf(e, id)) return true;
  return false;
}
}  // namespace

// In a result without a backslash, the raw search tells a string leaf from a member name or a
// stretch across two strings by the quotes before a match and a colon after it.
TEST_CASE("seen(): a result searched raw by its quotes") {
  struct Case { const char* result; const char* id; bool seen; };
  const Case cases[] = {
      {R"({"a":"x"})", "x", true},
      {R"({"x":1})", "x", false},                  // a member name
      {R"({"x" :1})", "x", false},                 // a member name, blanks before the colon
      {"{\"x\"\n\t\r :1}", "x", false},
      {R"({"a":"x" , "b":1})", "x", true},         // blanks, then a comma: a leaf
      {R"(["a","b"])", ",", false},                // `","` spans two strings
      {R"(["a",","])", ",", true},                 // … and then is one
      {R"({"a":"b","c":":"})", ":", true},
      {R"({"k":"a b"})", "a", false},              // part of a string is not the string
      {R"({"a":"ax","b":"xa"})", "x", false},
      {R"("whole")", "whole", true},               // a string result
      {R"({"x":"z","b":"x"})", "x", true},         // a name, then a leaf
      {R"({"x":{"x":1}})", "x", false},
      {R"({"a":"","b":1})", "", true},             // the empty string
      {R"({"":1})", "", false},
      {"{\n  \"a\": [\n    \"x\"\n  ]\n}", "x", true},
      {R"({"a":"\u0078"})", "x", true},            // escapes: the parsed leaves decide
      {R"({"x":"q\"","b":1})", "x", false},
      {R"({"a":["1",1]})", "1", true},
      {R"({"a":[1]})", "1", false},                // a number is not a string
  };
  for (const Case& c : cases) {
    CAPTURE(c.result);
    CAPTURE(c.id);
    REQUIRE(has_leaf(nlohmann::json::parse(c.result), c.id) == c.seen);  // the case itself
    CHECK(seen_after(c.result, c.id, false) == c.seen);
    CHECK(seen_after(c.result, c.id, true) == c.seen);
  }
}

namespace {
// A random JSON value over a few strings that overlap (as names, as leaves, as parts of each
// other), with random blanks between tokens and, now and then, an escape.
struct ResultGen {
  std::mt19937 rng;
  const std::vector<std::string> words{"a", "b", "ab", "x", ",", ":", " ", "a b", "", "x:", "1"};
  std::string out;

  bool coin(int in) { return std::uniform_int_distribution<int>(0, in - 1)(rng) == 0; }
  const std::string& word() { return words[std::uniform_int_distribution<std::size_t>(0, words.size() - 1)(rng)]; }
  void blank() {
    static const char* kBlanks[] = {"", "", "", " ", "\n  ", "\t"};
    out += kBlanks[std::uniform_int_distribution<int>(0, 5)(rng)];
  }
  void string() { string(word()); }
  void string(const std::string& w) {
    if (!w.empty() && coin(8)) {  // the first letter as a \u escape
      out += fmt::format("\"\\u{:04x}", static_cast<unsigned char>(w[0]));
      out.append(w, 1) += '"';
    } else {
      out.append(1, '"').append(w) += '"';
    }
  }
  void value(int depth) {
    blank();
    const int kind = std::uniform_int_distribution<int>(0, depth > 2 ? 2 : 4)(rng);
    if (kind <= 1) string();
    else if (kind == 2) out += coin(2) ? "1" : "null";
    else {
      const bool object = kind == 3;
      out += object ? '{' : '[';
      const int n = std::uniform_int_distribution<int>(0, 3)(rng);
      std::vector<std::string> names;  // the readers refuse a name twice in one object
      for (int i = 0, written = 0; i < n; ++i) {
        const std::string& name = word();
        if (object && std::find(names.begin(), names.end(), name) != names.end()) continue;
        if (written++ > 0) out += ',';
        if (object) {
          names.push_back(name);
          blank();
          string(name);
          blank();
          out += ':';
        }
        value(depth + 1);
      }
      blank();
      out += object ? '}' : ']';
    }
    blank();
  }
};
}  // namespace

TEST_CASE("seen(): the raw search agrees with the index on generated results") {
  ResultGen g{std::mt19937(20261203)};
  int seen = 0, unseen = 0, escaped = 0;
  for (int i = 0; i < 400; ++i) {
    g.out.clear();
    g.value(0);
    const nlohmann::json parsed = nlohmann::json::parse(g.out, nullptr, false);
    REQUIRE_FALSE(parsed.is_discarded());
    // The id: half the time a string the result holds (as a name or a leaf), else any word.
    std::string id = g.word();
    if (g.coin(2)) {
      std::vector<std::string> held;
      for (const std::string& w : g.words)
        if (g.out.find('"' + w + '"') != std::string::npos) held.push_back(w);
      if (!held.empty()) id = held[std::uniform_int_distribution<std::size_t>(0, held.size() - 1)(g.rng)];
    }
    CAPTURE(g.out);
    CAPTURE(id);
    const bool want = has_leaf(parsed, id);
    CHECK(seen_after(g.out, id, false) == want);
    CHECK(seen_after(g.out, id, true) == want);
    (want ? seen : unseen) += 1;
    escaped += g.out.find('\\') != std::string::npos;
  }
  // The generator reaches every kind of case, often.
  CHECK(seen > 60);
  CHECK(unseen > 60);
  CHECK(escaped > 20);
}

TEST_CASE("append_number writes what fmt's {} writes, whole numbers included") {
  std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e15, -1e15, 1e15 - 1, -(1e15 - 1), 1e16, 123456789012345.0,
                            999999999999999.0, 1e-7, 3.0e300, 9007199254740993.0};
  for (double p = 1; p < 1e17; p *= 10) {
    xs.push_back(p);
    xs.push_back(-p);
    xs.push_back(p + 1);
    xs.push_back(p - 1);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const auto whole = static_cast<double>(static_cast<long long>(rng() % 2000000000000000ULL) - 1000000000000000LL);
    xs.push_back(whole);
    xs.push_back(whole / 8);  // halves, quarters, eighths: not whole
  }
  for (double x : xs) {
    std::string got;
    detail::append_number(got, x);
    INFO(fmt::format("{}", x));
    CHECK(got == fmt::format("{}", x));
  }
}
