// Eval history: reports recorded in a SQLite database (schema of docs/history.md, versioned by
// PRAGMA user_version) and each metric across the runs of a suite, with compare's paired
// bootstrap between consecutive runs.
#include "trajcheck/history.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>
#include <sqlite3.h>

#include "eval/eval_internal.hpp"
#include "eval/report_util.hpp"
#include "run/text.hpp"

namespace trajcheck::eval {

namespace {

constexpr int kHistoryBusyMs = 10000;  // concurrent writers wait this long for the lock

// The columns `history` shows, in this order, when some run has them.
constexpr const char* kHistoryColumns[] = {"selection", "arguments", "argument_validity", "order", "recovery", "outcome", "overall",
                                           "pass_at_k", "pass_all_k", "pass_rate",
                                           "pass_share", "calls_per_success", "tokens_per_success",
                                           "cost_per_success", "latency_per_success"};

// One row per run of a case (attempt 1..k): in the schema and added by the version 1 upgrade.
const char* const kCaseRunsTable = R"sql(
CREATE TABLE case_runs (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  run TEXT NOT NULL,
  pass INTEGER NOT NULL,
  selection REAL, arguments_matched REAL, arguments_calls REAL, "order" REAL, recovery REAL, outcome REAL,
  overall REAL, calls REAL, tokens REAL, cost REAL, latency_ms REAL,
  problems TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id, attempt)
);
)sql";

// The schema without case_runs (kCaseRunsTable, created beside it).
const char* const kHistorySchema = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  suite TEXT NOT NULL,
  suite_file TEXT NOT NULL,
  label TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  status TEXT NOT NULL,
  catalog_version TEXT NOT NULL,
  cases INTEGER NOT NULL,
  judged INTEGER NOT NULL,
  passed INTEGER NOT NULL,
  report TEXT NOT NULL
);
CREATE INDEX runs_suite ON runs(suite, id);
CREATE TABLE inputs (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL,
  file TEXT NOT NULL,
  sha256 TEXT NOT NULL
);
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  value REAL,
  PRIMARY KEY (run_id, name)
);
CREATE TABLE cases (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL,
  status TEXT NOT NULL,
  split TEXT NOT NULL,
  pass INTEGER NOT NULL,
  selection REAL, arguments_matched REAL, arguments_calls REAL, "order" REAL, recovery REAL, outcome REAL,
  overall REAL, calls REAL, tokens REAL, cost REAL, latency_ms REAL,
  runs INTEGER, runs_passed INTEGER, pass_rate REAL, flaky INTEGER,
  PRIMARY KEY (run_id, case_id)
);
CREATE TABLE gates (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  position INTEGER NOT NULL,
  gate TEXT NOT NULL,
  metric TEXT NOT NULL,
  segment TEXT,
  value REAL,
  threshold REAL,
  status TEXT NOT NULL,
  critical INTEGER NOT NULL,
  PRIMARY KEY (run_id, position)
);
)sql";

struct HistoryDb {
  sqlite3* db = nullptr;
  ~HistoryDb() {
    if (db) sqlite3_close(db);
  }
};

struct HistoryStmt {
  sqlite3_stmt* s = nullptr;
  ~HistoryStmt() {
    if (s) sqlite3_finalize(s);
  }
};

std::string history_db_error(const std::string& path, sqlite3* db, const std::string& what) {
  int code = db ? sqlite3_errcode(db) : SQLITE_CANTOPEN;
  std::string why = db ? sqlite3_errmsg(db) : "cannot open";
  if (code == SQLITE_NOTADB) why = "not a SQLite database (file is not a database)";
  return fmt::format("{}: error: {}: {}\n", path, what, why);
}

// Binds the values (nullopt: NULL) and steps once.
using HistoryValue = std::variant<std::monostate, std::int64_t, double, std::string>;

bool history_exec_bound(sqlite3* db, const char* sql, const std::vector<HistoryValue>& values) {
  HistoryStmt st;
  if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    int k = static_cast<int>(i + 1);
    const auto& v = values[i];
    int rc = SQLITE_OK;
    if (std::holds_alternative<std::monostate>(v)) rc = sqlite3_bind_null(st.s, k);
    else if (auto* n = std::get_if<std::int64_t>(&v)) rc = sqlite3_bind_int64(st.s, k, *n);
    else if (auto* d = std::get_if<double>(&v)) rc = sqlite3_bind_double(st.s, k, *d);
    else {
      const auto& s = std::get<std::string>(v);
      rc = sqlite3_bind_text(st.s, k, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK) return false;
  }
  return sqlite3_step(st.s) == SQLITE_DONE;
}

HistoryValue history_json_number(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::monostate{};
  if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
  if (it->is_number()) return it->get<double>();
  return std::monostate{};
}

// One row per case in `cases` (its first run's figures, the case's verdict and its runs'
// aggregate) and one row per run of it in `case_runs` (attempt 1 is the first run).
bool history_record_cases(sqlite3* db, std::int64_t run, const nlohmann::json& j) {
  if (!j.contains("cases") || !j["cases"].is_array()) return true;
  auto figures = [](const nlohmann::json& o) {
    std::vector<HistoryValue> v;
    for (const char* k : {"selection", "arguments_matched", "arguments_calls", "order", "recovery", "outcome",
                          "overall", "calls", "tokens", "cost", "latency_ms"})
      v.push_back(history_json_number(o, k));
    return v;
  };
  auto problems = [](const nlohmann::json& o) {
    auto it = o.find("problems");
    return it != o.end() && it->is_array() ? it->dump() : std::string("[]");
  };
  auto flag = [](const nlohmann::json& o, const char* k) {  // null (a case not judged): false
    auto it = o.find(k);
    return it != o.end() && it->is_boolean() && it->get<bool>();
  };
  auto text = [](const nlohmann::json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const auto& c : j["cases"]) {
    if (!c.is_object()) continue;
    const std::string id = text(c, "case_id");
    const bool pass = flag(c, "pass");
    // Runs of judged cases only: a stale or unmatched case's run was not judged.
    const bool has_run = text(c, "status") == "judged" && c.contains("run") && c["run"].is_string();
    // A case run once carries no run aggregate in the report: it is one run, passing or not.
    std::vector<bool> passes;
    if (has_run && c.contains("run_passes") && c["run_passes"].is_array())
      for (const auto& p : c["run_passes"]) passes.push_back(p.is_boolean() && p.get<bool>());
    else if (has_run)
      passes.push_back(pass);
    std::vector<HistoryValue> row = {run, id, text(c, "status"), text(c, "split"), std::int64_t{pass}};
    for (auto& v : figures(c)) row.push_back(std::move(v));
    if (passes.empty()) {
      row.insert(row.end(), 4, std::monostate{});
    } else {
      const auto n = static_cast<std::int64_t>(passes.size());
      const auto ok = static_cast<std::int64_t>(std::count(passes.begin(), passes.end(), true));
      row.insert(row.end(), {n, ok, static_cast<double>(ok) / static_cast<double>(n),
                             std::int64_t{ok > 0 && ok < n}});
    }
    if (!history_exec_bound(db, "INSERT INTO cases VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)) return false;
    if (!has_run) continue;
    std::vector<const nlohmann::json*> runs = {&c};
    if (c.contains("repeats") && c["repeats"].is_array())
      for (const auto& r : c["repeats"]) runs.push_back(&r);
    for (std::size_t a = 0; a < runs.size(); ++a) {
      const nlohmann::json& r = *runs[a];
      const bool run_pass = a < passes.size() ? bool(passes[a]) : flag(r, "pass");
      std::vector<HistoryValue> rr = {run, id, static_cast<std::int64_t>(a + 1), text(r, "run"),
                                      std::int64_t{run_pass}};
      for (auto& v : figures(r)) rr.push_back(std::move(v));
      rr.emplace_back(problems(r));
      if (!history_exec_bound(db, "INSERT INTO case_runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rr)) return false;
    }
  }
  return true;
}

// Version 1 kept one row per case, with its first run only: the new columns and table are
// added and every recorded run's cases are written again from its stored report.
bool history_upgrade_v1(sqlite3* db, std::string& why) {
  const std::string ddl = fmt::format(R"sql(
ALTER TABLE cases ADD COLUMN runs INTEGER;
ALTER TABLE cases ADD COLUMN runs_passed INTEGER;
ALTER TABLE cases ADD COLUMN pass_rate REAL;
ALTER TABLE cases ADD COLUMN flaky INTEGER;
{}DELETE FROM cases;
)sql", kCaseRunsTable);
  char* msg = nullptr;
  if (sqlite3_exec(db, ddl.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    why = msg ? msg : "unknown";
    sqlite3_free(msg);
    return false;
  }
  HistoryStmt st;
  if (sqlite3_prepare_v2(db, "SELECT id, report FROM runs ORDER BY id", -1, &st.s, nullptr) != SQLITE_OK) {
    why = sqlite3_errmsg(db);
    return false;
  }
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    const std::int64_t id = sqlite3_column_int64(st.s, 0);
    const unsigned char* t = sqlite3_column_text(st.s, 1);
    nlohmann::json j = nlohmann::json::parse(t ? reinterpret_cast<const char*>(t) : "", nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      why = fmt::format("run {}: its stored report is not JSON", id);
      return false;
    }
    if (!history_record_cases(db, id, j)) {
      why = fmt::format("run {}: {}", id, sqlite3_errmsg(db));
      return false;
    }
  }
  if (rc != SQLITE_DONE) {
    why = sqlite3_errmsg(db);
    return false;
  }
  return sqlite3_exec(db, "PRAGMA user_version = 2", nullptr, nullptr, nullptr) == SQLITE_OK;
}

// Opens the database and checks (or, when `create`, writes) its schema version. In an empty
// database, `create` writes the schema.
bool open_history(const std::string& path, bool create, HistoryDb& h, std::string& error) {
  int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  if (sqlite3_open_v2(path.c_str(), &h.db, flags, nullptr) != SQLITE_OK) {
    error = history_db_error(path, h.db, "cannot open the history database");
    return false;
  }
  sqlite3_busy_timeout(h.db, kHistoryBusyMs);
  sqlite3_extended_result_codes(h.db, 0);
  auto int_query = [&](const char* sql, int& out) {
    HistoryStmt st;
    if (sqlite3_prepare_v2(h.db, sql, -1, &st.s, nullptr) != SQLITE_OK) return false;
    int rc = sqlite3_step(st.s);
    if (rc != SQLITE_ROW) return false;
    out = sqlite3_column_int(st.s, 0);
    return true;
  };
  int version = 0, tables = 0;
  if (!int_query("PRAGMA user_version", version) ||
      !int_query("SELECT count(*) FROM sqlite_master WHERE type = 'table'", tables)) {
    error = history_db_error(path, h.db, "cannot read the history database");
    return false;
  }
  if (version > kHistorySchemaVersion) {
    error = fmt::format("{}: error: the history database has schema version {}, newer than this trajcheck's ({}): "
                        "record and read it with a newer trajcheck\n",
                        path, version, kHistorySchemaVersion);
    return false;
  }
  if (version == kHistorySchemaVersion) return true;
  if (version == 1) {
    // Reading needs nothing version 2 added; recording upgrades the database first.
    if (!create) return true;
    std::string why;
    if (sqlite3_exec(h.db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
      error = history_db_error(path, h.db, "cannot upgrade the history database");
      return false;
    }
    int again = 0;  // another writer may have upgraded it meanwhile
    if (int_query("PRAGMA user_version", again) && again == kHistorySchemaVersion) {
      sqlite3_exec(h.db, "COMMIT", nullptr, nullptr, nullptr);
      return true;
    }
    if (!history_upgrade_v1(h.db, why) || sqlite3_exec(h.db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      sqlite3_exec(h.db, "ROLLBACK", nullptr, nullptr, nullptr);
      error = fmt::format("{}: error: cannot upgrade the history database from schema version 1: {}\n", path,
                          why.empty() ? std::string(sqlite3_errmsg(h.db)) : why);
      return false;
    }
    return true;
  }
  if (version != 0 || tables != 0) {
    error = fmt::format("{}: error: not a trajcheck history database (schema version {}, {} table{})\n", path, version,
                        tables, tables == 1 ? "" : "s");
    return false;
  }
  if (!create) {
    error = fmt::format("{}: error: the history database is empty: record runs with `trajcheck eval --record {}`\n",
                        path, path);
    return false;
  }
  std::string sql = fmt::format("BEGIN IMMEDIATE; {} {} PRAGMA user_version = {}; COMMIT;", kHistorySchema,
                                kCaseRunsTable, kHistorySchemaVersion);
  char* msg = nullptr;
  if (sqlite3_exec(h.db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string why = msg ? msg : "unknown";
    sqlite3_free(msg);
    sqlite3_exec(h.db, "ROLLBACK", nullptr, nullptr, nullptr);
    // Another writer may have created the schema meanwhile: read the version again.
    int again = 0;
    if (int_query("PRAGMA user_version", again) && again == kHistorySchemaVersion) return true;
    error = fmt::format("{}: error: cannot create the history schema: {}\n", path, why);
    return false;
  }
  return true;
}

std::string history_now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

bool record_report(const std::string& db_path, const std::string& report_text, const RecordOptions& options,
                   std::string& error) {
  nlohmann::json j;
  if (!parse_report("report", report_text, j, error)) return false;
  std::string at = options.recorded_at.empty() ? history_now_utc() : options.recorded_at;
  if (!RE2::FullMatch(at, R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")) {
    error = fmt::format("error: --recorded-at {}: expected a UTC time as YYYY-MM-DDTHH:MM:SSZ\n", at);
    return false;
  }
  std::string label = options.label.empty() ? at : options.label;
  HistoryDb h;
  if (!open_history(db_path, /*create=*/true, h, error)) return false;
  if (sqlite3_exec(h.db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = history_db_error(db_path, h.db, "cannot write the history database");
    return false;
  }
  auto fail = [&](const char* what) {
    error = history_db_error(db_path, h.db, what);
    sqlite3_exec(h.db, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  };
  std::int64_t judged = 0, passed = 0, cases = 0;
  if (j.contains("cases"))
    for (const auto& c : j["cases"]) {
      ++cases;
      if (c.value("status", "") == "judged") {
        ++judged;
        passed += c.value("pass", false);
      }
    }
  auto str = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!history_exec_bound(h.db,
                  "INSERT INTO runs (suite, suite_file, label, recorded_at, status, catalog_version, cases, judged, "
                  "passed, report) VALUES (?,?,?,?,?,?,?,?,?,?)",
                  {str("suite"), str("suite_file"), label, at, str("status"), str("catalog_version"), cases, judged,
                   passed, report_text}))
    return fail("cannot record the run");
  std::int64_t run = sqlite3_last_insert_rowid(h.db);
  if (j.contains("inputs") && j["inputs"].is_array())
    for (const auto& in : j["inputs"])
      if (in.is_object() &&
          !history_exec_bound(h.db, "INSERT INTO inputs VALUES (?,?,?,?)",
                      {run, in.value("kind", ""), in.value("file", ""), in.value("sha256", "")}))
        return fail("cannot record the run's inputs");
  const auto& metrics = j["overall"].contains("metrics") ? j["overall"]["metrics"] : nlohmann::json::object();
  for (const auto& [name, v] : metrics.items())
    if (!history_exec_bound(h.db, "INSERT INTO metrics VALUES (?,?,?)",
                    {run, name, v.is_number() ? HistoryValue(v.get<double>()) : HistoryValue()}))
      return fail("cannot record the run's metrics");
  if (judged > 0 &&
      !history_exec_bound(h.db, "INSERT OR REPLACE INTO metrics VALUES (?,?,?)",
                  {run, std::string("pass_share"), static_cast<double>(passed) / static_cast<double>(judged)}))
    return fail("cannot record the run's metrics");
  if (!history_record_cases(h.db, run, j)) return fail("cannot record the run's cases");
  if (j.contains("gates") && j["gates"].is_array()) {
    std::int64_t pos = 0;
    for (const auto& g : j["gates"]) {
      if (!g.is_object()) continue;
      HistoryValue segment = g.contains("segment") && g["segment"].is_string() ? HistoryValue(g["segment"].get<std::string>())
                                                                              : HistoryValue();
      if (!history_exec_bound(h.db, "INSERT INTO gates VALUES (?,?,?,?,?,?,?,?,?)",
                      {run, pos++, g.value("gate", ""), g.value("metric", ""), segment, history_json_number(g, "value"),
                       history_json_number(g, "threshold"), g.value("status", ""), std::int64_t{g.value("critical", false)}}))
        return fail("cannot record the run's gates");
    }
  }
  if (sqlite3_exec(h.db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return fail("cannot commit the run");
  return true;
}

bool load_history(const std::string& db_path, const HistoryOptions& options, History& out, std::string& error) {
  out = History{};
  out.db = db_path;
  out.options = options.compare;
  HistoryDb h;
  if (!open_history(db_path, /*create=*/false, h, error)) return false;
  auto read_fail = [&] {
    error = history_db_error(db_path, h.db, "cannot read the history database");
    return false;
  };
  std::vector<std::string> suites;
  {
    HistoryStmt st;
    if (sqlite3_prepare_v2(h.db, "SELECT DISTINCT suite FROM runs ORDER BY suite", -1, &st.s, nullptr) != SQLITE_OK)
      return read_fail();
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW)
      suites.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0)));
    if (rc != SQLITE_DONE) return read_fail();
  }
  if (options.suite.empty()) {
    if (suites.size() != 1) {
      error = suites.empty() ? fmt::format("{}: error: no run is recorded\n", db_path)
                             : fmt::format("{}: error: runs of {} suites are recorded ({}): choose one with --suite\n",
                                           db_path, suites.size(), fmt::join(suites, ", "));
      return false;
    }
    out.suite = suites.front();
  } else {
    if (std::find(suites.begin(), suites.end(), options.suite) == suites.end()) {
      error = fmt::format("{}: error: no run of suite `{}` is recorded (suites: {})\n", db_path, options.suite,
                          suites.empty() ? std::string("none") : fmt::format("{}", fmt::join(suites, ", ")));
      return false;
    }
    out.suite = options.suite;
  }
  std::vector<std::string> reports;
  {
    HistoryStmt st;
    if (sqlite3_prepare_v2(h.db,
                           "SELECT id, label, recorded_at, status, judged, passed, report FROM runs WHERE suite = ? "
                           "ORDER BY id",
                           -1, &st.s, nullptr) != SQLITE_OK ||
        sqlite3_bind_text(st.s, 1, out.suite.c_str(), -1, SQLITE_TRANSIENT) != SQLITE_OK)
      return read_fail();
    int rc;
    auto text = [&](int col) {
      const unsigned char* t = sqlite3_column_text(st.s, col);
      return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(st.s, col)))
               : std::string();
    };
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
      HistoryRun r;
      r.id = sqlite3_column_int64(st.s, 0);
      r.suite = out.suite;
      r.label = text(1);
      r.recorded_at = text(2);
      r.status = text(3);
      r.judged = static_cast<std::size_t>(sqlite3_column_int64(st.s, 4));
      r.passed = static_cast<std::size_t>(sqlite3_column_int64(st.s, 5));
      out.runs.push_back(std::move(r));
      reports.push_back(text(6));
    }
    if (rc != SQLITE_DONE) return read_fail();
  }
  if (options.last > 0 && out.runs.size() > options.last) {
    std::size_t drop = out.runs.size() - options.last;
    out.runs.erase(out.runs.begin(), out.runs.begin() + static_cast<std::ptrdiff_t>(drop));
    reports.erase(reports.begin(), reports.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  for (auto& r : out.runs) {
    for (const char* table : {"metrics", "inputs"}) {
      HistoryStmt st;
      std::string sql = std::string(table) == "metrics"
                            ? "SELECT name, value FROM metrics WHERE run_id = ? AND value IS NOT NULL"
                            : "SELECT kind, file, sha256 FROM inputs WHERE run_id = ? ORDER BY rowid";
      if (sqlite3_prepare_v2(h.db, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK ||
          sqlite3_bind_int64(st.s, 1, r.id) != SQLITE_OK)
        return read_fail();
      int rc;
      while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        std::string k = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
        if (std::string(table) == "metrics") r.metrics[k] = sqlite3_column_double(st.s, 1);
        else
          r.inputs.push_back({k, reinterpret_cast<const char*>(sqlite3_column_text(st.s, 1)),
                              reinterpret_cast<const char*>(sqlite3_column_text(st.s, 2))});
      }
      if (rc != SQLITE_DONE) return read_fail();
    }
  }
  for (const char* m : kHistoryColumns)
    for (const auto& r : out.runs)
      if (r.metrics.count(m)) {
        out.metrics.emplace_back(m);
        break;
      }
  // Each run against the one before it: compare's paired bootstrap over the cases both judged.
  for (std::size_t i = 1; i < out.runs.size(); ++i) {
    HistoryRun& r = out.runs[i];
    CompareReport c;
    std::string why;
    if (!compare_reports(out.runs[i - 1].label, reports[i - 1], r.label, reports[i], options.compare, c, why)) {
      error = fmt::format("{}: error: run {} ({}): {}", db_path, r.id, r.label, why);
      return false;
    }
    r.has_previous = true;
    for (auto& row : c.rows)
      if (row.group == "overall") r.deltas.push_back(row);
    r.pass_to_fail = c.pass_to_fail;
    r.fail_to_pass = c.fail_to_pass;
    // compare's verdict: a share's interval below 0, an efficiency figure's (lower is better) above.
    for (const auto& row : r.deltas)
      if (row.regressed)
        r.regressions.push_back(row.share ? fmt::format("{} fell: {:+.1f} pt, CI [{:+.1f}, {:+.1f}]", row.dimension,
                                                        *row.delta * 100, *row.lo * 100, *row.hi * 100)
                                          : fmt::format("{} rose: {:+.2f}, CI [{:+.2f}, {:+.2f}]", row.dimension,
                                                        *row.delta, *row.lo, *row.hi));
    if (!r.pass_to_fail.empty())
      r.regressions.push_back(fmt::format("{} case{} flipped pass -> fail: {}", r.pass_to_fail.size(),
                                          r.pass_to_fail.size() == 1 ? "" : "s", fmt::join(r.pass_to_fail, ", ")));
  }
  return true;
}

namespace {

std::optional<double> history_run_metric(const HistoryRun& r, const std::string& m) {
  auto it = r.metrics.find(m);
  if (it == r.metrics.end()) return std::nullopt;
  return it->second;
}

bool history_ratio(const std::string& m) { return m == "pass_share" || ratio_metric(m); }

std::string history_ci_text(const CompareRow& row) {
  if (!row.delta) return "n/a";
  if (!row.share) {  // an efficiency figure, in its own unit
    std::string s = fmt::format("{:+.2f}", *row.delta);
    if (row.lo && row.hi) s += fmt::format(" [{:+.2f}, {:+.2f}]", *row.lo, *row.hi);
    return s;
  }
  std::string s = fmt::format("{:+.1f} pt", *row.delta * 100);
  if (row.lo && row.hi) s += fmt::format(" [{:+.1f}, {:+.1f}]", *row.lo * 100, *row.hi * 100);
  return s;
}

}  // namespace

std::string history_text(const History& h) {
  std::string o = fmt::format("history of suite {} ({}): {} run{}; {:.0f}% paired-bootstrap CI against the run before "
                              "({} resamples, seed {})\n\n",
                              detail::printable(h.suite), detail::printable(h.db), h.runs.size(),
                              h.runs.size() == 1 ? "" : "s", h.options.confidence * 100, h.options.resamples,
                              h.options.seed);
  o += fmt::format("  {:>4}  {:<20} {:<20} {:<6}", "run", "label", "recorded", "status");
  for (const auto& m : h.metrics) o += fmt::format(" {:>{}}", m, std::max<std::size_t>(m.size(), 8));
  o += "\n";
  for (const auto& r : h.runs) {
    o += fmt::format("  {:>4}  {:<20} {:<20} {:<6}", r.id, detail::printable(r.label), r.recorded_at, r.status);
    for (const auto& m : h.metrics)
      o += fmt::format(" {:>{}}", fmt_value(history_run_metric(r, m), history_ratio(m)), std::max<std::size_t>(m.size(), 8));
    o += r.regressions.empty() ? "\n" : "  REGRESSION\n";
  }
  for (const auto& r : h.runs) {
    if (!r.has_previous) continue;
    o += fmt::format("\nrun {} ({}) against the run before:\n", r.id, detail::printable(r.label));
    for (const auto& row : r.deltas)
      o += fmt::format("  {:<19} {:<24} pairs {}\n", row.dimension, history_ci_text(row), row.paired);
    o += fmt::format("  pass -> fail ({}):", r.pass_to_fail.size());
    for (const auto& c : r.pass_to_fail) o += " " + detail::printable(c);
    o += fmt::format("\n  fail -> pass ({}):", r.fail_to_pass.size());
    for (const auto& c : r.fail_to_pass) o += " " + detail::printable(c);
    o += "\n";
    for (const auto& why : r.regressions) o += "  REGRESSION: " + detail::printable(why) + "\n";
  }
  return o;
}

std::string history_json(const History& h) {
  nlohmann::ordered_json j;
  j["suite"] = h.suite;
  j["schema_version"] = kHistorySchemaVersion;
  j["bootstrap"] = {{"seed", h.options.seed}, {"resamples", h.options.resamples}, {"confidence", h.options.confidence}};
  j["metrics"] = h.metrics;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& r : h.runs) {
    nlohmann::ordered_json x;
    x["id"] = r.id;
    x["label"] = r.label;
    x["recorded_at"] = r.recorded_at;
    x["status"] = r.status;
    x["judged"] = r.judged;
    x["passed"] = r.passed;
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const auto& m : h.metrics) values[m] = number_or_null(history_run_metric(r, m));
    x["metrics"] = values;
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const auto& in : r.inputs) inputs.push_back({{"kind", in.kind}, {"file", in.file}, {"sha256", in.sha256}});
    x["inputs"] = inputs;
    if (r.has_previous) {
      nlohmann::ordered_json deltas = nlohmann::ordered_json::array();
      for (const auto& row : r.deltas)
        deltas.push_back({{"dimension", row.dimension}, {"delta", number_or_null(row.delta)},
                          {"ci_low", number_or_null(row.lo)}, {"ci_high", number_or_null(row.hi)},
                          {"paired", row.paired}, {"lower_is_better", row.lower_is_better}});
      x["against_previous"] = {{"deltas", deltas}, {"pass_to_fail", r.pass_to_fail}, {"fail_to_pass", r.fail_to_pass}};
    } else {
      x["against_previous"] = nullptr;
    }
    x["regressed"] = !r.regressions.empty();
    x["regressions"] = r.regressions;
    runs.push_back(std::move(x));
  }
  j["runs"] = runs;
  j["latest_regressed"] = h.latest_regressed();
  return j.dump(1) + "\n";
}

std::string history_html(const History& h) {
  std::string b = fmt::format("<h1>trajcheck history: {}</h1>\n<p class=muted>{} run{} recorded in {}; {:.0f}% "
                              "paired-bootstrap intervals against the run before ({} resamples, seed {}).</p>\n",
                              html_escape(h.suite), h.runs.size(), h.runs.size() == 1 ? "" : "s", html_escape(h.db),
                              h.options.confidence * 100, h.options.resamples, h.options.seed);
  // The chart: the share metrics (0 to 100%) across the runs, one line and one point per run
  // per metric; a regressed run's label is marked.
  std::vector<std::string> shares;
  for (const auto& m : h.metrics)
    if (history_ratio(m)) shares.push_back(m);
  static const char* const history_colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};
  const double left = 50, top = 20, width = 640, height = 240;
  const std::size_t n = h.runs.size();
  auto x_of = [&](std::size_t i) { return left + (n <= 1 ? width / 2 : width * static_cast<double>(i) / static_cast<double>(n - 1)); };
  auto y_of = [&](double v) { return top + height * (1.0 - std::clamp(v, 0.0, 1.0)); };
  std::string svg = fmt::format("<svg id=\"chart-history\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                                "role=\"img\" aria-label=\"metrics across runs\">\n",
                                left + width + 170, top + height + 60);
  for (int p = 0; p <= 100; p += 25) {
    double y = y_of(p / 100.0);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1f}\" "
                       "font-size=\"11\" text-anchor=\"end\">{}%</text>\n",
                       left, y, left + width, y, left - 6, y + 4, p);
  }
  for (std::size_t i = 0; i < n; ++i)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\"{}>{}</text>\n", x_of(i),
                       top + height + 18, h.runs[i].regressions.empty() ? "" : " fill=\"#c00\" font-weight=\"bold\"",
                       html_escape(h.runs[i].label));
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const std::string& m = shares[k];
    const char* color = history_colors[k % std::size(history_colors)];
    std::string points;
    for (std::size_t i = 0; i < n; ++i)
      if (auto v = history_run_metric(h.runs[i], m)) points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x_of(i), y_of(*v));
    svg += fmt::format("<g class=\"series\" data-metric=\"{}\">\n<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       html_escape(m), points, color);
    for (std::size_t i = 0; i < n; ++i)
      if (auto v = history_run_metric(h.runs[i], m))
        svg += fmt::format("<circle class=\"point\" data-metric=\"{}\" data-run=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" "
                           "fill=\"{}\"><title>{} {}: {}</title></circle>\n",
                           html_escape(m), h.runs[i].id, x_of(i), y_of(*v), color, html_escape(h.runs[i].label),
                           html_escape(m), fmt_value(v, true));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                       "font-size=\"12\">{}</text>\n</g>\n",
                       left + width + 20, top + 16 * static_cast<double>(k), color, left + width + 36,
                       top + 16 * static_cast<double>(k) + 9, html_escape(m));
  }
  svg += "</svg>\n";
  b += "<div class=charts>\n" + svg + "</div>\n<h2>Runs</h2>\n<table><tr><th>run</th><th>label</th><th>recorded</th><th>status</th>";
  for (const auto& m : h.metrics) b += "<th>" + html_escape(m) + "</th>";
  b += "<th>regression</th></tr>\n";
  for (const auto& r : h.runs) {
    b += fmt::format("<tr><td class=num>{}</td><td>{}</td><td>{}</td><td>{}</td>", r.id, html_escape(r.label),
                     html_escape(r.recorded_at), html_escape(r.status));
    for (const auto& m : h.metrics) b += "<td class=num>" + fmt_value(history_run_metric(r, m), history_ratio(m)) + "</td>";
    b += "<td>" + html_escape(fmt::format("{}", fmt::join(r.regressions, "; "))) + "</td></tr>\n";
  }
  b += "</table>\n<h2>Against the run before</h2>\n<table><tr><th>run</th><th>dimension</th><th>delta [CI]</th><th>pairs</th></tr>\n";
  for (const auto& r : h.runs)
    for (const auto& row : r.deltas)
      b += fmt::format("<tr><td>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td></tr>\n",
                       html_escape(r.label), row.dimension, history_ci_text(row), row.paired);
  b += "</table>\n";
  return html_page("trajcheck history", b);
}

}  // namespace trajcheck::eval
