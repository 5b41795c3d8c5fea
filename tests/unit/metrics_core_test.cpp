// The classic scores on hand-built trajectories: selection, ordering, overall, the four
// match modes with every argument mode, arguments, duplicates and explanations.
#include <doctest/doctest.h>

#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"

using namespace trajcheck;
using trajcheck::test::build;

namespace {
struct Fixture {
  ToolTable tools;
  Trajectory actual{&tools}, expected{&tools};
};
}  // namespace

TEST_CASE("selection: Jaccard with missing and extra tools") {
  Fixture f;
  build(f.expected, {{"load"}, {"analyze"}, {"transform"}, {"save"}, {"validate_input"}});
  build(f.actual, {{"load"}, {"analyze"}, {"transform"}, {"save"}, {"retry_search"}});
  ScoreResult r = score(f.actual, f.expected);
  CHECK(r.selection == doctest::Approx(4.0 / 6.0));
  REQUIRE(r.missing.size() == 1);
  CHECK(r.missing[0] == "validate_input");
  REQUIRE(r.extra.size() == 1);
  CHECK(r.extra[0] == "retry_search");
  CHECK(r.explanation.find("called 4/5 expected tools (missed: validate_input; extra: retry_search)") !=
        std::string::npos);

  ScoreOptions o;
  o.selection = SelectionMetric::recall;
  CHECK(score(f.actual, f.expected, o).selection == doctest::Approx(0.8));
  o.selection = SelectionMetric::precision;
  CHECK(score(f.actual, f.expected, o).selection == doctest::Approx(0.8));
  o.selection = SelectionMetric::f1;
  CHECK(score(f.actual, f.expected, o).selection == doctest::Approx(0.8));
}

TEST_CASE("selection: both empty is 1, one side empty is 0") {
  Fixture f;
  build(f.expected, {});
  build(f.actual, {});
  ScoreResult r = score(f.actual, f.expected);
  CHECK(r.selection == 1.0);
  CHECK(*r.ordering == 1.0);
  CHECK(r.overall == 1.0);
  CHECK(r.match.strict);
  CHECK(r.match.unordered);
  CHECK(r.match.subset);
  CHECK(r.match.superset);
  CHECK_FALSE(r.arguments.has_value());

  build(f.actual, {{"search"}});
  for (SelectionMetric m : {SelectionMetric::jaccard, SelectionMetric::recall,
                            SelectionMetric::precision, SelectionMetric::f1}) {
    ScoreOptions o;
    o.selection = m;
    CHECK(score(f.actual, f.expected, o).selection == 0.0);
  }
  CHECK(*score(f.actual, f.expected).ordering == 1.0);  // nothing expected: nothing out of order
}

TEST_CASE("multiset selection counts repeated calls") {
  Fixture f;
  build(f.expected, {{"a"}});
  build(f.actual, {{"a"}, {"a"}});
  CHECK(score(f.actual, f.expected).selection == 1.0);
  ScoreOptions o;
  o.multiset = true;
  ScoreResult r = score(f.actual, f.expected, o);
  CHECK(r.selection == doctest::Approx(0.5));
  REQUIRE(r.extra.size() == 1);
  CHECK(r.extra[0] == "a");
  CHECK(r.repeated.size() == 1);
  CHECK(r.duplicates == 1);
}

TEST_CASE("[a,a] vs [a] in every match mode") {
  Fixture f;
  for (ArgumentMode mode : {ArgumentMode::exact, ArgumentMode::ignore, ArgumentMode::subset,
                            ArgumentMode::superset}) {
    ScoreOptions o;
    o.tool_args = mode;
    build(f.expected, {{"a"}});
    build(f.actual, {{"a"}, {"a"}});
    ScoreResult r = score(f.actual, f.expected, o);
    CHECK_FALSE(r.match.strict);
    CHECK_FALSE(r.match.unordered);
    CHECK_FALSE(r.match.subset);  // the second actual call has no expected partner
    CHECK(r.match.superset);
    // and the other way round
    r = score(f.expected, f.actual, o);
    CHECK_FALSE(r.match.strict);
    CHECK_FALSE(r.match.unordered);
    CHECK(r.match.subset);
    CHECK_FALSE(r.match.superset);
  }
}

TEST_CASE("greedy false negative: superset arguments pair optimally") {
  Fixture f;
  ScoreOptions o;
  o.tool_args = ArgumentMode::superset;
  build(f.expected, {{"f", R"({"a":1})"}, {"f", R"({"a":1,"b":2})"}});
  build(f.actual, {{"f", R"({"a":1,"b":2})"}, {"f", R"({"a":1,"c":3})"}});
  ScoreResult r = score(f.actual, f.expected, o);
  CHECK(r.match.superset);
  CHECK(r.match.unordered);
  CHECK(r.match.subset);  // trajectory subset: the same pairs serve both directions
  // Any order of either list gives the same verdict.
  build(f.actual, {{"f", R"({"a":1,"c":3})"}, {"f", R"({"a":1,"b":2})"}});
  CHECK(score(f.actual, f.expected, o).match.superset);
  build(f.expected, {{"f", R"({"a":1,"b":2})"}, {"f", R"({"a":1})"}});
  CHECK(score(f.actual, f.expected, o).match.superset);
}

TEST_CASE("argument subset and superset are not swapped") {
  Fixture f;
  build(f.expected, {{"f", R"({"a":1})"}});
  build(f.actual, {{"f", R"({"a":1,"b":2})"}});
  ScoreOptions o;
  o.tool_args = ArgumentMode::superset;  // actual contains every expected key
  CHECK(score(f.actual, f.expected, o).match.unordered);
  o.tool_args = ArgumentMode::subset;  // every actual key among the expected: b is not
  CHECK_FALSE(score(f.actual, f.expected, o).match.unordered);
  o.tool_args = ArgumentMode::exact;
  CHECK_FALSE(score(f.actual, f.expected, o).match.unordered);
  o.tool_args = ArgumentMode::ignore;
  CHECK(score(f.actual, f.expected, o).match.unordered);

  build(f.expected, {{"f", R"({"a":1,"b":2})"}});
  build(f.actual, {{"f", R"({"a":1})"}});
  o.tool_args = ArgumentMode::subset;
  CHECK(score(f.actual, f.expected, o).match.unordered);
  o.tool_args = ArgumentMode::superset;
  CHECK_FALSE(score(f.actual, f.expected, o).match.unordered);
}

TEST_CASE("per-tool argument modes override the default") {
  Fixture f;
  build(f.expected, {{"search", R"({"q":"x"})"}, {"get", R"({"id":1})"}});
  build(f.actual, {{"search", R"({"q":"y"})"}, {"get", R"({"id":1})"}});
  ScoreOptions o;
  CHECK_FALSE(score(f.actual, f.expected, o).match.strict);
  o.tool_args_for = {{"Search", ArgumentMode::ignore}};
  CHECK(score(f.actual, f.expected, o).match.strict);
}

TEST_CASE("values compare deeply: numbers by value, strings never numbers, arrays by position") {
  Fixture f;
  auto same = [&](const char* e, const char* a) {
    build(f.expected, {{"f", e}});
    build(f.actual, {{"f", a}});
    return score(f.actual, f.expected).match.strict;
  };
  CHECK(same(R"({"a":1})", R"({"a":1.0})"));
  CHECK(same(R"({"a":10})", R"({"a":1e1})"));
  CHECK_FALSE(same(R"({"a":"1"})", R"({"a":1})"));
  CHECK(same(R"({"a":[1,2],"b":{"x":1,"y":2}})", R"({"b":{"y":2,"x":1},"a":[1,2]})"));
  CHECK_FALSE(same(R"({"a":[1,2]})", R"({"a":[2,1]})"));
  CHECK_FALSE(same(R"({"a":null})", R"({})"));
  CHECK(same("{}", ""));  // absent actual arguments are the empty object
  CHECK_FALSE(same("{}", R"({"a":1})"));
  CHECK(same("", R"({"a":1})"));  // an expected call without arguments constrains the name only
  CHECK_FALSE(same(R"({"a":true})", R"({"a":1})"));
}

TEST_CASE("ordering: LCS over the expected length, swaps named") {
  Fixture f;
  build(f.expected, {{"load"}, {"analyze"}, {"transform"}, {"save"}});
  build(f.actual, {{"load"}, {"transform"}, {"analyze"}, {"save"}});
  ScoreResult r = score(f.actual, f.expected);
  CHECK(r.selection == 1.0);
  CHECK(*r.ordering == doctest::Approx(0.75));
  CHECK(r.overall == doctest::Approx(0.6 * 1.0 + 0.4 * 0.75));
  CHECK(r.explanation.find("Ordering 75% (swapped analyze and transform)") != std::string::npos);
  CHECK_FALSE(r.match.strict);
  CHECK(r.match.unordered);

  build(f.actual, {{"save"}, {"load"}, {"analyze"}, {"transform"}});
  r = score(f.actual, f.expected);
  CHECK(*r.ordering == doctest::Approx(0.75));
  CHECK(r.explanation.find("out of order: save") != std::string::npos);
}

TEST_CASE("overall: weighted selection and ordering, and selection alone without ordering") {
  Fixture f;
  build(f.expected, {{"a"}, {"b"}, {"c"}, {"d"}, {"e"}});
  build(f.actual, {{"a"}, {"c"}, {"b"}, {"d"}});
  ScoreOptions o;
  o.selection = SelectionMetric::recall;
  ScoreResult r = score(f.actual, f.expected, o);
  CHECK(r.selection == doctest::Approx(0.8));
  CHECK(*r.ordering == doctest::Approx(0.6));
  CHECK(r.overall == doctest::Approx(0.6 * 0.8 + 0.4 * 0.6));
  o.selection_weight = 1;
  o.ordering_weight = 3;
  CHECK(score(f.actual, f.expected, o).overall == doctest::Approx((0.8 + 3 * 0.6) / 4));
  o.min_order_length = 6;
  r = score(f.actual, f.expected, o);
  CHECK_FALSE(r.ordering.has_value());
  CHECK(r.overall == doctest::Approx(0.8));
  CHECK(r.explanation.find("Ordering not scored") != std::string::npos);
}

TEST_CASE("strict: calls of one actual turn may be permuted among themselves") {
  Fixture f;
  build(f.expected, {{"a"}, {"b"}, {"c"}});
  build(f.actual, {{"b", "", 1}, {"a", "", 1}, {"c", "", 2}});
  ScoreResult same_turn = score(f.actual, f.expected);
  CHECK(same_turn.match.strict);
  CHECK(*same_turn.ordering == 1.0);  // calls issued together have no order to get wrong
  CHECK(same_turn.explanation.find("swapped") == std::string::npos);
  build(f.actual, {{"b", "", 1}, {"a", "", 2}, {"c", "", 3}});
  ScoreResult r = score(f.actual, f.expected);
  CHECK_FALSE(r.match.strict);
  CHECK(*r.ordering == doctest::Approx(2.0 / 3.0));
  CHECK(r.explanation.find("swapped a and b") != std::string::npos);
  CHECK(r.match.unordered);
  build(f.actual, {{"a", "", 1}, {"c", "", 2}, {"b", "", 2}});
  CHECK(score(f.actual, f.expected).match.strict);
}

TEST_CASE("arguments: share of name-matched calls with equal arguments, differing keys named") {
  Fixture f;
  build(f.expected, {{"order_get", R"({"id":"o1"})"},
                     {"refund", R"({"id":"o1","amount":10})"},
                     {"notify", R"({"to":"u"})"},
                     {"close"}});
  build(f.actual, {{"order_get", R"({"id":"o1"})"},
                   {"refund", R"({"id":"o1","amount":12,"note":"x"})"},
                   {"notify", R"({"to":"u"})"},
                   {"close", R"({"x":1})"}});
  ScoreResult r = score(f.actual, f.expected);
  REQUIRE(r.arguments.has_value());
  CHECK(*r.arguments == doctest::Approx(2.0 / 3.0));  // `close` expects no arguments: not counted
  REQUIRE(r.argument_differences.size() == 1);
  CHECK(r.argument_differences[0] == "refund: amount, note");
  CHECK(r.explanation.find("Arguments 67% (refund: amount, note)") != std::string::npos);

  build(f.expected, {{"a"}, {"b"}});
  build(f.actual, {{"a", R"({"x":1})"}});
  CHECK_FALSE(score(f.actual, f.expected).arguments.has_value());
}

TEST_CASE("duplicates: identical tool and deeply-equal arguments") {
  Fixture f;
  build(f.expected, {{"search"}});
  build(f.actual, {{"search", R"({"q":"x","n":1})"},
                   {"search", R"({"n":1.0,"q":"x"})"},
                   {"search", R"({"q":"y"})"},
                   {"search", R"({"q":"x","n":1})"}});
  ScoreResult r = score(f.actual, f.expected);
  CHECK(r.duplicates == 2);
  CHECK(r.explanation.find("2 duplicate calls") != std::string::npos);
  CHECK(r.repeated.size() == 1);
}

TEST_CASE("arguments that are not JSON equal only the same text") {
  Fixture f;
  build(f.expected, {{"f", "\"not json"}});
  build(f.actual, {{"f", "\"not json"}});
  CHECK(score(f.actual, f.expected).match.strict);
  build(f.actual, {{"f", "{}"}});
  CHECK_FALSE(score(f.actual, f.expected).match.strict);
}
