// trajcheck: the command line. Parses arguments (CLI11) and hands over to a subcommand.
#include <algorithm>
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "command.hpp"

namespace trajcheck::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}
}  // namespace trajcheck::cli

int main(int argc, char** argv) {
  using namespace trajcheck::cli;
  CLI::App app{"trajcheck — check what AI agents do against rules, and score their tool use"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trajcheck 0.1.0");
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const Command& c : registry) {
    size_t before = app.get_subcommands({}).size();
    std::function<int()> run = c.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(run));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kPass : kBadInput;
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "trajcheck: internal error: {}\n", e.what());
    return kInternal;
  }
  return kBadInput;
}
