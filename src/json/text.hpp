// JSON text without a parser: number syntax, blanks, UTF-8 validity, and whether a string
// literal's source is canonical (what append_json_string writes for its value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/swar.hpp"

namespace trajcheck::json {

// True when `s` is exactly one JSON number (RFC 8259 grammar, any magnitude).
bool is_json_number(std::string_view s);

// `json` with each number simdjson's DOM parser refuses written as the double it stands for,
// into `out`: an integer beyond 64 bits as the nearest double (12345678901234567890123 →
// 1.2345678901234568e+22), a number beyond a double's range as the largest double of its sign.
// So a value of such a document reads as it compares (numbers compare as doubles) instead of
// the whole document failing to parse. False, `out` untouched, when no number needs it.
bool write_wide_numbers_as_doubles(std::string_view json, std::string& out);

// Whether `id` is a trace id as OTLP/JSON and W3C trace context write one: 32 hex digits (16
// bytes), in either case.
bool is_hex_trace_id(std::string_view id);

// `s` without leading and trailing JSON whitespace.
std::string_view trim_ws(std::string_view s);

// Offset of the first byte that is not valid UTF-8, or npos.
std::size_t find_invalid_utf8(std::string_view s);

// Offset of the first control character (below U+0020) inside a string literal of the JSON
// text `s`, or npos. Escapes are skipped, so `\"` does not end the literal.
std::size_t find_unescaped_control(std::string_view s);

// Size, quotes included, of the JSON string literal at `p` (its opening quote, inside a
// document simdjson has indexed) when its source text is what append_json_string would write
// for its value: no escapes but \" \\ \n \r \t \b \f. 0 otherwise (\u, \/, an invalid
// escape): then the caller decodes and re-escapes it.
std::size_t canonical_string_size(const char* p);
// The same for a string value's raw_json_token() (which runs to the next structural
// character, so the closing quote need not be searched for: faster on long strings).
std::size_t canonical_string_size(std::string_view token);

// Whether `s` is an object of plain strings and integers written minified —
// {"a":"x","n":-12}, {}: strings with no blank, no escape, no control byte, no byte outside
// ASCII, so each string's text is its value (the arguments of most calls); integers in JSON's
// grammar, -?(0|[1-9][0-9]*), any length (a fraction or an exponent is not accepted). Calls
// fn(name, value, number) for each member in order as it reads them, `value` the text between
// the string's quotes or the integer's text: when the answer is false, fn may have seen a prefix.
template <class Fn>
bool scan_flat_object(std::string_view s, Fn&& fn) {
  // The plain string at s[i] (its opening quote); i is left past its closing quote. Eight
  // bytes at a time while eight remain: the first quote, backslash, control byte or byte
  // outside ASCII ends the word's plain run.
  auto plain = [&](std::size_t& i, std::string_view* out) {
    if (i >= s.size() || s[i] != '"') return false;
    const std::size_t from = ++i;
    for (; i + 8 <= s.size(); i += 8) {
      const std::uint64_t w = swar::load(s.data() + i);
      const std::uint64_t stop = swar::equal(w, '"') | swar::equal(w, '\\') | swar::less(w, 0x20) | (w & swar::kHighs);
      if (stop) {
        i += swar::first(stop);
        break;
      }
    }
    for (; i < s.size() && s[i] != '"'; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x20 || c >= 0x80 || c == '\\') return false;
    }
    if (i == s.size()) return false;
    *out = s.substr(from, i - from);
    ++i;
    return true;
  };
  auto digit = [&](std::size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  // The integer at s[i]; i is left past its last digit. What follows is the caller's to check
  // (a ',' or the closing '}'), so "1.5" and "1e3" stop at '.' and 'e' and are refused there.
  auto integer = [&](std::size_t& i, std::string_view* out) {
    const std::size_t from = i;
    if (i < s.size() && s[i] == '-') ++i;
    if (!digit(i)) return false;
    if (s[i] == '0') {
      ++i;
      if (digit(i)) return false;  // a leading zero: not JSON
    } else {
      while (digit(i)) ++i;
    }
    *out = s.substr(from, i - from);
    return true;
  };
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  std::size_t i = 1;
  for (bool first = true; i + 1 < s.size(); first = false) {
    std::string_view name, value;
    if (!first && s[i++] != ',') return false;
    if (!plain(i, &name) || i >= s.size() || s[i++] != ':') return false;
    const bool number = i < s.size() && s[i] != '"';
    if (number ? !integer(i, &value) : !plain(i, &value)) return false;
    fn(name, value, number);
  }
  return i + 1 == s.size();
}

}  // namespace trajcheck::json
