#pragma once
#include <cstddef>

#include "workloads/collective/types.hpp"
#include "workloads/gpu/host_device.hpp"

// The correctness pattern's formulas, one source for the host check (pattern.cpp, MPI backend)
// and the GPU check (pattern_kernels.cu, NCCL backend): each rank's input element is a small
// integer that every dtype holds exactly, also when summed over all ranks, so every expected
// output is exact. No standard-library calls, so that nvcc compiles them for the device too.
namespace scalebench::collective::formula {

// Largest integer the type holds exactly (and every integer under it).
SCALEBENCH_HOST_DEVICE inline int exact_limit(DType t) {
  switch (t) {
    case DType::kI8:
      return 127;
    case DType::kU8:
      return 255;
    case DType::kBf16:
      return 256;
    case DType::kF16:
      return 2048;
    default:
      return 1 << 20;
  }
}

SCALEBENCH_HOST_DEVICE inline double input_value(DType t, RedOp r, int nranks, int rank, std::size_t i) {
  const std::size_t n = nranks < 1 ? 1 : static_cast<std::size_t>(nranks);
  const bool marked = i % n == static_cast<std::size_t>(rank);  // one rank per element
  // prod: one 2 among ones, so the product is 2 on any number of ranks.
  if (r == RedOp::kProd) return marked ? 2.0 : 1.0;
  // Values up to m per rank keep the sum over all ranks exact; with too many ranks for even
  // ones, a single 1 among zeros still tells which rank's element landed where.
  const int limit = exact_limit(t) / (nranks < 1 ? 1 : nranks);
  const int m = limit < 13 ? limit : 13;
  if (m < 1) return marked ? 1.0 : 0.0;
  return static_cast<double>((static_cast<std::size_t>(rank) * 7 + i * 3) % static_cast<std::size_t>(m) + 1);
}

SCALEBENCH_HOST_DEVICE inline double reduce(RedOp r, double acc, double v) {
  switch (r) {
    case RedOp::kSum:
    case RedOp::kAvg:
      return acc + v;
    case RedOp::kProd:
      return acc * v;
    case RedOp::kMax:
      return acc > v ? acc : v;
    case RedOp::kMin:
      return acc < v ? acc : v;
  }
  return acc;
}

// What one collective run looks like to the check: enough to know every expected element.
struct CheckShape {
  Op op;
  DType dtype;
  RedOp redop;
  int root;
  int nranks;
  int rank;
  std::size_t chunk;
};

// The value element j of the rank's output must hold; false where the op leaves no output there
// (non-root ranks of reduce).
SCALEBENCH_HOST_DEVICE inline bool expected_value(const CheckShape& s, std::size_t j, double* want) {
  const int n = s.nranks;
  auto in = [&](int r, std::size_t i) { return input_value(s.dtype, s.redop, n, r, i); };
  auto reduced = [&](std::size_t i) {
    double acc = in(0, i);
    for (int r = 1; r < n; ++r) acc = reduce(s.redop, acc, in(r, i));
    return s.redop == RedOp::kAvg ? acc / n : acc;
  };
  switch (s.op) {
    case Op::kAllReduce:
      *want = reduced(j);
      return true;
    case Op::kReduce:
      if (s.rank != s.root) return false;
      *want = reduced(j);
      return true;
    case Op::kBroadcast:
      *want = in(s.root, j);
      return true;
    case Op::kAllGather:
      *want = in(static_cast<int>(j / s.chunk), j % s.chunk);
      return true;
    case Op::kReduceScatter:
      *want = reduced(static_cast<std::size_t>(s.rank) * s.chunk + j);
      return true;
    case Op::kAllToAll:
      *want = in(static_cast<int>(j / s.chunk), static_cast<std::size_t>(s.rank) * s.chunk + j % s.chunk);
      return true;
    case Op::kSendRecv:
      *want = in((s.rank - 1 + n) % n, j);
      return true;
  }
  return false;
}

// avg divides, so the half types round: their precision is allowed; everything else is exact.
SCALEBENCH_HOST_DEVICE inline double relative_tolerance(DType t, RedOp r) {
  if (r != RedOp::kAvg) return 0;
  return t == DType::kBf16 ? 1e-2 : (t == DType::kF16 ? 1e-3 : 1e-6);
}

SCALEBENCH_HOST_DEVICE inline bool matches(double got, double want, double tol) {
  const double d = got > want ? got - want : want - got;
  return d <= tol * (want < 0 ? -want : want);  // false for NaN
}

}  // namespace scalebench::collective::formula
