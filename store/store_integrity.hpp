#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench {

// Whether a store file is whole, as SQLite's own checks see it: every page of every table and
// index read and cross-checked (PRAGMA integrity_check), or, on a large store, the same without
// matching each index against its table (quick_check: a fraction of the time); and a header that
// counts more pages than the file holds (a file cut short) named as such.
struct StoreIntegrity {
  std::vector<std::string> problems;  // empty when the store is whole; at most kMaxProblems (+ truncation)
  std::string check;                  // "integrity_check" or "quick_check"
  double seconds = 0;                 // how long the check took
};

// Stores of this size or more get quick_check. Measured (Python's sqlite3, SQLite 3.40.1, 16 KiB
// pages, file in the page cache; load average 6.3-6.5 on 2 cores): a store of 119,050 records
// (110 MB) integrity_check 0.7 s, quick_check 0.4 s; one of 679,000 records (598 MB)
// integrity_check 14.5-17.9 s (its index no longer fits SQLite's cache), quick_check 2.0-2.5 s.
constexpr std::uintmax_t kFullCheckBelowBytes = 128ull << 20;
constexpr int kMaxProblems = 20;

// Checks the store at `path` (an existing file), opened read-only; a WAL left by a process that
// stopped without closing the store is read as SQLite reads it, and `read_only` false lets SQLite
// rebuild its index (the -shm file) as any writer would. Throws Error when the file cannot be
// opened at all (missing, no permission, locked); a file that is not a database is a problem.
StoreIntegrity check_store_integrity(const std::string& path, bool read_only = true,
                                     std::uintmax_t full_check_below = kFullCheckBelowBytes);

// Whether an error from opening or reading a store says the file is damaged (not missing, not
// locked): SQLite's "database disk image is malformed" or "file is not a database".
bool store_damaged(const std::string& error);

}  // namespace scalebench
