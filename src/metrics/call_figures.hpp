// Figures of a run's tool calls that `score` and `eval` both report, defined once
// (docs/metrics.md, "Duplicates" and "Loop depth"): the duplicate calls and the loop depth.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace trajcheck::metrics {

// A tool call as the duplicate count sees it: its normalized tool name, its arguments in
// canonical form (json/canon.hpp's whole text; equal text = deeply equal arguments) and
// whether its result is an error.
struct CallKey {
  std::string_view tool;
  std::string_view args;
  bool failed = false;
};

// Duplicates: the calls that repeat an earlier call of the same tool with equal arguments
// whose result was not an error. Repeating a failed call is a retry, not a duplicate (eval
// counts retries apart). `order` is scratch. O(n log n), no allocation beyond `order`.
std::uint32_t count_duplicates(std::span<const CallKey> calls, std::vector<std::uint32_t>& order);

// Whether two calls have the same tool and equal arguments, whatever their status: with no
// such pair there is no duplicate, whatever the calls' results (`order` is scratch).
bool has_repeated_call(std::span<const CallKey> calls, std::vector<std::uint32_t>& order);

// The longest cycle searched for by loop_depth (calls in one repetition of the cycle).
inline constexpr std::size_t kMaxLoopPeriod = 32;

// Loop depth: the most times one block of consecutive calls (one tool, or a cycle such as
// search -> read) is repeated back to back, by tool name. `search read search read search
// read` has depth 3, `a a a b` depth 3, a run without a repeat depth 1, no calls depth 0.
// Cycles of up to kMaxLoopPeriod calls are found; O(kMaxLoopPeriod × calls).
std::uint32_t loop_depth(std::span<const std::string_view> tools);

}  // namespace trajcheck::metrics
