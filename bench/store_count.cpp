#include "bench/store_count.hpp"

#include <sqlite3.h>

#include <chrono>

#include "common/json.hpp"
#include "http/http_client.hpp"

namespace scalebench::load {

namespace {
long long count_in_file(const std::string& path) {
  sqlite3* db = nullptr;
  long long stored = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* q = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM records", -1, &q, nullptr) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
      stored = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
  }
  sqlite3_close(db);
  return stored;
}

long long count_through_api(const std::string& url) {
  HttpClient reader(url, std::chrono::seconds(60));
  long long after = 0, stored = 0;
  for (;;) {
    Json page = reader.get_json("/api/v1/results?limit=10000&after=" + std::to_string(after));
    stored += static_cast<long long>(page["records"].size());
    after = page["next_after"].get<long long>();
    if (page["complete"].get<bool>()) return stored;
  }
}
}  // namespace

long long count_stored(const std::string& db, const std::string& url) {
  return db.empty() ? count_through_api(url) : count_in_file(db);
}

}  // namespace scalebench::load
