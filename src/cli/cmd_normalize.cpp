// `trajcheck normalize TRACES…`: prints each trajectory in the normalized form of docs/traces.md,
// one JSON line each, in input order; rejected records and warnings go to stderr.
#include <cstdio>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/input.hpp"
#include "trajcheck/reader.hpp"
#include "run/pipeline.hpp"

namespace trajcheck::cli {

namespace {

struct NormalizeWorker {
  const TraceParser* parser = nullptr;
  ToolTable tools;
  Trajectory scratch;
  InputCounts counts;

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    ++counts.records;
    scratch.set_tools(&tools);
    ParseOutcome o = parser->parse(rec, scratch, [&](Trajectory& t) {
      for (const std::string& w : t.warnings) {
        err += w;
        err.push_back('\n');
      }
      counts.warnings += t.warnings.size();
      write_normalized_json(t, out);
      out.push_back('\n');
    });
    if (!o.ok()) {
      ++counts.rejected;
      for (const RecordError& e : o.errors) err += format_record_error(e);
    }
    counts.traces += o.traces;
  }
};

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
  RecordSource source(opts.inputs);
  std::function<NormalizeWorker()> make = [&] {
    NormalizeWorker w;
    w.parser = &parser;
    return w;
  };
  std::vector<NormalizeWorker> workers =
      process_records<NormalizeWorker>(source, effective_jobs(opts.jobs), make, stdout, stderr);
  InputCounts total;
  for (const NormalizeWorker& w : workers) total.merge(w.counts);
  std::fflush(stdout);
  fmt::print(stderr, "normalize: {} records read, {} traces, {} rejected, {} warnings\n", total.records,
             total.traces, total.rejected, total.warnings);
  return total.rejected > 0 ? kBadInput : kPass;
}

const bool registered = register_command({"normalize", 60, [](CLI::App& app) {
  auto opts = std::make_shared<TraceInputOptions>();
  CLI::App* sub = app.add_subcommand("normalize", "print the normalized trajectories as JSONL");
  add_trace_input_options(sub, *opts);
  return std::function<int()>([opts] { return run_normalize(*opts); });
}});

}  // namespace

}  // namespace trajcheck::cli
