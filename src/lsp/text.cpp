#include "lsp/text.hpp"

#include <algorithm>
#include <cctype>

namespace trajcheck::lsp {

namespace {

// Length of the UTF-8 sequence starting at text[i] (1 for an invalid byte), and how many
// UTF-16 code units it stands for.
std::uint32_t sequence(std::string_view text, std::uint32_t i, std::uint32_t* units) {
  auto c = static_cast<unsigned char>(text[i]);
  std::uint32_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > text.size()) n = 1;
  for (std::uint32_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) n = 1;
  *units = n == 4 ? 2 : 1;
  return n;
}

}  // namespace

LineIndex::LineIndex(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (std::uint32_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(i + 1);
}

std::uint32_t LineIndex::line_end(std::uint32_t line) const {
  if (line + 1 >= starts_.size()) return static_cast<std::uint32_t>(text_.size());
  std::uint32_t end = starts_[line + 1] - 1;  // the '\n'
  if (end > starts_[line] && text_[end - 1] == '\r') --end;
  return end;
}

Position LineIndex::position(std::uint32_t offset, Encoding enc) const {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  auto line = static_cast<std::uint32_t>(it - starts_.begin() - 1);
  std::uint32_t start = starts_[line];
  if (enc == Encoding::utf8) return {line, offset - start};
  std::uint32_t ch = 0;
  for (std::uint32_t i = start; i < offset;) {
    std::uint32_t units = 1;
    i += sequence(text_, i, &units);
    ch += units;
  }
  return {line, ch};
}

std::uint32_t LineIndex::offset(Position p, Encoding enc) const {
  if (p.line >= starts_.size()) return static_cast<std::uint32_t>(text_.size());
  std::uint32_t start = starts_[p.line];
  std::uint32_t end = line_end(p.line);
  if (enc == Encoding::utf8) return std::min(start + p.character, end);
  std::uint32_t i = start, ch = 0;
  while (i < end && ch < p.character) {
    std::uint32_t units = 1;
    std::uint32_t n = sequence(text_, i, &units);
    if (ch + units > p.character) break;  // inside a surrogate pair: stay before it
    i += n;
    ch += units;
  }
  return std::min(i, end);
}

std::string uri_to_path(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.substr(0, kScheme.size()) != kScheme) return {};
  uri.remove_prefix(kScheme.size());
  // file://host/path: only the local host (empty or localhost) is a path here.
  auto slash = uri.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view host = uri.substr(0, slash);
  if (!host.empty() && host != "localhost") return {};
  uri.remove_prefix(slash);
  std::string out;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (uri[i] == '%' && i + 2 < uri.size() && hex(uri[i + 1]) >= 0 && hex(uri[i + 2]) >= 0) {
      out += static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2]));
      i += 2;
    } else if (uri[i] == '?' || uri[i] == '#') {
      break;
    } else {
      out += uri[i];
    }
  }
  return out;
}

std::string path_to_uri(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    bool plain = std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace trajcheck::lsp
