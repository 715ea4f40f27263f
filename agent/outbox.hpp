#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/http_client.hpp"
#include "common/json.hpp"

namespace scalebench {

// Messages to the coordinator (records, run ends), delivered in order by one thread that
// retries until each is accepted, so that a coordinator restart loses nothing. A message the
// coordinator rejects as invalid (4xx) is logged and dropped, and counts as settled: resending
// cannot fix it.
class Outbox {
 public:
  using Delivered = std::function<void(const std::string& path, const Json& body)>;
  Outbox(const HttpClient& client, Delivered on_delivered);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  void post(std::string path, Json body);
  std::size_t pending() const;
  // Waits until everything queued so far was delivered or `timeout` passed; true if empty.
  bool drain(std::chrono::milliseconds timeout);

 private:
  void loop();
  const HttpClient& client_;
  Delivered on_delivered_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, Json>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scalebench
