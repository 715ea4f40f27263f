#include "coordinator/state_lock.hpp"

#include <utility>

namespace scalebench {

namespace {
double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// From 50 us (a heartbeat's usual hold) to a second (a slice of a large cancel).
prometheus::Histogram::BucketBoundaries lock_buckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
}
}  // namespace

const char* state_use_name(StateUse use) {
  switch (use) {
    case StateUse::heartbeat:
      return "heartbeat";
    case StateUse::register_agent:
      return "register";
    case StateUse::records:
      return "records";
    case StateUse::finish:
      return "finish";
    case StateUse::submit:
      return "submit";
    case StateUse::cancel:
      return "cancel";
    case StateUse::liveness:
      return "liveness";
    case StateUse::save_last_seen:
      return "save_last_seen";
    case StateUse::list_agents:
      return "list_agents";
    case StateUse::prediction:
      return "prediction";
    case StateUse::metrics:
      return "metrics";
    case StateUse::cluster_shape:
      return "cluster_shape";
    case StateUse::count_:
      break;
  }
  return "unknown";
}

StateLock::StateLock(prometheus::Registry& registry) {
  auto& wait = prometheus::BuildHistogram()
                   .Name("scalebench_coordinator_state_wait_seconds")
                   .Help("Seconds a call waited for the coordinator's state, by call (busy heartbeats not counted)")
                   .Register(registry);
  auto& hold = prometheus::BuildHistogram()
                   .Name("scalebench_coordinator_state_hold_seconds")
                   .Help("Seconds a call held the coordinator's state, by call")
                   .Register(registry);
  for (std::size_t i = 0; i < timers_.size(); ++i) {
    const prometheus::Labels labels{{"call", state_use_name(static_cast<StateUse>(i))}};
    timers_[i] = {&wait.Add(labels, lock_buckets()), &hold.Add(labels, lock_buckets())};
  }
}

StateLock::Guard::Guard(std::timed_mutex& mutex, const Timers& timers, std::chrono::steady_clock::time_point asked)
    : mutex_(&mutex), timers_(&timers), taken_(std::chrono::steady_clock::now()) {
  timers_->wait->Observe(seconds_between(asked, taken_));
}

StateLock::Guard::Guard(Guard&& other) noexcept
    : mutex_(std::exchange(other.mutex_, nullptr)), timers_(other.timers_), taken_(other.taken_) {}

void StateLock::Guard::unlock() {
  if (!mutex_) return;
  const auto released = std::chrono::steady_clock::now();
  std::exchange(mutex_, nullptr)->unlock();
  timers_->hold->Observe(seconds_between(taken_, released));
}

StateLock::Guard StateLock::lock(StateUse use) {
  const auto asked = std::chrono::steady_clock::now();
  mutex_.lock();
  return Guard(mutex_, timers_[static_cast<std::size_t>(use)], asked);
}

std::optional<StateLock::Guard> StateLock::try_lock_for(StateUse use, std::chrono::milliseconds wait) {
  const auto asked = std::chrono::steady_clock::now();
  if (!mutex_.try_lock_for(wait)) return std::nullopt;
  return Guard(mutex_, timers_[static_cast<std::size_t>(use)], asked);
}

std::optional<StateLock::Guard> StateLock::try_lock(StateUse use) {
  const auto asked = std::chrono::steady_clock::now();
  if (!mutex_.try_lock()) return std::nullopt;
  return Guard(mutex_, timers_[static_cast<std::size_t>(use)], asked);
}

}  // namespace scalebench
