// `trajcheck diff OLD.rules NEW.rules` (docs/rule-diff.md): what changed in meaning, rule by rule,
// with the shortest trace found that tells the old rule from the new one.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "trajcheck/rule_diff.hpp"

namespace trajcheck::cli {
namespace {

struct DiffArgs {
  std::string old_file, new_file, catalog;
  std::string format = "text";
  std::string fail_on;
  std::uint32_t max_steps = 10;
  bool timings = false;
};

int run_diff(const DiffArgs& a) {
  std::string error;
  std::optional<Source> o = Source::from_file(a.old_file, &error);
  if (!o) {
    fmt::print(stderr, "trajcheck diff: {}\n", error);
    return kBadInput;
  }
  std::optional<Source> n = Source::from_file(a.new_file, &error);
  if (!n) {
    fmt::print(stderr, "trajcheck diff: {}\n", error);
    return kBadInput;
  }
  RuleDiffOptions opts;
  opts.catalog = a.catalog;
  opts.max_steps = a.max_steps;
  RuleDiffResult r = diff_rules(*o, *n, opts);
  if (!r.ok()) {
    fmt::print(stderr, "{}", r.error);
    return kBadInput;
  }
  fmt::print("{}", format_rule_diff(r, a.format == "json" ? RuleDiffFormat::json : RuleDiffFormat::text, a.timings));
  if (a.fail_on.empty()) return kPass;
  for (const RuleDiffEntry& e : r.rules) {
    bool hit = a.fail_on == "widened"    ? e.has_widening
               : a.fail_on == "narrowed" ? e.has_narrowing
                                         : e.has_widening || e.has_narrowing;
    if (hit) return kFail;
  }
  return kPass;
}

const bool diff_registered = register_command({"diff", 47, [](CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* sub = app.add_subcommand("diff", "compare two rules files rule by rule, with counterexample traces");
  sub->add_option("old", args->old_file, "the old rules file")->required();
  sub->add_option("new", args->new_file, "the new rules file")->required();
  sub->add_option("--catalog", args->catalog, "tool catalog JSON for both files (overrides their catalog line)");
  sub->add_option("--format", args->format, "text|json")->check(CLI::IsMember({"text", "json"}));
  sub->add_option("--fail-on", args->fail_on, "exit 1 when a rule widened, narrowed or changed at all")
      ->check(CLI::IsMember({"widened", "narrowed", "changed"}));
  sub->add_option("--max-steps", args->max_steps, "longest counterexample trace tried (1-50, default 10)")
      ->check(CLI::Range(1, 50));
  sub->add_flag("--timings", args->timings, "json: each rule's search time in milliseconds");
  return [args] { return run_diff(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
