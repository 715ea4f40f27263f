#include "workloads/gpt/gpt_parallel.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "workloads/gpu/nccl_check.hpp"

namespace scalebench::gpt {

void NcclTpReduce::sum(bf16* x, long long n, cudaStream_t s) {
  NCCL_CHECK(ncclAllReduce(x, x, static_cast<std::size_t>(n), ncclBfloat16, ncclSum, comm_, s));
}

void NcclTpReduce::sum(float* x, long long n, cudaStream_t s) {
  NCCL_CHECK(ncclAllReduce(x, x, static_cast<std::size_t>(n), ncclFloat32, ncclSum, comm_, s));
}

void NcclTpReduce::sum(bf16* base, const std::vector<Range>& ranges, cudaStream_t s) {
  NCCL_CHECK(ncclGroupStart());
  for (const Range& r : ranges)
    NCCL_CHECK(ncclAllReduce(base + r.begin, base + r.begin, static_cast<std::size_t>(r.end - r.begin), ncclBfloat16,
                             ncclSum, comm_, s));
  NCCL_CHECK(ncclGroupEnd());
}

void NcclTpReduce::all_gather(bf16* full, const bf16* shard, long long n, cudaStream_t s) {
  NCCL_CHECK(ncclAllGather(shard, full, static_cast<std::size_t>(n), ncclBfloat16, comm_, s));
}

void NcclTpReduce::reduce_scatter(bf16* shard, const bf16* full, long long n, cudaStream_t s) {
  NCCL_CHECK(ncclReduceScatter(full, shard, static_cast<std::size_t>(n), ncclBfloat16, ncclSum, comm_, s));
}

void NcclPipeLink::exchange(const std::vector<PipeBuffer>& group, cudaStream_t s) {
  NCCL_CHECK(ncclGroupStart());
  for (const PipeBuffer& b : group) {
    if (b.send)
      NCCL_CHECK(ncclSend(b.data, static_cast<std::size_t>(b.n), ncclBfloat16, b.peer, comm_, s));
    else
      NCCL_CHECK(ncclRecv(b.data, static_cast<std::size_t>(b.n), ncclBfloat16, b.peer, comm_, s));
  }
  NCCL_CHECK(ncclGroupEnd());
}

void NcclPipeLink::sum(float* x, long long n, cudaStream_t s) {
  NCCL_CHECK(ncclAllReduce(x, x, static_cast<std::size_t>(n), ncclFloat32, ncclSum, comm_, s));
}

void copy_shard(void* dst, const void* full, const Tensor& whole, const TensorShard& shard, int elem_bytes,
                cudaStream_t s) {
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(full);
  const std::size_t eb = static_cast<std::size_t>(elem_bytes);
  if (shard.split == Split::kReplicated) {
    CUDA_CHECK(cudaMemcpyAsync(out, in, eb * static_cast<std::size_t>(whole.numel()), cudaMemcpyDeviceToDevice, s));
    return;
  }
  if (shard.split == Split::kRows) {
    for (const Range& r : shard.ranges) {
      const std::size_t bytes = eb * static_cast<std::size_t>((r.end - r.begin) * whole.cols);
      CUDA_CHECK(cudaMemcpyAsync(out, in + eb * static_cast<std::size_t>(r.begin * whole.cols), bytes,
                                 cudaMemcpyDeviceToDevice, s));
      out += bytes;
    }
    return;
  }
  long long width = 0;
  for (const Range& r : shard.ranges) width += r.end - r.begin;
  long long at = 0;
  for (const Range& r : shard.ranges) {
    CUDA_CHECK(cudaMemcpy2DAsync(out + eb * static_cast<std::size_t>(at), eb * static_cast<std::size_t>(width),
                                 in + eb * static_cast<std::size_t>(r.begin), eb * static_cast<std::size_t>(whole.cols),
                                 eb * static_cast<std::size_t>(r.end - r.begin), static_cast<std::size_t>(whole.rows),
                                 cudaMemcpyDeviceToDevice, s));
    at += r.end - r.begin;
  }
}

GradSync::GradSync(const BucketPlan& plan, const Parallel& par, bf16* grads)
    : buckets_(plan.buckets), par_(par), grads_(grads), ready_(plan.buckets.size()) {
  if (!par.dp_comm || !par.comm_stream) throw Error("dp: the gradient reduction needs a communicator and a stream");
}

void GradSync::launch(std::size_t k, cudaStream_t s) {
  const GradBucket& b = buckets_[k];
  CUDA_CHECK(cudaEventRecord(ready_[k].get(), s));
  CUDA_CHECK(cudaStreamWaitEvent(par_.comm_stream, ready_[k].get(), 0));
  const long long n = b.end - b.begin;
  if (par_.zero == 1) {
    // In place: NCCL leaves rank r's slice at grads + begin + r x per.
    const long long per = n / par_.at.dp;
    NCCL_CHECK(ncclReduceScatter(grads_ + b.begin, grads_ + b.begin + par_.at.dp_rank * per,
                                 static_cast<std::size_t>(per), ncclBfloat16, ncclAvg, par_.dp_comm, par_.comm_stream));
  } else {
    NCCL_CHECK(ncclAllReduce(grads_ + b.begin, grads_ + b.begin, static_cast<std::size_t>(n), ncclBfloat16, ncclAvg,
                             par_.dp_comm, par_.comm_stream));
  }
}

void GradSync::layer_done(int layer, cudaStream_t s) {
  if (!par_.overlap) return;
  while (next_ < buckets_.size() && buckets_[next_].ready_after >= layer) launch(next_++, s);
}

void GradSync::backward_done(cudaStream_t s) {
  CUDA_CHECK(cudaEventRecord(backward_end_.get(), s));
  while (next_ < buckets_.size()) launch(next_++, s);
  next_ = 0;
  CUDA_CHECK(cudaEventRecord(comm_end_.get(), par_.comm_stream));
  gathered_ = false;
}

void GradSync::wait(cudaStream_t s) { CUDA_CHECK(cudaStreamWaitEvent(s, comm_end_.get(), 0)); }

void GradSync::all_gather(bf16* params, cudaStream_t s) {
  CUDA_CHECK(cudaEventRecord(gather_start_.get(), s));
  NCCL_CHECK(ncclGroupStart());
  for (const GradBucket& b : buckets_) {
    const long long per = (b.end - b.begin) / par_.at.dp;
    NCCL_CHECK(ncclAllGather(params + b.begin + par_.at.dp_rank * per, params + b.begin, static_cast<std::size_t>(per),
                             ncclBfloat16, par_.dp_comm, s));
  }
  NCCL_CHECK(ncclGroupEnd());
  CUDA_CHECK(cudaEventRecord(gather_end_.get(), s));
  gathered_ = true;
}

double GradSync::exposed_ms() const {
  CUDA_CHECK(cudaEventSynchronize(comm_end_.get()));
  float tail = 0;
  CUDA_CHECK(cudaEventElapsedTime(&tail, backward_end_.get(), comm_end_.get()));
  double out = std::max(0.f, tail);
  if (gathered_) {
    CUDA_CHECK(cudaEventSynchronize(gather_end_.get()));
    float g = 0;
    CUDA_CHECK(cudaEventElapsedTime(&g, gather_start_.get(), gather_end_.get()));
    out += g;
  }
  return out;
}

}  // namespace scalebench::gpt
