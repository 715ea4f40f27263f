#include "store/store_integrity.hpp"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/error.hpp"
#include "store/sqlite_handles.hpp"

namespace scalebench {

namespace {

std::uint32_t big_endian(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// When the header counts more pages than the file holds: how many are missing, said in a line.
// SQLite's header (sqlite.org/fileformat2.html): page size at 16 (1 means 65536), the page count
// at 28, valid when the change counter at 24 equals the one at 92. A WAL with frames may hold the
// last pages instead of the file: then SQLite's check alone decides.
std::string truncation(const std::string& path) {
  std::error_code ec;
  const auto wal = std::filesystem::file_size(path + "-wal", ec);
  if (!ec && wal > 32) return "";
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size < 100) return "";
  unsigned char h[100];
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(h), sizeof h) ||
      std::string(reinterpret_cast<char*>(h), 16) != std::string("SQLite format 3\0", 16))
    return "";
  const std::uint32_t page_size = h[16] == 0 && h[17] == 1 ? 65536u : (std::uint32_t{h[16]} << 8) | h[17];
  const std::uint32_t pages = big_endian(h + 28);
  if (page_size < 512 || pages == 0 || big_endian(h + 24) != big_endian(h + 92)) return "";
  const std::uintmax_t held = size / page_size;
  if (held >= pages) return "";
  return "the file holds " + std::to_string(held) + " pages but its header counts " + std::to_string(pages) +
         ": the last " + std::to_string(pages - held) + " are missing (the file was cut short)";
}
}  // namespace

bool store_damaged(const std::string& error) {
  return error.find("malformed") != std::string::npos || error.find("not a database") != std::string::npos;
}

StoreIntegrity check_store_integrity(const std::string& path, bool read_only, std::uintmax_t full_check_below) {
  StoreIntegrity out;
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("store " + path + ": cannot read: " + ec.message());
  out.check = size < full_check_below ? "integrity_check" : "quick_check";
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) throw Error("store " + path + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
  sqlite3_busy_timeout(db.get(), 5000);
  if (std::string cut = truncation(path); !cut.empty()) out.problems.push_back(cut);
  const std::string sql = "PRAGMA " + out.check + "(" + std::to_string(kMaxProblems) + ")";
  sqlite3_stmt* stmt = nullptr;
  int step = sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &stmt, nullptr);
  SqliteStatement q(stmt);
  if (step == SQLITE_OK) {
    while ((step = sqlite3_step(q.get())) == SQLITE_ROW) {
      // A row may hold several lines, after a "*** in database main ***" heading: one problem each.
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q.get(), 0));
      std::istringstream lines(text ? text : "");
      for (std::string line; std::getline(lines, line);)
        if (line != "ok" && !line.empty() && line.rfind("***", 0) != 0) out.problems.push_back(line);
    }
  }
  if (step != SQLITE_DONE) {
    const std::string why = sqlite3_errmsg(db.get());
    if (!store_damaged(why)) throw Error("store " + path + ": " + out.check + ": " + why);
    out.problems.push_back(why);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace scalebench
