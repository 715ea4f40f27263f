#include "workloads/train/train_step.hpp"

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_nccl.hpp"
#include "workloads/gpu/graph_capture.hpp"
#include "workloads/gpu/nccl_check.hpp"

namespace scalebench::train {

StepRunner::StepRunner(const MpiSession& mpi, Net& net, const Config& cfg, const std::vector<Bucket>& buckets,
                       const std::vector<int>& launch_at, CopyEngineAllReduce& copy_engine,
                       std::function<ncclComm_t()> comm, cudaStream_t s, cudaStream_t cs, std::size_t eb)
    : mpi_(mpi),
      net_(net),
      cfg_(cfg),
      buckets_(buckets),
      launch_at_(launch_at),
      copy_engine_(copy_engine),
      comm_(std::move(comm)),
      s_(s),
      cs_(cs),
      eb_(eb),
      ready_(buckets.size()),
      nt_(gpu::nccl_type(net.compute_type())) {}

void StepRunner::step(bool allreduce, StepMarks* m) {
  if (m) mark(m->start, s_);
  net_.forward(Pass::kTrain);
  if (m) mark(m->forward_end, s_);
  std::size_t next = 0;
  net_.backward([&](int layer) {
    if (!allreduce || !cfg_.overlap) return;
    while (next < buckets_.size() && launch_at_[next] == layer) {
      launch_bucket(next, ready_[next].get(), m);
      ++next;
    }
  });
  if (m) mark(m->backward_end, s_);
  if (allreduce) {
    for (; next < buckets_.size(); ++next) launch_bucket(next, ready_[next].get(), m);
    CUDA_CHECK(cudaEventRecord(comm_done_.get(), cs_));
    CUDA_CHECK(cudaStreamWaitEvent(s_, comm_done_.get(), 0));
  }
  net_.optimizer_step(allreduce ? static_cast<float>(mpi_.size()) : 1.0f);
  if (m) mark(m->end, s_);
}

void StepRunner::allreduce_only() {
  for (std::size_t b = 0; b < buckets_.size(); ++b) launch_bucket(b, ready_[b].get(), nullptr);
  CUDA_CHECK(cudaEventRecord(comm_done_.get(), cs_));
  CUDA_CHECK(cudaStreamWaitEvent(s_, comm_done_.get(), 0));
}

void StepRunner::mark(const gpu::Event& e, cudaStream_t st) const {
  CUDA_CHECK(cudaEventRecordWithFlags(e.get(), st, capturing ? cudaEventRecordExternal : cudaEventRecordDefault));
}

void StepRunner::launch_bucket(std::size_t b, cudaEvent_t after, StepMarks* m) {
  CUDA_CHECK(cudaEventRecord(after, s_));
  if (m) mark(m->ready[b], s_);
  CUDA_CHECK(cudaStreamWaitEvent(cs_, after, 0));
  if (copy_engine_.on()) {
    copy_engine_.reduce(b, net_.compute_type(), cs_);
    if (b + 1 == buckets_.size()) copy_engine_.finish(cs_);
  } else {
    std::byte* p = static_cast<std::byte*>(net_.grads()) + static_cast<std::size_t>(buckets_[b].begin) * eb_;
    NCCL_CHECK(
        ncclAllReduce(p, p, static_cast<std::size_t>(buckets_[b].end - buckets_[b].begin), nt_, ncclSum, comm_(), cs_));
  }
  if (m) mark(m->reduced[b], cs_);
}

gpu::GraphExec capture(cudaStream_t s, const std::function<void()>& body) {
  // Each kernel keeps the priority of the stream it was captured from: without the flag the whole
  // graph runs at its launch stream's, and an all-reduce launched during the backward pass then
  // queues for SMs behind the backward kernels instead of going first.
  return gpu::capture_graph(s, body, cudaGraphInstantiateFlagUseNodePriority);
}

StepGraphs capture_steps(StepRunner& run, cudaStream_t s, bool graph, bool multi) {
  StepGraphs g;
  if (graph) {
    if (multi) g.comm.emplace(capture(s, [&] { run.step(true); }));
    g.local.emplace(capture(s, [&] { run.step(false); }));
    if (multi) g.reduce.emplace(capture(s, [&] { run.allreduce_only(); }));
  }
  return g;
}

std::vector<double> timed_steps(const MpiSession& mpi, cudaStream_t s, const compute::TimingConfig& timing,
                                std::optional<gpu::GraphExec>& g, const std::function<void()>& eager) {
  mpi.barrier();
  return compute::time_on_stream(s, timing, [&](cudaStream_t st) {
    if (g)
      CUDA_CHECK(cudaGraphLaunch(g->get(), st));
    else
      eager();
  });
}

}  // namespace scalebench::train
