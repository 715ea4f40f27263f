#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

struct sqlite3;

namespace scalebench {

// Copies a WAL-mode store's committed pages back into its main file (a PASSIVE checkpoint) from a
// thread and connection of its own, every `interval`. SQLite otherwise checkpoints inside the
// commit that fills the WAL past its limit, with an fsync of the main file: under the
// coordinator's lock, which every heartbeat waits for. The store's own connection keeps a high
// automatic limit as a backstop (Store::set_wal_autocheckpoint).
class WalCheckpointer {
 public:
  WalCheckpointer(const std::string& path, std::chrono::milliseconds interval);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Checkpoints that completed (every committed page copied) so far.
  long long completed() const;

 private:
  void loop();
  sqlite3* db_ = nullptr;
  std::string path_;
  std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  long long completed_ = 0;
  std::thread thread_;
};

}  // namespace scalebench
