// JSON string literals: one escaping routine for every writer (normalize, check and score
// reports, canonical argument keys).
#pragma once

#include <string>
#include <string_view>

namespace trajcheck {

// Appends `s` as a JSON string literal (quotes included): `"` and `\` escaped, control
// characters as \n \r \t \b \f or \u00XX; other bytes (UTF-8 included) copied as they are.
void append_json_string(std::string& out, std::string_view s);

}  // namespace trajcheck
