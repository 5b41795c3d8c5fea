// The eval history store: a report recorded and read back (every metric, the bootstrap against
// the run before, the regressions), the schema version check, and bad files refused with an
// error that names the path — never a crash.
#include <doctest/doctest.h>

#include <cstdio>
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
