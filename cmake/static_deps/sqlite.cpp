// Links against libsqlite3.a with calls of the kind src/eval/history.cpp makes (cmake/static_deps.cmake).
#include <sqlite3.h>
int main() {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) return 1;
  sqlite3_busy_timeout(db, 1000);
  sqlite3_extended_result_codes(db, 1);
  char* error = nullptr;
  if (sqlite3_exec(db, "CREATE TABLE t(x INTEGER)", nullptr, nullptr, &error) != SQLITE_OK) sqlite3_free(error);
  sqlite3_stmt* statement = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT ?", -1, &statement, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(statement, 1, "x", -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0) ? 0 : 1;
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rc;
}
