// Duplicate calls and loop depth: the one definition score and eval share.
#include "metrics/call_figures.hpp"

#include <algorithm>
#include <numeric>

namespace trajcheck::metrics {

namespace {
// Sorts call indices so that equal (tool, arguments) keys are adjacent, each group in call
// order. Lengths first spare most text comparisons.
void group_equal_calls(std::span<const CallKey> calls, std::vector<std::uint32_t>& order) {
  order.resize(calls.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const CallKey &a = calls[x], &b = calls[y];
    if (a.tool.size() != b.tool.size()) return a.tool.size() < b.tool.size();
    if (a.args.size() != b.args.size()) return a.args.size() < b.args.size();
    if (int c = a.tool.compare(b.tool)) return c < 0;
    if (int c = a.args.compare(b.args)) return c < 0;
    return x < y;
  });
}

bool same_call(const CallKey& a, const CallKey& b) { return a.tool == b.tool && a.args == b.args; }
}  // namespace

std::uint32_t count_duplicates(std::span<const CallKey> calls, std::vector<std::uint32_t>& order) {
  group_equal_calls(calls, order);
  std::uint32_t duplicates = 0;
  bool succeeded = false;  // an earlier call of the current group succeeded
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || !same_call(calls[order[k]], calls[order[k - 1]])) succeeded = false;
    if (succeeded) ++duplicates;
    succeeded = succeeded || !calls[order[k]].failed;
  }
  return duplicates;
}

bool has_repeated_call(std::span<const CallKey> calls, std::vector<std::uint32_t>& order) {
  group_equal_calls(calls, order);
  for (std::size_t k = 1; k < order.size(); ++k)
    if (same_call(calls[order[k]], calls[order[k - 1]])) return true;
  return false;
}

std::uint32_t loop_depth(std::span<const std::string_view> tools) {
  const std::size_t n = tools.size();
  if (n == 0) return 0;
  std::size_t best = 1;
  const std::size_t max_period = std::min(n / 2, kMaxLoopPeriod);
  for (std::size_t p = 1; p <= max_period; ++p) {
    // A run of `streak` calls each equal to the call p before it: the block of p calls
    // before the run, repeated streak / p more times.
    std::size_t streak = 0;
    for (std::size_t i = p; i < n; ++i) {
      if (tools[i] == tools[i - p]) best = std::max(best, ++streak / p + 1);
      else streak = 0;
    }
  }
  return static_cast<std::uint32_t>(best);
}

}  // namespace trajcheck::metrics
