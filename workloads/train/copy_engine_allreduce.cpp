#include "workloads/train/copy_engine_allreduce.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/nccl_check.hpp"

namespace scalebench::train {

namespace {
constexpr std::size_t kAlign = 256;  // every receive area starts here, so that the sum kernel reads 16 bytes at once
std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// This rank's reason not to (or empty): the checks that need no other rank's answer.
std::string local_reason(const MpiSession& mpi) {
  if (mpi.local_size() != mpi.size()) return "the ranks span more than one node";
  if (mpi.size() > kMaxShardSources)
    return std::to_string(mpi.size()) + " ranks; the copy-engine all-reduce sums at most " +
           std::to_string(kMaxShardSources);
  if (const char* p2p = std::getenv("NCCL_P2P_DISABLE"); p2p && std::string(p2p) == "1")
    return "NCCL_P2P_DISABLE=1: the gradients must go through host memory";
  return "";
}
}  // namespace

CopyEngineAllReduce::CopyEngineAllReduce(const MpiSession& mpi, ncclComm_t comm, long long elements, int elem_bytes,
                                         const std::vector<Bucket>& buckets, std::string off)
    : rank_(mpi.rank()), ranks_(mpi.size()), elem_bytes_(elem_bytes), comm_(comm), off_(std::move(off)) {
  if (!off_.empty()) return;
  // Every rank decides on the same answers: one that went its own way would leave the others
  // waiting in a barrier it never joins.
  off_ = mpi.first_problem(local_reason(mpi));
  if (!off_.empty()) return;
  const auto eb = static_cast<std::size_t>(elem_bytes);
  std::size_t bytes = round_up(static_cast<std::size_t>(elements) * eb, kAlign);
  for (const Bucket& b : buckets) {
    Layout l;
    l.begin = b.begin;
    l.count = b.end - b.begin;
    // Shards of whole 16-byte vectors, so that every owner's slice of the receive area is aligned.
    const long long per_vector = static_cast<long long>(16 / eb);
    l.shard = (l.count + ranks_ - 1) / ranks_;
    l.shard = (l.shard + per_vector - 1) / per_vector * per_vector;
    l.receive = bytes;
    bytes += round_up(static_cast<std::size_t>(l.shard) * eb * static_cast<std::size_t>(ranks_), kAlign);
    layout_.push_back(l);
  }
  std::string error, handle;  // this rank's IPC handle, as bytes (all_gather moves them unchanged)
  int device = 0;
  try {
    CUDA_CHECK(cudaGetDevice(&device));
    memory_ = gpu::DeviceBuffer(bytes);
    CUDA_CHECK(cudaMemset(memory_.get(), 0, bytes));
    cudaIpcMemHandle_t h{};
    CUDA_CHECK(cudaIpcGetMemHandle(&h, memory_.get()));
    handle.assign(h.reserved, sizeof h.reserved);
  } catch (const std::exception& e) {
    error = e.what();
  }
  char bus[32] = {};
  if (error.empty() && cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess)
    error = std::string("cudaDeviceGetPCIBusId: ") + cudaGetErrorString(cudaGetLastError());
  const std::vector<std::string> handles = mpi.all_gather(handle);
  const std::vector<std::string> buses = mpi.all_gather(bus);
  // A rank without memory or a handle has none to map: every rank stops here.
  off_ = mpi.first_problem(error);
  if (!off_.empty()) {
    memory_ = gpu::DeviceBuffer();
    return;
  }
  // Map every peer's memory; any rank's failure turns every rank off.
  peers_.resize(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_ && error.empty(); ++r) {  // error: from mapping a peer, from here on
    if (r == rank_) continue;
    try {
      int peer_device = -1, can = 0;
      CUDA_CHECK(cudaDeviceGetByPCIBusId(&peer_device, buses[static_cast<std::size_t>(r)].c_str()));
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer_device));
      if (!can) {
        error = "GPU " + std::string(bus) + " cannot map the memory of rank " + std::to_string(r) + "'s GPU " +
                buses[static_cast<std::size_t>(r)];
        break;
      }
      cudaIpcMemHandle_t h{};
      std::memcpy(h.reserved, handles[static_cast<std::size_t>(r)].data(), sizeof h.reserved);
      peers_[static_cast<std::size_t>(r)].emplace(h);
      streams_.emplace_back();
      joins_.emplace_back();
    } catch (const std::exception& e) {
      error = "mapping rank " + std::to_string(r) + "'s gradients: " + e.what();
    }
  }
  if (error.empty()) {
    try {
      flag_ = gpu::DeviceBuffer(sizeof(int));
      CUDA_CHECK(cudaMemset(flag_.get(), 0, sizeof(int)));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  off_ = mpi.first_problem(error);
  if (!off_.empty()) {
    peers_.clear();
    memory_ = gpu::DeviceBuffer();
  }
}

long long CopyEngineAllReduce::shard_length(const Layout& l, int r) const {
  return std::clamp(l.count - static_cast<long long>(r) * l.shard, 0LL, l.shard);
}

void CopyEngineAllReduce::barrier(cudaStream_t s) {
  // A sum of zeros: what matters is that no rank's copy of it ends before every rank has started it.
  NCCL_CHECK(ncclAllReduce(flag_.get(), flag_.get(), 1, ncclInt32, ncclSum, comm_, s));
}

template <typename F>
void CopyEngineAllReduce::to_each_peer(cudaStream_t s, F&& copy) {
  CUDA_CHECK(cudaEventRecord(fork_.get(), s));
  std::size_t k = 0;
  for (int r = 0; r < ranks_; ++r) {
    if (r == rank_) continue;
    cudaStream_t ps = streams_[k].get();
    CUDA_CHECK(cudaStreamWaitEvent(ps, fork_.get(), 0));
    copy(r, ps);
    CUDA_CHECK(cudaEventRecord(joins_[k].get(), ps));
    CUDA_CHECK(cudaStreamWaitEvent(s, joins_[k].get(), 0));
    ++k;
  }
}

void CopyEngineAllReduce::reduce(std::size_t b, DType t, cudaStream_t s) {
  const Layout& l = layout_.at(b);
  const auto eb = static_cast<std::size_t>(elem_bytes_);
  std::byte* grads = memory_.get();
  auto at = [&](long long element) { return static_cast<std::size_t>(element) * eb; };
  // 1. Each peer's shard of this bucket into that peer's receive area, in this rank's slot.
  to_each_peer(s, [&](int r, cudaStream_t ps) {
    const long long n = shard_length(l, r);
    if (n == 0) return;
    std::byte* dst =
        peers_[static_cast<std::size_t>(r)]->get() + l.receive + at(static_cast<long long>(rank_) * l.shard);
    CUDA_CHECK(cudaMemcpyAsync(dst, grads + at(l.begin + r * l.shard), at(n), cudaMemcpyDeviceToDevice, ps));
  });
  // 2. Every rank's shards are in place once every rank has passed here.
  barrier(s);
  // 3. This rank's shard: its own gradients and every peer's, summed in rank order.
  const long long mine = shard_length(l, rank_);
  std::byte* own = grads + at(l.begin + static_cast<long long>(rank_) * l.shard);
  ShardSources src;
  for (int r = 0; r < ranks_; ++r)
    src.p[src.count++] = r == rank_ ? own : grads + l.receive + at(static_cast<long long>(r) * l.shard);
  sum_shards(own, src, t, mine, s);
  // 4. The sum into every peer's gradients.
  to_each_peer(s, [&](int r, cudaStream_t ps) {
    if (mine == 0) return;
    std::byte* dst = peers_[static_cast<std::size_t>(r)]->get() + (own - grads);
    CUDA_CHECK(cudaMemcpyAsync(dst, own, at(mine), cudaMemcpyDeviceToDevice, ps));
  });
}

void CopyEngineAllReduce::finish(cudaStream_t s) { barrier(s); }

}  // namespace scalebench::train
