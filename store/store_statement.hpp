#pragma once
// The store's SQLite plumbing, shared by its source files (store.cpp, store_open_runs.cpp,
// store_predictions.cpp): the prepared-statement cache, one use of a statement, and a row of the
// runs table as a Run.
#include <sqlite3.h>

#include <string>
#include <string_view>
#include <unordered_map>

#include "common/error.hpp"
#include "store/store.hpp"

namespace scalebench {

// Prepared statements, compiled once per SQL text and kept for the store's life: the hot
// paths (a heartbeat, a batch of records) then pay no SQL parsing.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  }
  sqlite3* db() const { return db_; }
  sqlite3_stmt* get(const char* sql) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) return nullptr;
    cache_.emplace(sql, stmt);
    return stmt;
  }

 private:
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

// SQLite's message, and for a failed write what usually lies behind it.
inline std::string describe(sqlite3* db) {
  std::string msg = sqlite3_errmsg(db);
  const int code = sqlite3_extended_errcode(db);
  if (code == SQLITE_FULL || code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_FSYNC)
    msg += " (could not write: is the disk full, or a file size limit reached?)";
  return msg;
}

// One use of a cached prepared statement, reset when it goes out of scope; every sqlite3 error
// names the store's path.
class Statement {
 public:
  Statement(StatementCache& cache, const std::string& path, const char* sql) : db_(cache.db()), path_(path) {
    stmt_ = cache.get(sql);
    if (!stmt_) fail("prepare");
  }
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, long long v) { return check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& bind(int i, int v) { return check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& bind(int i, double v) { return check(sqlite3_bind_double(stmt_, i, v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, std::string_view v) {
    return check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Statement& bind_null(int i) { return check(sqlite3_bind_null(stmt_, i)); }
  // Text that outlives the statement's step (not copied by SQLite).
  Statement& bind_static(int i, std::string_view v) {
    return check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }

  bool step() {  // true while there is a row
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
    return false;
  }
  long long i64(int c) { return sqlite3_column_int64(stmt_, c); }
  double real(int c) { return sqlite3_column_double(stmt_, c); }
  std::string text(int c) {
    auto p = sqlite3_column_text(stmt_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)))
             : "";
  }

 private:
  Statement& check(int rc) {
    if (rc != SQLITE_OK) fail("bind");
    return *this;
  }
  [[noreturn]] void fail(const char* what) { throw Error("store " + path_ + ": " + what + ": " + describe(db_)); }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// One row of run_columns_.
inline Store::Run read_run(Statement& q) {
  Store::Run r;
  r.id = q.i64(0);
  r.experiment_id = q.i64(1);
  r.index = static_cast<int>(q.i64(2));
  r.spec = Json::parse(q.text(3));
  r.state = q.text(4);
  r.reason = q.text(5);
  r.agent_id = q.text(6);
  r.attempt = static_cast<int>(q.i64(7));
  r.queued_at = q.real(8);
  r.started_at = q.real(9);
  r.finished_at = q.real(10);
  const std::string hosts = q.text(11);
  r.hosts = hosts.empty() ? Json::array() : Json::parse(hosts);
  r.delivered = q.i64(12) != 0;
  return r;
}

}  // namespace scalebench
