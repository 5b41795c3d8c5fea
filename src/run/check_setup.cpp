// `trajcheck check`'s set-up from its option spellings, shared by every front door: the
// options parsed, the rules files compiled, and what to tell people about both.
#include <fmt/format.h>

#include "trajcheck/report.hpp"

namespace trajcheck {

CheckSetup set_up_check(const CheckSpellings& s) {
  CheckSetup out;
  auto refuse = [&out](std::string why) -> CheckSetup& {
    out.error += fmt::format("trajcheck check: {}\n", why);
    return out;
  };
  if (!parse_check_format(s.format, &out.report.format)) return refuse(fmt::format("unknown --format '{}'", s.format));
  if (!parse_fail_on(s.fail_on, &out.report.fail_on)) return refuse(fmt::format("unknown --fail-on '{}'", s.fail_on));
  out.report.quiet = s.quiet;
  out.report.color = out.report.format == CheckFormat::text && s.color;
  std::string error;
  if (!parse_reading_spec(s.reading, &out.run.reading, &error)) return refuse(std::move(error));
  out.run.fail_on = out.report.fail_on;
  out.run.quiet = s.quiet;
  out.run.jobs = s.jobs;

  CompileOptions copts;
  copts.catalog_override = s.catalog;
  copts.command_line_aliases = out.run.reading.aliases;
  out.compiled = compile_rule_set(s.rules, copts);
  std::size_t warnings = 0;
  for (const RuleFile& f : out.compiled.files) {
    if (!f.read_error.empty()) {
      out.diagnostics += fmt::format("trajcheck check: {}\n", f.read_error);
    } else if (!f.ok() || (!f.diagnostics.empty() && (!s.quiet || s.strict))) {
      std::vector<Diagnostic> shown = f.diagnostics;
      for (Diagnostic& d : shown)
        if (d.severity == Severity::warning) {
          ++warnings;
          if (s.strict) d.severity = Severity::error;
        }
      out.diagnostics += format_diagnostics(f.source, shown, s.diagnostics_color);
    }
  }
  if (!out.compiled.ok()) return refuse("rules did not compile; no trace was checked");
  if (s.strict && warnings > 0)
    return refuse(fmt::format("--strict: the rules files have {} warning{}; no trace was checked", warnings,
                              warnings == 1 ? "" : "s"));
  // No rule at all: every trace would pass. A gate that passes on nothing is refused unless asked for.
  if (out.compiled.rules->rules().empty() && !s.allow_no_rules) {
    bool one = s.rules.size() == 1;
    return refuse(fmt::format("error: the rules file{} {} hold{} no rules, so every trace would pass; no trace was "
                              "checked (--allow-no-rules checks anyway)",
                              one ? "" : "s", fmt::join(s.rules, ", "), one ? "s" : ""));
  }
  return out;
}

}  // namespace trajcheck
