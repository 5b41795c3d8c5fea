// `trajcheck explain -r RULES --emit ast|ir|automaton`: show one compilation stage.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::cli {
namespace {

struct ExplainArgs {
  std::vector<std::string> rules;
  std::string emit = "ir";
  std::string catalog;
  std::string color = "auto";
};

int run_explain(const ExplainArgs& a) {
  const bool color = use_color(a.color, stderr);
  CompileOptions copts;
  copts.catalog_override = a.catalog;
  bool bad = false;
  for (const std::string& path : a.rules) {
    std::string error;
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) {
      fmt::print(stderr, "trajcheck explain: {}\n", error);
      bad = true;
      continue;
    }
    CompileResult r = compile(*src, copts);
    if (!r.diagnostics.empty())
      fmt::print(stderr, "{}", format_diagnostics(r.source, r.diagnostics, color));
    if (!r.ok()) {
      bad = true;
      continue;
    }
    if (a.rules.size() > 1) fmt::print("# ==> {} <==\n", path);
    std::string dump = a.emit == "ast"   ? r.program->dump_ast()
                       : a.emit == "ir" ? r.program->dump_ir()
                                        : r.program->dump_automaton();
    fmt::print("{}", dump);
    if (!dump.empty() && dump.back() != '\n') fmt::print("\n");
  }
  return bad ? kBadInput : kPass;
}

const bool explain_registered = register_command({"explain", 70, [](CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* sub = app.add_subcommand("explain", "show a compilation stage of rules files");
  sub->add_option("-r,--rules,rules", args->rules, "rules file (repeatable)")
      ->required()
      ->allow_extra_args(false);
  sub->add_option("--emit", args->emit, "ast|ir|automaton (default ir)")
      ->check(CLI::IsMember({"ast", "ir", "automaton"}));
  sub->add_option("--catalog", args->catalog, "tool catalog JSON (overrides the files' catalog line)");
  sub->add_option("--color", args->color, "auto|always|never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  return [args] { return run_explain(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
