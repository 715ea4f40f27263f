#include "agent/outbox_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/error.hpp"
#include "common/log.hpp"

// Why the journal is shaped this way: append-only lines (each message, then {"delivered": n} as
// the coordinator accepts them in order) cost one write(2) per message, and a crash can cut only
// the last line, which reading drops; the file is compacted once, at open, not as it goes. It is
// not fsynced: a killed agent loses nothing, a power cut may lose the last messages, the price of
// not waiting for the disk at every record. An flock keeps a second agent on the same work folder
// from sending the same messages again.
namespace scalebench {

namespace {
std::string os_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Reads the messages still waiting: every message line, less the delivered prefix.
std::vector<OutboxJournal::Message> read_journal(const std::string& path) {
  std::vector<OutboxJournal::Message> messages;
  std::size_t delivered = 0;
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("delivered") && j["delivered"].is_number_unsigned()) {
      delivered += j["delivered"].get<std::size_t>();
    } else if (j.is_object() && j.contains("path") && j["path"].is_string() && j.contains("body")) {
      messages.emplace_back(j["path"].get<std::string>(), j["body"]);
    } else if (!in.eof()) {
      log::warn(path + ":" + std::to_string(number) + ": not an outbox message; skipped");
    }
    // A last line without its newline is a write that a crash cut short: dropped silently.
  }
  if (delivered >= messages.size()) return {};
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(delivered));
  return messages;
}

std::string message_line(const std::string& path, const Json& body) {
  return Json{{"path", path}, {"body", body}}.dump() + "\n";
}
}  // namespace

OutboxJournal::OutboxJournal(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) throw Error(os_error("cannot open the outbox journal", path_));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    throw Error("the outbox journal " + path_ +
                " is held by another process: is a second agent using this --work-dir?");
  }
  undelivered_ = read_journal(path_);
  // Compact: only what still waits is kept, in a file written whole before it replaces the old.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [p, b] : undelivered_) out << message_line(p, b);
    if (!out.flush()) {
      ::close(fd_);
      throw Error("cannot write " + tmp);
    }
  }
  // The lock stays with the descriptor of the replaced file: take it on the new one too.
  const int fresh = ::open(tmp.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fresh < 0 || ::flock(fresh, LOCK_EX | LOCK_NB) != 0 || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string why = os_error("cannot replace the outbox journal", path_);
    if (fresh >= 0) ::close(fresh);
    ::close(fd_);
    throw Error(why);
  }
  ::close(fd_);
  fd_ = fresh;
}

OutboxJournal::~OutboxJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void OutboxJournal::write_line(const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(os_error("cannot write the outbox journal", path_));
    done += static_cast<std::size_t>(n);
  }
}

void OutboxJournal::append(const std::string& path, const Json& body) { write_line(message_line(path, body)); }

void OutboxJournal::delivered(std::size_t n) {
  if (n > 0) write_line(Json{{"delivered", n}}.dump() + "\n");
}

void OutboxJournal::clear() {
  if (::ftruncate(fd_, 0) != 0) throw Error(os_error("cannot empty the outbox journal", path_));
}

}  // namespace scalebench
