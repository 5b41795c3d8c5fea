// `trajcheck compare A.json B.json`: per dimension and segment the two runs' values, the
// delta and a seeded paired-bootstrap CI; cases flipped pass->fail and back.
#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/eval.hpp"

namespace trajcheck::cli {
namespace {

struct CompareSettings {
  std::string a, b, format = "text", output;
  std::uint64_t seed = 1;
  unsigned resamples = 2000;
  bool require_same = false;
  bool fail_on_regression = false;
};

int run(const CompareSettings& s) {
  std::string a, b, error;
  for (const auto& [path, text] : {std::pair{&s.a, &a}, std::pair{&s.b, &b}}) {
    std::string reason;
    if (!eval::read_report_file(*path, *text, reason)) {
      fmt::print(stderr, "{}: error: {}\n", *path, reason);
      return kBadInput;
    }
  }
  eval::CompareOptions o;
  o.seed = s.seed;
  o.resamples = s.resamples;
  o.require_same = s.require_same;
  eval::CompareReport r;
  if (!eval::compare_reports(s.a, a, s.b, b, o, r, error)) {
    fmt::print(stderr, "{}", error);
    return kBadInput;
  }
  // The comparison says it too; standard error says it whatever the format and -o.
  if (!r.input_differences.empty())
    fmt::print(stderr, "trajcheck compare: warning: the reports were not computed from the same inputs ({}); "
                       "--require-same makes this an error\n",
               r.input_differences.size());
  std::string text = s.format == "json"       ? eval::compare_json(r)
                     : s.format == "markdown" ? eval::compare_markdown(r)
                     : s.format == "html"     ? eval::compare_html(r)
                                              : eval::compare_text(r);
  if (!write_output(s.output, text, "compare")) return kBadInput;
  if (s.fail_on_regression && eval::compare_regressed(r)) {
    fmt::print(stderr, "trajcheck compare: regression: {} dimension{} worse, {} case{} pass -> fail (--fail-on-regression)\n",
               r.regressions.size(), r.regressions.size() == 1 ? "" : "s", r.pass_to_fail.size(),
               r.pass_to_fail.size() == 1 ? "" : "s");
    return kFail;
  }
  return kPass;
}

const bool compare_registered = register_command({"compare", 31, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<CompareSettings>();
  auto* sub = app.add_subcommand("compare", "compare two eval reports (json): deltas with paired-bootstrap CIs");
  sub->add_option("a", s->a, "the earlier report (eval --format json)")->required();
  sub->add_option("b", s->b, "the later report (eval --format json)")->required();
  sub->add_option("--format", s->format, "text|json|markdown|html")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}));
  sub->add_option("-o,--output", s->output, "write the comparison to this file");
  sub->add_option("--seed", s->seed, "bootstrap seed (same seed, same intervals)");
  sub->add_option("--resamples", s->resamples, "bootstrap resamples (default 2000)");
  sub->add_flag("--require-same", s->require_same,
                "fail (exit 2) when the reports were not computed from the same rules, cases, catalog and fixtures");
  sub->add_flag("--fail-on-regression", s->fail_on_regression,
                "exit 1 when an overall dimension's interval lies on the worse side of 0 or a case flipped pass -> fail");
  return [s] { return run(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
