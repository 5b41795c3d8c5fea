// `trajcheck eval SUITE`: run an evaluation suite (cases, runs, rules, metrics, segments,
// gates) and print the report; exit 1 when a gate fails, 2 on bad input.
#include <cstdio>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/eval.hpp"
#include "trajcheck/history.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {
namespace {

struct EvalSettings {
  std::string suite;
  std::vector<std::string> runs;
  std::string format = "text";
  std::string output;
  std::string baseline;
  std::string input_format = "auto";
  std::vector<std::string> aliases, error_patterns;
  unsigned jobs = 0;
  std::string color = "auto";
  std::string grader_cache;
  std::string record, label, recorded_at;  // --record DB: keep the report in the history database
};

int run(const EvalSettings& s) {
  eval::EvalOptions o;
  o.suite_path = s.suite;
  o.runs = s.runs;
  std::string error;
  if (!parse_reading_spec(ReadingSpec{s.input_format, s.aliases, s.error_patterns, {}}, &o.reading, &error)) {
    fmt::print(stderr, "error: {}\n", error);
    return kBadInput;
  }
  o.baseline = s.baseline;
  o.jobs = effective_jobs(s.jobs);
  o.grader_cache = s.grader_cache;
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  bool ok = eval::run_eval(o, report, problems);
  fmt::print(stderr, "{}", eval::format_problems(problems, use_color(s.color, stderr)));
  if (!ok) return kBadInput;
  std::string text = s.format == "json"       ? eval::report_json(report)
                     : s.format == "markdown" ? eval::report_markdown(report)
                     : s.format == "junit"    ? eval::report_junit(report)
                     : s.format == "html"     ? eval::report_html(report)
                                              : eval::report_text(report);
  if (!write_output(s.output, text, "eval")) return kBadInput;
  if (report.rejected > 0) {
    fmt::print(stderr, "trajcheck eval: {} run record{} rejected\n", report.rejected, report.rejected == 1 ? "" : "s");
    return kBadInput;
  }
  // A run with rejected records is bad input, not a release to keep.
  if (!s.record.empty()) {
    std::string json = s.format == "json" ? text : eval::report_json(report);
    if (!eval::record_report(s.record, json, eval::RecordOptions{s.label, s.recorded_at}, error)) {
      fmt::print(stderr, "{}", error);
      return kBadInput;
    }
  }
  if (std::string why = eval::nothing_judged(report); !why.empty())
    fmt::print(stderr, "trajcheck eval: FAIL: {}\n", why);
  return report.passed() ? kPass : kFail;
}

const bool eval_registered = register_command({"eval", 30, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<EvalSettings>();
  auto* sub = app.add_subcommand("eval", "run an evaluation suite: cases, rules, metrics, segments, gates");
  sub->add_option("suite", s->suite, "the .suite file")->required();
  sub->add_option("--runs", s->runs, "run files or directories to judge (replace the suite's `runs`)");
  sub->add_option("--format", s->format, "text|json|markdown|junit|html")
      ->check(CLI::IsMember({"text", "json", "markdown", "junit", "html"}));
  sub->add_option("-o,--output", s->output, "write the report to this file instead of standard output");
  sub->add_option("--baseline", s->baseline, "an earlier `eval --format json` (replaces the suite's `baseline`)");
  sub->add_option("--input-format", s->input_format,
                  "a trace format (default auto): " + fmt::format("{}", fmt::join(input_format_names(), "|")))
      ->check(CLI::IsMember(input_format_names()));
  sub->add_option("--alias", s->aliases, "OBSERVED=CANONICAL tool-name alias (repeatable)");
  sub->add_option("--error-pattern", s->error_patterns,
                  "RE2 pattern over a tool result's text that marks the call failed (repeatable)");
  sub->add_option("-j,--jobs", s->jobs, "worker threads (default: all cores)");
  sub->add_option("--grader-cache", s->grader_cache,
                  "where graders' answers are kept (default: .trajcheck-cache/graders beside the suite; - for none)");
  sub->add_option("--record", s->record, "also keep the report in this SQLite history database (see `trajcheck history`)");
  sub->add_option("--label", s->label, "the release label of the recorded run (default: the recording time)");
  sub->add_option("--recorded-at", s->recorded_at, "the recorded run's time, YYYY-MM-DDTHH:MM:SSZ (default: now)");
  sub->add_option("--color", s->color, "auto|always|never")->check(CLI::IsMember({"auto", "always", "never"}));
  return [s] { return run(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
