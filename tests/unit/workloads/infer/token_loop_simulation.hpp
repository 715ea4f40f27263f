#pragma once
// A token loop run to its end with simulated device time, for tests of what comes after the loop
// (records, reports): an iteration takes 2 ms plus 10 us a prompt token; nothing else takes time.
#include "workloads/infer/token_loop.hpp"

namespace scalebench::test_support {

inline infer::TokenTally simulated_tally(const infer::TokenLoopSettings& s) {
  infer::TokenLoop loop(s);
  double t = 0;
  while (true) {
    const infer::TokenStep step = loop.advance(t);
    if (step.run) {
      t += 2e-3 + 1e-5 * static_cast<double>(step.run->prompt_tokens());
      loop.complete(t);
      continue;
    }
    if (step.done) return loop.tally();
    t = *step.wake_s;
  }
}

}  // namespace scalebench::test_support
