// Every substring of a growing text, for seen() over the user's messages. The text is cut into
// blocks, each with a suffix array (libdivsufsort), kept like a binary counter: a new block is
// merged with the one before it while that one is not larger, so there are O(log n) blocks and
// every byte is sorted O(log n) times. A lookup binary-searches each block and scans only the
// unindexed tail (at most kMaxTail bytes) and the few bytes around each block boundary: it
// costs about |value| × log² n, not the length of the text. Memory: the text and 4 bytes per
// byte of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trajcheck::detail {

class SubstringIndex {
 public:
  // Text appended since the last block is searched directly up to this size, then indexed.
  static constexpr std::size_t kMaxTail = 4096;

  void clear();
  bool empty() const { return text_.empty(); }
  // Appends `text` to the indexed text.
  void append(std::string_view text);
  // Whether `s` occurs in the text (the empty string always does).
  bool contains(std::string_view s);
  // Blocks with a suffix array (for tests of the layout).
  std::size_t blocks() const { return blocks_.size(); }

 private:
  struct Block {
    std::size_t begin = 0, end = 0;  // text_[begin, end)
    std::vector<std::int32_t> suffixes;
  };
  void index_tail();
  void sort(Block& b) const;
  bool in_block(const Block& b, std::string_view s) const;

  std::string text_;
  std::vector<Block> blocks_;  // contiguous, in text order; sizes do not grow along it
  std::size_t indexed_ = 0;    // text_[0, indexed_) is in blocks_
};

}  // namespace trajcheck::detail
