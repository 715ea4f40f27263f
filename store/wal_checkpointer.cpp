#include "store/wal_checkpointer.hpp"

#include <sqlite3.h>

#include "common/error.hpp"
#include "common/log.hpp"

namespace scalebench {

WalCheckpointer::WalCheckpointer(const std::string& path, std::chrono::milliseconds interval)
    : path_(path), interval_(interval) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("store " + path + ": cannot open for checkpoints: " + msg);
  }
  sqlite3_busy_timeout(db_, 100);
  // A connection learns that the file is in WAL mode when it first reads it; until then a
  // checkpoint does nothing (and says so with -1 frames).
  if (sqlite3_exec(db_, "PRAGMA journal_mode", nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::string msg = sqlite3_errmsg(db_);
    sqlite3_close(db_);
    throw Error("store " + path + ": cannot read for checkpoints: " + msg);
  }
  thread_ = std::thread([this] { loop(); });
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  sqlite3_close(db_);
}

long long WalCheckpointer::completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

void WalCheckpointer::loop() {
  bool warned = false;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    int frames = 0, copied = 0;
    const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY && !warned) {
      // Once: the store's own automatic checkpoints still bound the WAL.
      log::warn("store " + path_ + ": background checkpoint failed: " + sqlite3_errmsg(db_));
      warned = true;
    }
    lock.lock();
    if (rc == SQLITE_OK && frames >= 0 && copied == frames) ++completed_;
  }
}

}  // namespace scalebench
