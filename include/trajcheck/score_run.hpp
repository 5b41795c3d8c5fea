// trajcheck/score_run.hpp — scoring a corpus of score records (`trajcheck score`): records that
// carry both the actual and the expected trajectory, scored in parallel, in input order.
//
//   trajcheck::ScoreRunOptions o;                     // reading, scoring, format, -j
//   o.format = trajcheck::ScoreFormat::jsonl;
//   trajcheck::ScoreRunner runner(o);
//   if (!runner.option_error().empty()) …;
//   trajcheck::RecordSource src({"records.jsonl"});
//   trajcheck::ScoreSummary s = runner.run(src, trajcheck::write_to(stdout, stderr));
//   trajcheck::finish_score(o.format, s, nullptr, stdout);   // the summary (text, json)
//   return trajcheck::exit_status(s);
//
// A record is an object with "actual" (or "outputs") and "expected" (or "reference_outputs"):
// each a trajectory in any input format, or, for "expected", a tool list or a PATH string.
// Its id is the first of "id", "case_id", "trace_id" present, else file:line. One record
// alone: ScoreRecordReader (one per thread). ScoreSummary is plain counters and sums:
// summaries of parts of a corpus merge into the summary of the whole, and travel as JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/metrics.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

enum class ScoreFormat : std::uint8_t { text, json, jsonl };
// Accepts "text", "json", "jsonl"; false when unknown.
bool parse_score_format(std::string_view name, ScoreFormat* out);

// Thresholds that fail a run (exit 1): --min-overall, --min-selection, --min-ordering,
// --min-arguments. On the mean over the scored records (one without an ordering or arguments
// does not count for that mean; a mean nothing counts for fails), or with per_record on every
// record (one without the value is not judged on it).
enum class ScoreMetric : std::uint8_t { overall, selection, ordering, arguments };
std::string_view to_string(ScoreMetric m);
struct ScoreThresholds {
  std::optional<double> min[4];  // by ScoreMetric
  bool per_record = false;
  bool any() const { return min[0] || min[1] || min[2] || min[3]; }
};

// One threshold's verdict over a run.
struct ThresholdResult {
  ScoreMetric metric = ScoreMetric::overall;
  double threshold = 0;
  std::optional<double> value;  // the mean (absent: no record has the value); not per record
  std::uint64_t failing = 0;    // per record: records below it
  bool pass = false;
};

struct ScoreRunOptions {
  NormalizeOptions reading;  // how both sides are read (format, aliases, error patterns)
  ScoreOptions scoring;
  ScoreThresholds thresholds;
  ScoreFormat format = ScoreFormat::text;
  bool quiet = false;  // text: no per-record blocks; warnings counted, not written
  unsigned jobs = 1;   // worker threads; 0 = one per core
  // Records of more bytes than this are read one message at a time (the same results, with
  // the memory of one message's parse instead of the whole record's); smaller ones whole,
  // which costs fewer instructions.
  std::size_t read_by_message_above = std::size_t{1} << 20;
};

// `trajcheck score`'s options as its command line spells them (the Python package's Dask
// runner passes the same spellings); make_score_run_options turns them into ScoreRunOptions.
struct ScoreSpellings {
  std::string format = "text";       // text|json|jsonl
  std::string selection = "jaccard";  // jaccard|recall|precision|f1
  std::string weights = "0.6,0.4";    // SELECTION,ORDERING
  std::string tool_args = "exact";    // exact|ignore|subset|superset
  std::vector<std::string> tool_args_for;  // NAME=MODE
  bool multiset = false;
  std::uint32_t min_order_length = 0;
  std::optional<double> min[4];  // thresholds, by ScoreMetric
  bool per_record = false;
};
// Sets the format, scoring options and thresholds of *out (reading, quiet and jobs are left
// as they are); false, with *error naming the option ("unknown --format 'x'", …), on a bad
// spelling or a --per-record without a threshold.
bool make_score_run_options(const ScoreSpellings& in, ScoreRunOptions* out, std::string* error);
// The weights of overall: non-negative, not both 0, and a finite sum (it divides).
bool valid_score_weights(double selection, double ordering);

// A sum of scores (each in [0, 1]) that does not depend on the order of the additions:
// each value is rounded once to a multiple of 2^-64 and the multiples are added as
// integers. A run split over threads, processes or machines gives bit-identical means.
class ScoreSum {
 public:
  void add(double v);
  void merge(const ScoreSum& o) { units_ += o.units_; }
  double value() const;                 // the sum, rounded once to a double
  double mean(std::uint64_t n) const;  // value() / n; 0 when n == 0
  // The exact sum as decimal digits (a count of 2^-64 units), and back: false on anything
  // but digits that fit.
  std::string to_string() const;
  static bool from_string(std::string_view digits, ScoreSum* out);
  bool operator==(const ScoreSum& o) const { return units_ == o.units_; }

 private:
  __extension__ typedef unsigned __int128 Units;  // (__extension__: no -pedantic warning)
  Units units_ = 0;
};

// Aggregates over scored records.
struct ScoreSummary {
  std::uint64_t records = 0;   // records read
  std::uint64_t rejected = 0;  // records rejected (each reported on `err`)
  std::uint64_t warnings = 0;
  std::uint64_t scored = 0;
  ScoreSum selection, ordering, overall, arguments;
  std::uint64_t ordering_n = 0, arguments_n = 0;
  std::uint64_t strict = 0, unordered = 0, subset = 0, superset = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t buckets[6] = {};  // overall in [0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1) and =1
  std::map<std::string, std::uint64_t> missed, extra;  // tool -> records
  // Per-record thresholds: the records below one, in input order after merge().
  struct Below {
    std::uint64_t record = 0;  // RecordOrigin::record
    std::string id;
    ScoreMetric metric = ScoreMetric::overall;
    double value = 0;
  };
  std::vector<Below> below;

  void add(const ScoreResult& r);
  void merge(const ScoreSummary& o);
  // One JSON object holding every field; from_json reads it back (false, *error set, on
  // anything else). Sums are written exactly (ScoreSum::to_string), so a merge of summaries
  // read back gives the same means as one run.
  std::string to_json() const;
  static bool from_json(std::string_view json, ScoreSummary* out, std::string* error);
};

// The summary as `score --format text` ends (text) and as the "summary" member of
// `--format json` (json).
std::string score_summary_text(const ScoreSummary& s);
std::string score_summary_json(const ScoreSummary& s);
// The thresholds judged on a summary, in ScoreMetric order (only those set).
std::vector<ThresholdResult> check_thresholds(const ScoreSummary& s, const ScoreThresholds& t);
// The same summaries ending with the thresholds' verdicts: text lines naming each failed
// threshold and its shortfall (per record: the failing ids); json "thresholds" and "failing".
std::string score_summary_text(const ScoreSummary& s, const ScoreThresholds& t);
std::string score_summary_json(const ScoreSummary& s, const ScoreThresholds& t);
// Writes the end of a run's output to `out`: text, the summary; json, the whole document
// from `body` (a file holding every record's part, in input order; null when none);
// jsonl, nothing.
void finish_score(ScoreFormat format, const ScoreSummary& s, std::FILE* body, std::FILE* out,
                  const ScoreThresholds& thresholds = {});
// The exit status of docs/cli.md of a score run: 2 when a record was rejected, else 1 when a threshold
// failed, else 0.
int exit_status(const ScoreSummary& s, const ScoreThresholds& thresholds = {});

// Reads and scores one record at a time; one per thread (it keeps scratch memory).
class ScoreRecordReader {
 public:
  explicit ScoreRecordReader(const ScoreRunOptions& options);
  ~ScoreRecordReader();
  ScoreRecordReader(ScoreRecordReader&&) noexcept;
  ScoreRecordReader& operator=(ScoreRecordReader&&) noexcept;

  // Non-empty when an option is unusable (a bad --error-pattern, …).
  const std::string& option_error() const;

  // Scores `record`: appends its part in the options' format to `out` (jsonl: one line,
  // the record's object or {"record","error"}; json: the same followed by ",\n"; text:
  // its block unless quiet), its messages to `err`, and counts it in `summary`.
  void read(const RawRecord& record, std::string& out, std::string& err, ScoreSummary& summary);
  // The same, for a caller done with `record` once it is read: a record read one message at
  // a time (larger than ScoreRunOptions::read_by_message_above) has its `text` freed as soon
  // as its calls are read, so that it is not held while the record is scored.
  void read(RawRecord& record, std::string& out, std::string& err, ScoreSummary& summary);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ScoreRunner {
 public:
  explicit ScoreRunner(ScoreRunOptions options);
  ~ScoreRunner();
  const std::string& option_error() const;
  // Scores every record, in parallel, keeping input order in what `output` receives.
  ScoreSummary run(const RecordInput& input, const RunOutput& output) const;
  ScoreSummary run(RecordSource& source, const RunOutput& output) const;

 private:
  ScoreRunOptions options_;
  std::string option_error_;
};

}  // namespace trajcheck
