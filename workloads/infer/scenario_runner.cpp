#include "workloads/infer/scenario_runner.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "common/error.hpp"

namespace scalebench::infer {

namespace {
using Clock = std::chrono::steady_clock;

// What the issuing thread and the completion threads share, under one mutex.
struct Shared {
  std::mutex m;
  std::condition_variable issuer, completers;
  std::vector<int> pending;  // by stream: batches started on the engine and not yet waited for
  bool stop = false;
  std::exception_ptr error;
};
}  // namespace

ScenarioRun run_scenario(Engine& engine, LoopSettings s) {
  if (s.streams > engine.streams())
    throw Error("streams: " + std::to_string(s.streams) + ", more than the engine's " +
                std::to_string(engine.streams()));
  if (s.max_batch > engine.max_batch())
    throw Error("max_batch: " + std::to_string(s.max_batch) + ", more than the engine's " +
                std::to_string(engine.max_batch()));
  s.pool_samples = engine.pool_samples();
  LoadGenLoop loop(s);
  Shared sh;
  sh.pending.assign(static_cast<std::size_t>(s.streams), 0);
  const Clock::time_point t0 = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };

  std::vector<std::thread> completers;
  // Every completion thread ends, whatever ends the run.
  struct Joiner {
    Shared& sh;
    std::vector<std::thread>& threads;
    ~Joiner() {
      {
        std::lock_guard<std::mutex> l(sh.m);
        sh.stop = true;
      }
      sh.completers.notify_all();
      for (auto& t : threads) t.join();
    }
  } joiner{sh, completers};
  for (int k = 0; k < s.streams; ++k)
    completers.emplace_back([&, k] {
      std::unique_lock<std::mutex> l(sh.m);
      while (true) {
        sh.completers.wait(l, [&] { return sh.stop || sh.pending[static_cast<std::size_t>(k)] > 0; });
        if (sh.stop) return;
        l.unlock();
        try {
          engine.wait_oldest(k);
          const double at = now();
          l.lock();
          --sh.pending[static_cast<std::size_t>(k)];
          loop.complete(k, at);
        } catch (...) {
          if (!l.owns_lock()) l.lock();
          sh.error = std::current_exception();
          sh.stop = true;
          sh.completers.notify_all();
        }
        sh.issuer.notify_one();
      }
    });

  std::unique_lock<std::mutex> l(sh.m);
  while (!sh.error) {
    LoopStep step = loop.advance(now());
    if (step.done) break;
    if (!step.dispatch.empty()) {
      l.unlock();
      for (const Dispatch& d : step.dispatch) engine.enqueue(d.stream, d.samples);
      l.lock();
      for (const Dispatch& d : step.dispatch) ++sh.pending[static_cast<std::size_t>(d.stream)];
      sh.completers.notify_all();
      continue;  // more may be due by now
    }
    if (step.wake_s)
      sh.issuer.wait_until(
          l, t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*step.wake_s)));
    else
      sh.issuer.wait(l);
  }
  if (sh.error) std::rethrow_exception(sh.error);
  ScenarioRun out;
  out.tally = loop.tally();
  out.batches = loop.batches();
  out.batched_samples = loop.batched_samples();
  out.scheduled_queries = loop.scheduled_queries();
  return out;
}

double measure_throughput(Engine& engine, int batches) {
  if (batches < 1) throw Error("measure_throughput: at least one batch");
  std::vector<std::uint64_t> samples(static_cast<std::size_t>(engine.max_batch()));
  std::iota(samples.begin(), samples.end(), 0);
  for (auto& i : samples) i %= engine.pool_samples();
  std::vector<int> started(static_cast<std::size_t>(engine.streams()), 0);
  const Clock::time_point t0 = Clock::now();
  for (int b = 0; b < batches; ++b) {
    engine.enqueue(b % engine.streams(), samples);
    ++started[static_cast<std::size_t>(b % engine.streams())];
  }
  for (int k = 0; k < engine.streams(); ++k)
    for (int i = 0; i < started[static_cast<std::size_t>(k)]; ++i) engine.wait_oldest(k);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(batches) * engine.max_batch() / seconds;
}

}  // namespace scalebench::infer
