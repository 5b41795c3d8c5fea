// Ordering scores: LCS for plain expected sequences, and for expected PATHs the largest
// number of expected steps matched, in an order the PATH allows, to distinct actual calls.
//
// A PATH is first expanded into forms (one per choice of alternatives, options and
// repetitions: `X?` and `X*` as zero or one X, `X+` as one X); a form is a tree of
// sequences and {…} all-of groups over atoms. Evaluation is a DP over positions of the
// actual calls; a group is a DP over subsets of its members (members as whole units, in any
// order). See docs/metrics.md for exactness limits.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace trajcheck::metrics {

struct FormNode {
  enum class Kind : std::uint8_t { atom, seq, group };
  Kind kind = Kind::atom;
  ir::Id pattern = ir::kNone;           // atom
  std::vector<std::uint32_t> children;  // seq, group
};

// One alternative of a PATH. `root` is -1 for the empty form (every step optional).
struct Form {
  std::vector<FormNode> nodes;
  std::int32_t root = -1;
  std::uint32_t steps = 0;  // number of atoms
};

// At most this many forms are expanded; past it the rest are not scored (truncated).
constexpr std::size_t kMaxForms = 512;
// A {…} group with more members than this (unless all are plain tool names) is scored in
// its written order, a lower bound.
constexpr std::size_t kMaxGroupSubsetMembers = 16;

std::vector<Form> expand_path(const ir::Module& m, ir::Id root, bool* truncated);
// The atoms of a form in written order.
void form_atoms(const Form& f, std::vector<ir::Id>& out);

// Whether a tool call named `name` matches pattern `p` (conditions of `where` are not
// evaluated: scoring compares names only).
bool pattern_matches_name(const ir::Module& m, ir::Id p, std::string_view name);
// A readable label of an atom pattern (its tool name or glob).
std::string pattern_label(const ir::Module& m, ir::Id p);

// LCS length of two id sequences, bit-parallel (64 elements of `a` a word: ⌈|a|/64⌉ word
// operations per element of `b`, memory linear in |a| + |b|); `matched_a` (if non-null) marks
// a's elements in one LCS (the one a traceback of the plain DP finds), which keeps |b| · ⌈|a|/64⌉
// words.
std::uint32_t lcs(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                  std::vector<char>* matched_a = nullptr);

// LCS where the calls of one block (`block_end[k]` is the end of block k; blocks are
// consecutive calls of one assistant turn) may be matched in any order among themselves.
// `a` and `e` hold name ids < `name_count`. With every block of size 1 this is lcs().
std::uint32_t block_lcs(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                        const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                        std::vector<char>* matched_e = nullptr);

// For each k < |e| - 1, an upper bound on block_lcs of e with e[k] and e[k + 1] exchanged
// when the exchange can do better than e itself, else 0: so block_lcs of the exchanged list
// exceeds block_lcs(e) only if bound[k] does. (With one call per block, the same for lcs.)
void swap_bounds(const std::vector<std::uint32_t>& e, const std::vector<std::uint32_t>& a,
                 const std::vector<std::uint32_t>& block_end, std::size_t name_count,
                 std::vector<std::uint32_t>& bound);

// The largest number of the form's atoms matched to distinct actual calls in an order the
// form allows. `exact` is cleared when a group had to be scored in written order.
class FormEvaluator {
 public:
  std::uint32_t evaluate(const ir::Module& m, const Form& f,
                         const std::vector<std::string_view>& actual, bool* exact);

 private:
  void eval(const Form& f, std::uint32_t node, const std::vector<int>& in, std::vector<int>& out);
  void eval_in_order(const Form& f, const std::vector<std::uint32_t>& nodes, const std::vector<int>& in,
                     std::vector<int>& out);
  const std::vector<char>& match_row(ir::Id pattern);
  const ir::Module* m_ = nullptr;
  const std::vector<std::string_view>* actual_ = nullptr;
  std::vector<std::vector<char>> rows_;  // per pattern id: matches actual[j]
  std::vector<char> have_row_;
  bool exact_ = true;
};

}  // namespace trajcheck::metrics
