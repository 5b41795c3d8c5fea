// `trajcheck guard -r RULES… [--on-violation deny|warn] [--trace-out FILE] -- COMMAND…`: runs an
// MCP server (stdio) as a child and enforces the rules on the tool calls between it and the
// client (trajcheck/guard.hpp); the log goes to stderr, the protocol to stdout.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "command.hpp"
#include "trajcheck/guard.hpp"

namespace trajcheck::cli {
namespace {

struct GuardArgs {
  std::vector<std::string> rules_files;
  std::string on_violation = "deny";
  std::string trace_out;
  std::string context;
  std::string tool_catalog;
  std::vector<std::string> command;
};

int run_guard_command(const GuardArgs& a) {
  CompileOptions copts;
  copts.catalog_override = a.tool_catalog;
  RuleSetResult compiled = compile_rule_set(a.rules_files, copts);
  for (const RuleFile& f : compiled.files) {
    if (!f.read_error.empty()) fmt::print(stderr, "trajcheck guard: {}\n", f.read_error);
    else if (!f.diagnostics.empty()) fmt::print(stderr, "{}", format_diagnostics(f.source, f.diagnostics, false));
  }
  if (!compiled.ok()) {
    fmt::print(stderr, "trajcheck guard: rules did not compile; the server was not started\n");
    return kBadInput;
  }
  GuardOptions o;
  o.deny = a.on_violation == "deny";
  o.trace_out = a.trace_out;
  o.context = a.context;
  return run_guard(compiled.rules, o, a.command, stdin, stdout, stderr);
}

const bool guard_registered = register_command({"guard", 45, [](CLI::App& app) {
  auto args = std::make_shared<GuardArgs>();
  CLI::App* sub = app.add_subcommand("guard", "run an MCP server (stdio) behind the rules: deny the calls they forbid");
  sub->add_option("-r,--rules", args->rules_files, "rules file (repeatable)")->required();
  sub->add_option("--on-violation", args->on_violation, "deny the call (default) or only warn")
      ->check(CLI::IsMember({"deny", "warn"}));
  sub->add_option("--trace-out", args->trace_out, "write the recorded trace here (native JSONL)");
  sub->add_option("--context", args->context, "the trace's context, a JSON object");
  sub->add_option("--catalog", args->tool_catalog, "tool catalog file (instead of the rules' `catalog` line)");
  sub->add_option("command", args->command, "the MCP server and its arguments, after --")->required();
  return std::function<int()>([args] { return run_guard_command(*args); });
}});

}  // namespace
}  // namespace trajcheck::cli
