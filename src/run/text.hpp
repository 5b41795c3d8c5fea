// Small text helpers of the run layer's reports.
#pragma once

#include <string>
#include <string_view>

namespace trajcheck::detail {

// At most `max` bytes of `s`, cut at a UTF-8 character boundary, "…" appended when cut.
std::string truncate_utf8(std::string_view s, std::size_t max);

}  // namespace trajcheck::detail
