// trajcheck/json_string.hpp — JSON string literals: the one escaping routine of every writer
// (check and score reports, normalized traces, canonical argument keys, the rule printer, the
// Python module's JSON text).
//
//   std::string out;
//   trajcheck::append_json_string(out, "say \"hi\"\n");   // out == "\"say \\\"hi\\\"\\n\""
//
// A pure function: any thread, no state.
#pragma once

#include <string>
#include <string_view>

namespace trajcheck {

// Appends `s` as a JSON string literal (quotes included): `"` and `\` escaped, control
// characters as \n \r \t \b \f or \u00XX (lower-case hex); other bytes (UTF-8 included) copied
// as they are — what Python's json.dumps(s, ensure_ascii=False) writes. `escape_del` also
// writes DEL (0x7f) as \u007f, for text people read (the rule printer): JSON allows it raw,
// and the readers' canonical-source checks assume it stays raw.
void append_json_string(std::string& out, std::string_view s, bool escape_del = false);

// The bytes append_json_string escapes (DEL aside): control characters, `"` and `\`.
inline bool json_needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// Writes the escape append_json_string writes for byte `c` (`\"`, `\n`, `\u001f`...: at most 6
// bytes) at `out` and returns its end, for writers that fill a buffer through a pointer.
char* write_json_escape(char* out, unsigned char c);

}  // namespace trajcheck
