#include "workloads/collective/mpi_backend.hpp"

#include <cstring>

#include "workloads/gpu/mpi_check.hpp"

namespace scalebench::collective {

namespace {
MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    case DType::kI8:
      return MPI_INT8_T;
    case DType::kU8:
      return MPI_UINT8_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}
MPI_Op mpi_op(RedOp r) {
  switch (r) {
    case RedOp::kSum:
      return MPI_SUM;
    case RedOp::kProd:
      return MPI_PROD;
    case RedOp::kMax:
      return MPI_MAX;
    case RedOp::kMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;
  }
}
int as_int(std::size_t n) { return static_cast<int>(n); }
}  // namespace

std::string MpiBackend::unsupported(const Config& c) const {
  if (mpi_type(c.dtype) == MPI_DATATYPE_NULL) return "MPI has no 16-bit floating-point type; use the nccl backend";
  if (is_reducing(c.op) && c.redop == RedOp::kAvg) return "MPI has no avg reduction; use the nccl backend";
  if (c.in_place && (c.op == Op::kAllToAll || c.op == Op::kSendRecv))
    return "in-place alltoall/sendrecv is not measured";
  if (c.root < 0 || c.root >= mpi_.size()) return "root " + std::to_string(c.root) + " is not a rank of this run";
  if (c.max_bytes / c.element_bytes() > static_cast<std::uint64_t>(INT32_MAX))
    return "max_bytes is over what an MPI count (int) can address for this dtype";
  return "";
}

void MpiBackend::allocate(const Config& c, const Layout& l) {
  const std::size_t elem = c.element_bytes();
  recv_.assign(std::max(l.send_count, l.recv_count) * elem, std::byte{0});
  if (!c.in_place) send_.assign(l.send_count * elem, std::byte{1});
}

void MpiBackend::launch(const Config& c, const Layout& l) {
  const MPI_Datatype t = mpi_type(c.dtype);
  const MPI_Op op = mpi_op(c.redop);
  const int rank = mpi_.rank(), n = mpi_.size();
  void* in = c.in_place ? MPI_IN_PLACE : static_cast<void*>(send_.data());
  void* out = recv_.data();
  switch (c.op) {
    case Op::kAllReduce:
      MPI_CHECK(MPI_Allreduce(in, out, as_int(l.send_count), t, op, MPI_COMM_WORLD));
      break;
    case Op::kReduce:
      if (c.in_place && rank != c.root) in = out;  // MPI_IN_PLACE is for the root only
      MPI_CHECK(MPI_Reduce(in, out, as_int(l.send_count), t, op, c.root, MPI_COMM_WORLD));
      break;
    case Op::kBroadcast:
      MPI_CHECK(MPI_Bcast(out, as_int(l.recv_count), t, c.root, MPI_COMM_WORLD));
      break;
    case Op::kAllGather:
      MPI_CHECK(MPI_Allgather(in, c.in_place ? 0 : as_int(l.chunk), c.in_place ? MPI_DATATYPE_NULL : t, out,
                              as_int(l.chunk), t, MPI_COMM_WORLD));
      break;
    case Op::kReduceScatter:
      MPI_CHECK(MPI_Reduce_scatter_block(in, out, as_int(l.chunk), t, op, MPI_COMM_WORLD));
      break;
    case Op::kAllToAll:
      MPI_CHECK(MPI_Alltoall(in, as_int(l.chunk), t, out, as_int(l.chunk), t, MPI_COMM_WORLD));
      break;
    case Op::kSendRecv:
      MPI_CHECK(MPI_Sendrecv(in, as_int(l.send_count), t, (rank + 1) % n, 0, out, as_int(l.recv_count), t,
                             (rank - 1 + n) % n, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      break;
  }
}

double MpiBackend::time_ops(const Config& c, const Layout& l, int iters) {
  mpi_.barrier();
  const double t0 = MPI_Wtime();  // host memory: the operation is done when the call returns
  for (int i = 0; i < iters; ++i) launch(c, l);
  return (MPI_Wtime() - t0) / iters;
}

MpiBackend::Buffers MpiBackend::run_checked(const Config& c, const Layout& l, const Buffers& inputs) {
  const std::vector<std::byte>& input = inputs.at(0);
  const std::size_t elem = c.element_bytes();
  std::memset(recv_.data(), 0xff, recv_.size());  // poison: unwritten outputs show as wrong
  std::byte* dst = c.in_place ? recv_.data() : send_.data();
  if (c.in_place && c.op == Op::kAllGather) dst += static_cast<std::size_t>(mpi_.rank()) * l.chunk * elem;
  if (c.op == Op::kBroadcast) dst = recv_.data();  // MPI_Bcast works in the one buffer
  if (c.op != Op::kBroadcast || mpi_.rank() == c.root) std::memcpy(dst, input.data(), input.size());
  launch(c, l);
  return {std::vector<std::byte>(recv_.begin(), recv_.begin() + static_cast<std::ptrdiff_t>(l.recv_count * elem))};
}

}  // namespace scalebench::collective
