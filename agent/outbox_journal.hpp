#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// The outbox's messages on disk, so that results an agent could not deliver survive the agent
// (killed, stopped while the coordinator was down) and go out when it starts again. One JSON
// line per message ({"path", "body"}), and {"delivered": n} lines as the coordinator accepts
// them in order; emptied when everything is delivered, compacted at open. Lines reach the file
// with each write (a crashed process loses nothing), not with fsync (a power cut may).
class OutboxJournal {
 public:
  using Message = std::pair<std::string, Json>;

  // Opens (creating) the journal and locks it, so that two agents never share one. Throws Error
  // naming the file when it cannot be opened or another process holds it.
  explicit OutboxJournal(std::string path);
  ~OutboxJournal();
  OutboxJournal(const OutboxJournal&) = delete;
  OutboxJournal& operator=(const OutboxJournal&) = delete;

  // The messages left undelivered by the previous process, oldest first. A last line cut short
  // by a crash is dropped; so is any line that is not a message (logged).
  const std::vector<Message>& undelivered() const { return undelivered_; }

  void append(const std::string& path, const Json& body);
  // The oldest `n` messages not yet marked were accepted.
  void delivered(std::size_t n);
  // Nothing is waiting: start the file afresh.
  void clear();
  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  std::vector<Message> undelivered_;
};

}  // namespace scalebench
