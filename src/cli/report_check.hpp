// Output of `trajcheck check`: one formatter per --format, fed one trace at a time by the
// workers (text that is written in input order) and once at the end for the summary.
#pragma once

#include "util/json_escape.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/reader.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::cli {

enum class CheckFormat : std::uint8_t { text, json, jsonl, junit, markdown };
bool parse_check_format(std::string_view name, CheckFormat* out);

// Every rule of every rules file, in the order results are reported (-r order, then
// rules-file order).
struct RuleCatalog {
  struct Entry {
    const RuleInfo* info = nullptr;
    std::uint32_t file = 0;  // index of the rules file
  };
  std::vector<std::shared_ptr<const Program>> programs;
  std::vector<std::string> files;
  std::vector<std::uint32_t> base;  // global index of each program's first rule
  std::vector<Entry> rules;
  void add(std::string file, std::shared_ptr<const Program> program);
};

// One trace's results: results[p] are the Checker results of programs[p].
struct TraceVerdicts {
  const std::vector<std::vector<RuleResult>>* results = nullptr;
};

struct RuleStats {
  std::uint64_t violations = 0;       // violated result entries (one per binding)
  std::uint64_t violated_traces = 0;  // traces with at least one of them
  std::uint64_t activated = 0;        // traces where the rule was not vacuous
};

// Tool-catalog accounting over all traces (docs/catalog.md); empty without a catalog.
struct CatalogStats {
  std::uint64_t calls = 0, known_calls = 0, invalid_calls = 0, write_calls = 0, unknown_calls = 0;
  std::map<std::string, std::uint64_t> unknown_tools;  // name -> calls
  void add(const CatalogTraceReport& r);
  void merge(const CatalogStats& o);
};

struct CheckStats {
  std::uint64_t records = 0;
  std::uint64_t traces = 0;
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
  std::uint64_t rejected = 0;  // records
  std::uint64_t flagged = 0;   // traces with any violation, failing or not
  std::uint64_t warnings = 0;
  std::vector<RuleStats> rules;
  CatalogStats catalog;
  void merge(const CheckStats& o);
  std::uint64_t violations_of(const RuleCatalog& c, RuleSeverity s) const;
};

struct ReportOptions {
  CheckFormat format = CheckFormat::text;
  bool has_fail_on = true;  // false: --fail-on never
  RuleSeverity fail_on = RuleSeverity::error;
  bool color = false;
  bool quiet = false;
  std::string fail_on_name = "error";
  // The tool catalog in use (the first rules file's, or --catalog), or null.
  std::shared_ptr<const Catalog> catalog;
};

// Text renderings shared by every worker; stateless apart from the options.
class CheckReporter {
 public:
  CheckReporter(const RuleCatalog& rules, ReportOptions options)
      : rules_(rules), options_(std::move(options)) {}

  // Whether a violated result of rule `global` makes the trace fail.
  bool fails(std::uint32_t global) const;

  // Appends this trace's report (format-dependent; may be nothing) to `out`.
  // `catalog`: the trace's catalog report when a catalog is in use (json/jsonl show it).
  void trace(const Trajectory& t, const std::vector<std::vector<RuleResult>>& results, bool failed,
             std::string& out, const CatalogTraceReport* catalog = nullptr) const;
  // Appends the in-place report of a rejected record.
  void rejected(const RecordOrigin& where, std::string_view message, std::string& out) const;

  // Writes everything: for streamed formats (text, jsonl) `body` is null and only the
  // summary is written; buffered formats (json, junit, markdown) wrap `body` (a temporary
  // file holding the per-trace parts) with their header and summary.
  void finish(const CheckStats& stats, std::FILE* body, std::FILE* out) const;

  const ReportOptions& options() const { return options_; }
  bool buffered() const {
    return options_.format == CheckFormat::json || options_.format == CheckFormat::junit ||
           options_.format == CheckFormat::markdown;
  }

 private:
  void trace_text(const Trajectory& t, const std::vector<std::vector<RuleResult>>& results,
                  bool failed, std::string& out) const;
  void trace_json(const Trajectory& t, const std::vector<std::vector<RuleResult>>& results,
                  bool failed, std::string& out, const CatalogTraceReport* catalog = nullptr) const;
  void trace_junit(const Trajectory& t, const std::vector<std::vector<RuleResult>>& results,
                   bool failed, std::string& out) const;
  void trace_markdown(const Trajectory& t, const std::vector<std::vector<RuleResult>>& results,
                      std::string& out) const;
  void summary_text(const CheckStats& stats, std::string& out) const;
  void summary_json(const CheckStats& stats, std::string& out) const;
  void summary_markdown(const CheckStats& stats, std::string& out) const;

  const RuleCatalog& rules_;
  ReportOptions options_;
};

// Escaping helpers, exposed for the other report writers.
using trajcheck::append_json_string;  // util/json_escape.hpp
void append_xml_escaped(std::string& out, std::string_view s);
// At most `max` bytes of `s`, cut at a UTF-8 character boundary, "…" appended when cut.
std::string truncate_utf8(std::string_view s, std::size_t max);

// Text shown for one step in reports: `refund_order {"order_id":"ord_1"}`,
// `user_message "yes, go ahead"`.
std::string describe_step(const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);
// The same, appended to `out` (no temporary string).
void append_step(std::string& out, const Trajectory& t, std::uint32_t index, std::size_t max_bytes = 100);

}  // namespace trajcheck::cli
