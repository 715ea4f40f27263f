#include "workloads/collective/nccl_backend.hpp"

#include <cudnn.h>
#include <mpi.h>

#include <cstring>

#include "workloads/bootstrap/mpi_check.hpp"

namespace scalebench::collective {

namespace {
ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kInt8:
      return ncclInt8;
    case DType::kUInt8:
      return ncclUint8;
  }
  return ncclFloat32;
}
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

int select_device(int local_rank) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) throw Error("no CUDA device visible to this rank");
  int dev = local_rank % count;
  CUDA_CHECK(cudaSetDevice(dev));
  return dev;
}
}  // namespace

NcclBackend::NcclBackend(const MpiSession& mpi) : mpi_(mpi), device_(select_device(mpi.local_rank())) {
  ncclUniqueId id{};
  if (mpi.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
  comm_ = std::make_unique<gpu::NcclComm>(mpi.size(), id, mpi.rank());
}

std::string NcclBackend::unsupported(const Config& c) const {
  if (c.in_place && (c.op == Op::kAllToAll || c.op == Op::kSendRecv))
    return "in-place alltoall/sendrecv is not measured";
  if (c.root < 0 || c.root >= mpi_.size()) return "root " + std::to_string(c.root) + " is not a rank of this run";
  return "";
}

void NcclBackend::allocate(const Config& c, const Layout& l) {
  const std::size_t elem = dtype_size(c.dtype);
  recv_ = gpu::DeviceBuffer(std::max(l.send_count, l.recv_count) * elem);
  send_ = c.in_place ? gpu::DeviceBuffer() : gpu::DeviceBuffer(l.send_count * elem);
  CUDA_CHECK(cudaMemsetAsync(recv_.get(), 0, recv_.bytes(), stream_.get()));
  if (send_.bytes()) CUDA_CHECK(cudaMemsetAsync(send_.get(), 1, send_.bytes(), stream_.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

// In place, NCCL reads and writes one buffer: all_gather's input is the rank's slot of the
// output, reduce_scatter's output is the rank's slot of the input.
std::byte* NcclBackend::send_ptr(const Config& c, const Layout& l) const {
  if (!c.in_place) return send_.get();
  if (c.op == Op::kAllGather)
    return recv_.get() + static_cast<std::size_t>(mpi_.rank()) * l.chunk * dtype_size(c.dtype);
  return recv_.get();
}
std::byte* NcclBackend::recv_ptr(const Config& c, const Layout& l) const {
  if (c.in_place && c.op == Op::kReduceScatter)
    return recv_.get() + static_cast<std::size_t>(mpi_.rank()) * l.chunk * dtype_size(c.dtype);
  return recv_.get();
}

void NcclBackend::launch(const Config& c, const Layout& l) {
  const ncclDataType_t t = nccl_type(c.dtype);
  const ncclRedOp_t op = nccl_op(c.redop);
  ncclComm_t comm = comm_->get();
  cudaStream_t s = stream_.get();
  std::byte* in = send_ptr(c, l);
  std::byte* out = recv_ptr(c, l);
  const int rank = mpi_.rank(), n = mpi_.size();
  const std::size_t elem = dtype_size(c.dtype);
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

double NcclBackend::time_ops(const Config& c, const Layout& l, int iters) {
  mpi_.barrier();
  CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
  for (int i = 0; i < iters; ++i) launch(c, l);
  CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
  CUDA_CHECK(cudaEventSynchronize(stop_.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  return static_cast<double>(ms) * 1e-3 / iters;
}

std::vector<std::byte> NcclBackend::run_checked(const Config& c, const Layout& l, const std::vector<std::byte>& input) {
  const std::size_t elem = dtype_size(c.dtype);
  // Everything on the communicator's stream: it is non-blocking, so work on the legacy default
  // stream (plain cudaMemset/cudaMemcpy) would not be ordered before the collective.
  cudaStream_t s = stream_.get();
  CUDA_CHECK(cudaMemsetAsync(recv_.get(), 0xff, recv_.bytes(), s));  // poison: unwritten outputs show as wrong
  CUDA_CHECK(cudaMemcpyAsync(send_ptr(c, l), input.data(), input.size(), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));  // every rank's input is in place before any rank reads it
  mpi_.barrier();
  launch(c, l);
  std::vector<std::byte> out(l.recv_count * elem);
  CUDA_CHECK(cudaMemcpyAsync(out.data(), recv_ptr(c, l), out.size(), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

std::string describe_device(int device) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  char uuid[64] = {};
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return std::string(p.name) + "|" + uuid + "|" + bus;
}

Json gpu_versions() {
  int driver = 0, runtime = 0, nccl = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  auto cuda_str = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::size_t cudnn = cudnnGetVersion();
  return Json{{"cuda_driver", cuda_str(driver)},
              {"cuda_runtime", cuda_str(runtime)},
              {"nccl", std::to_string(nccl / 10000) + "." + std::to_string((nccl / 100) % 100) + "." +
                           std::to_string(nccl % 100)},
              {"cudnn", std::to_string(cudnn / 10000) + "." + std::to_string((cudnn / 100) % 100) + "." +
                            std::to_string(cudnn % 100)}};
}

}  // namespace scalebench::collective
