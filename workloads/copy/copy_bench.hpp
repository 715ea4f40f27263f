#pragma once
#include <vector>

#include "workloads/copy/copy.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/pinned_buffer.hpp"

namespace scalebench::copy {

// Measures copy cases on the GPUs this process sees, one case at a time, as nvbandwidth does:
// per sample, a spin kernel holds every stream of the case while the warm-up copies, the start
// event, the timed copies and the end event are queued, then all are released at once, so that
// no launch overhead is timed. Measures and returns values; prints nothing.
class CopyBench {
 public:
  CopyBench(const Config& c, int gpus);
  CopyBench(const CopyBench&) = delete;
  CopyBench& operator=(const CopyBench&) = delete;

  // Warm-up sample, timed samples under the stopping rule, then the check. A case that cannot
  // run (no peer access between its GPUs) comes back skipped, one that fails (CUDA error,
  // out of memory) failed, both with the reason; neither throws.
  CaseResult run(const Case& cs);

 private:
  // Each GPU's source and destination buffers, allocated at first use and kept for the run.
  struct DeviceSlot {
    gpu::DeviceBuffer src, dst;
    int sm_count = 0;
    int blocks_per_sm = 1;
  };
  struct Lane;
  struct Sample {
    std::vector<double> seconds;  // per copy, one per lane
    bool timed_out = false;       // the spin kernel gave up before everything was queued
  };

  void measure(const Case& cs, CaseResult& r);
  DeviceSlot& slot(int device);
  void enqueue(Lane& lane, int copies);
  Sample sample(std::vector<Lane>& lanes, int iters, bool blocked, bool cover);
  void verify(std::vector<Lane>& lanes, CaseResult& r);

  Config cfg_;
  std::vector<DeviceSlot> slots_;
  gpu::PinnedBuffer latch_;  // [0]: release, [1]: a spin kernel timed out
};

}  // namespace scalebench::copy
