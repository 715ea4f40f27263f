// The coordinator's state lock, timed by call on /metrics: what an operator reads to see whose
// calls a slow heartbeat waited behind.
#include "coordinator/state_lock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"
#include "tests/unit/metrics_text.hpp"

namespace scalebench {
namespace {

using test_support::metrics_text;

TEST(StateLock, EachCallsWaitAndHoldAreCountedUnderItsName) {
  prometheus::Registry registry;
  StateLock state(registry);
  { auto held = state.lock(StateUse::finish); }
  {
    auto held = state.lock(StateUse::heartbeat);
    held.unlock();  // released early: counted once, not again at its end
  }
  const std::string text = metrics_text(registry);
  EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_count{call=\"finish\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_count{call=\"heartbeat\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scalebench_coordinator_state_wait_seconds_count{call=\"heartbeat\"} 1\n"), std::string::npos);
  // Every call's series from the start, so that rate() sees its first hold.
  EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_count{call=\"cancel\"} 0\n"), std::string::npos);
}

TEST(StateLock, ACallThatCannotHaveTheStateIsNotCountedAndOneThatWaitsIs) {
  prometheus::Registry registry;
  StateLock state(registry);
  auto held = state.lock(StateUse::submit);
  bool got = true;
  std::thread other([&] { got = state.try_lock_for(StateUse::heartbeat, std::chrono::milliseconds(5)).has_value(); });
  other.join();
  EXPECT_FALSE(got);
  EXPECT_FALSE(state.try_lock(StateUse::liveness).has_value());
  std::atomic<bool> asking{false};
  std::thread waiter([&] {
    asking = true;
    auto mine = state.lock(StateUse::records);
  });
  while (!asking) std::this_thread::yield();  // a late start of the thread is not a wait
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  held.unlock();
  waiter.join();
  const std::string text = metrics_text(registry);
  EXPECT_NE(text.find("scalebench_coordinator_state_wait_seconds_count{call=\"heartbeat\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("scalebench_coordinator_state_wait_seconds_count{call=\"liveness\"} 0\n"), std::string::npos);
  // The records call waited the 30 ms the submission held the state: past the 25 ms bucket.
  EXPECT_NE(text.find("scalebench_coordinator_state_wait_seconds_bucket{call=\"records\",le=\"0.025\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_bucket{call=\"submit\",le=\"0.025\"} 0\n"),
            std::string::npos);
}

TEST(StateLock, TheCoordinatorsCallsShowOnItsMetrics) {
  const auto dir = std::filesystem::temp_directory_path() / ("scalebench-state-lock-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    Coordinator::Options o;
    o.db_path = (dir / "c.db").string();
    Coordinator c(o);
    ASSERT_EQ(
        c.register_agent(Json{{"name", "node-1"}, {"gpus", Json::array()}, {"slots", 2}, {"capabilities", {"mpi"}}})
            .status,
        200);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(c.heartbeat("node-1", Json{{"active", Json::array()}}).status, 200);
    const std::string text = c.metrics_text();
    EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_count{call=\"heartbeat\"} 3\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("scalebench_coordinator_state_hold_seconds_count{call=\"register\"} 1\n"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace scalebench
