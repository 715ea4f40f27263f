#pragma once
// A scenario run on a real engine: LoadGenLoop (loadgen_loop.hpp) on a steady clock. The calling
// thread issues: it advances the loop, starts the batches it forms on the engine, and sleeps until
// the next arrival, batch timeout or completion. One completion thread per stream waits for that
// stream's batches in order (Engine::wait_oldest) and hands each completion, with the time it was
// seen, back to the loop. A blocking wait per stream, rather than one thread polling every stream's
// event, keeps each completion's time within the wait's own wake-up (the CUDA engine's events spin
// by default where there are more cores than GPUs) whatever the other streams do, and the issuing
// thread never waits on the device.
#include <cstdint>

#include "workloads/infer/engine.hpp"
#include "workloads/infer/loadgen_loop.hpp"
#include "workloads/infer/scenario_verdict.hpp"

namespace scalebench::infer {

struct ScenarioRun {
  RunTally tally;
  std::uint64_t batches = 0, batched_samples = 0;
  std::uint64_t scheduled_queries = 0;  // server: how many the schedule held
};

// `s.streams` and `s.max_batch` must not exceed the engine's; `s.pool_samples` is set from it.
ScenarioRun run_scenario(Engine& engine, LoopSettings s);

// Samples per second of `batches` full batches spread over the engine's streams, started at once
// and waited for (warms the engine up too): what Offline sizes its query by, as LoadGen's
// offline_expected_qps.
double measure_throughput(Engine& engine, int batches);

}  // namespace scalebench::infer
