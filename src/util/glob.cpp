// Glob matching by backtracking to the last `*`: linear in practice, quadratic at worst.
#include "util/glob.hpp"

namespace trajcheck::detail {

namespace {
// The end of the UTF-8 character that starts at t[i]: past its continuation bytes (10xxxxxx).
std::size_t char_end(std::string_view t, std::size_t i) {
  for (++i; i < t.size() && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80;) ++i;
  return i;
}
}  // namespace

bool glob_match(std::string_view g, std::string_view t) {
  std::size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  // `?` takes a whole character and `*` gives them back one at a time, so every position
  // tried in the text is a character's start; a literal byte of the glob then never meets the
  // middle of a character.
  while (ti < t.size()) {
    // A `*` in the glob is always a wildcard, even against a `*` in the text.
    if (gi < g.size() && g[gi] == '?') {
      ++gi;
      ti = char_end(t, ti);
    } else if (gi < g.size() && g[gi] != '*' && g[gi] == t[ti]) {
      ++gi;
      ++ti;
    } else if (gi < g.size() && g[gi] == '*') {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = mark = char_end(t, mark);
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == '*') ++gi;
  return gi == g.size();
}

}  // namespace trajcheck::detail
