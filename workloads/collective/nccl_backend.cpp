#include "workloads/collective/nccl_backend.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "workloads/collective/pattern.hpp"
#include "workloads/collective/pattern_kernels.cuh"
#include "workloads/gpu/dtype_nccl.hpp"
#include "workloads/gpu/mpi_check.hpp"
#include "workloads/gpu/nccl_check.hpp"

namespace scalebench::collective {

namespace {
ncclRedOp_t nccl_op(RedOp r) {
  switch (r) {
    case RedOp::kSum:
      return ncclSum;
    case RedOp::kProd:
      return ncclProd;
    case RedOp::kMax:
      return ncclMax;
    case RedOp::kMin:
      return ncclMin;
    case RedOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

// Device ordinals (of those visible) of the GPUs this process drives.
std::vector<int> pick_devices(int local_rank, int per_process) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) throw Error("no CUDA device visible to this rank");
  if (per_process > count)
    throw Error("gpus_per_process " + std::to_string(per_process) + " but only " + std::to_string(count) +
                " GPUs are visible to this process");
  std::vector<int> out;
  for (int g = 0; g < per_process; ++g) out.push_back((local_rank * per_process + g) % count);
  return out;
}

// Runs `f` with device `d` current.
template <class F>
void on_device(int d, F&& f) {
  CUDA_CHECK(cudaSetDevice(d));
  f();
}
}  // namespace

NcclBackend::NcclBackend(const MpiSession& mpi, int gpus_per_process) : mpi_(mpi) {
  if (gpus_per_process < 1) throw Error("gpus_per_process must be at least 1");
  nranks_ = mpi.size() * gpus_per_process;
  const std::vector<int> devs = pick_devices(mpi.local_rank(), gpus_per_process);
  for (std::size_t g = 0; g < devs.size(); ++g) {
    CUDA_CHECK(cudaSetDevice(devs[g]));
    auto gpu = std::make_unique<Gpu>();  // stream and events belong to the current device
    gpu->device = devs[g];
    gpu->rank = mpi.rank() * gpus_per_process + static_cast<int>(g);
    gpus_.push_back(std::move(gpu));
  }
  ncclUniqueId id{};
  if (mpi.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  // One process initialising several ranks must do so in one group, or the first init waits
  // forever for its peers.
  NCCL_CHECK(ncclGroupStart());
  for (auto& g : gpus_) {
    CUDA_CHECK(cudaSetDevice(g->device));
    g->comm = std::make_unique<gpu::NcclComm>(nranks_, id, g->rank);
  }
  NCCL_CHECK(ncclGroupEnd());
}

std::vector<int> NcclBackend::local_ranks() const {
  std::vector<int> out;
  for (const auto& g : gpus_) out.push_back(g->rank);
  return out;
}

std::vector<int> NcclBackend::devices() const {
  std::vector<int> out;
  for (const auto& g : gpus_) out.push_back(g->device);
  return out;
}

std::string NcclBackend::unsupported(const Config& c) const {
  if (c.in_place && (c.op == Op::kAllToAll || c.op == Op::kSendRecv))
    return "in-place alltoall/sendrecv is not measured";
  if (c.root < 0 || c.root >= nranks_) return "root " + std::to_string(c.root) + " is not a rank of this run";
  return "";
}

void NcclBackend::allocate(const Config& c, const Layout& l) {
  const std::size_t elem = c.element_bytes();
  graphs_.clear();  // captured graphs point into the old buffers
  for (auto& g : gpus_)
    on_device(g->device, [&] {
      g->recv = gpu::DeviceBuffer(std::max(l.send_count, l.recv_count) * elem);
      g->send = c.in_place ? gpu::DeviceBuffer() : gpu::DeviceBuffer(l.send_count * elem);
      CUDA_CHECK(cudaMemsetAsync(g->recv.get(), 0, g->recv.bytes(), g->stream.get()));
      if (g->send.bytes()) CUDA_CHECK(cudaMemsetAsync(g->send.get(), 1, g->send.bytes(), g->stream.get()));
      CUDA_CHECK(cudaStreamSynchronize(g->stream.get()));
    });
}

// In place, NCCL reads and writes one buffer: all_gather's input is the rank's slot of the
// output, reduce_scatter's output is the rank's slot of the input.
std::byte* NcclBackend::send_ptr(const Gpu& g, const Config& c, const Layout& l) const {
  if (!c.in_place) return g.send.get();
  if (c.op == Op::kAllGather) return g.recv.get() + static_cast<std::size_t>(g.rank) * l.chunk * c.element_bytes();
  return g.recv.get();
}
std::byte* NcclBackend::recv_ptr(const Gpu& g, const Config& c, const Layout& l) const {
  if (c.in_place && c.op == Op::kReduceScatter)
    return g.recv.get() + static_cast<std::size_t>(g.rank) * l.chunk * c.element_bytes();
  return g.recv.get();
}

void NcclBackend::launch(Gpu& g, const Config& c, const Layout& l) {
  const ncclDataType_t t = gpu::nccl_type(c.dtype);
  const ncclRedOp_t op = nccl_op(c.redop);
  ncclComm_t comm = g.comm->get();
  cudaStream_t s = g.stream.get();
  std::byte* in = send_ptr(g, c, l);
  std::byte* out = recv_ptr(g, c, l);
  const int rank = g.rank, n = nranks_;
  const std::size_t elem = c.element_bytes();
  switch (c.op) {
    case Op::kAllReduce:
      NCCL_CHECK(ncclAllReduce(in, out, l.send_count, t, op, comm, s));
      break;
    case Op::kReduce:
      NCCL_CHECK(ncclReduce(in, out, l.send_count, t, op, c.root, comm, s));
      break;
    case Op::kBroadcast:
      NCCL_CHECK(ncclBroadcast(in, out, l.send_count, t, c.root, comm, s));
      break;
    case Op::kAllGather:
      NCCL_CHECK(ncclAllGather(in, out, l.chunk, t, comm, s));
      break;
    case Op::kReduceScatter:
      NCCL_CHECK(ncclReduceScatter(in, out, l.chunk, t, op, comm, s));
      break;
    case Op::kAllToAll:
      NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < n; ++p) {
        NCCL_CHECK(ncclSend(in + static_cast<std::size_t>(p) * l.chunk * elem, l.chunk, t, p, comm, s));
        NCCL_CHECK(ncclRecv(out + static_cast<std::size_t>(p) * l.chunk * elem, l.chunk, t, p, comm, s));
      }
      NCCL_CHECK(ncclGroupEnd());
      break;
    case Op::kSendRecv:
      NCCL_CHECK(ncclGroupStart());
      NCCL_CHECK(ncclSend(in, l.send_count, t, (rank + 1) % n, comm, s));
      NCCL_CHECK(ncclRecv(out, l.recv_count, t, (rank - 1 + n) % n, comm, s));
      NCCL_CHECK(ncclGroupEnd());
      break;
  }
}

void NcclBackend::launch_all(const Config& c, const Layout& l) {
  if (gpus_.size() == 1) return launch(*gpus_.front(), c, l);
  NCCL_CHECK(ncclGroupStart());
  for (auto& g : gpus_) launch(*g, c, l);
  NCCL_CHECK(ncclGroupEnd());
}

// Captures `iters` steps on every GPU's stream into one graph per GPU (nccl-tests -G): launch
// overhead then leaves the timed region.
void NcclBackend::capture(const Config& c, const Layout& l, int iters) {
  if (!graphs_.empty() && graph_bytes_ == l.size_bytes && graph_iters_ == iters) return;
  graphs_.clear();
  for (auto& g : gpus_)
    on_device(g->device, [&] { CUDA_CHECK(cudaStreamBeginCapture(g->stream.get(), cudaStreamCaptureModeGlobal)); });
  for (int i = 0; i < iters; ++i) launch_all(c, l);
  for (auto& g : gpus_) {
    cudaGraph_t graph = nullptr;
    on_device(g->device, [&] { CUDA_CHECK(cudaStreamEndCapture(g->stream.get(), &graph)); });
    graphs_.emplace_back(graph);
  }
  graph_bytes_ = l.size_bytes;
  graph_iters_ = iters;
}

double NcclBackend::elapsed_slowest() const {
  double slowest = 0;
  for (const auto& g : gpus_) {
    CUDA_CHECK(cudaEventSynchronize(g->stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, g->start.get(), g->stop.get()));
    slowest = std::max(slowest, static_cast<double>(ms) * 1e-3);
  }
  return slowest;
}

double NcclBackend::time_ops(const Config& c, const Layout& l, int iters) {
  if (c.cuda_graph) capture(c, l, iters);
  mpi_.barrier();
  // One untimed operation lines the GPUs up: it ends at about the same moment on every rank, so
  // the window below does not also hold the ranks' skew leaving the barrier (which, over a short
  // window of small operations, reads as microseconds more per operation).
  launch_all(c, l);
  for (auto& g : gpus_) on_device(g->device, [&] { CUDA_CHECK(cudaEventRecord(g->start.get(), g->stream.get())); });
  if (c.cuda_graph) {
    for (std::size_t k = 0; k < gpus_.size(); ++k)
      on_device(gpus_[k]->device, [&] { CUDA_CHECK(cudaGraphLaunch(graphs_[k].get(), gpus_[k]->stream.get())); });
  } else {
    for (int i = 0; i < iters; ++i) {
      launch_all(c, l);
      if (c.blocking)  // nccl-tests -z 1: the host waits for each operation before the next
        for (auto& g : gpus_) CUDA_CHECK(cudaStreamSynchronize(g->stream.get()));
    }
  }
  for (auto& g : gpus_) on_device(g->device, [&] { CUDA_CHECK(cudaEventRecord(g->stop.get(), g->stream.get())); });
  return elapsed_slowest() / iters;
}

NcclBackend::Buffers NcclBackend::run_checked(const Config& c, const Layout& l, const Buffers& inputs) {
  const std::size_t elem = c.element_bytes();
  // Everything on the communicators' streams: they are non-blocking, so work on the legacy
  // default stream (plain cudaMemset/cudaMemcpy) would not be ordered before the collective.
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    Gpu& g = *gpus_[k];
    on_device(g.device, [&] {
      cudaStream_t s = g.stream.get();
      CUDA_CHECK(cudaMemsetAsync(g.recv.get(), 0xff, g.recv.bytes(), s));  // poison: unwritten outputs show as wrong
      CUDA_CHECK(cudaMemcpyAsync(send_ptr(g, c, l), inputs.at(k).data(), inputs[k].size(), cudaMemcpyHostToDevice, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
    });
  }
  mpi_.barrier();  // every rank's input is in place before any rank reads it
  launch_all(c, l);
  Buffers out;
  for (auto& g : gpus_) {
    std::vector<std::byte> o(l.recv_count * elem);
    on_device(g->device, [&] {
      CUDA_CHECK(cudaMemcpyAsync(o.data(), recv_ptr(*g, c, l), o.size(), cudaMemcpyDeviceToHost, g->stream.get()));
      CUDA_CHECK(cudaStreamSynchronize(g->stream.get()));
    });
    out.push_back(std::move(o));
  }
  return out;
}

std::optional<long long> NcclBackend::count_wrong_in_place(const Config& c, const Layout& l) {
  for (auto& g : gpus_)
    on_device(g->device, [&] {
      cudaStream_t s = g->stream.get();
      CUDA_CHECK(cudaMemsetAsync(g->recv.get(), 0xff, g->recv.bytes(), s));  // poison: unwritten outputs show as wrong
      CUDA_CHECK(cudaMemsetAsync(g->wrong.get(), 0, g->wrong.bytes(), s));
      fill_input_on_gpu(check_shape(c, l, nranks_, g->rank), send_ptr(*g, c, l), l.send_count, s);
      CUDA_CHECK(cudaStreamSynchronize(s));
    });
  mpi_.barrier();  // every rank's input is in place before any rank reads it
  launch_all(c, l);
  long long wrong = 0;
  for (auto& g : gpus_)
    on_device(g->device, [&] {
      cudaStream_t s = g->stream.get();
      auto* counter = reinterpret_cast<unsigned long long*>(g->wrong.get());
      count_wrong_on_gpu(check_shape(c, l, nranks_, g->rank), recv_ptr(*g, c, l), l.recv_count, counter, s);
      unsigned long long mine = 0;
      CUDA_CHECK(cudaMemcpyAsync(&mine, counter, sizeof mine, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      wrong += static_cast<long long>(mine);
    });
  return wrong;
}

}  // namespace scalebench::collective
