// The warnings part of a summary line: ", 3 warnings" (", 1 warning"), nothing when there
// were none, so the line of a clean run stays as short as it was.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace trajcheck {

inline std::string warnings_note(std::uint64_t n) {
  return n ? fmt::format(", {} warning{}", n, n == 1 ? "" : "s") : std::string();
}

}  // namespace trajcheck
