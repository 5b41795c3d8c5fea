// trajcheck/metrics.hpp — the classic tool-use scores of `trajcheck score`.
//
//   trajcheck::ScoreOptions opt;                       // --selection, --weights, --tool-args, …
//   trajcheck::Scorer scorer(opt);                     // one per thread; reuses its scratch
//   trajcheck::ScoreResult r = scorer.score({.expected = reference, .actual = run});
//   trajcheck::ScoreResult p = scorer.score({.expected = "a -> {b, c}", .actual = run});  // a PATH
//   use(r.selection, r.ordering, r.overall, r.match.superset, r.explanation);
//
// Only the tool_call steps of either trajectory are scored; names are the normalized
// ones (Step::tool_name). Every number is defined in docs/metrics.md. A Scorer holds
// scratch memory and is not thread-safe; ScoreOptions are copied into it. A result owns
// all of its strings. Nothing throws: an expected PATH that does not parse gives a result
// whose `error` says why (with the PATH's own line:col).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trajcheck/trace.hpp"

namespace trajcheck {
namespace metrics {
struct ScorerCore;  // the library's own
}  // namespace metrics

enum class SelectionMetric : std::uint8_t { jaccard, recall, precision, f1 };
std::string_view to_string(SelectionMetric m);
bool parse_selection_metric(std::string_view name, SelectionMetric* out);

// How the arguments of two calls of the same tool must relate for the calls to match.
//   exact    equal objects (deep; numbers by value, arrays by position, key order free)
//   ignore   names alone decide
//   superset the actual arguments contain every expected key with an equal value
//   subset   every actual key is among the expected ones, with an equal value
enum class ArgumentMode : std::uint8_t { exact, ignore, subset, superset };
std::string_view to_string(ArgumentMode m);
bool parse_argument_mode(std::string_view name, ArgumentMode* out);

struct ScoreOptions {
  SelectionMetric selection = SelectionMetric::jaccard;
  bool multiset = false;                // count repeated calls in selection, missing, extra
  double selection_weight = 0.6;        // --weights S,O
  double ordering_weight = 0.4;
  std::uint32_t min_order_length = 0;   // fewer expected steps: ordering is null
  ArgumentMode tool_args = ArgumentMode::exact;
  // Per-tool argument modes (normalized tool name of the expected call), override tool_args.
  std::vector<std::pair<std::string, ArgumentMode>> tool_args_for;
};

struct MatchVerdicts {
  bool strict = false;     // same calls, same order (calls of one actual turn: any order)
  bool unordered = false;  // equal as multisets of calls
  bool subset = false;     // every actual call matched by a distinct expected call
  bool superset = false;   // every expected call matched by a distinct actual call
};

struct ScoreResult {
  double selection = 0;
  std::optional<double> ordering;   // null below --min-order-length
  double overall = 0;
  std::vector<std::string> missing;   // expected tools not called (first-appearance order)
  std::vector<std::string> extra;     // tools called but not expected
  std::vector<std::string> repeated;  // tools called more often than expected
  // Expected tools called out of order: the two of an adjacent swap that, undone, matches
  // more steps; else those called but outside the best in-order match. Empty when in order.
  std::vector<std::string> misordered;
  std::uint32_t duplicates = 0;       // repeats of an earlier successful call (same tool, equal arguments)
  MatchVerdicts match;
  std::optional<double> arguments;  // null when no expected call carries arguments
  // For each name-matched pair whose arguments differ: "tool: key, key".
  std::vector<std::string> argument_differences;
  std::uint32_t expected_steps = 0;  // length of the (best alternative of the) expectation
  std::uint32_t actual_calls = 0;
  std::string explanation;
  std::string error;  // non-empty: the expectation could not be used; scores are 0
};

// The two sides of a score, named so that they cannot be swapped by position: designated
// initializers must follow this order, and both sides are required.
//   trajcheck::score({.expected = reference, .actual = run}, options);
struct ScoreSides {
  const Trajectory& expected;
  const Trajectory& actual;
};
// The expected side as a PATH of the rule language (`name` labels its parse errors).
struct ScorePathSides {
  std::string_view expected;
  const Trajectory& actual;
  std::string_view name = "<expected>";
};

class Scorer {
 public:
  explicit Scorer(ScoreOptions options = {});
  ~Scorer();
  Scorer(Scorer&&) noexcept;
  Scorer& operator=(Scorer&&) noexcept;

  const ScoreOptions& options() const;

  // Expected side as a trajectory (its tool calls, in order, with their arguments).
  ScoreResult score(const Trajectory& actual, const Trajectory& expected);
  // Expected side as a PATH of the rule language; `name` labels parse errors.
  ScoreResult score(const Trajectory& actual, std::string_view expected_path,
                    std::string_view name = "<expected>");
  ScoreResult score(const ScoreSides& s) { return score(s.actual, s.expected); }
  ScoreResult score(const ScorePathSides& s) { return score(s.actual, s.expected, s.name); }

 private:
  std::unique_ptr<metrics::ScorerCore> impl_;
};

// One-shot conveniences (build a Scorer each call).
ScoreResult score(const Trajectory& actual, const Trajectory& expected,
                  const ScoreOptions& options = {});
ScoreResult score(const Trajectory& actual, std::string_view expected_path,
                  const ScoreOptions& options = {});
inline ScoreResult score(const ScoreSides& s, const ScoreOptions& options = {}) {
  return score(s.actual, s.expected, options);
}
inline ScoreResult score(const ScorePathSides& s, const ScoreOptions& options = {}) {
  return Scorer(options).score(s);
}

}  // namespace trajcheck
