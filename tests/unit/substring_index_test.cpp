// The index behind seen() over user text: the same answers as a direct search of the whole
// text, on random texts over a small alphabet (many repeats, many near misses), across block
// boundaries and in the unindexed tail; and O(log n) blocks however the text grows.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "checker/substring_index.hpp"

using trajcheck::detail::SubstringIndex;

TEST_CASE("substring index: the answers of a direct search, appends and lookups interleaved") {
  std::mt19937 rng(7);
  for (int round = 0; round < 12; ++round) {
    SubstringIndex index;
    std::string text;
    const char alphabet = round % 2 ? 'b' : 'd';  // 2 or 4 letters
    auto word = [&](std::size_t n) {
      std::string w;
      for (std::size_t i = 0; i < n; ++i) w += static_cast<char>('a' + rng() % (alphabet - 'a' + 1));
      return w;
    };
    for (int step = 0; step < 300; ++step) {
      std::string piece = word(1 + rng() % (round < 6 ? 200 : 1500));
      index.append(piece);
      text += piece;
      for (int q = 0; q < 5; ++q) {
        std::string s = rng() % 3 == 0 && text.size() > 40 ? text.substr(rng() % (text.size() - 40), 1 + rng() % 40)
                                                            : word(1 + rng() % 12);
        CAPTURE(round);
        CAPTURE(step);
        CAPTURE(s);
        REQUIRE(index.contains(s) == (text.find(s) != std::string::npos));
      }
    }
  }
}

TEST_CASE("substring index: occurrences across every block boundary are found") {
  SubstringIndex index;
  std::string text;
  for (int i = 0; i < 39; ++i) {  // 39 = 100111b: four blocks
    std::string piece(SubstringIndex::kMaxTail + 1, static_cast<char>('a' + i % 26));
    index.append(piece);
    text += piece;
    CHECK_FALSE(index.contains("#"));  // makes a block of the tail once it is long enough
  }
  REQUIRE(index.blocks() == 4);
  for (int i = 1; i < 39; ++i) {
    std::string across = std::string(3, static_cast<char>('a' + (i - 1) % 26)) + std::string(3, static_cast<char>('a' + i % 26));
    CHECK(index.contains(across));
  }
  CHECK_FALSE(index.contains("ac"));
  CHECK(index.contains(text.substr(5000, 20000)));  // longer than a block, across several
  index.clear();
  CHECK(index.empty());
  CHECK_FALSE(index.contains("a"));
  CHECK(index.contains(""));
}

TEST_CASE("substring index: O(log n) blocks, so a lookup's work follows its length, not the text") {
  SubstringIndex index;
  std::size_t size = 0, most = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string message = "please look at order ord_" + std::to_string(i * 7919) + " today";
    message.resize(600, '.');
    index.append(message);
    size += message.size();
    CHECK_FALSE(index.contains("absent value"));
    std::size_t bound = 2;
    for (std::size_t n = size / SubstringIndex::kMaxTail; n > 0; n >>= 1) ++bound;
    most = std::max(most, index.blocks());
    REQUIRE(index.blocks() <= bound);
  }
  CHECK(most >= 5);  // 2.4 MB of text: blocks are merged, not one per lookup nor one in all
}
