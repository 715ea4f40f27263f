// What the load bench and the soak read of a process from /proc: the run-queue wait tells a reply
// that waited for its thread to be scheduled from one the coordinator was slow to make.
#include "bench/process_probe.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

namespace scalebench::load {
namespace {

// Two threads spinning on the first CPU this process may use, so that each waits for it about
// half the time, until stop().
class BusyOnOneCpu {
 public:
  BusyOnOneCpu() {
    cpu_set_t one;
    CPU_ZERO(&one);
    sched_getaffinity(0, sizeof one, &one);
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &one)) ++first;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    for (int i = 0; i < 2; ++i)
      threads_.emplace_back([this, one] {
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~BusyOnOneCpu() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Two busy threads on one CPU for 300 ms: each waits about half the time for it, so the
// process's run-queue wait grows by well over 50 ms; CPU time alone would not show it. (Only live
// threads count: the soak's threads live as long as it does.)
TEST(ProcessProbe, ThreadsSharingACpuShowTheirWait) {
  const double before = run_wait_seconds(getpid());
  if (before < 0) GTEST_SKIP() << "this kernel keeps no /proc/PID/task/*/schedstat (CONFIG_SCHED_INFO)";
  BusyOnOneCpu busy;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double after = run_wait_seconds(getpid());  // while they run: an ended thread's file is gone
  busy.stop();
  EXPECT_GT(after - before, 0.05);
}

// Usage since the last reading: of the same process, what it grew by; of another (a restarted
// coordinator), all of it; of one /proc no longer has, nothing.
TEST(ProcessProbe, UsageCountsFromTheLastReadingOfTheSameProcess) {
  UsageReading last;
  const Usage all = usage_since(&last, getpid());
  ASSERT_GT(all.cpu_s, 0.0);
  EXPECT_EQ(last.pid, getpid());
  // 100 ms of this process's own CPU time, however busy the machine (a wall-clock spin on a loaded
  // 2-core runner got 50 ms of it).
  const std::clock_t until = std::clock() + CLOCKS_PER_SEC / 10;
  while (std::clock() < until) {
  }
  const Usage grown = usage_since(&last, getpid());
  EXPECT_GT(grown.cpu_s, 0.05);
  UsageReading other{getpid() + 1, 1e9, {}};
  // Another process's reading: counted from the start, so at least what the last 100 ms added.
  EXPECT_GE(usage_since(&other, getpid()).cpu_s, grown.cpu_s);
  const Usage gone = usage_since(&last, 0x3fffffff);
  EXPECT_EQ(gone.cpu_s, 0.0);
  EXPECT_EQ(gone.wait_s, 0.0);
}

// Threads that waited for their CPU and then ended between two readings take nothing off the
// wait: the soak read a coordinator's wait over a window as negative after its start-up threads
// ended, when the wait was the live threads' sum at each end.
TEST(ProcessProbe, AThreadThatEndsTakesNothingOffTheWait) {
  if (run_wait_seconds(getpid()) < 0) GTEST_SKIP() << "this kernel keeps no /proc/PID/task/*/schedstat";
  BusyOnOneCpu busy;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  UsageReading last = read_usage(getpid());  // the two threads' waits (well over 50 ms) among them
  busy.stop();
  EXPECT_GE(usage_since(&last, getpid()).wait_s, 0.0);
}

TEST(ProcessProbe, AnEndedProcessIsUnknown) {
  EXPECT_LT(run_wait_seconds(0x3fffffff), 0.0);
  EXPECT_LT(cpu_seconds(0x3fffffff), 0.0);
  EXPECT_LT(rss_kib(0x3fffffff), 0);
}

}  // namespace
}  // namespace scalebench::load
