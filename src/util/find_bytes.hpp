// Finding a short byte string in a long text, sixteen places at a time.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace trajcheck {

// The offset of the first occurrence of `needle` in `text` at or after `from`, or npos. Each
// start is a candidate when two bytes of the needle are where they would be — its second and
// second-to-last when it has four or more (so a needle in quotes is anchored on its value, not
// on the quotes every JSON string has) — and a candidate is compared whole. glibc's memmem
// looks at every byte of the text one at a time for needles like these.
inline std::size_t find_bytes(std::string_view text, std::string_view needle, std::size_t from = 0) {
  constexpr std::size_t npos = std::string_view::npos;
  const std::size_t n = needle.size();
  if (from > text.size()) return npos;
  if (n == 0) return from;
  if (n > text.size() - from) return npos;
  const char* t = text.data();
  const std::size_t last = text.size() - n;  // the last possible start
  const std::size_t p = n >= 4 ? 1 : 0, q = n >= 4 ? n - 2 : n - 1;
  std::size_t i = from;
#if defined(__SSE2__)
  const __m128i a = _mm_set1_epi8(needle[p]), b = _mm_set1_epi8(needle[q]);
  // Starts i … i + 15 are all at most `last`, so every byte read is inside the text.
  for (; i + 15 <= last; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i + p));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i + q));
    auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(y, b))));
    for (; m != 0; m &= m - 1) {
      const std::size_t at = i + static_cast<std::size_t>(__builtin_ctz(m));
      if (std::memcmp(t + at, needle.data(), n) == 0) return at;
    }
  }
#endif
  for (; i <= last; ++i)
    if (t[i + p] == needle[p] && t[i + q] == needle[q] && std::memcmp(t + i, needle.data(), n) == 0) return i;
  return npos;
}

}  // namespace trajcheck
