#include "workloads/infer/token_runner.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "common/error.hpp"

namespace scalebench::infer {

TokenTally run_token_scenario(TokenEngine& engine, const TokenLoopSettings& s) {
  if (s.slots > engine.slots())
    throw Error("max_batch: " + std::to_string(s.slots) + " sequences at once, more than the engine's " +
                std::to_string(engine.slots()) + " slots");
  using Clock = std::chrono::steady_clock;
  TokenLoop loop(s);
  const Clock::time_point t0 = Clock::now();
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  while (true) {
    const TokenStep step = loop.advance(now());
    if (step.run) {
      engine.run(*step.run);
      loop.complete(now());
      continue;
    }
    if (step.done) break;
    if (!step.wake_s) throw Error("token loop: nothing in flight and nothing to wait for");  // a loop bug
    std::this_thread::sleep_until(
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*step.wake_s)));
  }
  return loop.tally();
}

double measure_token_rate(TokenEngine& engine, TokenLoopSettings s, std::uint64_t queries) {
  if (queries < 1) throw Error("measure_token_rate: at least one query");
  s.scenario = Scenario::offline;
  s.offline_queries = queries;
  const TokenTally t = run_token_scenario(engine, s);
  return t.duration_s > 0 ? static_cast<double>(t.queries) / t.duration_s : 0.0;
}

}  // namespace scalebench::infer
