// JSON text without a parser: number syntax, blanks, UTF-8 validity, and whether a string
// literal's source is canonical (what append_json_string writes for its value).
#pragma once

#include <cstddef>
#include <string_view>

namespace trajcheck::json {

// True when `s` is exactly one JSON number (RFC 8259 grammar, any magnitude).
bool is_json_number(std::string_view s);

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

}  // namespace trajcheck::json
