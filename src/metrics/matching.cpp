// Kuhn's augmenting-path matching (matching.hpp); iterative stamps avoid clearing the visited
// set per path.
#include "metrics/matching.hpp"

namespace trajcheck::metrics {

int BipartiteMatcher::solve(int left, int right, const std::vector<char>& adj) {
  return solve(left, right, [&](int l, int r) { return adj[static_cast<std::size_t>(l) * right + r] != 0; });
}

}  // namespace trajcheck::metrics
