// JSON text without a parser: number syntax of any magnitude, blanks, UTF-8 validity, and
// whether a string literal's source is already what append_json_string would write.
#include "json/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "json/swar.hpp"

namespace trajcheck::json {

bool is_json_number(std::string_view s) {
  std::size_t i = 0, n = s.size();
  auto digit = [&](std::size_t k) { return k < n && s[k] >= '0' && s[k] <= '9'; };
  if (i < n && s[i] == '-') ++i;
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < n && s[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == n;
}

bool write_wide_numbers_as_doubles(std::string_view json, std::string& out) {
  auto number_byte = [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  };
  std::size_t copied = 0;  // json[0, copied) is in `out`
  bool any = false;
  std::string token;       // NUL-terminated for strtod
  for (std::size_t i = 0; i < json.size();) {
    const char c = json[i];
    if (c == '"') {  // a string: to its closing quote
      for (++i; i < json.size() && json[i] != '"'; ++i)
        if (json[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < json.size() && number_byte(json[end])) ++end;
    const std::string_view text = json.substr(i, end - i);
    bool wide = false;
    if (is_json_number(text)) {
      if (text.find_first_of(".eE") == std::string_view::npos) {  // an integer: int64 or uint64?
        std::int64_t si;
        std::uint64_t ui;
        const char* b = text.data();
        const char* e = b + text.size();
        wide = std::from_chars(b, e, si).ec != std::errc{} && std::from_chars(b, e, ui).ec != std::errc{};
      }
      token.assign(text);
      errno = 0;
      double d = std::strtod(token.c_str(), nullptr);
      if (errno == ERANGE && (d > 1 || d < -1)) {  // beyond a double's range (not underflow)
        wide = true;
        d = d > 0 ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::max();
      }
      if (wide) {
        if (!any) out.clear();
        any = true;
        out.append(json.substr(copied, i - copied));
        fmt::format_to(std::back_inserter(out), "{}", d);
        copied = end;
      }
    }
    i = end;
  }
  if (any) out.append(json.substr(copied));
  return any;
}

bool is_hex_trace_id(std::string_view id) {
  return id.size() == 32 &&
         std::all_of(id.begin(), id.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

std::string_view trim_ws(std::string_view s) {
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

std::size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) { ++i; continue; }
    std::size_t len;
    std::uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
    else return i;
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

std::size_t find_unescaped_control(std::string_view s) {
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '\\') {
      ++i;  // the escaped byte, whatever it is, cannot end the literal
    } else if (c == '"') {
      in_string = false;
    } else if (c < 0x20) {
      return i;
    }
  }
  return std::string_view::npos;
}

namespace {
// Whether the escape at `q` (a backslash) is one append_json_string writes.
bool canonical_escape(const char* q) {
  switch (q[1]) {
    case '"': case '\\': case 'n': case 'r': case 't': case 'b': case 'f': return true;
    default: return false;  // \u, \/ or an invalid escape: the decoding path handles it
  }
}
}  // namespace

std::size_t canonical_string_size(const char* p) {
  // The closing quote exists (simdjson's stage 1 paired every quote and rejected control
  // characters) and the buffer is padded, so whole words may be read up to it.
  for (const char* q = p + 1;; q += 2) {
    q = swar::find_quote_or_backslash(q);
    if (*q == '"') return static_cast<std::size_t>(q - p) + 1;
    if (!canonical_escape(q)) return 0;
  }
}

std::size_t canonical_string_size(std::string_view token) {
  // The token runs to the next structural character: the closing quote is its last
  // non-blank byte, so only backslashes need looking for (memchr is vectorized).
  token = trim_ws(token);
  if (token.size() < 2 || token.back() != '"') return canonical_string_size(token.data());
  const char* q = token.data() + 1;
  const char* end = token.data() + token.size() - 1;
  while (q < end) {
    q = static_cast<const char*>(std::memchr(q, '\\', static_cast<std::size_t>(end - q)));
    if (!q) break;
    if (!canonical_escape(q)) return 0;
    q += 2;
  }
  return token.size();
}

}  // namespace trajcheck::json
