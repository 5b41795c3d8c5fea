// Eight bytes at a time: masks of the bytes of a 64-bit word that equal a value or are below
// one, for the byte scans of JSON strings (escaping, finding a string's end).
#pragma once

#include <cstdint>
#include <cstring>

namespace trajcheck::swar {

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHighs = 0x8080808080808080ull;

inline std::uint64_t load(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// High bit set in each byte of `w` equal to `b`. Only the lowest set bit is exact (a borrow
// can mark the byte above a match), which is all the scans below use.
inline std::uint64_t equal(std::uint64_t w, unsigned char b) {
  std::uint64_t x = w ^ (kOnes * b);
  return (x - kOnes) & ~x & kHighs;
}

// High bit set in each byte of `w` below `b` (b <= 128); lowest set bit exact.
inline std::uint64_t less(std::uint64_t w, unsigned char b) { return (w - kOnes * b) & ~w & kHighs; }

// Index of the first marked byte of a non-zero mask (bytes in memory order).
inline unsigned first(std::uint64_t mask) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "SWAR scans assume little-endian");
  return static_cast<unsigned>(__builtin_ctzll(mask)) / 8;
}

// The first '"' or '\\' at or after `p`: the scan of a JSON string's contents, serving both
// "does this string need decoding" (metrics) and "is its source canonical" (readers). One of
// the two bytes must come before the end of the buffer, and whole words are read past it, so
// the buffer must be padded (simdjson's documents are; stage 1 has also rejected control
// characters there, so they need no stop).
inline const char* find_quote_or_backslash(const char* p) {
  for (;; p += 8) {
    std::uint64_t w = load(p);
    std::uint64_t m = equal(w, '"') | equal(w, '\\');
    if (m) return p + first(m);
  }
}

}  // namespace trajcheck::swar
