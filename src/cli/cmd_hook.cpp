// `trajcheck hook claude-code -r RULES… [--state-dir DIR] [--context KEY=VALUE]…`: one Claude
// Code hook event on stdin, answered on stdout / stderr and the exit status
// (trajcheck/hook.hpp). Whatever goes wrong, the call is blocked (exit 2), never let through.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include <fmt/format.h>

#include "command.hpp"
#include "trajcheck/hook.hpp"

namespace trajcheck::cli {
namespace {

struct HookArgs {
  std::vector<std::string> rules_files;
  std::string state_dir;
  std::string tool_catalog;
  std::vector<std::string> aliases, error_patterns, context;
};

// --state-dir, else $TRAJCHECK_HOOK_STATE_DIR, else $XDG_STATE_HOME/trajcheck/claude-code,
// else ~/.local/state/trajcheck/claude-code; empty when none can be had.
std::string state_dir_of(const HookArgs& a) {
  if (!a.state_dir.empty()) return a.state_dir;
  if (const char* v = std::getenv("TRAJCHECK_HOOK_STATE_DIR"); v != nullptr && *v != '\0') return v;
  if (const char* v = std::getenv("XDG_STATE_HOME"); v != nullptr && *v != '\0') return std::string(v) + "/trajcheck/claude-code";
  if (const char* v = std::getenv("HOME"); v != nullptr && *v != '\0') return std::string(v) + "/.local/state/trajcheck/claude-code";
  return {};
}

int block(const std::string& why) {
  fmt::print(stderr, "trajcheck hook: {}; the call is blocked\n", why);
  return kBadInput;  // 2: Claude Code blocks the call and shows this to the model
}

int run_hook_command(const HookArgs& a) {
  constexpr std::size_t kMaxInput = std::size_t{256} << 20;
  std::string input;
  char chunk[65536];
  while (input.size() <= kMaxInput) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, stdin);
    input.append(chunk, n);
    if (n < sizeof chunk) break;
  }
  if (std::ferror(stdin)) return block("cannot read the hook's input");
  if (input.size() > kMaxInput) return block("the hook's input is larger than the 256 MiB limit");
  NormalizeOptions reading;
  std::string error;
  if (!parse_reading_spec(ReadingSpec{"auto", a.aliases, a.error_patterns, a.context}, &reading, &error))
    return block(error);
  CompileOptions copts;
  copts.catalog_override = a.tool_catalog;
  copts.command_line_aliases = reading.aliases;
  RuleSetResult compiled = compile_rule_set(a.rules_files, copts);
  if (!compiled.ok()) {
    for (const RuleFile& f : compiled.files) {
      if (!f.read_error.empty()) fmt::print(stderr, "trajcheck hook: {}\n", f.read_error);
      else if (!f.diagnostics.empty()) fmt::print(stderr, "{}", format_diagnostics(f.source, f.diagnostics, false));
    }
    return block("the rules did not compile");
  }
  HookOptions o;
  o.state_dir = state_dir_of(a);
  HookAnswer answer = claude_code_hook(compiled.rules, reading, o, input);
  std::fwrite(answer.out.data(), 1, answer.out.size(), stdout);
  std::fwrite(answer.err.data(), 1, answer.err.size(), stderr);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return block("cannot write the answer");
  return answer.exit_code;
}

const bool hook_registered = register_command({"hook", 46, [](CLI::App& app) {
  auto args = std::make_shared<HookArgs>();
  CLI::App* hook = app.add_subcommand("hook", "decide an agent's tool calls from inside it (a hook the agent runs)");
  hook->require_subcommand(1);
  CLI::App* sub = hook->add_subcommand("claude-code", "a Claude Code hook (PreToolUse, PostToolUse, PostToolUseFailure): "
                                                      "the event on stdin, the answer on stdout");
  sub->add_option("-r,--rules", args->rules_files, "rules file (repeatable)")->required();
  sub->add_option("--state-dir", args->state_dir,
                  "where each session's state is kept (default: $TRAJCHECK_HOOK_STATE_DIR, else "
                  "$XDG_STATE_HOME/trajcheck/claude-code or ~/.local/state/trajcheck/claude-code)");
  sub->add_option("--context", args->context, "KEY=VALUE set in the session's context (repeatable)");
  sub->add_option("--alias", args->aliases, "OBSERVED=CANONICAL tool-name alias (repeatable)");
  sub->add_option("--error-pattern", args->error_patterns, "RE2 over a result's text that marks a failed call (repeatable)");
  sub->add_option("--catalog", args->tool_catalog, "tool catalog file (instead of the rules' `catalog` line)");
  return std::function<int()>([args] {
    try {
      return run_hook_command(*args);
    } catch (const std::exception& e) {  // any other exit status would let the call through
      return block(fmt::format("internal error: {}", e.what()));
    }
  });
}});

}  // namespace
}  // namespace trajcheck::cli
