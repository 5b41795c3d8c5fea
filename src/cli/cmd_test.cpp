// `trajcheck test [PATHS…]`: run the tests kept beside rules files (docs/testing-rules.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "trajcheck/rule_tests.hpp"

namespace trajcheck::cli {
namespace {

struct TestArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  bool coverage = false;
  double min_coverage = -1;
  bool quiet = false;
};

int run_test(const TestArgs& a) {
  RuleTestFormat format = RuleTestFormat::text;
  if (!parse_rule_test_format(a.format, &format)) {
    fmt::print(stderr, "trajcheck test: unknown --format '{}'\n", a.format);
    return kBadInput;
  }
  if (a.min_coverage > 100) {
    fmt::print(stderr, "trajcheck test: --min-coverage {} is above 100\n", a.min_coverage);
    return kBadInput;
  }
  RuleTestOptions options;
  options.coverage = a.coverage || a.min_coverage >= 0;
  std::vector<std::string> paths = a.paths.empty() ? std::vector<std::string>{"."} : a.paths;
  RuleTestRun run = run_rule_tests(paths, options);
  for (const std::string& e : run.errors) fmt::print(stderr, "{}{}", e, !e.empty() && e.back() == '\n' ? "" : "\n");
  if (!a.quiet)
    for (const std::string& w : run.warnings) fmt::print(stderr, "{}\n", w);
  fmt::print("{}", format_rule_test_report(run, format, a.quiet));
  if (run.bad_input()) return kBadInput;
  if (run.failed > 0) return kFail;
  if (a.min_coverage >= 0 && !run.summary.at_least(a.min_coverage)) {
    fmt::print(stderr, "trajcheck test: coverage {:.1f}% is below --min-coverage {}\n", run.summary.percent(), a.min_coverage);
    return kFail;
  }
  return kPass;
}

const bool test_registered = register_command({"test", 42, [](CLI::App& app) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* sub = app.add_subcommand("test", "run the tests of rules files (RULES.rules.test.json)");
  sub->add_option("paths", args->paths, "test files, rules files or directories (default .)");
  sub->add_option("--format", args->format, "text|json|junit")->check(CLI::IsMember({"text", "json", "junit"}));
  sub->add_flag("--coverage", args->coverage,
                "report which rules no test makes violated or hold, and which statements and PATH branches no test reached");
  sub->add_option("--min-coverage", args->min_coverage, "exit 1 when coverage is below P percent (implies --coverage)")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_flag("-q,--quiet", args->quiet, "no PASS lines, no warnings");
  return [args] { return run_test(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
