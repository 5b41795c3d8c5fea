// `trajcheck normalize TRACES…`: prints each trajectory in the normalized form of docs/traces.md,
// one JSON line each, in input order; rejected records and warnings go to stderr.
#include <cstdio>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {
namespace {

int run_normalize(const TraceInputOptions& opts) {
  NormalizeOptions n;
  std::string error;
  if (!make_normalize_options(opts, &n, &error)) {
    fmt::print(stderr, "trajcheck normalize: {}\n", error);
    return kBadInput;
  }
  TraceParser parser(std::move(n));
  if (!parser.option_error().empty()) {
    fmt::print(stderr, "trajcheck normalize: {}\n", parser.option_error());
    return kBadInput;
  }
  RecordSource source(opts.inputs, parser.options().format);
  buffer_bulk_output(stdout);
  NormalizeStats total = normalize_records(RecordInput(source), parser, opts.jobs,
                                           write_to(stdout, stderr));
  std::fflush(stdout);
  fmt::print(stderr, "normalize: {} records read, {} traces, {} rejected, {} warnings\n", total.records,
             total.traces, total.rejected, total.warnings);
  return total.rejected > 0 ? kBadInput : kPass;
}

const bool normalize_registered = register_command({"normalize", 60, [](CLI::App& app) {
  auto opts = std::make_shared<TraceInputOptions>();
  CLI::App* sub = app.add_subcommand("normalize", "print the normalized trajectories as JSONL");
  add_trace_input_options(sub, *opts);
  return std::function<int()>([opts] { return run_normalize(*opts); });
}});

}  // namespace
}  // namespace trajcheck::cli
