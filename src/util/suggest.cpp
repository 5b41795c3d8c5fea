// did_you_mean: optimal string alignment distance over folded names.
#include "util/suggest.hpp"

#include <algorithm>

namespace trajcheck::detail {
namespace {

char suggest_fold(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  if (c == '-') return '_';
  return c;
}

std::string suggest_folded(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = suggest_fold(c);
  return out;
}

// Optimal string alignment distance (edits plus adjacent swaps), capped: past `cap` the exact
// value does not matter.
std::size_t suggest_distance(const std::string& a, const std::string& b, std::size_t cap) {
  const std::size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > cap) return cap + 1;
  std::vector<std::size_t> d((n + 1) * (m + 1));
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t v = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = std::min(v, at(i - 2, j - 2) + 1);
      at(i, j) = v;
    }
  }
  return at(n, m);
}

}  // namespace

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  // Names of hundreds of characters are no typos anyone makes; the table stays small.
  if (name.empty() || name.size() > 256) return {};
  const std::string folded = suggest_folded(name);
  const std::string* best = nullptr;
  std::size_t best_d = 0;
  for (const std::string& c : candidates) {
    if (c == name || c.empty() || c.size() > 256) continue;
    const std::size_t shorter = std::min(folded.size(), c.size());
    std::size_t cap = folded.size() <= 4 ? 1 : folded.size() <= 8 ? 2 : 3;
    if (shorter <= cap) cap = shorter - 1;  // less than the shorter name's length
    const std::size_t dist = suggest_distance(folded, suggest_folded(c), cap);
    if (dist > cap) continue;
    if (best == nullptr || dist < best_d) {
      best = &c;
      best_d = dist;
    }
  }
  return best ? *best : std::string();
}

}  // namespace trajcheck::detail
