#pragma once
// Owners of a SQLite connection and a prepared statement, for code that opens a store on its own
// (the integrity check, the salvage) rather than through Store.
#include <sqlite3.h>

#include <memory>

namespace scalebench {

struct CloseSqliteDb {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct FinalizeSqliteStatement {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using SqliteDb = std::unique_ptr<sqlite3, CloseSqliteDb>;
using SqliteStatement = std::unique_ptr<sqlite3_stmt, FinalizeSqliteStatement>;

}  // namespace scalebench
