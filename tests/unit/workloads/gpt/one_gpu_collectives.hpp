#pragma once
// The collectives of a parallel GPT step, done on one GPU for the checks that run a layout's ranks
// side by side (a thread and a stream each): the tp group's sums, all-gathers and reduce-scatters
// as NCCL would leave them (gpt_tp_gpu_test.cpp, gpt_pp_gpu_test.cpp), and a rank's shard of a
// whole tensor cut by the code the multi-GPU run uses.
#include <cuda_runtime.h>

#include <barrier>
#include <vector>

#include "workloads/gpt/gpt_parallel.hpp"
#include "workloads/gpu/cuda_handles.hpp"

namespace scalebench::test_support {

using gpt::add_inplace;
using gpt::bf16;
using gpt::copy_shard;
using gpt::Range;
using gpt::Tensor;
using gpt::TensorShard;

// The k ranks' buffers meet here: for a sum rank 0 adds the others' into its own, then every rank
// copies the sum back, as an in-place all-reduce leaves it; for an all-gather or reduce-scatter
// every rank reads the others' buffers.
struct Hub {
  explicit Hub(int k) : ranks(k), bar(k), bufs(static_cast<std::size_t>(k)) {}
  int ranks;
  std::barrier<> bar;
  std::vector<void*> bufs;
};

class OneGpuTpReduce final : public gpt::TpReduce {
 public:
  OneGpuTpReduce(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  void sum(bf16* x, long long n, cudaStream_t s) override {
    meet(x, s);
    if (rank_ == 0)
      for (int r = 1; r < hub_.ranks; ++r) add_inplace(x, static_cast<const bf16*>(hub_.bufs[r]), n, s);
    finish(x, sizeof(bf16) * static_cast<std::size_t>(n), s);
  }
  void sum(float* x, long long n, cudaStream_t s) override {
    meet(x, s);
    if (rank_ == 0) {
      std::vector<float> total(static_cast<std::size_t>(n)), part(total.size());
      CUDA_CHECK(cudaMemcpy(total.data(), x, sizeof(float) * total.size(), cudaMemcpyDeviceToHost));
      for (int r = 1; r < hub_.ranks; ++r) {
        CUDA_CHECK(cudaMemcpy(part.data(), hub_.bufs[r], sizeof(float) * part.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < part.size(); ++i) total[i] += part[i];
      }
      CUDA_CHECK(cudaMemcpy(x, total.data(), sizeof(float) * total.size(), cudaMemcpyHostToDevice));
    }
    finish(x, sizeof(float) * static_cast<std::size_t>(n), s);
  }
  void sum(bf16* base, const std::vector<Range>& ranges, cudaStream_t s) override {
    for (const Range& r : ranges) sum(base + r.begin, r.end - r.begin, s);
  }
  void all_gather(bf16* full, const bf16* shard, long long n, cudaStream_t s) override {
    meet(const_cast<bf16*>(shard), s);
    for (int r = 0; r < hub_.ranks; ++r)
      CUDA_CHECK(cudaMemcpyAsync(full + r * n, hub_.bufs[static_cast<std::size_t>(r)], sizeof(bf16) * n,
                                 cudaMemcpyDeviceToDevice, s));
    done(s);
  }
  void reduce_scatter(bf16* shard, const bf16* full, long long n, cudaStream_t s) override {
    meet(const_cast<bf16*>(full), s);
    const long long at = rank_ * n;
    CUDA_CHECK(cudaMemcpyAsync(shard, static_cast<const bf16*>(hub_.bufs[0]) + at, sizeof(bf16) * n,
                               cudaMemcpyDeviceToDevice, s));
    for (int r = 1; r < hub_.ranks; ++r)
      add_inplace(shard, static_cast<const bf16*>(hub_.bufs[static_cast<std::size_t>(r)]) + at, n, s);
    done(s);
  }

 private:
  void meet(void* x, cudaStream_t s) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    hub_.bufs[static_cast<std::size_t>(rank_)] = x;
    hub_.bar.arrive_and_wait();
  }
  void finish(void* x, std::size_t bytes, cudaStream_t s) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    hub_.bar.arrive_and_wait();
    if (rank_ != 0) CUDA_CHECK(cudaMemcpyAsync(x, hub_.bufs[0], bytes, cudaMemcpyDeviceToDevice, s));
    done(s);  // rank 0's buffer stays until every rank has its copy
  }
  // Every rank has read the others' buffers: they may change again.
  void done(cudaStream_t s) {
    CUDA_CHECK(cudaStreamSynchronize(s));
    hub_.bar.arrive_and_wait();
  }
  Hub& hub_;
  int rank_;
};

// This rank's shard of a whole tensor's host values, through copy_shard.
inline std::vector<float> shard_of(const std::vector<float>& whole_values, const Tensor& whole,
                                   const TensorShard& shard) {
  gpu::DeviceBuffer in(sizeof(float) * whole_values.size()), out(sizeof(float) * whole_values.size());
  CUDA_CHECK(cudaMemcpy(in.get(), whole_values.data(), sizeof(float) * whole_values.size(), cudaMemcpyHostToDevice));
  copy_shard(out.get(), in.get(), whole, shard, 4, nullptr);
  std::vector<float> r(static_cast<std::size_t>(shard.numel));
  CUDA_CHECK(cudaMemcpy(r.data(), out.get(), sizeof(float) * r.size(), cudaMemcpyDeviceToHost));
  return r;
}

}  // namespace scalebench::test_support
