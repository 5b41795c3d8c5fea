// A `where` condition reads one member of flat arguments (or of a step's other fields) from the
// raw text without a parse (StepDocs::flat_member): whenever it does, its value is the one the
// parse gives (kind, string, number), and a member it is not sure of is left to the parse.
#include <doctest/doctest.h>

#include <iterator>
#include <random>
#include <string>

#include <fmt/format.h>

#include "checker/condition_eval.hpp"
#include "readers_support.hpp"

using namespace trajcheck;
using detail::Value;

namespace {

// One native step {"tool":"t","arguments":ARGS} (or, with `field`, {"type":"approval", FIELD…}).
Trajectory one_step(const std::string& step, ToolTable& tools) {
  TraceParser parser(NormalizeOptions{});
  RawRecord raw;
  raw.text = R"({"trace_id":"t","steps":[)" + step + "]}";
  Trajectory t(&tools), out(&tools);
  ParseOutcome o = parser.parse(raw, t, [&](Trajectory& tr) { out = tr; });
  REQUIRE(o.ok());
  return out;
}

// The parse's value of member `key` of `root` (absent when there is none).
Value parsed_member(const simdjson::dom::element* root, const std::string& key) {
  simdjson::dom::object obj;
  simdjson::dom::element el;
  if (root == nullptr || root->get_object().get(obj) || obj.at_key(key).get(el)) return {};
  return detail::value_of(el);
}

void check_same(const Value& flat, const Value& parsed) {
  CHECK(static_cast<int>(flat.kind) == static_cast<int>(parsed.kind));
  if (flat.kind != parsed.kind) return;
  if (flat.kind == Value::Kind::string) CHECK(flat.string == parsed.string);
  if (flat.kind == Value::Kind::number) CHECK(flat.number == parsed.number);
  if (flat.kind == Value::Kind::boolean) CHECK(flat.boolean == parsed.boolean);
}

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(std::uint64_t seed) : rng(seed) {}
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng() % n); }
  std::string name() {
    static const char* kNames[] = {"a", "b", "order_id", "amount", "a b", "\\u0061", "é"};
    return kNames[pick(std::size(kNames))];
  }
  std::string digits(std::size_t n) {
    std::string d;
    for (std::size_t i = 0; i < n; ++i) d += static_cast<char>('0' + pick(10));
    return d;
  }
  std::string value() {
    static const char* kOther[] = {"\"ord_81\"", "\"\"", "\"damaged item\"", "\"a \\\" quote\"", "\"caf\xc3\xa9\"",
                                   "\"\\u0041\"", "0", "-0", "-7", "1.5", "1e3", "true", "false", "null",
                                   "[\"x\",1]", "{\"a\":\"x\"}", "[]"};
    switch (pick(4)) {
      case 0: return (pick(3) == 0 ? "-" : "") + std::to_string(1 + pick(9)) + digits(pick(20));
      default: return kOther[pick(std::size(kOther))];
    }
  }
  std::string object() {
    const char* blank = pick(8) == 0 ? " " : "";
    std::string o = "{";
    for (std::size_t i = 0, n = pick(6); i < n; ++i)
      o += (i ? "," : "") + std::string(blank) + "\"" + name() + "\":" + blank + value();
    return o + "}";
  }
};

}  // namespace

TEST_CASE("flat_member: a member read without a parse has the parse's value") {
  ToolTable tools;
  Gen g(44);
  int taken = 0, left = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string args = g.object();
    CAPTURE(args);
    const bool as_field = i % 4 == 0;  // the step's own fields: {"type":"approval", "a": …}
    std::string step = as_field ? R"({"type":"approval",)" + args.substr(1)
                                : R"({"tool":"t","arguments":)" + args + "}";
    if (as_field && args == "{}") step = R"({"type":"approval"})";
    TraceParser probe(NormalizeOptions{});
    RawRecord raw;
    raw.text = R"({"trace_id":"t","steps":[)" + step + "]}";
    Trajectory scratch(&tools);
    if (!probe.parse(raw, scratch, [](Trajectory&) {}).ok()) continue;  // a name the reader refuses twice
    const Trajectory t = one_step(step, tools);
    const auto root = as_field ? ir::FieldPath::Root::step : ir::FieldPath::Root::arguments;
    for (const char* key : {"a", "b", "order_id", "amount", "a b", "é", "missing"}) {
      CAPTURE(key);
      detail::StepDocs docs;
      docs.begin_trace(t);
      docs.begin_step(t.steps()[0], 0);
      Value flat;
      if (!docs.flat_member(root, key, &flat)) {
        ++left;
        continue;
      }
      ++taken;
      check_same(flat, parsed_member(as_field ? docs.extra() : docs.root(root), key));
    }
  }
  // Both ways were taken.
  CHECK(taken > 2000);
  CHECK(left > 2000);
}

TEST_CASE("flat_member: plain strings and short integers only; the rest is the parse's") {
  ToolTable tools;
  Trajectory t(&tools);  // the values read point into it
  detail::StepDocs docs;
  auto member = [&](const std::string& args, const char* key, Value* v) {
    t = one_step(R"({"tool":"t","arguments":)" + args + "}", tools);
    docs.begin_trace(t);
    docs.begin_step(t.steps()[0], 0);
    return docs.flat_member(ir::FieldPath::Root::arguments, key, v);
  };
  Value v;
  REQUIRE(member(R"({"order_id":"ord_1","amount":120})", "order_id", &v));
  CHECK(v.kind == Value::Kind::string);
  CHECK(v.string == "ord_1");
  REQUIRE(member(R"({"order_id":"ord_1","amount":-120})", "amount", &v));
  CHECK(v.kind == Value::Kind::number);
  CHECK(v.number == -120);
  REQUIRE(member(R"({"order_id":"ord_1"})", "amount", &v));
  CHECK(v.kind == Value::Kind::absent);
  REQUIRE(member(R"({"a":999999999999999})", "a", &v));
  CHECK(v.number == 999999999999999.0);
  CHECK(!member(R"({"a":1000000000000000})", "a", &v));  // 16 digits
  CHECK(!member(R"({"a":"x","b":18446744073709551616})", "a", &v));  // the parse refuses the whole text
  CHECK(!member(R"({"a":-0})", "a", &v));
  CHECK(!member(R"({"a":1.5})", "a", &v));
  CHECK(!member(R"({"a":"x\"y"})", "a", &v));
  CHECK(!member(R"({"a":["x"]})", "a", &v));
  CHECK(!member(R"({"a":{"b":"x"}})", "a", &v));
}
