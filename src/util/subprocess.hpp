// Running an external command with its standard input given, its output captured and a time
// limit: posix_spawn of `/bin/sh -c COMMAND` in its own process group, pipes driven by poll(),
// the whole group killed when the limit passes. For eval's external graders.
#pragma once

#include <cstdint>
#include <string>

namespace trajcheck::detail {

struct CommandResult {
  bool started = false;    // false: the command could not be started (`error` says why)
  bool timed_out = false;  // the limit passed; the process group was killed
  int exit_code = -1;      // the exit status when it exited, else -1
  int signal = 0;          // the signal that ended it, else 0
  bool truncated = false;  // stdout was longer than the limit and was cut there
  std::string out, err;    // standard output; the last bytes of standard error
  std::string error;
};

// Runs `command` with `/bin/sh -c` in folder `cwd` (empty: the current one), writes `input`
// to its standard input and closes it, and collects standard output (at most `max_out` bytes)
// until it exits or `timeout_ms` pass. Never throws; SIGPIPE is not raised in the caller.
CommandResult run_command(const std::string& command, const std::string& cwd, const std::string& input,
                          std::uint64_t timeout_ms, std::size_t max_out = std::size_t(1) << 20);

}  // namespace trajcheck::detail
