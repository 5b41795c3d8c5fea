// trajcheck: the command line. Parses arguments (CLI11) and hands over to a subcommand.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include <unistd.h>

#include <fmt/format.h>

#include "command.hpp"

namespace trajcheck::cli {
std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}

void buffer_bulk_output(std::FILE* f) {
  // glibc ignores the size asked for with a null buffer: the buffers are ours. One for standard
  // output and one for a temporary file, each used by one stream for the rest of the process.
  static char out_buffer[1 << 16], file_buffer[1 << 16];
  if (f == nullptr || ::isatty(::fileno(f)) != 0) return;
  std::setvbuf(f, f == stdout ? out_buffer : file_buffer, _IOFBF, sizeof out_buffer);
}

namespace {
// A report that did not reach standard output (a full disk, a closed file) must not pass for a
// written one: a failed write or final flush is an error. A closed pipe (`| head`) stays quiet.
int finish_output(int rc) {
  errno = 0;
  bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  int err = errno;
  if (std::fclose(stdout) != 0 && !failed) {
    failed = true;
    err = errno;
  }
  if (!failed || err == EPIPE) return rc;
  fmt::print(stderr, "trajcheck: error writing standard output: {}\n", err ? std::strerror(err) : "write failed");
  return rc == kPass || rc == kFail ? kBadInput : rc;
}
}  // namespace
}  // namespace trajcheck::cli

int main(int argc, char** argv) {
  using namespace trajcheck::cli;
  CLI::App app{"trajcheck — check what AI agents do against rules, and score their tool use"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trajcheck 0.1.0");
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const Command& a, const Command& b) { return a.order < b.order; });
  // The subcommand named first is the only one set up: building the options of every other
  // one (CLI11) would cost each process more than compiling its rules (docs/performance.md,
  // "Start-up"). --help, --version, an unknown or misspelt name: all of them, for the list and
  // the suggestions.
  const bool named = argc > 1 && std::any_of(registry.begin(), registry.end(),
                                             [&](const Command& c) { return c.name == argv[1]; });
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const Command& c : registry) {
    if (named && c.name != argv[1]) continue;
    size_t before = app.get_subcommands({}).size();
    std::function<int()> run = c.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(run));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 checks for missing required options before it looks at arguments it did not expect,
    // so `check --rule r.rules x.jsonl` said "--rules is required" and nothing of the misspelt
    // flag. An argument nothing took is what is reported then.
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      std::vector<std::string> extra = app.remaining(true);
      if (!extra.empty()) {
        int rc = app.exit(CLI::ExtrasError(extra));
        return finish_output(rc == 0 ? kPass : kBadInput);
      }
    }
    int rc = app.exit(e);
    return finish_output(rc == 0 ? kPass : kBadInput);
  }
  int rc = kBadInput;
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) {
        rc = run();
        break;
      }
  } catch (const std::exception& e) {
    fmt::print(stderr, "trajcheck: internal error: {}\n", e.what());
    rc = kInternal;
  }
  return finish_output(rc);
}
