// Levenshtein distance of two short names, for "did you mean" notes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace trajcheck::detail {

// The number of single-character edits between `a` and `b`; names longer than 64 bytes are
// never close (99).
inline std::size_t name_distance(std::string_view a, std::string_view b) {
  if (a.size() > 64 || b.size() > 64) return 99;
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1] ? 1u : 0u)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace trajcheck::detail
