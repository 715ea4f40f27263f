#pragma once
// The soak's figures by window of time (a minute by default), and the comparison of its first
// minutes with its last. Measured here, printed by the program.
#include <mutex>
#include <string>
#include <vector>

namespace scalebench::load {

struct Window {
  std::vector<double> heartbeat_ms, post_ms;
  long long records = 0;      // acknowledged in this window
  long rss_kib = 0;           // the coordinator's largest resident memory sampled in it
  double cpu_s = 0;           // CPU seconds the coordinator used in it
  double own_cpu_s = 0;       // CPU seconds the soak itself (the played cluster) used in it
  double wait_s = 0;          // seconds the coordinator's threads waited for a CPU in it
  double own_wait_s = 0;      // the same for the soak's threads
  long long unreachable = 0;  // calls that found no coordinator (its restart)
  long long errors = 0;       // anything else that went wrong (refusals, bad answers)
  int left = 0, joined = 0;   // agents
};

// A span's figures, from its windows.
struct SpanFigures {
  double rss_mib = 0, heartbeat_p99_ms = 0, records_per_s = 0;
};

// The last span no more than 10% worse than the first: the soak's test of each figure. A soak looks
// for decay (memory that grows, answers that slow, throughput that falls); a last span that is
// better, as when the first minutes carried the start-up, is no failure.
struct Comparison {
  const char* name;
  double first, last;
  bool higher_is_worse;
  double change() const { return first > 0 ? (last - first) / first : 0; }
  bool holds() const { return higher_is_worse ? change() <= 0.10 : change() >= -0.10; }
};

class Windows {
 public:
  Windows(double window_s, std::size_t count);
  // Each by the seconds since the soak started: into that window (none past the last).
  void heartbeat(double at_s, double ms);
  void post(double at_s, double ms, long long records);
  void rss(double at_s, long kib);
  // CPU seconds used and seconds waited for a CPU, by the coordinator and by the soak itself.
  void usage(double at_s, double cpu_s, double wait_s, double own_cpu_s, double own_wait_s);
  void unreachable(double at_s);
  void error(double at_s, const std::string& what);
  void churn(double at_s, int left, int joined);

  double window_s() const { return window_s_; }
  std::size_t count() const { return windows_.size(); }
  Window at(std::size_t index) const;  // a copy, taken under the lock
  // The windows [first, first + n) together.
  SpanFigures span(std::size_t first, std::size_t n) const;
  long long errors() const;  // all of them, those after the end included
  std::string first_error() const;

 private:
  Window* window(double at_s);
  double window_s_;
  mutable std::mutex mutex_;
  std::vector<Window> windows_;
  long long errors_ = 0;
  std::string first_error_;
};

}  // namespace scalebench::load
