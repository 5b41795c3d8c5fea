// Small text helpers of the run layer's reports.
#pragma once

#include <string>
#include <string_view>

namespace trajcheck::detail {

// At most `max` bytes of `s`, cut at a UTF-8 character boundary, "…" appended when cut.
std::string truncate_utf8(std::string_view s, std::size_t max);

// `s` with its control characters (bytes below 0x20, and 0x7f) written as `\n`, `\r`, `\t`
// or `\xNN`: trace ids and tool names come from untrusted logs, and a raw escape sequence
// or newline in a terminal or a Markdown table would forge output.
void append_printable(std::string& out, std::string_view s);
std::string printable(std::string_view s);

}  // namespace trajcheck::detail
