// `trajcheck lint RULES… [--catalog C] [--traces PATHS…]`: compile only, print every
// diagnostic of every file. With --traces, the tools the traces call are what is known to
// exist (W008 for a name or glob that matches none of them, when no catalog decides).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/eval.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {
namespace {

struct LintArgs {
  std::vector<std::string> files;
  std::string catalog;
  std::vector<std::string> traces;
  std::string color = "auto";
  bool quiet = false;
};

// The tool names the traces call, as written (trimmed, not case-folded, no alias applied):
// each rules file folds and renames them its own way. False when a record could not be read
// (reported on standard error): a check against part of the traces is no check.
bool lint_read_tool_names(const std::vector<std::string>& inputs, std::set<std::string>& names,
                          std::uint64_t& traces) {
  NormalizeOptions no;
  no.case_sensitive = true;
  TraceParser parser(no);
  RecordSource source(inputs);
  RawRecord rec;
  ToolTable tools;
  Trajectory scratch(&tools);
  bool ok = true;
  while (source.next(rec)) {
    ParseOutcome o = parser.parse(rec, scratch, [&](Trajectory& t) {
      ++traces;
      for (const Step& s : t.steps())
        if (s.type == StepType::tool_call) names.emplace(t.text(s.tool_name));
    });
    for (const RecordError& e : o.errors) {
      fmt::print(stderr, "{}", format_record_error(e));
      ok = false;
    }
  }
  return ok;
}

// The names as a rules file sees them: its case rule, then its aliases (chains followed).
std::vector<std::string> lint_names_for(const Program& program, const std::set<std::string>& raw) {
  std::map<std::string, std::string> alias(program.tool_aliases().begin(), program.tool_aliases().end());
  std::set<std::string> out;
  for (const std::string& n : raw) {
    std::string name = normalize_tool_name(n, program.case_sensitive_names());
    for (std::size_t hops = 0; hops <= alias.size(); ++hops) {
      auto it = alias.find(name);
      if (it == alias.end() || it->second == name) break;
      name = it->second;
    }
    out.insert(std::move(name));
  }
  return {out.begin(), out.end()};
}

int run_lint(const LintArgs& a) {
  const bool color = use_color(a.color, stdout);
  std::size_t errors = 0, warnings = 0, bad_files = 0;
  CompileOptions copts;
  copts.catalog_override = a.catalog;
  std::set<std::string> raw_names;
  bool traces_ok = true;
  if (!a.traces.empty()) {
    std::uint64_t traces = 0;
    traces_ok = lint_read_tool_names(a.traces, raw_names, traces);
    if (traces == 0 && traces_ok) {
      fmt::print(stderr, "trajcheck lint: --traces {} hold{} no trace: there is nothing to compare the rules with\n",
                 fmt::join(a.traces, " "), a.traces.size() == 1 ? "s" : "");
      traces_ok = false;
    }
    if (!traces_ok) ++errors;
  }
  for (const std::string& path : a.files) {
    std::string error;
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) {
      fmt::print(stderr, "trajcheck lint: {}\n", error);
      ++errors;
      ++bad_files;
      continue;
    }
    // A suite: parsed (its diagnostics located in it) and its `rules` files compiled.
    if (path.size() > 6 && path.compare(path.size() - 6, 6, ".suite") == 0) {
      eval::SuiteFile suite = eval::parse_suite_file(std::move(*src));
      std::vector<Diagnostic> shown;
      bool suite_errors = false;
      for (const Diagnostic& d : suite.diagnostics) {
        if (d.severity == Severity::error) ++errors, suite_errors = true;
        if (d.severity == Severity::warning) ++warnings;
        if (!a.quiet || d.severity == Severity::error) shown.push_back(d);
      }
      fmt::print("{}", format_diagnostics(suite.source, shown, color));
      if (!suite.ok() || suite_errors) {
        ++bad_files;
        continue;
      }
      std::vector<std::shared_ptr<const Program>> programs;
      std::string rules_errors;
      if (!eval::compile_suite_rules(suite, programs, rules_errors)) {
        fmt::print("{}", rules_errors);
        ++errors;
        ++bad_files;
      }
      continue;
    }
    CompileResult r = compile(*src, copts);
    // The names the traces call, folded and renamed as this file does it; compiled again
    // with them (the first compile gave the file's case rule and aliases).
    if (r.ok() && !a.traces.empty() && traces_ok) {
      CompileOptions with_names = copts;
      with_names.seen_tools = lint_names_for(*r.program, raw_names);
      r = compile(*src, with_names);
    }
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
  return bad_files > 0 || !traces_ok ? kBadInput : kPass;
}

const bool lint_registered = register_command({"lint", 40, [](CLI::App& app) {
  auto args = std::make_shared<LintArgs>();
  CLI::App* sub = app.add_subcommand("lint", "compile rules files and print their diagnostics");
  sub->add_option("rules", args->files, "rules files (.suite files: parsed and their rules compiled)")->required();
  sub->add_option("--catalog", args->catalog, "tool catalog JSON (overrides the files' catalog line)");
  sub->add_option("--traces", args->traces,
                  "trace files or directories: the tools they call are known to exist (W008 for names none matches)");
  sub->add_option("--color", args->color, "auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_flag("-q,--quiet", args->quiet, "print errors only");
  return [args] { return run_lint(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
