// Glob matching by backtracking to the last `*`: linear in practice, quadratic at worst.
#include "util/glob.hpp"

namespace trajcheck::detail {

bool glob_match(std::string_view g, std::string_view t) {
  std::size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    // A `*` in the glob is always a wildcard, even against a `*` in the text.
    if (gi < g.size() && (g[gi] == '?' || (g[gi] != '*' && g[gi] == t[ti]))) {
      ++gi;
      ++ti;
    } else if (gi < g.size() && g[gi] == '*') {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == '*') ++gi;
  return gi == g.size();
}

}  // namespace trajcheck::detail
