#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/train_kernels.cuh"

// The gradient all-reduce through the GPUs' copy engines (`allreduce: copy_engine`), for ranks on
// one node whose GPUs map each other's memory. NCCL's all-reduce kernels hold SMs for as long as it
// runs, and the backward pass beside it lost about as much time as it took (docs/train.md). Here each
// bucket is cut into one shard per rank:
//   1. every rank's copy engines write each shard of its gradients into that shard's owner;
//   2. a barrier (a one-integer ncclAllReduce), so that every owner has all its inputs;
//   3. each owner sums its shard (a 32-block kernel: the only SM time);
//   4. the copy engines write each owner's sum into every peer's gradients.
// After the last bucket one more barrier tells every rank that the sums written into it are all
// there. Each bucket has its own receive area, so nothing written in a step is read by a bucket of
// the same step, and a step's writes into a peer come after that peer's reads of the step before
// (both are on either side of that step's last barrier).
namespace scalebench::train {

class CopyEngineAllReduce {
 public:
  // Collective: every rank constructs it at once. `off`: why not, decided by the caller (then no
  // rank maps anything); also off, with the reason, when the ranks span nodes, a pair of GPUs
  // cannot map each other's memory, NCCL_P2P_DISABLE=1 asks for the host path, or any rank fails
  // to set up (then every rank is off alike). `buckets` are the all-reduce's, in elements of
  // `elem_bytes` of a `elements`-long gradient buffer.
  CopyEngineAllReduce(const MpiSession& mpi, ncclComm_t comm, long long elements, int elem_bytes,
                      const std::vector<Bucket>& buckets, std::string off);
  CopyEngineAllReduce(const CopyEngineAllReduce&) = delete;
  CopyEngineAllReduce& operator=(const CopyEngineAllReduce&) = delete;

  // The gradient buffer the net must use (null when off).
  void* buffer() const { return on() ? memory_.get() : nullptr; }
  bool on() const { return off_.empty(); }
  const std::string& off() const { return off_; }

  // Enqueues bucket b's all-reduce on `s` (steps 1-4 above); the bucket must be ready on `s`.
  void reduce(std::size_t b, DType t, cudaStream_t s);
  // The barrier after the last bucket: once it is done on `s`, every sum is in this rank's gradients.
  void finish(cudaStream_t s);

 private:
  struct Layout {
    long long begin = 0, shard = 0, count = 0;  // elements: bucket start, shard length, bucket length
    std::size_t receive = 0;                    // bytes: this bucket's receive area in the allocation
  };
  long long shard_length(const Layout& l, int r) const;
  void barrier(cudaStream_t s);
  // Runs copy(peer rank, its stream) for every peer, each on its own stream forked from `s`, so
  // that the copies to different peers run at once on different copy engines.
  template <typename F>
  void to_each_peer(cudaStream_t s, F&& copy);

  int rank_ = 0, ranks_ = 1;
  int elem_bytes_ = 0;
  ncclComm_t comm_ = nullptr;
  std::string off_;
  gpu::DeviceBuffer memory_;  // the gradients, then every bucket's receive area
  std::vector<Layout> layout_;
  std::vector<std::optional<gpu::IpcMapping>> peers_;  // every other rank's memory_, by rank
  std::vector<gpu::Stream> streams_;                   // one per peer
  gpu::Event fork_;
  std::vector<gpu::Event> joins_;
  gpu::DeviceBuffer flag_;  // the barrier's integer
};

}  // namespace scalebench::train
