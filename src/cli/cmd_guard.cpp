// `trajcheck guard -r RULES… [options] -- COMMAND…`: runs an MCP server (stdio) as a child
// and enforces the rules on the tool calls between it and the client (trajcheck/guard.hpp);
// the log goes to stderr, the protocol to stdout. Every option is checked before the server
// starts: a context, trace file or decision log that cannot be used is an error (exit 2).
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/guard.hpp"

namespace trajcheck::cli {
namespace {

struct GuardArgs {
  std::vector<std::string> rules_files;
  std::string mode;          // enforce|observe
  std::string on_violation;  // deny|warn: the same as --mode enforce|observe
  std::string trace_out;
  std::string trace_id;
  std::vector<std::string> context;
  std::string tool_catalog;
  std::string decision_log;
  std::string otlp_endpoint;
  std::string log_arguments = "masked";
  std::vector<std::string> mask_args;
  std::vector<std::string> command;
};

// The context object from --context values: KEY=VALUE (as `check` takes them; VALUE is JSON
// if it parses as JSON, else a string) or a whole JSON object; later keys win.
bool context_object(const std::vector<std::string>& given, std::string* out, std::string* error) {
  using json = nlohmann::json;
  json ctx = json::object();
  std::vector<std::string> pairs;
  for (const std::string& c : given) {
    if (!c.empty() && c.front() == '{') {
      json obj = json::parse(c, nullptr, false);
      if (obj.is_discarded() || !obj.is_object()) {
        *error = fmt::format("--context '{}': not a JSON object (expected KEY=VALUE or a JSON object)", c);
        return false;
      }
      for (auto& [k, v] : obj.items()) ctx[k] = v;
    } else {
      pairs.push_back(c);
    }
  }
  NormalizeOptions n;
  if (!parse_reading_spec(ReadingSpec{"auto", {}, {}, pairs}, &n, error)) return false;
  for (const auto& [k, v] : n.context_overrides) ctx[k] = json::parse(v);
  *out = ctx.empty() ? std::string() : ctx.dump();
  return true;
}

int run_guard_command(const GuardArgs& a) {
  GuardOptions o;
  if (!a.mode.empty() && !a.on_violation.empty() && (a.mode == "enforce") != (a.on_violation == "deny")) {
    fmt::print(stderr, "trajcheck guard: --mode {} and --on-violation {} disagree\n", a.mode, a.on_violation);
    return kBadInput;
  }
  o.deny = a.mode.empty() ? a.on_violation != "warn" : a.mode == "enforce";
  std::string error;
  if (!context_object(a.context, &o.context, &error)) {
    fmt::print(stderr, "trajcheck guard: {}; the server was not started\n", error);
    return kBadInput;
  }
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
  o.trace_out = a.trace_out;
  o.trace_id = a.trace_id;
  o.log_arguments = a.log_arguments == "full";
  o.mask_args = a.mask_args;
  o.rules_digest = rules_digest(compiled);
  o.otlp_endpoint = a.otlp_endpoint;
  std::FILE* decisions = nullptr;
  if (a.decision_log == "-") {
    o.decision_log = stderr;
  } else if (!a.decision_log.empty()) {
    decisions = std::fopen(a.decision_log.c_str(), "ab");
    if (decisions == nullptr) {
      fmt::print(stderr, "trajcheck guard: cannot write the decision log to {}: {}; the server was not started\n",
                 a.decision_log, std::strerror(errno));
      return kBadInput;
    }
    o.decision_log = decisions;
  }
  const int rc = run_guard(compiled.rules, o, a.command, stdin, stdout, stderr);
  if (decisions != nullptr && std::fclose(decisions) != 0) {
    fmt::print(stderr, "trajcheck guard: cannot write the decision log to {}\n", a.decision_log);
    return kBadInput;
  }
  return rc;
}

const bool guard_registered = register_command({"guard", 45, [](CLI::App& app) {
  auto args = std::make_shared<GuardArgs>();
  CLI::App* sub = app.add_subcommand("guard", "run an MCP server (stdio) behind the rules: deny the calls they forbid");
  // One value per occurrence and positionals only at the end, so that everything after `--`
  // (`-- npx -y pkg --flag`) is the server's command line.
  sub->add_option("-r,--rules", args->rules_files, "rules file (repeatable)")->required()->allow_extra_args(false);
  sub->add_option("--mode", args->mode, "enforce (default): deny the calls the rules forbid; observe: decide and log only")
      ->check(CLI::IsMember({"enforce", "observe"}));
  sub->add_option("--on-violation", args->on_violation, "deny (--mode enforce) or warn (--mode observe)")
      ->check(CLI::IsMember({"deny", "warn"}));
  sub->add_option("--trace-out", args->trace_out, "append the recorded trace here (native JSONL, a line per session)");
  sub->add_option("--trace-id", args->trace_id, "the recorded trace's id (default: guard-CLIENT-UTCTIME-PID)");
  sub->add_option("--context", args->context,
                  "KEY=VALUE in the trace's context (repeatable; VALUE is JSON if it parses as JSON, else a string), "
                  "or a JSON object")
      ->allow_extra_args(false);
  sub->add_option("--catalog", args->tool_catalog, "tool catalog file (instead of the rules' `catalog` line)");
  sub->add_option("--decision-log", args->decision_log, "append one JSON line per decision here (- for stderr)");
  sub->add_option("--otlp-endpoint", args->otlp_endpoint,
                  "send each decision as an OpenTelemetry event (gen_ai.guardrail.result) to this OTLP/HTTP "
                  "endpoint, e.g. http://127.0.0.1:4318");
  add_log_argument_options(sub, args->log_arguments, args->mask_args);
  sub->add_option("command", args->command, "the MCP server and its arguments, after --")->required();
  sub->positionals_at_end();
  return std::function<int()>([args] { return run_guard_command(*args); });
}});

}  // namespace
}  // namespace trajcheck::cli
