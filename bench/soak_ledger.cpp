#include "bench/soak_ledger.hpp"

#include <sqlite3.h>

#include "common/error.hpp"

namespace scalebench::load {

void SentLedger::note(long long run_id, int attempt, long long acked, long long sent) {
  std::lock_guard lock(mutex_);
  sent_[{run_id, attempt}] = {acked, sent};
}

namespace {
class ReadOnlyStore {
 public:
  explicit ReadOnlyStore(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw Error("store " + path + ": cannot open: " + why);
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  ~ReadOnlyStore() { sqlite3_close(db_); }
  ReadOnlyStore(const ReadOnlyStore&) = delete;
  ReadOnlyStore& operator=(const ReadOnlyStore&) = delete;
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* q = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &q, nullptr) != SQLITE_OK)
      throw Error(std::string("store: ") + sqlite3_errmsg(db_) + " in " + sql);
    return q;
  }

 private:
  sqlite3* db_ = nullptr;
};
}  // namespace

StoreCheck SentLedger::check(const std::string& db) const {
  std::lock_guard lock(mutex_);
  ReadOnlyStore store(db);
  StoreCheck c;
  // Per run attempt streamed: stored below `acked` (each acknowledged record, once: the key is
  // unique), stored at or over `sent` (never sent), stored in between, and stored rows whose
  // content is not the record of their seq (its run id, its value).
  sqlite3_stmt* q = store.prepare(
      "SELECT COUNT(*), COALESCE(SUM(seq < ?3), 0), COALESCE(SUM(seq >= ?4), 0), "
      "COALESCE(SUM(json_extract(json, '$.run_id') != run_id OR json_extract(json, '$.value') != 100 + seq % 97), 0) "
      "FROM records WHERE run_id = ?1 AND attempt = ?2 AND seq >= 0");
  for (const auto& [key, counts] : sent_) {
    const auto [acked, sent] = counts;
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, key.first);
    sqlite3_bind_int(q, 2, key.second);
    sqlite3_bind_int64(q, 3, acked);
    sqlite3_bind_int64(q, 4, sent);
    if (sqlite3_step(q) != SQLITE_ROW) throw Error("store " + db + ": cannot count the records of a run");
    const long long rows = sqlite3_column_int64(q, 0), below = sqlite3_column_int64(q, 1),
                    never_sent = sqlite3_column_int64(q, 2), wrong = sqlite3_column_int64(q, 3);
    ++c.attempts;
    c.acknowledged += acked;
    c.stored += rows;
    c.lost += acked - below;
    c.duplicated += never_sent + wrong;
    c.in_doubt += sent - acked;
    c.in_doubt_stored += rows - below - never_sent;
  }
  sqlite3_finalize(q);
  // Point records of run attempts no agent streamed.
  q = store.prepare("SELECT run_id, attempt, COUNT(*) FROM records WHERE seq >= 0 GROUP BY run_id, attempt");
  while (sqlite3_step(q) == SQLITE_ROW)
    if (!sent_.count({sqlite3_column_int64(q, 0), sqlite3_column_int(q, 1)})) {
      c.duplicated += sqlite3_column_int64(q, 2);
      c.stored += sqlite3_column_int64(q, 2);
    }
  sqlite3_finalize(q);
  return c;
}

}  // namespace scalebench::load
