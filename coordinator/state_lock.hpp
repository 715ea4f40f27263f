#pragma once
// The coordinator's state lock, timed: how long each kind of call waited for the state and then
// held it, as histograms on /metrics. A heartbeat's latency beyond its own work is its wait for
// this lock; the hold times say whose call it waited behind (a change that writes the store holds
// the state while SQLite gives it its write lock).
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <chrono>
#include <mutex>
#include <optional>

namespace scalebench {

// Every call that takes the state, one label value each.
enum class StateUse {
  heartbeat,
  register_agent,
  records,
  finish,
  submit,
  cancel,
  liveness,
  save_last_seen,
  list_agents,
  prediction,
  metrics,
  cluster_shape,
  count_
};
const char* state_use_name(StateUse use);

class StateLock {
  struct Timers {
    prometheus::Histogram* wait;
    prometheus::Histogram* hold;
  };

 public:
  // Registers scalebench_coordinator_state_wait_seconds and ..._hold_seconds in `registry`.
  explicit StateLock(prometheus::Registry& registry);

  // The state held by one call; its hold time is observed when it is released.
  class Guard {
   public:
    Guard(Guard&& other) noexcept;
    Guard& operator=(Guard&&) = delete;
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard() { unlock(); }
    // Releases the state before the guard's end (a call's work that needs it no longer).
    void unlock();

   private:
    friend class StateLock;
    Guard(std::timed_mutex& mutex, const Timers& timers, std::chrono::steady_clock::time_point asked);
    std::timed_mutex* mutex_;
    const Timers* timers_;
    std::chrono::steady_clock::time_point taken_;
  };

  Guard lock(StateUse use);
  // The state within `wait`, or nullopt (a heartbeat then answers busy).
  std::optional<Guard> try_lock_for(StateUse use, std::chrono::milliseconds wait);
  // The state if it is free now, or nullopt.
  std::optional<Guard> try_lock(StateUse use);

 private:
  std::timed_mutex mutex_;
  std::array<Timers, static_cast<std::size_t>(StateUse::count_)> timers_{};
};

}  // namespace scalebench
