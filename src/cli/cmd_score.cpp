// `trajcheck score`: classic tool-use scores of records that carry both the actual and the
// expected trajectory, streamed in input order (jsonl), gathered (json) or as tables (text).
#include <cstdio>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/score_run.hpp"

namespace trajcheck::cli {
namespace {

struct ScoreSettings {
  TraceInputOptions input;
  ScoreSpellings spell;
};

int run_score(ScoreSettings& s) {
#if defined(__GLIBC__)
  // Blocks of 1 MiB or more get mappings of their own, returned to the system when freed.
  // glibc's default threshold rises to the largest mapped block freed (a large record's line
  // as it grew), and below it the vectors that grow and are freed while a large record's
  // calls are read stay resident in the heap: 8 MB of the peak on a 100 000-call record.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  ScoreRunOptions run;
  std::string error;
  if (!make_score_run_options(s.spell, &run, &error)) {
    fmt::print(stderr, "trajcheck score: {}\n", error);
    return kBadInput;
  }
  if (!make_normalize_options(s.input, &run.reading, &error)) {
    fmt::print(stderr, "trajcheck score: {}\n", error);
    return kBadInput;
  }
  run.quiet = s.input.quiet;
  run.jobs = s.input.jobs;
  ScoreRunner runner(run);
  if (!runner.option_error().empty()) {
    fmt::print(stderr, "trajcheck score: {}\n", runner.option_error());
    return kBadInput;
  }
  buffer_bulk_output(stdout);
  std::FILE* body = nullptr;
  if (run.format == ScoreFormat::json) {
    // Records stream to a temporary file so memory stays flat; the array is closed after.
    body = std::tmpfile();
    if (!body) {
      fmt::print(stderr, "trajcheck score: cannot create a temporary file\n");
      return kInternal;
    }
    buffer_bulk_output(body);
  }
  RecordSource source(s.input.inputs, run.reading.format);
  ScoreSummary summary = runner.run(source, write_to(body ? body : stdout, stderr));
  finish_score(run.format, summary, body, stdout, run.thresholds);
  if (body) std::fclose(body);
  std::fflush(stdout);
  return exit_status(summary, run.thresholds);
}

const bool score_registered = register_command({"score", 20, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<ScoreSettings>();
  CLI::App* sub = app.add_subcommand("score", "score actual trajectories against expected ones (records carry both)");
  add_trace_input_options(sub, s->input);
  sub->add_option("--format", s->spell.format, "text|json|jsonl")->check(CLI::IsMember({"text", "json", "jsonl"}));
  sub->add_option("--selection", s->spell.selection, "jaccard|recall|precision|f1 (default jaccard)")
      ->check(CLI::IsMember({"jaccard", "recall", "precision", "f1"}));
  sub->add_flag("--multiset", s->spell.multiset, "count repeated calls in selection");
  sub->add_option("--weights", s->spell.weights, "SELECTION,ORDERING weights of overall (default 0.6,0.4)");
  sub->add_option("--min-order-length", s->spell.min_order_length,
                  "below this many expected steps ordering is null and overall is selection");
  sub->add_option("--tool-args", s->spell.tool_args, "exact|ignore|subset|superset (default exact)")
      ->check(CLI::IsMember({"exact", "ignore", "subset", "superset"}));
  sub->add_option("--tool-args-for", s->spell.tool_args_for, "NAME=MODE argument mode for one tool (repeatable)");
  for (ScoreMetric m : {ScoreMetric::overall, ScoreMetric::selection, ScoreMetric::ordering, ScoreMetric::arguments})
    sub->add_option(fmt::format("--min-{}", to_string(m)), s->spell.min[static_cast<int>(m)],
                    fmt::format("exit 1 when the mean {} is below X (see --per-record)", to_string(m)))
        ->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--per-record", s->spell.per_record, "apply the --min-* thresholds to every record, listing the failing ids");
  return [s] { return run_score(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
