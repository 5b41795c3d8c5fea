// `trajcheck history DB`: each metric of one suite across the runs recorded by
// `eval --record DB`, with the paired-bootstrap interval against the run before and the
// regressions flagged; exit 1 with --fail-on-regression when the latest run regressed.
#include <cstdio>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/history.hpp"

namespace trajcheck::cli {
namespace {

struct HistorySettings {
  std::string db, suite, format = "text", output;
  std::size_t last = 0;
  std::uint64_t seed = 1;
  unsigned resamples = 2000;
  bool fail_on_regression = false;
};

int run(const HistorySettings& s) {
  eval::HistoryOptions o;
  o.suite = s.suite;
  o.last = s.last;
  o.compare.seed = s.seed;
  o.compare.resamples = s.resamples;
  if (s.resamples > eval::kMaxResamples) {
    fmt::print(stderr, "error: --resamples {} is more than the limit of {}\n", s.resamples, eval::kMaxResamples);
    return kBadInput;
  }
  eval::History h;
  std::string error;
  if (!eval::load_history(s.db, o, h, error)) {
    fmt::print(stderr, "{}", error);
    return kBadInput;
  }
  std::string text = s.format == "json"   ? eval::history_json(h)
                     : s.format == "html" ? eval::history_html(h)
                                          : eval::history_text(h);
  if (!write_output(s.output, text, "history")) return kBadInput;
  if (h.latest_regressed()) {
    fmt::print(stderr, "trajcheck history: the latest run ({}) regressed\n", h.runs.back().label);
    if (s.fail_on_regression) return kFail;
  }
  return kPass;
}

const bool history_registered = register_command({"history", 32, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<HistorySettings>();
  auto* sub = app.add_subcommand("history", "each eval metric across the runs recorded with `eval --record`");
  sub->add_option("db", s->db, "the history database (eval --record DB)")->required();
  sub->add_option("--suite", s->suite, "the suite whose runs to show (needed when the database holds several)");
  sub->add_option("--format", s->format, "text|json|html")->check(CLI::IsMember({"text", "json", "html"}));
  sub->add_option("-o,--output", s->output, "write the history to this file");
  sub->add_option("--last", s->last, "only the last N runs (0: all)");
  sub->add_option("--seed", s->seed, "bootstrap seed (same seed, same intervals)");
  sub->add_option("--resamples", s->resamples, "bootstrap resamples (default 2000)");
  sub->add_flag("--fail-on-regression", s->fail_on_regression,
                "exit 1 when the latest run regressed (a dimension's interval below 0, or a case pass -> fail)");
  return [s] { return run(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
