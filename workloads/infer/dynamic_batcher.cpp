#include "workloads/infer/dynamic_batcher.hpp"

#include "common/error.hpp"

namespace scalebench::infer {

DynamicBatcher::DynamicBatcher(int max_samples, double timeout_s) : max_samples_(max_samples), timeout_s_(timeout_s) {
  if (max_samples < 1) throw Error("dynamic batching: max_batch must be at least 1");
  if (!(timeout_s >= 0)) throw Error("dynamic batching: batch_timeout must be 0 or more");
}

void DynamicBatcher::add(const Query& q) {
  if (q.samples < 1) throw Error("dynamic batching: query " + std::to_string(q.id) + " has no samples");
  waiting_.push_back(q);
  waiting_samples_ += static_cast<std::size_t>(q.samples);
}

std::optional<double> DynamicBatcher::deadline() const {
  if (waiting_.empty()) return std::nullopt;
  return waiting_.front().issued_s + timeout_s_;
}

Batch DynamicBatcher::form(double now_s) {
  // Queries in arrival order while they fit; the first always goes, even when larger than a batch.
  Batch b;
  b.formed_s = now_s;
  while (!waiting_.empty() && (b.queries.empty() || b.samples + waiting_.front().samples <= max_samples_)) {
    b.samples += waiting_.front().samples;
    b.queries.push_back(waiting_.front());
    waiting_.pop_front();
  }
  waiting_samples_ -= static_cast<std::size_t>(b.samples);
  return b;
}

std::optional<Batch> DynamicBatcher::take(double now_s) {
  if (waiting_.empty()) return std::nullopt;
  if (!full() && now_s < *deadline()) return std::nullopt;
  return form(now_s);
}

std::vector<Batch> DynamicBatcher::drain(double now_s) {
  std::vector<Batch> out;
  while (!waiting_.empty()) out.push_back(form(now_s));
  return out;
}

}  // namespace scalebench::infer
