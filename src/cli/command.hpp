// Subcommand registry of the thin executable: each cmd_*.cpp registers itself, so adding a
// command touches no other file.
#pragma once

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

inline bool register_command(Command c) {
  command_registry().push_back(std::move(c));
  return true;
}

}  // namespace trajcheck::cli
