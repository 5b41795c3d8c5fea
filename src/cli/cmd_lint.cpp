// `trajcheck lint RULES…`: compile only, print every diagnostic of every file.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::cli {
namespace {

struct LintArgs {
  std::vector<std::string> files;
  std::string catalog;
  std::string color = "auto";
  bool quiet = false;
};

int run_lint(const LintArgs& a) {
  const bool color = use_color(a.color, stdout);
  std::size_t errors = 0, warnings = 0, bad_files = 0;
  CompileOptions copts;
  copts.catalog_override = a.catalog;
  for (const std::string& path : a.files) {
    std::string error;
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) {
      fmt::print(stderr, "trajcheck lint: {}\n", error);
      ++errors;
      ++bad_files;
      continue;
    }
    CompileResult r = compile(*src, copts);
    std::vector<Diagnostic> shown;
    for (const Diagnostic& d : r.diagnostics) {
      if (d.severity == Severity::error) ++errors;
      if (d.severity == Severity::warning) ++warnings;
      if (!a.quiet || d.severity == Severity::error) shown.push_back(d);
    }
    fmt::print("{}", format_diagnostics(r.source, shown, color));
    if (!r.ok()) ++bad_files;
  }
  std::fflush(stdout);
  if (!a.quiet || errors)
    fmt::print(stderr, "{} file{} linted: {} error{}, {} warning{}\n", a.files.size(),
               a.files.size() == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings,
               warnings == 1 ? "" : "s");
  return bad_files > 0 ? kBadInput : kPass;
}

const bool lint_registered = register_command({"lint", 40, [](CLI::App& app) {
  auto args = std::make_shared<LintArgs>();
  CLI::App* sub = app.add_subcommand("lint", "compile rules files and print their diagnostics");
  sub->add_option("rules", args->files, "rules files")->required();
  sub->add_option("--catalog", args->catalog, "tool catalog JSON (overrides the files' catalog line)");
  sub->add_option("--color", args->color, "auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_flag("-q,--quiet", args->quiet, "print errors only");
  return [args] { return run_lint(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
