// trajcheck/history.hpp — eval reports kept in a SQLite database (`trajcheck eval --record`)
// and each metric across the recorded runs (`trajcheck history`), with the paired-bootstrap
// interval of `compare` between consecutive runs and the regressions flagged.
//
//   trajcheck::eval::RecordOptions r{"release-42", ""};
//   std::string error;
//   if (!trajcheck::eval::record_report("history.db", report_json_text, r, error)) …  // error: "history.db: error: …"
//   trajcheck::eval::History h;
//   if (trajcheck::eval::load_history("history.db", {}, h, error))
//     std::cout << trajcheck::eval::history_text(h);
//
// The schema is docs/history.md's; its version is the database's `PRAGMA user_version`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trajcheck/eval.hpp"

namespace trajcheck::eval {

// The schema version this trajcheck writes and reads; a database of a newer one is an error.
constexpr int kHistorySchemaVersion = 2;

struct RecordOptions {
  std::string label;        // the release label; empty: the recording time
  std::string recorded_at;  // YYYY-MM-DDTHH:MM:SSZ; empty: now (UTC)
};

// Stores one report (the text of `eval --format json`) in the database at `db_path`, created
// when missing, in one transaction. False with `error` set ("PATH: error: …\n") otherwise.
bool record_report(const std::string& db_path, const std::string& report_json, const RecordOptions& options,
                   std::string& error);

// One recorded run and how it moved from the run before it (in the rows shown).
struct HistoryRun {
  std::int64_t id = 0;
  std::string suite, label, recorded_at, status;
  std::size_t judged = 0, passed = 0;
  std::map<std::string, double> metrics;  // the report's overall metrics, plus pass_share
  std::vector<InputDigest> inputs;         // the files the run was computed from
  bool has_previous = false;
  std::vector<CompareRow> deltas;            // overall, per dimension, vs the previous run
  std::vector<std::string> pass_to_fail, fail_to_pass;
  std::vector<std::string> regressions;      // why this run regressed; empty: it did not
};

struct HistoryOptions {
  std::string suite;      // empty: the database's only suite
  std::size_t last = 0;   // the last N runs; 0: all
  CompareOptions compare;
};

struct History {
  std::string db, suite;
  std::vector<std::string> metrics;  // the columns, those some run has
  std::vector<HistoryRun> runs;      // in recording order
  CompareOptions options;
  bool latest_regressed() const { return !runs.empty() && !runs.back().regressions.empty(); }
};

// Reads the runs of one suite and compares each with the one before it. False with `error`
// set on a database that cannot be read, is no trajcheck history, or is of a newer schema.
bool load_history(const std::string& db_path, const HistoryOptions& options, History& out, std::string& error);

std::string history_text(const History& h);
std::string history_json(const History& h);
std::string history_html(const History& h);

}  // namespace trajcheck::eval
