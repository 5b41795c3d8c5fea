// The blocks of suffix arrays behind seen() over user text (substring_index.hpp): sorted by
// libdivsufsort, merged like a binary counter, searched by binary search.
#include "checker/substring_index.hpp"

#include <divsufsort.h>

#include <algorithm>
#include <limits>

namespace trajcheck::detail {

void SubstringIndex::clear() {
  // Memory follows the current text, not the largest one a thread ever indexed.
  if (text_.capacity() > (std::size_t(1) << 20)) std::string().swap(text_);
  text_.clear();
  blocks_.clear();
  indexed_ = 0;
}

void SubstringIndex::append(std::string_view text) { text_.append(text); }

void SubstringIndex::sort(Block& b) const {
  const std::size_t n = b.end - b.begin;
  b.suffixes.clear();
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) return;  // searched directly
  b.suffixes.resize(n);
  const auto* t = reinterpret_cast<const sauchar_t*>(text_.data() + b.begin);
  if (divsufsort(t, b.suffixes.data(), static_cast<saidx_t>(n)) != 0) b.suffixes.clear();  // out of memory
}

void SubstringIndex::index_tail() {
  Block b;
  b.begin = indexed_;
  b.end = indexed_ = text_.size();
  // A binary counter: absorb the blocks before that are not larger, then sort once.
  while (!blocks_.empty() && blocks_.back().end - blocks_.back().begin <= b.end - b.begin) {
    b.begin = blocks_.back().begin;
    blocks_.pop_back();
  }
  sort(b);
  blocks_.push_back(std::move(b));
}

bool SubstringIndex::in_block(const Block& b, std::string_view s) const {
  const std::size_t n = b.end - b.begin;
  if (s.size() > n) return false;
  if (b.suffixes.size() != n) return std::string_view(text_).substr(b.begin, n).find(s) != std::string_view::npos;
  saidx_t left = 0;
  return sa_search(reinterpret_cast<const sauchar_t*>(text_.data() + b.begin), static_cast<saidx_t>(n),
                   reinterpret_cast<const sauchar_t*>(s.data()), static_cast<saidx_t>(s.size()),
                   b.suffixes.data(), static_cast<saidx_t>(n), &left) > 0;
}

bool SubstringIndex::contains(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > text_.size()) return false;
  if (text_.size() - indexed_ > kMaxTail) index_tail();
  for (const Block& b : blocks_)
    if (in_block(b, s)) return true;
  // An occurrence across a boundary (between blocks, or the last block and the tail) lies
  // within |s| - 1 bytes of it on either side.
  const std::string_view t(text_);
  for (std::size_t i = 1; i <= blocks_.size(); ++i) {
    const std::size_t at = i < blocks_.size() ? blocks_[i].begin : indexed_;
    if (at == text_.size()) break;
    const std::size_t from = at - std::min(at, s.size() - 1);
    if (t.substr(from, std::min(text_.size(), at + s.size() - 1) - from).find(s) != std::string_view::npos)
      return true;
  }
  return indexed_ < text_.size() && t.find(s, indexed_) != std::string_view::npos;
}

}  // namespace trajcheck::detail
