// The soak's reading of the coordinator's state-lock times (bench/state_times.cpp): a window's
// figures out of two /metrics texts, across a restart too.
#include "bench/state_times.hpp"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <limits>

#include "coordinator/state_lock.hpp"
#include "tests/unit/metrics_text.hpp"

namespace scalebench::load {
namespace {

using test_support::metrics_text;

TEST(StateTimes, AWindowIsTheDifferenceOfTwoReadings) {
  prometheus::Registry registry;
  StateLock state(registry);
  for (int i = 0; i < 4; ++i) state.lock(StateUse::heartbeat);
  const StateTimes before = parse_state_times(metrics_text(registry));
  EXPECT_EQ(before.hold.at("heartbeat").count, 4);
  for (int i = 0; i < 6; ++i) state.lock(StateUse::heartbeat);
  state.lock(StateUse::finish);
  const StateTimes window = state_times_since(parse_state_times(metrics_text(registry)), before);
  EXPECT_EQ(window.hold.at("heartbeat").count, 6);
  EXPECT_EQ(window.hold.at("finish").count, 1);
  EXPECT_EQ(window.wait.at("cancel").count, 0);
  // Holds of microseconds: all in the first buckets, none past the last bound.
  EXPECT_LE(histogram_quantile(window.hold.at("heartbeat"), 0.99), 1.0);
  EXPECT_NE(describe_state_times(window, 60).find("heartbeat wait p99 <="), std::string::npos);
}

TEST(StateTimes, ARestartCountsFromZero) {
  prometheus::Registry old_registry, new_registry;
  StateLock old_state(old_registry), new_state(new_registry);
  for (int i = 0; i < 5; ++i) old_state.lock(StateUse::records);
  new_state.lock(StateUse::records);
  const StateTimes window =
      state_times_since(parse_state_times(metrics_text(new_registry)), parse_state_times(metrics_text(old_registry)));
  EXPECT_EQ(window.hold.at("records").count, 1);
}

TEST(StateTimes, QuantilesAreBucketBounds) {
  LockHistogram h{100, 0.2, {{0.001, 90}, {0.01, 99}, {0.1, 100}, {std::numeric_limits<double>::infinity(), 100}}};
  EXPECT_DOUBLE_EQ(histogram_quantile(h, 0.5), 0.001);
  EXPECT_DOUBLE_EQ(histogram_quantile(h, 0.99), 0.01);
  EXPECT_DOUBLE_EQ(histogram_quantile(h, 1.0), 0.1);
  EXPECT_EQ(histogram_quantile(LockHistogram{}, 0.99), 0);
  EXPECT_TRUE(parse_state_times("# nothing here\nother_metric 1\n").hold.empty());
}

}  // namespace
}  // namespace scalebench::load
