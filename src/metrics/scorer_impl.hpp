// The scorer itself (trajcheck::Scorer is a handle to one), shared by the trajectory and PATH
// entry points (two files, so that scoring trajectories does not pull in the rule-language
// front end) and by the score runner's direct reader (run/score_run.cpp).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/ir.hpp"
#include "json/canon.hpp"
#include "metrics/call_figures.hpp"
#include "metrics/matching.hpp"
#include "metrics/ordering.hpp"
#include "trajcheck/metrics.hpp"

namespace trajcheck::metrics {

// Arguments are compared by their canonical JSON text (src/json).
using json::ArgCanon;
using json::CanonArgs;
using json::CanonMember;

struct Call {
  std::string_view name;
  std::string_view args;  // raw JSON; empty when absent
  std::uint32_t turn = 0;
  bool has_args = false;
  bool failed = false;  // its result is an error (duplicates: metrics/call_figures.hpp)
  ir::Id pattern = ir::kNone;  // PATH atoms: the pattern the call must match
};

// What a PATH expectation contributes: the chosen form's atoms as `expected` calls and its
// ordering count.
struct PathOrdering {
  const ir::Module* module = nullptr;
  std::uint32_t matched = 0;   // steps of the chosen form matched in an allowed order
  bool plain_sequence = false; // the chosen form has no {…} group (swap detection applies)
  bool exact = true;
  bool truncated = false;
};

void collect_calls(const Trajectory& t, std::vector<Call>& out);
// Trim and ASCII case-fold (the readers' default normalization of tool names).
std::string fold_tool_name(std::string_view n);
// Ordering and matching compare every actual call with every expected step; a record whose
// product of the two is larger is not scored (ScoreResult::error says so), which bounds the
// memory and time one record can take (docs/limits.md).
constexpr std::uint64_t kMaxScoreCells = std::uint64_t(1) << 24;
// Whether a record is too large to score (kMaxScoreCells); then `out` holds the error.
bool too_large(std::size_t actual_calls, std::size_t expected_steps, ScoreResult& out);

struct ScorerCore {
  explicit ScorerCore(ScoreOptions options = {});
  // Scorer::score, both forms.
  ScoreResult score(const Trajectory& actual, const Trajectory& expected);
  ScoreResult score(const Trajectory& actual, std::string_view expected_path, std::string_view name);

  ScoreOptions opt;
  ArgCanon canon;
  BipartiteMatcher matcher;
  FormEvaluator evaluator;
  std::vector<Call> actual, expected;
  std::vector<std::uint32_t> name_slots;  // local name ids by hash (1-based; 0 = free)
  std::vector<char> adj;
  // Scratch reused between records (no steady-state allocation for these).
  std::vector<std::string_view> names;
  std::vector<std::uint32_t> eid, aid, order, group_e, group_a, block_end;
  std::vector<std::uint32_t> expected_count, actual_count;  // calls of each name, per side
  std::vector<std::uint32_t> unit_end, swap_bound;
  std::vector<std::uint32_t> group_start_e, group_start_a, fill;
  std::vector<CanonArgs> actual_args, expected_args;  // canonical arguments, per call
  std::vector<char> seen, matched, block_adj;
  std::vector<char> expected_used, actual_used;  // calls already paired by exact arguments
  std::vector<CallKey> call_keys;
  BipartiteMatcher block_matcher;
  // The last expected PATH text and its parse.
  struct PathCache {
    bool valid = false;
    std::string text;
    ir::Module module;
    ir::Id root = ir::kNone;
    std::string error;
  } path_cache;

  ScoreResult score_calls(const std::vector<Call>& actual,
                          const std::vector<Call>& expected,
                          const PathOrdering* path);
  // score_calls once `actual_args` and `expected_args` hold the canonical arguments of
  // `actual` and `expected` (in `canon`): the score command's direct reader computes them
  // while reading.
  // Set while every call's name is a view of one interned copy per distinct name (the
  // direct reader's), so that equal names have equal addresses.
  bool names_interned = false;
  ScoreResult score_canonical(const std::vector<Call>& actual,
                              const std::vector<Call>& expected,
                              const PathOrdering* path);
  ArgumentMode mode_for(std::string_view tool) const;
};

// Scores `actual` against an already-built PATH tree (score_path.cpp).
ScoreResult score_path_tree(ScorerCore& impl, const std::vector<Call>& actual,
                            const ir::Module& module, ir::Id root);
}  // namespace trajcheck::metrics
