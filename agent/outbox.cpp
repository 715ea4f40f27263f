#include "agent/outbox.hpp"

#include "common/error.hpp"
#include "common/log.hpp"

namespace scalebench {

Outbox::Outbox(const HttpClient& client, Delivered on_delivered)
    : client_(client), on_delivered_(std::move(on_delivered)), thread_([this] { loop(); }) {}

Outbox::~Outbox() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Outbox::post(std::string path, Json body) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(path), std::move(body));
  }
  cv_.notify_all();
}

std::size_t Outbox::pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool Outbox::drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return queue_.empty(); });
}

void Outbox::loop() {
  std::chrono::milliseconds backoff(100);
  bool warned = false;
  for (;;) {
    std::pair<std::string, Json> item;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      item = queue_.front();
    }
    bool done = false;
    try {
      HttpResponse r = client_.request("POST", item.first, item.second.dump());
      if (r.status >= 200 && r.status < 300) {
        done = true;
        on_delivered_(item.first, item.second);
      } else if (r.status >= 400 && r.status < 500) {
        log::error("coordinator rejected " + item.first + " (HTTP " + std::to_string(r.status) + "): " + r.body);
        done = true;
        on_delivered_(item.first, item.second);  // settled either way: resending cannot change it
      } else {
        throw Error("HTTP " + std::to_string(r.status) + ": " + r.body);
      }
    } catch (const std::exception& e) {
      if (!warned) log::warn(std::string("cannot deliver to the coordinator, will retry: ") + e.what());
      warned = true;
    }
    std::unique_lock lock(mutex_);
    if (done) {
      queue_.pop_front();
      backoff = std::chrono::milliseconds(100);
      if (warned) log::info("coordinator reachable again; delivering");
      warned = false;
      cv_.notify_all();
    } else {
      if (stop_) return;
      cv_.wait_for(lock, backoff, [&] { return stop_; });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
}

}  // namespace scalebench
