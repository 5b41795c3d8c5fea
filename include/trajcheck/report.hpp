// trajcheck/report.hpp — the reports of `trajcheck check`, and a violation's witness for people.
//
//   trajcheck::CheckReportOptions o;
//   o.format = trajcheck::CheckFormat::jsonl;
//   trajcheck::CheckReport report(rule_set, o);
//   std::string out;
//   report.trace(trajectory, verdict, out);   // this trace's part (may be nothing)
//   report.finish(stats, body, stdout);       // the summary, around the parts when buffered
//
// A CheckReport is immutable and shared by every worker thread. Per-trace parts are written
// by the workers; the summary once, from CheckStats merged over the whole corpus (which may
// have been checked in pieces: the summary depends on the merged stats alone).
//
// The whole set-up of a check from the command line's spellings (set_up_check):
//
//   trajcheck::CheckSpellings s;
//   s.rules = {"refunds.rules"};
//   s.format = "jsonl";
//   trajcheck::CheckSetup setup = trajcheck::set_up_check(s);
//   std::cerr << setup.diagnostics << setup.error;
//   if (!setup.ok()) return 2;
//   trajcheck::CheckRunner runner(setup.compiled.rules, setup.run);
//   trajcheck::CheckReport report(setup.compiled.rules, setup.report);
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/run.hpp"

namespace trajcheck {

enum class CheckFormat : std::uint8_t { text, json, jsonl, junit, markdown };
std::string_view to_string(CheckFormat f);
// Accepts "text", "json", "jsonl", "junit", "markdown"; false when unknown.
bool parse_check_format(std::string_view name, CheckFormat* out);

struct CheckReportOptions {
  CheckFormat format = CheckFormat::text;
  FailOn fail_on;      // named in the summaries
  bool color = false;  // ANSI colours (text only)
  bool quiet = false;  // text: no rule table
};

class CheckReport final : public CheckWriter {
 public:
  CheckReport(std::shared_ptr<const RuleSet> rules, CheckReportOptions options);

  // Appends this trace's part: text lists traces with a violation; json/jsonl one object per
  // trace (with its catalog report when the rule set has a catalog); junit one test case;
  // markdown one table row per violation.
  void trace(const Trajectory& t, const TraceVerdict& v, std::string& out) const override;
  // Appends the part of a rejected record (json/jsonl: {"record","error"}; junit: an error
  // test case; text and markdown: nothing, the error line on `err` is the report).
  void rejected(const RecordError& e, std::string& out) const override;

  // Whether the per-trace parts must be kept until the end (json, junit, markdown wrap them
  // with a header and the summary) rather than streamed (text, jsonl).
  bool buffered() const;
  // Writes the summary to `out`. Buffered formats also copy the parts from `body` (a file
  // holding every part written, in input order; null when there were none); streamed ones
  // ignore it. `interrupted`: the run was stopped before the end of its input (a signal);
  // the summary says so (json: "interrupted":true; junit: an `interrupted` property; text and
  // markdown: a line) and covers what was checked.
  void finish(const CheckStats& stats, std::FILE* body, std::FILE* out, bool interrupted = false) const;

  const CheckReportOptions& options() const { return options_; }

 private:
  void trace_text(const Trajectory& t, const TraceVerdict& v, std::string& out) const;
  void trace_json(const Trajectory& t, const TraceVerdict& v, std::string& out) const;
  void trace_junit(const Trajectory& t, const TraceVerdict& v, std::string& out) const;
  void trace_markdown(const Trajectory& t, const TraceVerdict& v, std::string& out) const;
  void summary_text(const CheckStats& stats, bool interrupted, std::string& out) const;
  void summary_json(const CheckStats& stats, std::string& out) const;
  void summary_markdown(const CheckStats& stats, bool interrupted, std::string& out) const;

  std::shared_ptr<const RuleSet> rules_;
  CheckReportOptions options_;
};

// ---------------------------------------------------------------------------------------
// `trajcheck check`'s set-up from its option spellings: the one builder every front door (the
// command line, the Dask runner) calls, beside score's make_score_run_options.

struct CheckSpellings {
  std::vector<std::string> rules;  // rules files (-r)
  std::string catalog;             // --catalog: a tool catalog overriding the files' own ("" none)
  std::string format = "text";     // text|json|jsonl|junit|markdown
  std::string fail_on = "error";   // critical|error|warning|info|never
  ReadingSpec reading;             // --input-format, --alias, --error-pattern, --context
  unsigned jobs = 1;               // -j (0: one worker per core)
  bool quiet = false;              // -q: no rule table, no warnings on standard error
  bool color = false;              // colours in the per-trace text (the caller resolved --color)
  bool diagnostics_color = false;  // colours in the rules files' diagnostics
  // --strict: the rules files' warnings are errors (and refuse the run). The check of tool
  // names no trace called (W008) needs the run's traces and stays the caller's.
  bool strict = false;
  bool allow_no_rules = false;     // check even when the files hold no rule (all would pass)
};

struct CheckSetup {
  CheckRunOptions run;        // reading, fail_on, quiet, jobs; `join` and `progress` the caller's
  CheckReportOptions report;  // format, fail_on, quiet, color
  RuleSetResult compiled;     // every file's diagnostics; compiled.rules is the rule set
  // For standard error, as `trajcheck check` prints it: the files' read errors
  // ("trajcheck check: …") and diagnostics (warnings too unless quiet; --strict's as errors).
  std::string diagnostics;
  // Why nothing may be checked, as lines for standard error ("trajcheck check: unknown
  // --format 'x'"); empty when the run may go ahead.
  std::string error;
  bool ok() const { return error.empty(); }
};

// Parses the spellings and compiles the rules files. A bad spelling stops before compiling.
CheckSetup set_up_check(const CheckSpellings& spellings);

// What a report shows for one step: `refund_order {"order_id":"ord_1"}`,
// `user_message "yes, go ahead"`, `(end of trace)` past the last step. Text longer than
// `max_bytes` is cut at a UTF-8 boundary with "…"; blanks are folded to one line.
std::string describe_step(const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);
// The same, appended to `out`.
void append_step(std::string& out, const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);

}  // namespace trajcheck
