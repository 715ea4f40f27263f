#pragma once
// The soak's shared state and its simulated agents' threads (bench/coordinator_soak.cpp drives
// them): heartbeats at the agents' interval, records through an outbox's order and back-off, and
// the last undelivered batches sent again at the end.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/coordinator_process.hpp"
#include "bench/record_texts.hpp"
#include "bench/sim_agent.hpp"
#include "bench/soak_ledger.hpp"
#include "bench/soak_options.hpp"
#include "bench/soak_windows.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"

namespace scalebench::load {
using Clock = std::chrono::steady_clock;

// One agent of the soak and where it stands. Its heartbeats and its records come from two
// threads: the run it holds is read and changed under `mutex`.
struct SoakAgent {
  SimAgent sim;  // sim.next_seq: the records below it are acknowledged
  std::mutex mutex;
  long long sent = 0;                // the records below it were sent at least once
  bool cancel = false;               // its run is being cancelled: it ends it (finish: cancelled)
  std::atomic<bool> leaving{false};  // it stopped: no heartbeat, no record from now on
  bool main_run = false;             // it streams a run of the soak's main experiment
  std::size_t slot = 0;              // its heartbeat's place in the interval (Soak::slots)
};

// Everything the soak's threads share.
struct Soak {
  const SoakOptions& o;
  CoordinatorProcess& coordinator;
  const RecordTexts texts;
  Windows windows;
  SentLedger ledger;
  std::vector<std::unique_ptr<SoakAgent>> agents;  // sized once: [0, count) are filled
  std::atomic<std::size_t> count{0};
  // The heartbeat slots, one per agent of the cluster, spread evenly over the interval: the agent
  // in each (null: none yet). An agent that joins takes the slot of one that left, so that the
  // heartbeats stay spread as a real cluster's are, whatever the churn.
  std::vector<std::atomic<SoakAgent*>> slots;
  Clock::time_point t0, t_end;    // set before the threads start
  double duration_s = 0;          // t_end - t0: whole windows
  std::atomic<bool> stop{false};  // the soak ends early (an error in the main thread)

  Soak(const SoakOptions& options, CoordinatorProcess& c, std::size_t windows_count, std::size_t capacity)
      : o(options),
        coordinator(c),
        texts(options.gpus),
        windows(options.window_s, windows_count),
        agents(capacity),
        slots(static_cast<std::size_t>(options.agents)) {}
  double now_s() const { return std::chrono::duration<double>(Clock::now() - t0).count(); }
  bool on() const { return Clock::now() < t_end && !interrupted() && !stop; }
  // `a` into the cluster, heartbeating in `slot`.
  void add(std::unique_ptr<SoakAgent> a, std::size_t slot) {
    const std::size_t i = count.load();
    if (i == agents.size()) throw Error("more agents joined than room was made for");
    a->slot = slot;
    SoakAgent* seated = a.get();
    agents[i] = std::move(a);
    count.store(i + 1, std::memory_order_release);
    slots.at(slot).store(seated, std::memory_order_release);
  }
};

// A new agent registered with the coordinator.
std::unique_ptr<SoakAgent> join(const Soak& s, const std::string& name, bool main_run);
// Thread t of `threads`: heartbeats of its share of the slots, until the soak ends.
void heartbeat_thread(Soak& s, std::size_t t, std::size_t threads);
// Thread t of `threads`: records of its share of the agents, at its share of --record-rate.
void records_thread(Soak& s, std::size_t t, std::size_t threads);
// After the threads: each agent's unanswered last batch sent again (30 s at most), into the ledger.
void drain(Soak& s);

}  // namespace scalebench::load
