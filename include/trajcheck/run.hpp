// trajcheck/run.hpp — checking a corpus: several rules files compiled together, one trace's
// verdicts over all of them, per-rule statistics, and the parallel runner of `trajcheck check`.
//
//   trajcheck::RuleSetResult rs = trajcheck::compile_rule_set({"refunds.rules", "auth.rules"});
//   std::cerr << rs.format_diagnostics(/*color=*/false);    // or walk rs.files yourself
//   if (!rs.ok()) return 2;
//   trajcheck::CheckRunOptions o;                          // reading options, --fail-on, -j
//   trajcheck::CheckRunner runner(rs.rules, o);
//   trajcheck::CheckReport report(rs.rules, {});           // text, json, jsonl, junit, markdown
//   trajcheck::RecordSource src({"traces/"});
//   trajcheck::CheckStats st = runner.run(src, report, trajcheck::write_to(stdout, stderr));
//   report.finish(st, nullptr, stdout);                    // the summary
//   return trajcheck::exit_status(st);                     // 0 pass, 1 fail, 2 rejected or no input
//
// One trace at a time, without the runner:
//
//   trajcheck::RuleSetChecker checker(rs.rules);           // one per thread
//   const trajcheck::TraceVerdict& v = checker.check(trajectory);
//   for (const trajcheck::RuleResult& r : v.results)       // r.rule indexes rs.rules->rules()
//     …;
//
// A RuleSet is immutable and may be shared by any number of threads; a RuleSetChecker holds
// one trace's state and belongs to one thread. CheckStats are plain counters: stats of parts
// of a corpus (byte ranges, files, machines) merge into the stats of the whole, and travel as
// JSON (to_json / from_json). Nothing throws: problems are values (diagnostics, RecordError).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "trajcheck/catalog.hpp"
#include "trajcheck/diagnostic.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {

// ---------------------------------------------------------------------------------------
// Rule sets

// Several rules files compiled together. Rules have global ids: the rules of the first file
// first, each file's in file order. Traces read for a rule set use every file's aliases and
// compare tool names case-sensitively only when every file says `case sensitive`. The tool
// catalog that accounts for the calls is the first file's that has one (with
// CompileOptions::catalog_override, every file's, so the first's).
class RuleSet {
 public:
  struct Rule {
    const RuleInfo* info = nullptr;  // owned by the file's Program
    std::uint32_t file = 0;          // index into files()
  };

  // `files[i]` is the name of the file `programs[i]` was compiled from; no program is null.
  RuleSet(std::vector<std::string> files, std::vector<std::shared_ptr<const Program>> programs);

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<std::shared_ptr<const Program>>& programs() const { return programs_; }
  // Global id of each file's first rule.
  const std::vector<std::uint32_t>& first_rule() const { return first_rule_; }
  const std::vector<Rule>& rules() const { return rules_; }
  // Every file's `alias` lines, in file order (observed -> canonical).
  const std::vector<std::pair<std::string, std::string>>& aliases() const { return aliases_; }
  bool case_sensitive() const { return case_sensitive_; }
  // The tool catalog in use, or null; `catalog_file()` is the index of the file it came from.
  const std::shared_ptr<const Catalog>& catalog() const { return catalog_; }
  int catalog_file() const { return catalog_file_; }

  // How to read traces for this rule set: `given` (the caller's options, e.g. the command
  // line's) with the files' aliases after the given ones (so the given ones win) and the
  // case rule of the files.
  NormalizeOptions reading_options(NormalizeOptions given) const;

 private:
  std::vector<std::string> files_;
  std::vector<std::shared_ptr<const Program>> programs_;
  std::vector<std::uint32_t> first_rule_;
  std::vector<Rule> rules_;
  std::vector<std::pair<std::string, std::string>> aliases_;
  bool case_sensitive_ = false;
  std::shared_ptr<const Catalog> catalog_;
  int catalog_file_ = -1;
};

// One input of compile_rule_set: its source and diagnostics, or why it could not be read.
struct RuleFile {
  std::string name;                      // the path (or Source name) as given
  std::string read_error;                // non-empty: the file could not be read
  Source source;                         // the text compiled (empty when unreadable)
  std::vector<Diagnostic> diagnostics;   // sorted by position
  bool ok() const { return read_error.empty() && !has_errors(diagnostics); }
};

struct RuleSetResult {
  std::vector<RuleFile> files;     // one per input, in input order
  std::shared_ptr<const RuleSet> rules;  // null when any file was unreadable or had an error
  bool ok() const { return rules != nullptr; }
  // For people: each file's diagnostics (format_diagnostics) or read error, in input order.
  // `warnings` false: only the files that failed.
  std::string format_diagnostics(bool color = false, bool warnings = true) const;
};

// What a decision of guard or serve names its rules by (their decision logs): "sha256:HEX" of
// the files' texts, in order, each preceded by its length.
std::string rules_digest(const RuleSetResult& compiled);

// Compiles every file (all of them, so that one call reports every file's mistakes).
RuleSetResult compile_rule_set(const std::vector<std::string>& paths, const CompileOptions& options = {});
RuleSetResult compile_rule_set(std::vector<Source> sources, const CompileOptions& options = {});

// ---------------------------------------------------------------------------------------
// One trace

// The lowest severity whose violation fails a trace (`--fail-on`), or never.
struct FailOn {
  bool never = false;
  RuleSeverity severity = RuleSeverity::error;
  bool fails(RuleSeverity s) const { return !never && s >= severity; }
  std::string_view name() const;  // "error", …, "never"
};
// Accepts "critical", "error", "warning", "info", "never"; false when unknown.
bool parse_fail_on(std::string_view name, FailOn* out);

struct TraceVerdict {
  std::vector<RuleResult> results;  // RuleResult::rule is the global id; in global order
  bool failed = false;   // a violated rule at or above FailOn
  bool flagged = false;  // any violated rule
  bool has_catalog = false;      // the rule set has a tool catalog: `catalog` is this trace's
  CatalogTraceReport catalog;
};

class RuleSetChecker {
 public:
  explicit RuleSetChecker(std::shared_ptr<const RuleSet> rules, FailOn fail_on = {});
  ~RuleSetChecker();
  RuleSetChecker(RuleSetChecker&&) noexcept;
  RuleSetChecker& operator=(RuleSetChecker&&) noexcept;

  // The verdicts of one trace; valid until the next call. The trace must have been read
  // with the rule set's reading_options() for aliases to apply as `check` applies them.
  const TraceVerdict& check(const Trajectory& trace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What checking records one after another on one thread keeps (a tool table, trajectory
// buffers and a RuleSetChecker, reused from record to record), and the check of one record
// that must hold exactly one trajectory. The corpus runner's workers are built on it; a caller
// handed one trace at a time (the Python package's Rules.check) checks it with check_one().
class TraceCheck {
 public:
  explicit TraceCheck(std::shared_ptr<const RuleSet> rules, FailOn fail_on = {});
  ~TraceCheck();
  TraceCheck(TraceCheck&&) noexcept;
  TraceCheck& operator=(TraceCheck&&) noexcept;

  using OnTrace = std::function<void(const Trajectory&, const TraceVerdict&)>;
  // Reads `record` with `parser` (the rule set's reading_options()) and checks the trajectory
  // it holds, calling on_trace with it and its verdict (both valid during the call). Errors:
  // the record's, or "expected one trajectory, found N" when it holds another number (then
  // on_trace may have been called for the first).
  ParseOutcome check_one(const TraceParser& parser, const RawRecord& record, const OnTrace& on_trace);

  ToolTable& tools();
  Trajectory& scratch();  // parse buffers
  RuleSetChecker& checker();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------
// Statistics

struct RuleStats {
  std::uint64_t violations = 0;       // violated result entries (one per binding)
  std::uint64_t violated_traces = 0;  // traces with at least one of them
  std::uint64_t activated = 0;        // traces where the rule was not vacuous
};

// Tool-catalog accounting over all traces (docs/catalog.md); all zero without a catalog.
struct CatalogStats {
  std::uint64_t calls = 0, known_calls = 0, invalid_calls = 0, write_calls = 0, unknown_calls = 0;
  std::map<std::string, std::uint64_t> unknown_tools;  // name -> calls
  void add(const CatalogTraceReport& r);
  void merge(const CatalogStats& o);
};

struct CheckStats {
  std::uint64_t records = 0;   // records read
  std::uint64_t traces = 0;    // trajectories checked (an OTLP record may hold several)
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
  std::uint64_t rejected = 0;  // records
  std::uint64_t flagged = 0;   // traces with any violation, failing or not
  std::uint64_t warnings = 0;
  // OTLP trace parts a CheckPart::records run read and left to the joined run (not checked,
  // not counted above); 0 in a run of the whole corpus.
  std::uint64_t otlp_parts = 0;
  std::vector<RuleStats> rules;  // by global rule id
  CatalogStats catalog;

  // Counts one checked trace (not its record: `records` is the reader's to count).
  void add(const TraceVerdict& v, std::size_t warnings);
  void merge(const CheckStats& o);
  std::uint64_t violations_of(const RuleSet& rules, RuleSeverity s) const;

  // One JSON object holding every counter; from_json reads it back (false, *error set, on
  // anything else).
  std::string to_json() const;
  static bool from_json(std::string_view json, CheckStats* out, std::string* error);
};

// The exit status of docs/cli.md for a run: 2 when a record was rejected (the verdict is about
// an incomplete input) or no trace was checked (a pass on nothing is no pass), else 1 when a
// trace failed, else 0.
int exit_status(const CheckStats& stats);

// ---------------------------------------------------------------------------------------
// The corpus runner

// What a run writes for each record, on the worker thread that checked it, into the text
// of its batch (batches are handed over in input order). CheckReport (report.hpp) is the
// writer of `trajcheck check`'s formats.
class CheckWriter {
 public:
  virtual ~CheckWriter() = default;
  virtual void trace(const Trajectory& t, const TraceVerdict& v, std::string& out) const = 0;
  virtual void rejected(const RecordError& e, std::string& out) const = 0;
};

// Receives a run's text batch by batch, in input order: `err` (rejected records'
// "file:line:col: error: …" lines and trace warnings, for people) and then `out` (what the
// CheckWriter wrote). Called from one thread at a time.
using RunOutput = std::function<void(std::string_view out, std::string_view err)>;
// A RunOutput that writes `err` to `err_file` and `out` to `out_file`.
RunOutput write_to(std::FILE* out_file, std::FILE* err_file);

// Yields the next record; false at the end. RecordSource::next, or records read by the
// caller (e.g. one byte range of a file, with the origins RecordSource would give them).
// With several workers it is called from their threads, one call at a time. `read_ahead`,
// when set, reads the input ahead of `next` (RecordSource::read_ahead): the workers call it
// outside that one-at-a-time turn, so that reading is not done in turn.
struct RecordInput {
  std::function<bool(RawRecord&)> next;
  std::function<void()> read_ahead;

  RecordInput() = default;
  template <class Next, class = std::enable_if_t<std::is_invocable_r_v<bool, Next&, RawRecord&>>>
  RecordInput(Next n, std::function<void()> ahead = {})  // NOLINT: a callable is an input
      : next(std::move(n)), read_ahead(std::move(ahead)) {}
  // The records of `source`, read ahead.
  explicit RecordInput(RecordSource& source)
      : next([&source](RawRecord& r) { return source.next(r); }), read_ahead([&source] { source.read_ahead(); }) {}

  bool operator()(RawRecord& r) const { return next(r); }
  explicit operator bool() const { return static_cast<bool>(next); }
};

// Which traces a run checks. A whole corpus is one run (`all`). A corpus checked in pieces
// (on a cluster) joins the OTLP traces of *all* its pieces as one run does, in two steps: each
// piece runs with `records` — everything but OTLP traces, whose parts are only counted
// (CheckStats::otlp_parts) — and one more run over the pieces that held such parts, in input
// order, with `otlp_joined` — only the OTLP traces, joined, which is what a whole run writes
// last. The pieces' outputs and then the joined run's, stats merged, are the whole run's.
enum class CheckPart : std::uint8_t { all, records, otlp_joined };

struct CheckRunOptions {
  NormalizeOptions reading;  // how to read traces; the rule set's aliases and case rule are added
  FailOn fail_on;
  bool quiet = false;        // trace warnings are counted but not written to `err`
  unsigned jobs = 1;         // worker threads; 0 = one per core
  // How the parts of OTLP traces exported in several requests are joined (TraceJoiner): a
  // trace read whole is checked when complete, after the other records' traces.
  TraceJoinOptions join;
  CheckPart part = CheckPart::all;
  // Called with the number of records read so far, about every 256 records, from any
  // worker thread (for a progress display).
  std::function<void(std::uint64_t records)> progress;
};

class CheckRunner {
 public:
  CheckRunner(std::shared_ptr<const RuleSet> rules, CheckRunOptions options);
  ~CheckRunner();

  // Non-empty when an option is unusable (a bad --error-pattern, …): run() checks nothing.
  const std::string& option_error() const;

  // Checks every record, in parallel, keeping input order in what `output` receives.
  // Returns every counter of the run, merged over the workers.
  CheckStats run(const RecordInput& input, const CheckWriter& writer, const RunOutput& output) const;
  CheckStats run(RecordSource& source, const CheckWriter& writer, const RunOutput& output) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------
// Normalizing a corpus (`trajcheck normalize`)

struct NormalizeStats {
  std::uint64_t records = 0, traces = 0, rejected = 0, warnings = 0;
  void merge(const NormalizeStats& o);
};
// Writes each trajectory as one line of normalized JSON (write_normalized_json) to `out`, in
// input order; rejected records and warnings go to `err`.
// OTLP traces are joined across records as `join` says (TraceJoiner).
NormalizeStats normalize_records(const RecordInput& input, const TraceParser& parser, unsigned jobs,
                                 const RunOutput& output, const TraceJoinOptions& join = {});

// ---------------------------------------------------------------------------------------
// Reading options as the command line spells them (shared by every command that reads traces)

struct ReadingSpec {
  std::string input_format = "auto";        // auto|native|openai|anthropic|otel|list
  std::vector<std::string> aliases;         // OBSERVED=CANONICAL
  std::vector<std::string> error_patterns;  // RE2 over a tool result's text
  std::vector<std::string> context;         // KEY=VALUE context overrides
};
// NormalizeOptions from their spellings; false with *error ("--alias 'x': expected
// OBSERVED=CANONICAL") on a malformed one. RE2 patterns are checked by TraceParser.
bool parse_reading_spec(const ReadingSpec& spec, NormalizeOptions* out, std::string* error);
// The JSON text of a --context VALUE: itself when it is valid JSON (`17`, `true`, `"17"`,
// `{"a":1}`), else a JSON string of it (`u_17` -> "u_17").
std::string context_value_json(std::string_view value);
// "file:line:col: error: message\n" for a rejected record.
std::string format_record_error(const RecordError& e);
// `jobs`, or one per core when 0.
unsigned effective_jobs(unsigned jobs);

}  // namespace trajcheck
