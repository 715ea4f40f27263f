#pragma once
#include <string>
#include <string_view>

#include "workloads/gpu/dtype.hpp"

// The number formats the compute workloads (gemm, conv, rnn) run in, which GPUs have them, and how
// far a result may drift from a higher-precision reference before it counts as wrong. Pure: no CUDA.
namespace scalebench::compute {

// kFp32: IEEE fp32 on the CUDA cores (Tensor Cores off); kTf32: fp32 data through the Tensor
// Cores' TF32 path; kFp8E4M3/kFp8E5M2: 8-bit float inputs; kInt8: 8-bit integers, int32 sums.
enum class Precision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8E4M3, kFp8E5M2, kInt8 };

// "fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "int8". parse throws Error.
Precision parse_precision(std::string_view text);
const char* name(Precision p);

// The element type of the inputs (fp32 and tf32 both fp32 data: the math type decides), and its bytes.
gpu::DType element_dtype(Precision p);
int element_bytes(Precision p);

// Empty when a GPU of compute capability `cc_major`.`cc_minor` has `p` in hardware, else why not
// ("fp8e4m3 needs compute capability 8.9 or newer (Ada, Hopper); this GPU is 8.0").
std::string unsupported_on(Precision p, int cc_major, int cc_minor);

// Correctness of one output element. Every workload feeds inputs of known magnitude and computes a
// reference in fp64 from the very values the GPU saw; what remains is rounding inside the GPU
// (products and sums in the precision's arithmetic, the output stored in its format). That error
// grows with the output's typical size, so an element passes when
//     |got - ref| <= rel_tolerance(p) * max(|ref|, scale)
// where `scale` is the typical output magnitude the workload knows from its shapes (for a dot
// product of length k with entries of size a and b: sqrt(k) * a * b). int8 results are exact.
double rel_tolerance(Precision p);
bool within_tolerance(Precision p, double got, double ref, double scale);

}  // namespace scalebench::compute
