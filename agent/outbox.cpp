#include "agent/outbox.hpp"

#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"

// Why the outbox is shaped this way (docs/api.md, "The outbox"):
// - One thread sends one request at a time, oldest first: a run's records reach the coordinator
//   before its finish, and resending is safe because the coordinator ignores an entry whose
//   (run, attempt, seq) it already has, so no answer (a timeout) can be retried without doubling.
// - Retried without limit, backing off to 2 s: a coordinator restart must lose nothing, while a
//   4xx is settled, since a resend cannot change it.
// - Consecutive record posts of one run and attempt go as one request (up to 500 records, 4 MiB):
//   a request per record costs the coordinator more than storing it. A refused batch is resent
//   entry by entry, so that one bad record loses only itself.
// - The journal is written under the queue's lock in post(), before the message can be sent, so
//   the file's order is the queue's and its delivered counts stay true.
namespace scalebench {

Outbox::Outbox(const HttpClient& client, Delivered on_delivered, std::unique_ptr<OutboxJournal> journal)
    : client_(client), on_delivered_(std::move(on_delivered)), journal_(std::move(journal)) {
  if (journal_)
    for (const auto& m : journal_->undelivered()) queue_.push_back(m);
  thread_ = std::thread([this] { loop(); });
}

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
    if (journal_) {
      try {
        journal_->append(path, body);
      } catch (const std::exception& e) {
        // A journal that missed a message would replay the wrong ones: give it up; messages
        // still go out from memory.
        log::warn(std::string(e.what()) + "; the journal is off, messages are kept in memory only");
        try {
          journal_->clear();
        } catch (const std::exception&) {
        }
        journal_.reset();
      }
    }
    queue_.emplace_back(std::move(path), std::move(body));
  }
  cv_.notify_all();
}

std::size_t Outbox::pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::vector<Outbox::Message> Outbox::queued() const {
  std::lock_guard lock(mutex_);
  return {queue_.begin(), queue_.end()};
}

bool Outbox::drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return queue_.empty(); });
}

namespace {
// Consecutive record posts of one run and attempt go out as one request of up to this many
// records: at thousands of records a second, a request per record would cost the coordinator
// more than storing them.
constexpr std::size_t kMaxBatchRecords = 500;
// ... and of at most this many bytes: the coordinator refuses a request over 8 MiB by closing
// the connection, which looks like a network failure, so such a batch would be retried forever.
// (A single record is at most 4 MiB: run_supervisor's line limit.)
constexpr std::size_t kMaxBatchBytes = 4u << 20;
bool is_records_path(const std::string& path) {
  return path.size() > 8 && path.compare(path.size() - 8, 8, "/records") == 0;
}
}  // namespace

void Outbox::loop() {
  std::chrono::milliseconds backoff(100);
  bool warned = false;
  std::size_t unbatched = 0;  // entries to send one by one: a rejected batch is retried so
  for (;;) {
    std::string path;
    Json body;
    std::size_t taken = 1;  // queue entries this request carries
    // The front entries are copied under the lock and sent without it: post() goes on meanwhile,
    // and they leave the queue only once the coordinator has them.
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping with nothing left
      path = queue_.front().first;
      body = queue_.front().second;
      if (unbatched > 0) {
        --unbatched;
      } else if (is_records_path(path) && body.contains("records") && body["records"].is_array()) {
        std::size_t bytes = body.dump().size();
        while (taken < queue_.size() && body["records"].size() < kMaxBatchRecords) {
          const auto& [next_path, next] = queue_[taken];
          if (next_path != path || next.value("attempt", -1) != body.value("attempt", -1) ||
              !next.contains("records") || !next["records"].is_array())
            break;
          const std::size_t more = next["records"].dump().size();
          if (bytes + more > kMaxBatchBytes) break;
          bytes += more;
          for (const auto& r : next["records"]) body["records"].push_back(r);
          ++taken;
        }
      }
    }
    bool done = false;
    try {
      HttpResponse r = client_.request("POST", path, body.dump());
      if (r.status >= 200 && r.status < 300) {
        done = true;
      } else if (r.status >= 400 && r.status < 500 && taken > 1) {
        // One bad record fails the batch: resend its entries singly, so only that one is lost.
        unbatched = taken;
        continue;
      } else if (r.status >= 400 && r.status < 500) {
        log::error("coordinator rejected " + path + " (HTTP " + std::to_string(r.status) + "): " + r.body);
        done = true;  // settled either way: resending cannot change it
      } else {
        throw Error("HTTP " + std::to_string(r.status) + ": " + r.body);
      }
    } catch (const std::exception& e) {
      if (!warned) log::warn(std::string("cannot deliver to the coordinator, will retry: ") + e.what());
      warned = true;
    }
    // The callbacks run without the queue's lock, so that one taking a lock of its own (the
    // agent's) cannot deadlock with a post() made under that lock.
    if (done) {
      std::vector<std::pair<std::string, Json>> delivered;
      {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < taken; ++i) delivered.push_back(queue_[i]);
      }
      for (const auto& [p, b] : delivered) on_delivered_(p, b);
    }
    std::unique_lock lock(mutex_);
    if (done) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
      if (journal_) {
        try {
          if (queue_.empty())  // nothing left to replay: the file starts again empty
            journal_->clear();
          else
            journal_->delivered(taken);
        } catch (const std::exception& e) {
          log::warn(e.what());
        }
      }
      backoff = std::chrono::milliseconds(100);
      if (warned) log::info("coordinator reachable again; delivering");
      warned = false;
      cv_.notify_all();
    } else {
      if (stop_) return;  // what was not delivered waits in the journal (when on) for the next start
      cv_.wait_for(lock, backoff, [&] { return stop_; });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
}

}  // namespace scalebench
