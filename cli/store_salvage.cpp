#include "cli/store_salvage.hpp"

#include <sqlite3.h>

#include <memory>
#include <optional>

#include "common/error.hpp"
#include "store/sqlite_handles.hpp"

namespace scalebench {

namespace {

SqliteStatement prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    throw Error(std::string("cannot read the store: ") + sqlite3_errmsg(db));
  }
  return SqliteStatement(s);
}

// The first record id over `after` that a seek reaches, or nullopt when the seek fails (the path
// to it crosses a damaged page); 0 when there is none.
std::optional<long long> first_after(sqlite3* db, long long after) {
  SqliteStatement q = prepare(db, "SELECT id FROM records WHERE id > ? ORDER BY id LIMIT 1");
  sqlite3_bind_int64(q.get(), 1, after);
  const int rc = sqlite3_step(q.get());
  if (rc == SQLITE_ROW) return sqlite3_column_int64(q.get(), 0);
  if (rc == SQLITE_DONE) return 0;
  return std::nullopt;
}

// Where reading can go on after a failure past `after`: the first id that a seek from the
// smallest working start over `after` gives (found by doubling the step, then halving it); 0 when
// nothing readable follows.
long long next_readable(sqlite3* db, long long after, long long last_id) {
  long long bad = after, step = 1;
  std::optional<long long> found;
  long long good = 0;
  for (;;) {
    const long long from = after + step;
    if (from >= last_id) return 0;
    found = first_after(db, from);
    if (found) {
      good = from;
      break;
    }
    bad = from;
    step *= 2;
  }
  while (good - bad > 1) {  // a seek from `bad` fails, from `good` works
    const long long mid = bad + (good - bad) / 2;
    if (auto f = first_after(db, mid)) {
      good = mid;
      found = f;
    } else {
      bad = mid;
    }
  }
  return *found;
}

// The experiment's name: itself, or the name of the experiment with that id when the table reads.
std::string experiment_name(sqlite3* db, const std::string& experiment, std::vector<std::string>* problems) {
  if (experiment.empty() || experiment.find_first_not_of("0123456789") != std::string::npos) return experiment;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name FROM experiments WHERE id = ?", -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    problems->push_back(std::string("experiments table: ") + sqlite3_errmsg(db) + "; '" + experiment +
                        "' is taken as a name");
    return experiment;
  }
  SqliteStatement q(raw);
  sqlite3_bind_text(q.get(), 1, experiment.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(q.get()) == SQLITE_ROW) return reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
  return experiment;
}
}  // namespace

Salvage salvage_records(const std::string& path, const std::string& experiment) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) throw Error(path + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
  // A file cut short has a header that counts more pages than it holds, and SQLite then refuses
  // every query; with writable_schema on (nothing is written: the file is opened read-only) it
  // reads the pages that are there, and reports the missing ones where a read reaches them.
  sqlite3_exec(db.get(), "PRAGMA writable_schema=ON", nullptr, nullptr, nullptr);
  Salvage out;
  const std::string name = experiment_name(db.get(), experiment, &out.problems);
  // The largest id, from the rightmost leaf: where the scan ends.
  long long last_id = 0;
  {
    SqliteStatement q = prepare(db.get(), "SELECT MAX(id) FROM records");
    if (sqlite3_step(q.get()) == SQLITE_ROW) {
      last_id = sqlite3_column_int64(q.get(), 0);
    } else {
      out.problems.push_back(std::string("the last record id: ") + sqlite3_errmsg(db.get()) +
                             "; read up to the first damage only");
      last_id = (1LL << 62);
    }
  }
  long long after = 0;
  SqliteStatement q = prepare(db.get(), "SELECT id, json FROM records WHERE id > ? ORDER BY id");
  while (after < last_id) {
    sqlite3_reset(q.get());
    sqlite3_bind_int64(q.get(), 1, after);
    int step;
    while ((step = sqlite3_step(q.get())) == SQLITE_ROW) {
      const long long id = sqlite3_column_int64(q.get(), 0);
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 1));
      after = id;
      Json r = Json::parse(text ? text : "", nullptr, false);
      if (!r.is_object()) {
        out.problems.push_back("record " + std::to_string(id) + ": not JSON (damaged row)");
        continue;
      }
      if (!name.empty() && r.value("experiment", std::string()) != name) continue;
      r["record_id"] = id;
      out.records.push_back(std::move(r));
    }
    if (step == SQLITE_DONE) break;
    const std::string why = sqlite3_errmsg(db.get());
    const long long next = next_readable(db.get(), after, last_id);
    const std::string upto = next ? std::to_string(next - 1) : last_id < (1LL << 62) ? std::to_string(last_id) : "";
    out.problems.push_back("records " + std::to_string(after + 1) + ".." + upto + " could not be read: " + why);
    if (next == 0) break;
    after = next - 1;
  }
  return out;
}

}  // namespace scalebench
