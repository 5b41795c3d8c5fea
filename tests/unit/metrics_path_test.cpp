// Expected PATHs given as text: parsed by the rule-language front end, then scored.
#include <doctest/doctest.h>

#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"

using namespace trajcheck;
using trajcheck::test::build;

TEST_CASE("PATH text: alternatives pick the best form") {
  ToolTable tools;
  Trajectory a(&tools);
  Scorer scorer;
  const char* path = "(customer_get -> order_list | order_search_by_email) -> order_get";
  build(a, {{"order_search_by_email"}, {"order_get"}});
  ScoreResult r = scorer.score(a, path);
  REQUIRE(r.error.empty());
  CHECK(r.selection == 1.0);
  CHECK(*r.ordering == 1.0);
  CHECK(r.match.strict);
  build(a, {{"customer_get"}, {"order_get"}});
  r = scorer.score(a, path);
  CHECK(*r.ordering == doctest::Approx(2.0 / 3.0));
  CHECK(r.missing == std::vector<std::string>{"order_list"});
}

TEST_CASE("PATH text: all-of groups, options and globs") {
  ToolTable tools;
  Trajectory a(&tools);
  Scorer scorer;
  build(a, {{"settings_get"}, {"profile_get"}, {"render"}});
  CHECK(*scorer.score(a, "{profile_get, settings_get} -> render").ordering == 1.0);
  build(a, {{"render"}, {"profile_get"}, {"settings_get"}});
  ScoreResult r = scorer.score(a, "{profile_get, settings_get} -> render");
  CHECK(*r.ordering == doctest::Approx(2.0 / 3.0));
  CHECK(r.match.unordered);
  CHECK_FALSE(r.match.strict);
  build(a, {{"order_get"}, {"refund_order"}});
  // (A trailing `*` is PATH repetition, so the glob here has its `*` inside.)
  r = scorer.score(a, "ord*get -> notify? -> refund_order");
  CHECK(*r.ordering == 1.0);
  CHECK(r.selection == 1.0);  // the glob is named after the call it matched
  CHECK(r.expected_steps == 2);
}

TEST_CASE("PATH text: a syntax error is reported, not scored") {
  ToolTable tools;
  Trajectory a(&tools);
  build(a, {{"a"}});
  ScoreResult r = score(a, std::string_view("a -> -> b"));
  CHECK_FALSE(r.error.empty());
  CHECK(r.error.find("1:") != std::string::npos);
  CHECK(r.selection == 0.0);
}

TEST_CASE("PATH text: a reused scorer re-parses only when the text changes") {
  ToolTable tools;
  Trajectory a(&tools);
  Scorer scorer;
  build(a, {{"a"}, {"b"}});
  for (int i = 0; i < 2; ++i) {
    CHECK(*scorer.score(a, "a -> b").ordering == 1.0);
    CHECK_FALSE(scorer.score(a, "a -> -> b").error.empty());
    CHECK(*scorer.score(a, "b -> a").ordering == 0.5);
  }
}

TEST_CASE("PATH text: a group too large for the subset search is placed in written order, a lower bound") {
  // 17 glob members (more than the subset search takes, and not all plain tool names).
  std::string path = "{";
  for (int i = 1; i <= 17; ++i) path += (i > 1 ? ", t" : "t") + std::to_string(100 + i) + "*x";  // `*` inside: a glob
  path += "} -> done";
  ToolTable tools;
  Trajectory a(&tools);
  auto calls = [&](bool reversed) {
    a.clear();
    for (int k = 0; k < 17; ++k) {
      Step& s = a.add_step(StepType::tool_call);
      Slice name = a.store("t" + std::to_string(100 + (reversed ? 17 - k : k + 1)) + "_x");
      s.tool_name = name;
      s.raw_tool = name;
      s.turn = 1000 + static_cast<std::uint32_t>(k);
    }
    Step& s = a.add_step(StepType::tool_call);
    Slice name = a.store("done");
    s.tool_name = name;
    s.raw_tool = name;
    s.turn = 2000;
  };
  Scorer scorer;
  calls(false);
  ScoreResult r = scorer.score(a, path);
  REQUIRE(r.error.empty());
  CHECK(*r.ordering == 1.0);
  CHECK(r.explanation.find("lower bound") != std::string::npos);
  calls(true);
  r = scorer.score(a, path);
  REQUIRE(r.error.empty());
  INFO(r.explanation);
  CHECK(*r.ordering < 1.0);  // any order is allowed, but only the written one is tried
  CHECK(r.explanation.find("lower bound") != std::string::npos);
}
