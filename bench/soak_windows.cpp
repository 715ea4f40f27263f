#include "bench/soak_windows.hpp"

#include <algorithm>

#include "bench/process_probe.hpp"

namespace scalebench::load {

Windows::Windows(double window_s, std::size_t count) : window_s_(window_s), windows_(count) {}

Window* Windows::window(double at_s) {
  const auto i = static_cast<std::size_t>(std::max(0.0, at_s / window_s_));
  // Past the end (the last batches sent again after it): in no window, or the last one's
  // records/s would count them.
  return i < windows_.size() ? &windows_[i] : nullptr;
}

void Windows::heartbeat(double at_s, double ms) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) w->heartbeat_ms.push_back(ms);
}

void Windows::post(double at_s, double ms, long long records) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) {
    w->post_ms.push_back(ms);
    w->records += records;
  }
}

void Windows::rss(double at_s, long kib) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) w->rss_kib = std::max(w->rss_kib, kib);
}

void Windows::usage(double at_s, double cpu_s, double wait_s, double own_cpu_s, double own_wait_s) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) {
    w->cpu_s += cpu_s, w->wait_s += wait_s;
    w->own_cpu_s += own_cpu_s, w->own_wait_s += own_wait_s;
  }
}

void Windows::unreachable(double at_s) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) ++w->unreachable;
}

void Windows::error(double at_s, const std::string& what) {
  std::lock_guard lock(mutex_);
  ++errors_;  // after the end too: the verdict counts every error
  if (auto* w = window(at_s)) ++w->errors;
  if (first_error_.empty()) first_error_ = what;
}

void Windows::churn(double at_s, int left, int joined) {
  std::lock_guard lock(mutex_);
  if (auto* w = window(at_s)) {
    w->left += left;
    w->joined += joined;
  }
}

Window Windows::at(std::size_t index) const {
  std::lock_guard lock(mutex_);
  return windows_.at(index);
}

SpanFigures Windows::span(std::size_t first, std::size_t n) const {
  std::lock_guard lock(mutex_);
  std::vector<double> heartbeats;
  long long records = 0;
  long rss = 0;
  for (std::size_t i = first; i < first + n && i < windows_.size(); ++i) {
    const auto& w = windows_[i];
    heartbeats.insert(heartbeats.end(), w.heartbeat_ms.begin(), w.heartbeat_ms.end());
    records += w.records;
    rss = std::max(rss, w.rss_kib);
  }
  return {static_cast<double>(rss) / 1024.0, percentile(heartbeats, 0.99),
          static_cast<double>(records) / (static_cast<double>(n) * window_s_)};
}

long long Windows::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

std::string Windows::first_error() const {
  std::lock_guard lock(mutex_);
  return first_error_;
}

}  // namespace scalebench::load
