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
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

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

// What a report shows for one step: `refund_order {"order_id":"ord_1"}`,
// `user_message "yes, go ahead"`, `(end of trace)` past the last step. Text longer than
// `max_bytes` is cut at a UTF-8 boundary with "…"; blanks are folded to one line.
std::string describe_step(const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);
// The same, appended to `out`.
void append_step(std::string& out, const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);

}  // namespace trajcheck
