// Subcommand registry of the thin executable: each cmd_*.cpp registers itself, so adding a
// command touches no other file.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace trajcheck::cli {

// Exit statuses of docs/cli.md.
enum Exit : int { kPass = 0, kFail = 1, kBadInput = 2, kInternal = 3, kInterrupted = 130 };

struct Command {
  std::string name;
  int order = 0;  // position in --help
  // Adds the subcommand to `app`; returns the function that runs it once parsed.
  std::function<std::function<int()>(CLI::App& app)> setup;
};

std::vector<Command>& command_registry();

// A stream the report of a whole corpus goes to (standard output, a report's temporary file):
// a 64 KiB buffer when it is not a terminal. stdio's own is one block of the file (4 KiB), so
// a long report cost a write(2) for every 4 KiB of it. Call before anything is written to it.
void buffer_bulk_output(std::FILE* f);

inline bool register_command(Command c) {
  command_registry().push_back(std::move(c));
  return true;
}

}  // namespace trajcheck::cli
