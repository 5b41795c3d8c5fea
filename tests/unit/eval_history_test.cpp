// The eval history store: a report recorded and read back (every metric, the bootstrap against
// the run before, the regressions), the schema version check, and bad files refused with an
// error that names the path — never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <vector>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include "trajcheck/eval.hpp"
#include "trajcheck/history.hpp"

using namespace trajcheck;

namespace {

std::string history_report(const std::string& runs) {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/data/eval/gates.suite";
  if (!runs.empty()) o.runs.push_back(std::string(TRAJCHECK_TEST_DIR) + "/data/eval/" + runs);
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  bool ok = eval::run_eval(o, report, problems);
  REQUIRE_MESSAGE(ok, eval::format_problems(problems));
  return eval::report_json(report);
}

struct HistoryTempDb {
  std::string path;
  HistoryTempDb() {
    path = (std::filesystem::temp_directory_path() /
            ("trajcheck-history-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + ".db"))
               .string();
    std::filesystem::remove(path);
  }
  ~HistoryTempDb() { std::filesystem::remove(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

void history_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* msg = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  std::string why = msg ? msg : "";
  sqlite3_free(msg);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, why);
}

}  // namespace

TEST_CASE("history: recorded reports read back with their metrics, intervals and regressions") {
  HistoryTempDb db;
  std::string a = history_report(""), b = history_report("runs-b.jsonl");
  std::string error;
  REQUIRE_MESSAGE(eval::record_report(db.path, a, {"v1", "2026-01-01T00:00:00Z"}, error), error);
  REQUIRE_MESSAGE(eval::record_report(db.path, b, {"v2", "2026-01-02T00:00:00Z"}, error), error);
  eval::History h;
  REQUIRE_MESSAGE(eval::load_history(db.path, {}, h, error), error);
  REQUIRE(h.runs.size() == 2);
  CHECK(h.runs[0].label == "v1");
  CHECK(h.runs[1].recorded_at == "2026-01-02T00:00:00Z");
  CHECK_FALSE(h.runs[0].has_previous);
  CHECK(h.runs[1].has_previous);
  // The same intervals `compare` gives for the two reports.
  eval::CompareReport c;
  REQUIRE(eval::compare_reports("v1", a, "v2", b, {}, c, error));
  std::size_t overall = 0;
  for (const auto& row : c.rows) {
    if (row.group != "overall") continue;
    REQUIRE(overall < h.runs[1].deltas.size());
    const auto& d = h.runs[1].deltas[overall++];
    CHECK(d.dimension == row.dimension);
    CHECK(d.lo == row.lo);
    CHECK(d.hi == row.hi);
  }
  CHECK(overall == h.runs[1].deltas.size());
  CHECK(h.runs[1].pass_to_fail == c.pass_to_fail);
  CHECK(h.latest_regressed() == (!c.pass_to_fail.empty() || [&] {
          for (const auto& row : c.rows)
            if (row.group == "overall" && row.hi && *row.hi < 0) return true;
          return false;
        }()));
  // The metrics are the report's own overall metrics.
  nlohmann::json ja = nlohmann::json::parse(a);
  for (const auto& [name, v] : ja["overall"]["metrics"].items())
    if (v.is_number() && h.runs[0].metrics.count(name)) CHECK(h.runs[0].metrics.at(name) == doctest::Approx(v.get<double>()));
  CHECK(h.runs[0].metrics.count("pass_share") == 1);
  // The input digests are the report's.
  REQUIRE(ja["inputs"].size() == h.runs[0].inputs.size());
  CHECK_FALSE(h.runs[0].inputs.empty());
  for (std::size_t i = 0; i < h.runs[0].inputs.size(); ++i) {
    CHECK(h.runs[0].inputs[i].kind == ja["inputs"][i]["kind"].get<std::string>());
    CHECK(h.runs[0].inputs[i].file == ja["inputs"][i]["file"].get<std::string>());
    CHECK(h.runs[0].inputs[i].sha256 == ja["inputs"][i]["sha256"].get<std::string>());
  }
  // --last 1: one run, nothing before it, no regression.
  eval::HistoryOptions last;
  last.last = 1;
  REQUIRE(eval::load_history(db.path, last, h, error));
  REQUIRE(h.runs.size() == 1);
  CHECK(h.runs[0].label == "v2");
  CHECK_FALSE(h.latest_regressed());
}

TEST_CASE("history: the default label is the recording time; a bad time is refused") {
  HistoryTempDb db;
  std::string a = history_report(""), error;
  REQUIRE(eval::record_report(db.path, a, {"", "2026-03-04T05:06:07Z"}, error));
  eval::History h;
  REQUIRE(eval::load_history(db.path, {}, h, error));
  CHECK(h.runs.at(0).label == "2026-03-04T05:06:07Z");
  CHECK_FALSE(eval::record_report(db.path, a, {"x", "yesterday"}, error));
  CHECK(error.find("--recorded-at yesterday") != std::string::npos);
  CHECK_FALSE(eval::record_report(db.path, "{not json", {"x", ""}, error));
  CHECK(error.find("invalid JSON") != std::string::npos);
}

TEST_CASE("history: a database of a newer schema, or of another program, is refused with its path") {
  HistoryTempDb db;
  std::string a = history_report(""), error;
  REQUIRE(eval::record_report(db.path, a, {"v1", "2026-01-01T00:00:00Z"}, error));
  history_exec(db.path, "PRAGMA user_version = " + std::to_string(eval::kHistorySchemaVersion + 1));
  eval::History h;
  CHECK_FALSE(eval::load_history(db.path, {}, h, error));
  CHECK(error.rfind(db.path + ": error: ", 0) == 0);
  CHECK(error.find("newer than this trajcheck") != std::string::npos);
  CHECK_FALSE(eval::record_report(db.path, a, {"v2", "2026-01-02T00:00:00Z"}, error));
  CHECK(error.find("newer than this trajcheck") != std::string::npos);

  HistoryTempDb other;
  history_exec(other.path, "CREATE TABLE notes (x TEXT)");
  CHECK_FALSE(eval::record_report(other.path, a, {"v1", ""}, error));
  CHECK(error.rfind(other.path + ": error: not a trajcheck history database", 0) == 0);
  CHECK_FALSE(eval::load_history(other.path, {}, h, error));
  CHECK(error.find("not a trajcheck history database") != std::string::npos);
}

TEST_CASE("history: files that are not SQLite databases are errors naming the path") {
  std::string a = history_report(""), error;
  HistoryTempDb text;
  {
    std::ofstream f(text.path, std::ios::binary);
    for (int i = 0; i < 100; ++i) f << "this is a text file, not a database\n";
  }
  eval::History h;
  CHECK_FALSE(eval::load_history(text.path, {}, h, error));
  CHECK(error.rfind(text.path + ": error: ", 0) == 0);
  CHECK(error.find("not a SQLite database") != std::string::npos);
  CHECK_FALSE(eval::record_report(text.path, a, {"v1", ""}, error));
  CHECK(error.find("not a SQLite database") != std::string::npos);

  // A SQLite header followed by garbage: refused, never a crash.
  HistoryTempDb torn;
  {
    std::ofstream f(torn.path, std::ios::binary);
    f << std::string("SQLite format 3\0", 16) << std::string(4080, '\xff');
  }
  CHECK_FALSE(eval::load_history(torn.path, {}, h, error));
  CHECK(error.rfind(torn.path + ": error: ", 0) == 0);

  HistoryTempDb missing;
  CHECK_FALSE(eval::load_history(missing.path, {}, h, error));
  CHECK(error.rfind(missing.path + ": error: cannot open", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(missing.path));  // reading never creates the file

  HistoryTempDb empty;
  REQUIRE(eval::record_report(empty.path, a, {"v1", ""}, error));  // creates it
  history_exec(empty.path, "DELETE FROM metrics; DELETE FROM inputs; DELETE FROM cases; DELETE FROM gates; DELETE FROM runs");
  CHECK_FALSE(eval::load_history(empty.path, {}, h, error));
  CHECK(error.find("no run is recorded") != std::string::npos);
}

namespace {

std::string k_runs_report() {
  eval::EvalOptions o;
  o.suite_path = std::string(TRAJCHECK_TEST_DIR) + "/../examples/eval/nondeterminism.suite";
  eval::EvalReport report;
  std::vector<eval::EvalProblem> problems;
  REQUIRE_MESSAGE(eval::run_eval(o, report, problems), eval::format_problems(problems));
  return eval::report_json(report);
}

// Rows of a query, each as its columns' text joined by '|' (NULL: "NULL").
std::vector<std::string> history_rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sqlite3_errmsg(db));
  std::vector<std::string> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int k = 0; k < sqlite3_column_count(st); ++k) {
      const unsigned char* t = sqlite3_column_text(st, k);
      row += (k ? "|" : "") + (t ? std::string(reinterpret_cast<const char*>(t)) : std::string("NULL"));
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

// The expected (case, attempt, pass) rows of a report: attempt 1 is the case's first run.
std::vector<std::string> report_runs(const std::string& report, std::size_t& runs) {
  nlohmann::json j = nlohmann::json::parse(report);
  std::vector<std::string> out;
  runs = 0;
  for (const auto& c : j["cases"]) {
    if (c["status"] != "judged") continue;  // a stale or unmatched case's run was not judged
    // A case run once has no run_passes: its one run is its pass.
    nlohmann::json passes = c.contains("run_passes") ? c["run_passes"] : nlohmann::json::array();
    if (!c.contains("run_passes")) passes.push_back(c["pass"]);
    for (std::size_t a = 0; a < passes.size(); ++a)
      out.push_back(c["case_id"].get<std::string>() + "|" + std::to_string(a + 1) + "|" +
                    (passes[a].get<bool>() ? "1" : "0"));
    runs += passes.size();
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("history: every run of a case run k times is recorded, with the case's aggregate") {
  HistoryTempDb db;
  const std::string report = k_runs_report();
  std::string error;
  REQUIRE_MESSAGE(eval::record_report(db.path, report, {"k3", "2026-01-01T00:00:00Z"}, error), error);
  std::size_t runs = 0;
  const auto expected = report_runs(report, runs);
  CHECK(runs > expected.size() / 3);  // k = 3: each case has its runs
  CHECK(history_rows(db.path, "SELECT case_id, attempt, pass FROM case_runs ORDER BY case_id, attempt") == expected);
  CHECK(history_rows(db.path, "SELECT count(*) FROM case_runs") == std::vector<std::string>{std::to_string(runs)});
  // faq-002: runs 1 and 3 pass, run 2 does not: a flaky case that fails (pass^k).
  CHECK(history_rows(db.path, "SELECT pass, runs, runs_passed, round(pass_rate, 4), flaky FROM cases WHERE case_id = "
                              "'faq-002'") == std::vector<std::string>{"0|3|2|0.6667|1"});
  // (each run's location as the report names it: its file, then its line, 4 to 6)
  CHECK(history_rows(db.path, "SELECT attempt, run LIKE '%runs/k3.jsonl:' || (attempt + 3), pass, selection FROM "
                              "case_runs WHERE case_id = 'faq-002' ORDER BY attempt") ==
        std::vector<std::string>{"1|1|1|1.0", "2|1|0|0.0", "3|1|1|1.0"});
  CHECK(history_rows(db.path, "SELECT problems FROM case_runs WHERE case_id = 'faq-002' AND attempt = 2") ==
        std::vector<std::string>{R"(["expected answer without tool calls; 1 call(s) made","control flow act, expected answer"])"});
  // A stale case: its row, no runs.
  CHECK(history_rows(db.path, "SELECT status, runs FROM cases WHERE case_id = 'stale-011'") ==
        std::vector<std::string>{"stale|NULL"});
  CHECK(history_rows(db.path, "SELECT count(*) FROM case_runs WHERE case_id = 'stale-011'") ==
        std::vector<std::string>{"0"});
}

TEST_CASE("history: a version 1 database is read as it is and upgraded by the next record") {
  HistoryTempDb db;
  const std::string report = k_runs_report();
  // The version 1 schema: one row per case, no runs.
  history_exec(db.path, R"sql(
CREATE TABLE runs (id INTEGER PRIMARY KEY, suite TEXT NOT NULL, suite_file TEXT NOT NULL, label TEXT NOT NULL,
  recorded_at TEXT NOT NULL, status TEXT NOT NULL, catalog_version TEXT NOT NULL, cases INTEGER NOT NULL,
  judged INTEGER NOT NULL, passed INTEGER NOT NULL, report TEXT NOT NULL);
CREATE TABLE inputs (run_id INTEGER NOT NULL, kind TEXT NOT NULL, file TEXT NOT NULL, sha256 TEXT NOT NULL);
CREATE TABLE metrics (run_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL, PRIMARY KEY (run_id, name));
CREATE TABLE cases (run_id INTEGER NOT NULL, case_id TEXT NOT NULL, status TEXT NOT NULL, split TEXT NOT NULL,
  pass INTEGER NOT NULL, selection REAL, arguments_matched REAL, arguments_calls REAL, "order" REAL, recovery REAL,
  outcome REAL, overall REAL, calls REAL, tokens REAL, cost REAL, latency_ms REAL, PRIMARY KEY (run_id, case_id));
CREATE TABLE gates (run_id INTEGER NOT NULL, position INTEGER NOT NULL, gate TEXT NOT NULL, metric TEXT NOT NULL,
  segment TEXT, value REAL, threshold REAL, status TEXT NOT NULL, critical INTEGER NOT NULL,
  PRIMARY KEY (run_id, position));
PRAGMA user_version = 1;)sql");
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.path.c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw,
                             "INSERT INTO runs VALUES (1, 'nondeterminism', 'n.suite', 'old', '2026-01-01T00:00:00Z', "
                             "'pass', '', 12, 12, 0, ?)",
                             -1, &st, nullptr) == SQLITE_OK);
  sqlite3_bind_text(st, 1, report.c_str(), -1, SQLITE_TRANSIENT);
  REQUIRE(sqlite3_step(st) == SQLITE_DONE);
  sqlite3_finalize(st);
  REQUIRE(sqlite3_exec(raw, "INSERT INTO cases (run_id, case_id, status, split, pass) VALUES (1, 'faq-002', 'judged', "
                            "'designed', 0)",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);

  eval::History h;
  std::string error;
  REQUIRE_MESSAGE(eval::load_history(db.path, {}, h, error), error);
  CHECK(h.runs.size() == 1);
  CHECK(history_rows(db.path, "PRAGMA user_version") == std::vector<std::string>{"1"});

  REQUIRE_MESSAGE(eval::record_report(db.path, report, {"new", "2026-01-02T00:00:00Z"}, error), error);
  CHECK(history_rows(db.path, "PRAGMA user_version") == std::vector<std::string>{"2"});
  std::size_t runs = 0;
  const auto expected = report_runs(report, runs);
  // The old run's cases are written again from its stored report: every run of it is there.
  CHECK(history_rows(db.path, "SELECT case_id, attempt, pass FROM case_runs WHERE run_id = 1 ORDER BY case_id, attempt") ==
        expected);
  CHECK(history_rows(db.path, "SELECT count(*) FROM cases WHERE run_id = 1 AND runs IS NOT NULL") ==
        history_rows(db.path, "SELECT count(*) FROM cases WHERE run_id = 2 AND runs IS NOT NULL"));
  CHECK(history_rows(db.path, "SELECT runs, runs_passed, flaky FROM cases WHERE run_id = 1 AND case_id = 'faq-002'") ==
        std::vector<std::string>{"3|2|1"});
}
