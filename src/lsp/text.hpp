// Positions as LSP counts them (line, character in UTF-16 code units or UTF-8 bytes,
// both 0-based) against the byte offsets of the front end, and file URIs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trajcheck::lsp {

enum class Encoding : std::uint8_t { utf16, utf8 };

struct Position {
  std::uint32_t line = 0;
  std::uint32_t character = 0;
};

// The line starts of one text. Invalid UTF-8 counts one unit per byte.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  Position position(std::uint32_t offset, Encoding enc) const;
  // Clamps: past the end of a line is its end, past the last line is the end of the text.
  std::uint32_t offset(Position p, Encoding enc) const;
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(starts_.size()); }
  std::uint32_t line_start(std::uint32_t line) const { return starts_[line]; }
  // End of the line's content (before `\r\n` or `\n`).
  std::uint32_t line_end(std::uint32_t line) const;

 private:
  std::string_view text_;
  std::vector<std::uint32_t> starts_;
};

// `file:///a/b%20c.rules` -> `/a/b c.rules`; empty for other schemes.
std::string uri_to_path(std::string_view uri);
// An absolute path -> `file://` URI, percent-encoding what RFC 3986 does not allow in a path.
std::string path_to_uri(std::string_view path);

}  // namespace trajcheck::lsp
