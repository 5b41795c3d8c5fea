// Reading a whole file that is a source (rules, suite, catalog) or a report: only a regular
// file, never more than a limit, every failure with its reason.
#pragma once

#include <cstdint>
#include <string>

namespace trajcheck {

// Rules files, suites, catalogs and a case's rules: far above any real one, far below what
// would exhaust memory (docs/limits.md).
constexpr std::uint64_t kMaxSourceBytes = std::uint64_t(64) << 20;
// Reports read back by `compare`.
constexpr std::uint64_t kMaxReportBytes = std::uint64_t(1) << 30;

// Reads `path` whole into `out`. False, with `error` set to the reason ("is a directory", …), when the path
// is not a regular file (a directory, FIFO, socket or device), cannot be opened or read,
// or holds more than `limit` bytes — reading stops there, so /dev/zero or a growing file
// cannot fill memory.
bool read_regular_file(const std::string& path, std::uint64_t limit, std::string& out, std::string& error);

}  // namespace trajcheck
