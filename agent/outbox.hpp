#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/outbox_journal.hpp"
#include "common/json.hpp"
#include "http/http_client.hpp"

namespace scalebench {

// Messages to the coordinator (records, run ends), delivered in order by one thread that
// retries until each is accepted, so that a coordinator restart loses nothing. A message the
// coordinator rejects as invalid (4xx) is logged and dropped, and counts as settled: resending
// cannot fix it. With a journal, messages are on disk from post() until accepted, and those
// a previous process left are queued first.
class Outbox {
 public:
  using Delivered = std::function<void(const std::string& path, const Json& body)>;
  using Message = OutboxJournal::Message;
  Outbox(const HttpClient& client, Delivered on_delivered, std::unique_ptr<OutboxJournal> journal = nullptr);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  void post(std::string path, Json body);
  std::size_t pending() const;
  // What is queued now (after construction: what the journal brought back).
  std::vector<Message> queued() const;
  const OutboxJournal* journal() const { return journal_.get(); }
  // Waits until everything queued so far was delivered or `timeout` passed; true if empty.
  bool drain(std::chrono::milliseconds timeout);

 private:
  void loop();
  const HttpClient& client_;
  Delivered on_delivered_;
  std::unique_ptr<OutboxJournal> journal_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, Json>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scalebench
