#include "workloads/gemm/gemm_types.hpp"

namespace scalebench::gemm {

using compute::Precision;

const char* name(ComputeType t) {
  switch (t) {
    case ComputeType::k64F:
      return "CUBLAS_COMPUTE_64F";
    case ComputeType::k32F:
      return "CUBLAS_COMPUTE_32F";
    case ComputeType::k32FFastTf32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case ComputeType::k32I:
      return "CUBLAS_COMPUTE_32I";
  }
  return "?";
}

TypeChoice type_choice(Precision p) {
  using D = gpu::DType;
  using C = ComputeType;
  switch (p) {
    case Precision::kFp64:
      return {D::kF64, D::kF64, D::kF64, D::kF64, C::k64F, false, 0};
    case Precision::kFp32:
      return {D::kF32, D::kF32, D::kF32, D::kF32, C::k32F, false, 0};
    case Precision::kTf32:
      return {D::kF32, D::kF32, D::kF32, D::kF32, C::k32FFastTf32, false, 0};
    case Precision::kFp16:
      return {D::kF16, D::kF16, D::kF16, D::kF32, C::k32F, false, 0};
    case Precision::kBf16:
      return {D::kBf16, D::kBf16, D::kBf16, D::kF32, C::k32F, false, 0};
    // cuBLASLt's fp8 and int8 (IMMA) kernels want 16-byte aligned leading dimensions.
    case Precision::kFp8E4M3:
      return {D::kE4M3, D::kE4M3, D::kBf16, D::kF32, C::k32F, true, 16};
    case Precision::kFp8E5M2:
      return {D::kE5M2, D::kE4M3, D::kBf16, D::kF32, C::k32F, true, 16};
    case Precision::kInt8:
      return {D::kI8, D::kI8, D::kI32, D::kI32, C::k32I, true, 16};
  }
  return {D::kF32, D::kF32, D::kF32, D::kF32, C::k32F, false, 0};
}

namespace {
long long round_up(long long v, int align_bytes, int element_bytes) {
  if (align_bytes <= element_bytes) return v;
  const long long step = align_bytes / element_bytes;
  return (v + step - 1) / step * step;
}
}  // namespace

Layout layout_for(Precision p, const Shape& s) {
  const TypeChoice t = type_choice(p);
  Layout l;
  l.trans_a = s.trans_a;
  l.trans_b = s.trans_b;
  if (t.needs_tn && (!s.trans_a || s.trans_b)) {
    l.trans_a = true;
    l.trans_b = false;
    l.note = std::string("run as tn (asked ") + op_name(s.trans_a, s.trans_b) + "): cuBLASLt's " + compute::name(p) +
             " kernels take A transposed and B not";
  }
  l.a_rows = l.trans_a ? s.k : s.m;
  l.a_cols = l.trans_a ? s.m : s.k;
  l.b_rows = l.trans_b ? s.n : s.k;
  l.b_cols = l.trans_b ? s.k : s.n;
  l.lda = round_up(l.a_rows, t.ld_align_bytes, gpu::dtype_bytes(t.a));
  l.ldb = round_up(l.b_rows, t.ld_align_bytes, gpu::dtype_bytes(t.b));
  l.ldc = round_up(s.m, t.ld_align_bytes, gpu::dtype_bytes(t.c));
  return l;
}

double Layout::bytes(const TypeChoice& t, long long n) const {
  return static_cast<double>(lda) * a_cols * gpu::dtype_bytes(t.a) +
         static_cast<double>(ldb) * b_cols * gpu::dtype_bytes(t.b) +
         static_cast<double>(ldc) * n * gpu::dtype_bytes(t.c);
}

}  // namespace scalebench::gemm
