// find_bytes answers what std::string_view::find answers, for needles of every length at every
// place of texts of every length around the sixteen-byte blocks, from every start.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "util/find_bytes.hpp"

using trajcheck::find_bytes;

TEST_CASE("find_bytes: the first occurrence at or after a start, as std::string_view::find") {
  std::mt19937_64 rng(44);
  // A small alphabet, so that anchors match often and candidates are compared whole.
  auto text_of = [&](std::size_t n) {
    std::string s(n, 'a');
    for (char& c : s) c = "ab\"c"[rng() % 4];
    return s;
  };
  std::size_t found = 0;
  for (std::size_t size = 0; size <= 70; ++size)
    for (int round = 0; round < 40; ++round) {
      const std::string text = text_of(size);
      std::string needle = text_of(rng() % 7);
      if (size > 0 && !needle.empty() && rng() % 2) {  // often one that is there
        const std::size_t at = rng() % size;
        needle = text.substr(at, std::min<std::size_t>(needle.size(), size - at));
      }
      for (std::size_t from = 0; from <= size + 1; ++from) {
        CAPTURE(text);
        CAPTURE(needle);
        CAPTURE(from);
        const std::size_t want = std::string_view(text).find(needle, from);
        CHECK(find_bytes(text, needle, from) == want);
        found += want != std::string_view::npos;
      }
    }
  CHECK(found > 10000);
  // Bytes above 0x7f, and a needle at the very end of a long text.
  const std::string text = std::string(100, '\xc3') + "\"ord_\xc3\xa9\"";
  CHECK(find_bytes(text, "\"ord_\xc3\xa9\"") == 100);
  CHECK(find_bytes(text, "\"ord_\xc3\xa9\"", 101) == std::string_view::npos);
  CHECK(find_bytes("", "") == 0);
  CHECK(find_bytes("", "x") == std::string_view::npos);
}
