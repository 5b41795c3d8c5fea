// Maximum bipartite matching between expected and actual calls: the pairing behind the
// trajectory-match modes, optimal so that no verdict depends on the order of either list.
#pragma once

#include <cstdint>
#include <vector>

namespace trajcheck::metrics {

class BipartiteMatcher {
 public:
  // `adj[l * right + r]` non-zero when left l may pair with right r. Returns the size of a
  // maximum matching (augmenting paths, O(V·E): lists here are short).
  int solve(int left, int right, const std::vector<char>& adj);
  // After solve(): the right partner of each left vertex, or -1.
  const std::vector<int>& left_partner() const { return match_l_; }

 private:
  bool augment(int l);
  int left_ = 0, right_ = 0;
  const std::vector<char>* adj_ = nullptr;
  std::vector<int> match_l_, match_r_;
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;
};

}  // namespace trajcheck::metrics
