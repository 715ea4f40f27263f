#pragma once
#include <nccl.h>

#include <functional>
#include <optional>
#include <vector>

#include "workloads/compute/gpu_timer.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/copy_engine_allreduce.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/train_config.hpp"

// The data-parallel training step that TrainBench measures, and how it is captured and timed.
// Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// The whole of `body`'s work on `s` (and streams it forks to) as one graph.
gpu::GraphExec capture(cudaStream_t s, const std::function<void()>& body);

// Events marking one step (TrainBench::train with cfg.timeline).
struct StepMarks {
  explicit StepMarks(std::size_t buckets) : ready(buckets), reduced(buckets) {}
  gpu::Event start, forward_end, backward_end, end;
  std::vector<gpu::Event> ready, reduced;
};

// One training step as train() runs and captures it: forward, backward with each bucket's
// all-reduce launched on the communication stream once its last gradient is enqueued (overlap)
// or all after the backward pass, the optimizer after every bucket.
class StepRunner {
 public:
  StepRunner(const MpiSession& mpi, Net& net, const Config& cfg, const std::vector<Bucket>& buckets,
             const std::vector<int>& launch_at, CopyEngineAllReduce& copy_engine, std::function<ncclComm_t()> comm,
             cudaStream_t s, cudaStream_t cs, std::size_t eb);

  // `m`: the step's marks for the timeline (cfg.timeline): its start, the ends of the forward and
  // backward passes, each bucket's gradients ready and all-reduced, its end.
  void step(bool allreduce, StepMarks* m = nullptr);
  void allreduce_only();

  // In a captured step the marks are external event nodes, so that the graph's replay records them.
  bool capturing = false;

 private:
  void mark(const gpu::Event& e, cudaStream_t st) const;
  void launch_bucket(std::size_t b, cudaEvent_t after, StepMarks* m);

  const MpiSession& mpi_;
  Net& net_;
  const Config& cfg_;
  const std::vector<Bucket>& buckets_;
  const std::vector<int>& launch_at_;
  CopyEngineAllReduce& copy_engine_;
  std::function<ncclComm_t()> comm_;
  cudaStream_t s_, cs_;
  std::size_t eb_;
  std::vector<gpu::Event> ready_;
  gpu::Event comm_done_;
  ncclDataType_t nt_;
};

// The step with all-reduce (several ranks), without, and the all-reduce alone, each as a graph
// (cfg.graph) or none (eager).
struct StepGraphs {
  std::optional<gpu::GraphExec> comm, local, reduce;
};

StepGraphs capture_steps(StepRunner& run, cudaStream_t s, bool graph, bool multi);

// Seconds per step of the graph `g`, or of `eager` without one, every rank starting together.
std::vector<double> timed_steps(const MpiSession& mpi, cudaStream_t s, const compute::TimingConfig& timing,
                                std::optional<gpu::GraphExec>& g, const std::function<void()>& eager);

}  // namespace scalebench::train
