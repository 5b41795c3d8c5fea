// Duplicate calls and loop depth (metrics/call_figures.hpp), the definitions score and eval
// share; and score's duplicates through both of its readers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "metrics/call_figures.hpp"
#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"

using namespace trajcheck;
using trajcheck::metrics::CallKey;

namespace {
std::uint32_t dups(const std::vector<CallKey>& calls) {
  std::vector<std::uint32_t> order;
  return metrics::count_duplicates(calls, order);
}
std::uint32_t depth(const std::vector<std::string_view>& tools) { return metrics::loop_depth(tools); }
}  // namespace

TEST_CASE("duplicates: repeats of an earlier successful call with equal arguments") {
  CHECK(dups({}) == 0);
  CHECK(dups({{"search", "{\"q\":\"x\"}"}, {"search", "{\"q\":\"x\"}"}, {"search", "{\"q\":\"y\"}"}}) == 1);
  CHECK(dups({{"search", "{}"}, {"read", "{}"}, {"search", "{}"}, {"search", "{}"}}) == 2);
  // Repeating a failed call is a retry; a repeat of the success after it is a duplicate.
  CHECK(dups({{"search", "{}", true}, {"search", "{}", false}, {"search", "{}", false}}) == 1);
  CHECK(dups({{"search", "{}", true}, {"search", "{}", true}}) == 0);
  // A repeat of a success counts even when it fails itself.
  CHECK(dups({{"search", "{}", false}, {"search", "{}", true}}) == 1);
  // Same arguments, another tool: no duplicate.
  CHECK(dups({{"a", "{}"}, {"b", "{}"}}) == 0);
}

TEST_CASE("has_repeated_call ignores status") {
  std::vector<std::uint32_t> order;
  std::vector<CallKey> failed_twice = {{"s", "{}", true}, {"s", "{}", true}};
  CHECK(metrics::has_repeated_call(failed_twice, order));
  std::vector<CallKey> distinct = {{"s", "{}"}, {"s", "{\"a\":1}"}};
  CHECK_FALSE(metrics::has_repeated_call(distinct, order));
}

TEST_CASE("loop depth counts cycles, not only runs of one tool") {
  CHECK(depth({}) == 0);
  CHECK(depth({"a"}) == 1);
  CHECK(depth({"a", "b", "c"}) == 1);
  CHECK(depth({"a", "a", "a", "b"}) == 3);
  CHECK(depth({"search", "read", "search", "read", "search", "read", "search", "read", "search", "read"}) == 5);
  CHECK(depth({"plan", "search", "read", "search", "read", "answer"}) == 2);
  CHECK(depth({"a", "b", "c", "a", "b", "c", "a"}) == 2);
  CHECK(depth({"a", "b", "a"}) == 1);
  // A cycle of kMaxLoopPeriod calls is found; one call longer is not.
  std::vector<std::string> names;
  for (std::size_t i = 0; i <= metrics::kMaxLoopPeriod; ++i) names.push_back("t" + std::to_string(i));
  std::vector<std::string_view> longest, too_long;
  for (int rep = 0; rep < 2; ++rep) {
    for (std::size_t i = 0; i < metrics::kMaxLoopPeriod; ++i) longest.push_back(names[i]);
    for (std::size_t i = 0; i <= metrics::kMaxLoopPeriod; ++i) too_long.push_back(names[i]);
  }
  CHECK(depth(longest) == 2);
  CHECK(depth(too_long) == 1);
}

TEST_CASE("score counts duplicates with the shared definition, whichever reader") {
  ToolTable tools;
  Trajectory expected{&tools}, actual{&tools};
  trajcheck::test::build(expected, {{"search"}});
  trajcheck::test::build(actual, {{"search"}, {"search"}, {"search"}});
  CHECK(score(actual, expected).duplicates == 2);
  // The first call failed: the second is a retry, the third repeats the second's success.
  actual.steps()[0].status = StepStatus::error;
  CHECK(score(actual, expected).duplicates == 1);
}
