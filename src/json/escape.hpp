// JSON string literals: the one escaping routine for every writer (normalize, check and score
// reports, canonical argument keys, the rule language's printer).
#pragma once

#include <string>
#include <string_view>

namespace trajcheck {

// Appends `s` as a JSON string literal (quotes included): `"` and `\` escaped, control
// characters as \n \r \t \b \f or \u00XX; other bytes (UTF-8 included) copied as they are.
// `escape_del` also writes DEL (0x7f) as \u007f, for text people read (the rule printer):
// JSON allows it raw, and the readers' canonical-source checks assume it stays raw.
void append_json_string(std::string& out, std::string_view s, bool escape_del = false);

}  // namespace trajcheck
