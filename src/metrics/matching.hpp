// Maximum bipartite matching between expected and actual calls: the pairing behind the
// trajectory-match modes, optimal so that no verdict depends on the order of either list.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <utility>
#include <vector>

namespace trajcheck::metrics {

class BipartiteMatcher {
 public:
  // `adj(l, r)` is true when left l may pair with right r; it is asked on demand, so no
  // left × right table is kept. Returns the size of a maximum matching (augmenting paths,
  // O(V·E), searched with an explicit stack so that long paths do not exhaust the call stack).
  template <class Adj>
    requires std::invocable<Adj&, int, int>
  int solve(int left, int right, Adj&& adj);
  // The same over a table: `adj[l * right + r]` non-zero when left l may pair with right r.
  int solve(int left, int right, const std::vector<char>& adj);
  // After solve(): the right partner of each left vertex, or -1.
  const std::vector<int>& left_partner() const { return match_l_; }

 private:
  template <class Adj>
  bool augment(int root, Adj& adj);
  int right_ = 0;
  std::vector<int> match_l_, match_r_;
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;
  std::vector<std::pair<int, int>> stack_;  // (left vertex, next right vertex to try)
};

template <class Adj>
bool BipartiteMatcher::augment(int root, Adj& adj) {
  stack_.clear();
  stack_.emplace_back(root, 0);
  while (!stack_.empty()) {
    const int l = stack_.back().first;
    int r = stack_.back().second;
    while (r < right_ && (seen_[r] == stamp_ || !adj(l, r))) ++r;
    if (r == right_) {
      stack_.pop_back();
      continue;
    }
    stack_.back().second = r + 1;
    seen_[r] = stamp_;
    if (match_r_[r] >= 0) {
      stack_.emplace_back(match_r_[r], 0);
      continue;
    }
    // A free right vertex: every frame takes the right vertex it last tried.
    for (const auto& [fl, next] : stack_) {
      match_l_[fl] = next - 1;
      match_r_[next - 1] = fl;
    }
    return true;
  }
  return false;
}

template <class Adj>
  requires std::invocable<Adj&, int, int>
int BipartiteMatcher::solve(int left, int right, Adj&& adj) {
  right_ = right;
  match_l_.assign(left, -1);
  match_r_.assign(right, -1);
  if (seen_.size() < static_cast<std::size_t>(right)) seen_.assign(right, 0);
  int size = 0;
  for (int l = 0; l < left; ++l) {
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    if (augment(l, adj)) ++size;
  }
  return size;
}

}  // namespace trajcheck::metrics
