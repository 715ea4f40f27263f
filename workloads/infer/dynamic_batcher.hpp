#pragma once
// Dynamic batching as inference servers do it: waiting queries are gathered into one batch for the
// engine, sent when the batch is full or when its oldest query has waited the timeout, whichever
// comes first. Large batches keep the GPU busy; the timeout caps what a query pays for them when
// queries arrive slowly. Time is given by the caller (seconds on any steady clock), so the policy
// is the same under a real clock and in tests.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace scalebench::infer {

struct Query {
  std::uint64_t id = 0;
  int samples = 1;
  double issued_s = 0;
};

struct Batch {
  std::vector<Query> queries;
  int samples = 0;
  double formed_s = 0;
};

class DynamicBatcher {
 public:
  // A batch holds at most `max_samples` samples (a query larger than that goes alone); `timeout_s`
  // >= 0 (0: every query goes at once, in the batch of those already waiting).
  DynamicBatcher(int max_samples, double timeout_s);

  void add(const Query& q);
  // The next batch due at `now_s`: full, or its oldest query waited `timeout_s`; none otherwise.
  std::optional<Batch> take(double now_s);
  // Every waiting query, in batches, whatever their wait (the end of a run).
  std::vector<Batch> drain(double now_s);
  // When the oldest waiting query's timeout ends; none when nothing waits.
  std::optional<double> deadline() const;
  std::size_t waiting_samples() const { return waiting_samples_; }
  // Whether a full batch waits (take() would send it whatever the time).
  bool full() const { return waiting_samples_ >= static_cast<std::size_t>(max_samples_); }

 private:
  Batch form(double now_s);

  int max_samples_;
  double timeout_s_;
  std::deque<Query> waiting_;
  std::size_t waiting_samples_ = 0;
};

}  // namespace scalebench::infer
