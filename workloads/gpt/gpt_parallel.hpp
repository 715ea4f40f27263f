#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

#include "workloads/gpt/gpt_kernels.cuh"
#include "workloads/gpt/parallel_plan.hpp"
#include "workloads/gpu/cuda_handles.hpp"

// The collectives of a parallel GPT step: the tensor-parallel sums inside the forward and backward
// passes, the data-parallel gradient buckets overlapped with the backward pass, and the pipeline
// stages' sends and receives.
namespace scalebench::gpt {

// The tp group's collectives, enqueued on `s` (NCCL on several GPUs; a test on one GPU moves its
// shards' buffers itself).
class TpReduce {
 public:
  virtual ~TpReduce() = default;
  // Sums a buffer over the tp ranks, in place.
  virtual void sum(bf16* x, long long n, cudaStream_t s) = 0;
  virtual void sum(float* x, long long n, cudaStream_t s) = 0;
  // Sums each of `ranges` of `base` in place (several gradient tensors in one go).
  virtual void sum(bf16* base, const std::vector<Range>& ranges, cudaStream_t s) = 0;
  // Sequence parallelism: `full` gets every rank's `n` elements of `shard`, in rank order
  // (all-gather); `shard` gets this rank's block of n elements of `full` summed over the ranks
  // (reduce-scatter).
  virtual void all_gather(bf16* full, const bf16* shard, long long n, cudaStream_t s) = 0;
  virtual void reduce_scatter(bf16* shard, const bf16* full, long long n, cudaStream_t s) = 0;
};

class NcclTpReduce final : public TpReduce {
 public:
  explicit NcclTpReduce(ncclComm_t comm) : comm_(comm) {}
  void sum(bf16* x, long long n, cudaStream_t s) override;
  void sum(float* x, long long n, cudaStream_t s) override;
  void sum(bf16* base, const std::vector<Range>& ranges, cudaStream_t s) override;
  void all_gather(bf16* full, const bf16* shard, long long n, cudaStream_t s) override;
  void reduce_scatter(bf16* shard, const bf16* full, long long n, cudaStream_t s) override;

 private:
  ncclComm_t comm_;
};

// A pipeline stage's transfers with the other stages, enqueued on `s`: NCCL send/recv over the
// stages of one dp x tp position (peer: the other stage's index); a test on one GPU copies.
struct PipeBuffer {
  bool send = true;  // false: receive into `data`
  int peer = 0;
  bf16* data = nullptr;
  long long n = 0;
};
class PipeLink {
 public:
  virtual ~PipeLink() = default;
  // One group of sends and receives (ncclGroupStart/End): they progress together, so that two
  // stages that send to each other do not both wait.
  virtual void exchange(const std::vector<PipeBuffer>& group, cudaStream_t s) = 0;
  // Sums a buffer over the stages, in place (the gradient norm's square).
  virtual void sum(float* x, long long n, cudaStream_t s) = 0;
};

class NcclPipeLink final : public PipeLink {
 public:
  explicit NcclPipeLink(ncclComm_t comm) : comm_(comm) {}
  void exchange(const std::vector<PipeBuffer>& group, cudaStream_t s) override;
  void sum(float* x, long long n, cudaStream_t s) override;

 private:
  ncclComm_t comm_;
};

// How this rank takes part in a pp x dp x tp layout (GptModel's last argument).
struct Parallel {
  Placement at;
  int zero = 0;
  bool sequence_parallel = false;  // with tp > 1: norms, residual stream and head on row shards
  bool overlap = true;
  double bucket_mb = 25;
  TpReduce* tp_reduce = nullptr;       // tp > 1
  ncclComm_t dp_comm = nullptr;        // dp > 1
  cudaStream_t comm_stream = nullptr;  // dp > 1: where the buckets travel
  PipeLink* pipe = nullptr;            // pp > 1
  // pp > 1: model chunks a rank holds (the interleaved schedule, interleaved_1f1b; 1: 1F1B), and
  // with more than one the micro-batches a step runs, which size the chunks' activation slots
  // (chunk_slots): a step of another count is an Error naming grad_accum.
  int virtual_stages = 1;
  int micro_batches = 0;
};

// Copies this rank's shard of a tensor (rows or columns by tp_plan) from its full values `full`
// into `dst` (the shard's row-major [rows, cols]); `elem_bytes` 2 or 4. Enqueued on `s`.
void copy_shard(void* dst, const void* full, const Tensor& whole, const TensorShard& shard, int elem_bytes,
                cudaStream_t s);

// The data-parallel reduction of the gradient buckets: all-reduce (average) or, with ZeRO-1,
// reduce-scatter (average) into this rank's slice of each bucket, launched on the communication
// stream once the backward pass has filled the bucket (an event on the compute stream), in the
// plan's order on every rank; then, after the optimizer, the all-gather of the parameters.
class GradSync {
 public:
  GradSync(const BucketPlan& plan, const Parallel& par, bf16* grads);
  // Block `layer` (-1: the embedding) has finished its backward on `s`: send every bucket it
  // completed (only with overlap).
  void layer_done(int layer, cudaStream_t s);
  // The backward pass is over: send what is left; the optimizer waits for the last bucket.
  void backward_done(cudaStream_t s);
  void wait(cudaStream_t s);
  // ZeRO-1: every rank's updated slices back into the whole parameter buffer (on `s`).
  void all_gather(bf16* params, cudaStream_t s);
  // Of the last step (synchronises): communication time the compute stream did not hide (from
  // the backward's end to the last bucket's) plus the parameters' all-gather.
  double exposed_ms() const;

 private:
  void launch(std::size_t bucket, cudaStream_t s);
  std::vector<GradBucket> buckets_;
  Parallel par_;
  bf16* grads_;
  std::vector<gpu::Event> ready_;
  gpu::Event backward_end_, comm_end_, gather_start_, gather_end_;
  std::size_t next_ = 0;
  bool gathered_ = false;
};

}  // namespace scalebench::gpt
