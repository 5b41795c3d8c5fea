// Cutting a large JSON text into pieces that are parsed one at a time: the members of an
// object and the elements of an array, found by matching brackets outside strings. A reader
// that parses each piece on its own needs the index of one piece at a time instead of the whole
// text's (score reads a record of 100 000 calls a side this way: json/pieces.hpp is what lets
// its memory stay near the record's own size).
//
// Only the text between pieces is checked here (whitespace, ':' and ','); a piece's own bytes
// are not, so each piece must be parsed and read to its end by a validating parser before its
// content is trusted. Whatever this cursor does not accept, the caller reads another way.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace trajcheck::json {

class PieceCursor {
 public:
  explicit PieceCursor(std::string_view text) : text_(text) {}

  // Skips whitespace, then consumes `c` when it is next (true) or leaves the cursor (false).
  bool eat(char c) {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // A string that holds no escape (its bytes between the quotes are its value), consumed.
  // False, cursor unchanged, on anything else.
  bool plain_string(std::string_view* out) {
    skip_ws();
    if (pos_ >= text_.size() || text_[pos_] != '"') return false;
    const std::size_t begin = pos_ + 1;
    for (std::size_t i = begin; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '\\') return false;
      if (c == '"') {
        *out = text_.substr(begin, i - begin);
        pos_ = i + 1;
        return true;
      }
    }
    return false;
  }

  // The next value's bytes, whatever its type (not checked: see above), consumed. False, cursor
  // unchanged, when no value ends in the text.
  bool value(std::string_view* out) {
    skip_ws();
    const std::size_t begin = pos_;
    std::size_t i = begin;
    if (i >= text_.size()) return false;
    const char first = text_[i];
    if (first == '"') {
      i = string_end(i);
    } else if (first == '{' || first == '[') {
      std::size_t depth = 0;
      while (i < text_.size()) {
        const char c = text_[i];
        if (c == '"') {
          i = string_end(i);
          if (i == npos) return false;
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) {
            ++i;
            break;
          }
        }
        ++i;
      }
      if (depth != 0) return false;
    } else {
      // A scalar: up to the next separator or whitespace.
      while (i < text_.size() && !is_ws(text_[i]) && text_[i] != ',' && text_[i] != '}' && text_[i] != ']') ++i;
      if (i == begin) return false;
    }
    if (i == npos) return false;
    *out = text_.substr(begin, i - begin);
    pos_ = i;
    return true;
  }

  // Only whitespace is left.
  bool at_end() {
    skip_ws();
    return pos_ == text_.size();
  }

  std::size_t offset() const { return pos_; }

 private:
  static constexpr std::size_t npos = std::string_view::npos;
  static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_ws() {
    while (pos_ < text_.size() && is_ws(text_[pos_])) ++pos_;
  }
  // One past the closing quote of the string opening at `i`, or npos.
  std::size_t string_end(std::size_t i) const {
    for (++i; i < text_.size();) {
      const void* hit = std::memchr(text_.data() + i, '"', text_.size() - i);
      if (!hit) return npos;
      std::size_t q = static_cast<std::size_t>(static_cast<const char*>(hit) - text_.data());
      // Escaped when preceded by an odd number of backslashes.
      std::size_t b = q;
      while (b > i && text_[b - 1] == '\\') --b;
      if ((q - b) % 2 == 0) return q + 1;
      i = q + 1;
    }
    return npos;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace trajcheck::json
