// `trajcheck score`: classic tool-use scores of records that carry both the actual and the
// expected trajectory, streamed in input order (jsonl), gathered (json) or as tables (text).
#include <cmath>
#include <cstdio>
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
  std::string format = "text";
  std::string selection = "jaccard";
  bool multiset = false;
  std::string weights = "0.6,0.4";
  std::uint32_t min_order_length = 0;
  std::string tool_args = "exact";
  std::vector<std::string> tool_args_for;
  std::optional<double> min[4];  // --min-overall, --min-selection, --min-ordering, --min-arguments
  bool per_record = false;
};

bool parse_weights(const std::string& text, double* s, double* o) {
  auto comma = text.find(',');
  if (comma == std::string::npos) return false;
  try {
    std::size_t used = 0;
    *s = std::stod(text.substr(0, comma), &used);
    if (used != comma) return false;
    std::string rest = text.substr(comma + 1);
    *o = std::stod(rest, &used);
    if (used != rest.size()) return false;
  } catch (...) {
    return false;
  }
  // The sum divides the weighted score: it must be finite too (1e308,1e308 overflows to inf).
  return *s >= 0 && *o >= 0 && *s + *o > 0 && std::isfinite(*s + *o);
}

int run_score(ScoreSettings& s) {
  ScoreRunOptions run;
  ScoreOptions& opt = run.scoring;
  if (!parse_score_format(s.format, &run.format)) {
    fmt::print(stderr, "trajcheck score: unknown --format '{}'\n", s.format);
    return kBadInput;
  }
  if (!parse_selection_metric(s.selection, &opt.selection)) {
    fmt::print(stderr, "trajcheck score: unknown --selection '{}'\n", s.selection);
    return kBadInput;
  }
  if (!parse_weights(s.weights, &opt.selection_weight, &opt.ordering_weight)) {
    fmt::print(stderr, "trajcheck score: --weights '{}': expected SELECTION,ORDERING (two non-negative numbers, not both 0)\n",
               s.weights);
    return kBadInput;
  }
  opt.multiset = s.multiset;
  opt.min_order_length = s.min_order_length;
  if (!parse_argument_mode(s.tool_args, &opt.tool_args)) {
    fmt::print(stderr, "trajcheck score: unknown --tool-args '{}'\n", s.tool_args);
    return kBadInput;
  }
  for (const std::string& spec : s.tool_args_for) {
    auto eq = spec.find('=');
    ArgumentMode mode;
    if (eq == std::string::npos || eq == 0 || !parse_argument_mode(spec.substr(eq + 1), &mode)) {
      fmt::print(stderr, "trajcheck score: --tool-args-for '{}': expected NAME=exact|ignore|subset|superset\n", spec);
      return kBadInput;
    }
    opt.tool_args_for.emplace_back(spec.substr(0, eq), mode);
  }
  std::string error;
  if (!make_normalize_options(s.input, &run.reading, &error)) {
    fmt::print(stderr, "trajcheck score: {}\n", error);
    return kBadInput;
  }
  for (int m = 0; m < 4; ++m) run.thresholds.min[m] = s.min[m];
  run.thresholds.per_record = s.per_record;
  if (s.per_record && !run.thresholds.any()) {
    fmt::print(stderr, "trajcheck score: --per-record applies thresholds: give --min-overall, --min-selection, "
                       "--min-ordering or --min-arguments\n");
    return kBadInput;
  }
  run.quiet = s.input.quiet;
  run.jobs = s.input.jobs;
  ScoreRunner runner(run);
  if (!runner.option_error().empty()) {
    fmt::print(stderr, "trajcheck score: {}\n", runner.option_error());
    return kBadInput;
  }
  std::FILE* body = nullptr;
  if (run.format == ScoreFormat::json) {
    // Records stream to a temporary file so memory stays flat; the array is closed after.
    body = std::tmpfile();
    if (!body) {
      fmt::print(stderr, "trajcheck score: cannot create a temporary file\n");
      return kInternal;
    }
  }
  RecordSource source(s.input.inputs, run.reading.format);
  ScoreSummary summary = runner.run(source, write_to(body ? body : stdout, stderr));
  finish_score(run.format, summary, body, stdout, run.thresholds);
  if (body) std::fclose(body);
  std::fflush(stdout);
  return exit_status(summary, run.thresholds);
}

const bool registered = register_command({"score", 20, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<ScoreSettings>();
  CLI::App* sub = app.add_subcommand("score", "score actual trajectories against expected ones (records carry both)");
  add_trace_input_options(sub, s->input);
  sub->add_option("--format", s->format, "text|json|jsonl")->check(CLI::IsMember({"text", "json", "jsonl"}));
  sub->add_option("--selection", s->selection, "jaccard|recall|precision|f1 (default jaccard)")
      ->check(CLI::IsMember({"jaccard", "recall", "precision", "f1"}));
  sub->add_flag("--multiset", s->multiset, "count repeated calls in selection");
  sub->add_option("--weights", s->weights, "SELECTION,ORDERING weights of overall (default 0.6,0.4)");
  sub->add_option("--min-order-length", s->min_order_length,
                  "below this many expected steps ordering is null and overall is selection");
  sub->add_option("--tool-args", s->tool_args, "exact|ignore|subset|superset (default exact)")
      ->check(CLI::IsMember({"exact", "ignore", "subset", "superset"}));
  sub->add_option("--tool-args-for", s->tool_args_for, "NAME=MODE argument mode for one tool (repeatable)");
  for (ScoreMetric m : {ScoreMetric::overall, ScoreMetric::selection, ScoreMetric::ordering, ScoreMetric::arguments})
    sub->add_option(fmt::format("--min-{}", to_string(m)), s->min[static_cast<int>(m)],
                    fmt::format("exit 1 when the mean {} is below X (see --per-record)", to_string(m)))
        ->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--per-record", s->per_record, "apply the --min-* thresholds to every record, listing the failing ids");
  return [s] { return run_score(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
