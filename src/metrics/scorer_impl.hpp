// The scorer itself (trajcheck::Scorer is a handle to one), shared by the trajectory and PATH
// entry points (two files, so that scoring trajectories does not pull in the rule-language
// front end) and by the score runner's direct reader (run/score_run.cpp).
#pragma once

#include <span>
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

// One tool call; its canonical arguments are kept beside it (ScorerCore::actual_args and
// expected_args), not in it, so that a large record's calls stay small (32 bytes).
struct Call {
  std::string_view name;
  std::uint32_t turn = 0;
  bool has_args = false;
  bool failed = false;  // its result is an error (duplicates: metrics/call_figures.hpp)
  ir::Id pattern = ir::kNone;  // PATH atoms: the pattern the call must match
};
static_assert(sizeof(Call) <= 32);

// What a PATH expectation contributes: the chosen form's atoms as `expected` calls and its
// ordering count.
struct PathOrdering {
  const ir::Module* module = nullptr;
  std::uint32_t matched = 0;   // steps of the chosen form matched in an allowed order
  bool plain_sequence = false; // the chosen form has no {…} group (swap detection applies)
  bool exact = true;
  bool truncated = false;
};

// The tool calls of `t` into `out` and their canonical arguments into `args` (text in
// `canon`, added to what it holds).
void collect_calls(const Trajectory& t, ArgCanon& canon, std::vector<Call>& out, std::vector<CanonArgs>& args);
// Trim and ASCII case-fold (the readers' default normalization of tool names).
std::string fold_tool_name(std::string_view n);
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
  // Pairing scratch: the expected and actual calls of one name (pairing()), canonical
  // argument texts of one name's actual calls with their counts or positions, and the PATH
  // compatibility cache (per atom pattern and name: -1 unknown, 0, 1).
  std::vector<std::uint32_t> pair_e, pair_a, pair_s;
  std::unordered_map<std::string_view, std::uint32_t> text_count;
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> text_positions;
  std::vector<signed char> path_compat;
  std::vector<std::uint32_t> pattern_row;
  // Scratch reused between records (no steady-state allocation for these).
  std::vector<std::string_view> names;
  std::vector<std::uint32_t> eid, aid, order, group_e, group_a, block_end;
  std::vector<std::uint32_t> expected_count, actual_count;  // calls of each name, per side
  std::vector<std::uint32_t> unit_end, swap_bound;
  std::vector<std::uint32_t> group_start_e, group_start_a, fill;
  std::vector<CanonArgs> actual_args, expected_args;  // canonical arguments, per call
  std::vector<char> seen, matched;
  std::vector<char> expected_used, actual_used;  // calls already paired by exact arguments
  std::vector<CallKey> call_keys;
  // The last expected PATH text and its parse.
  struct PathCache {
    bool valid = false;
    std::string text;
    ir::Module module;
    ir::Id root = ir::kNone;
    std::string error;
  } path_cache;

  // Scores `actual` against `expected` once `actual_args` and `expected_args` hold their
  // canonical arguments (in `canon`): collect_calls computes them from trajectories, the
  // score command's direct reader while reading.
  // Set while every call's name is a view of one interned copy per distinct name (the
  // direct reader's), so that equal names have equal addresses.
  bool names_interned = false;
  ScoreResult score_canonical(const std::vector<Call>& actual,
                              const std::vector<Call>& expected,
                              const PathOrdering* path);
  ArgumentMode mode_for(std::string_view tool) const;
  // Whether expected call i may pair with actual call j (match modes), and the size of a
  // maximum pairing between the expected calls `es` and the actual calls `as` (indices, in
  // order). Without a PATH only calls of one name pair, so it is a sum over names: counts
  // where compatibility is an equivalence (names alone, exact arguments), augmenting paths
  // over that name's calls for subset and superset arguments. Set up by score_canonical.
  bool compatible(std::size_t i, std::size_t j);
  std::size_t pairing(std::span<const std::uint32_t> es, std::span<const std::uint32_t> as);
  const std::vector<Call>* cur_actual = nullptr;
  const std::vector<Call>* cur_expected = nullptr;
  const PathOrdering* cur_path = nullptr;
};

// Scores `actual` (its arguments in impl.actual_args) against an already-built PATH tree
// (score_path.cpp).
ScoreResult score_path_tree(ScorerCore& impl, const std::vector<Call>& actual,
                            const ir::Module& module, ir::Id root);
}  // namespace trajcheck::metrics
