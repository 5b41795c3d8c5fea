// Kuhn's augmenting-path matching; iterative stamps avoid clearing the visited set per path.
#include "metrics/matching.hpp"

#include <algorithm>

namespace trajcheck::metrics {

bool BipartiteMatcher::augment(int l) {
  const std::vector<char>& adj = *adj_;
  for (int r = 0; r < right_; ++r) {
    if (!adj[static_cast<std::size_t>(l) * right_ + r] || seen_[r] == stamp_) continue;
    seen_[r] = stamp_;
    if (match_r_[r] < 0 || augment(match_r_[r])) {
      match_r_[r] = l;
      match_l_[l] = r;
      return true;
    }
  }
  return false;
}

int BipartiteMatcher::solve(int left, int right, const std::vector<char>& adj) {
  left_ = left;
  right_ = right;
  adj_ = &adj;
  match_l_.assign(left, -1);
  match_r_.assign(right, -1);
  if (seen_.size() < static_cast<std::size_t>(right)) seen_.assign(right, 0);
  int size = 0;
  for (int l = 0; l < left; ++l) {
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    if (augment(l)) ++size;
  }
  return size;
}

}  // namespace trajcheck::metrics
