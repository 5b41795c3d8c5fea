// `trajcheck serve -r RULES… [options]`: an OTLP/HTTP receiver that checks traces as they
// complete (trajcheck/serve.hpp); verdicts as `check --format jsonl` records.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/serve.hpp"

namespace trajcheck::cli {
namespace {

struct ServeArgs {
  std::vector<std::string> rules_files;
  std::string listen = "127.0.0.1:4318";
  std::string idle = "5s";
  std::string out = "-";
  std::string otlp_endpoint;
  std::string decision_log;
  std::string log_arguments = "masked";
  std::vector<std::string> mask_args;
  std::string fail_on = "error";
  std::string tool_catalog;
  std::size_t max_open_traces = 10000;
  std::size_t max_spans_per_trace = 10000;
};

int run_serve_command(const ServeArgs& a) {
  ServeRunOptions o;
  o.rules_files = a.rules_files;
  o.compile.catalog_override = a.tool_catalog;
  o.listen = a.listen;
  o.out = a.out;
  o.otlp_endpoint = a.otlp_endpoint;
  o.decision_log = a.decision_log;
  o.log_arguments.full = a.log_arguments == "full";
  o.log_arguments.mask = a.mask_args;
  if (!parse_duration_ms(a.idle, &o.core.idle_ms) || o.core.idle_ms == 0) {
    fmt::print(stderr, "trajcheck serve: --idle '{}': expected a duration such as 5s, 500ms or 2m\n", a.idle);
    return kBadInput;
  }
  if (!parse_fail_on(a.fail_on, &o.core.fail_on)) {
    fmt::print(stderr, "trajcheck serve: --fail-on '{}': expected critical, error, warning, info or never\n", a.fail_on);
    return kBadInput;
  }
  if (a.max_open_traces == 0 || a.max_spans_per_trace == 0) {
    fmt::print(stderr, "trajcheck serve: --max-open-traces and --max-spans-per-trace must be at least 1\n");
    return kBadInput;
  }
  o.core.max_open_traces = a.max_open_traces;
  o.core.max_spans_per_trace = a.max_spans_per_trace;
  return run_serve(o, stderr);
}

const bool serve_registered = register_command({"serve", 46, [](CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand("serve", "receive OTLP/HTTP traces and check each as it completes");
  sub->add_option("-r,--rules", args->rules_files, "rules file (repeatable; compiled again on SIGHUP)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--listen", args->listen, "HOST:PORT to listen on (default 127.0.0.1:4318; port 0: any free one)");
  sub->add_option("--idle", args->idle,
                  "a trace is complete when its root span ended and nothing of it arrived for this long (default 5s)");
  sub->add_option("--out", args->out, "append the verdicts (check --format jsonl records) here; - for stdout (default)");
  sub->add_option("--otlp-endpoint", args->otlp_endpoint,
                  "send gen_ai.evaluation.result events to this OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318");
  sub->add_option("--decision-log", args->decision_log,
                  "append the verdicts as guard's decision-log lines here, one per violation or an allow per trace "
                  "(- for stderr)");
  add_log_argument_options(sub, args->log_arguments, args->mask_args);
  sub->add_option("--fail-on", args->fail_on, "lowest severity whose violation fails a trace (default error)");
  sub->add_option("--catalog", args->tool_catalog, "tool catalog file (instead of the rules' `catalog` line)");
  sub->add_option("--max-open-traces", args->max_open_traces, "traces held at once (default 10000)");
  sub->add_option("--max-spans-per-trace", args->max_spans_per_trace,
                  "past this a trace is checked as it is, with a warning (default 10000)");
  return std::function<int()>([args] { return run_serve_command(*args); });
}});

}  // namespace
}  // namespace trajcheck::cli
