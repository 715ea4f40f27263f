#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/dtype.hpp"

// Host-side dispatch of a kernel launch on the element type of a DType.
namespace scalebench::gpu {

// Calls f with a null pointer of the element type of `t` (the type is what matters): float, __half
// or __nv_bfloat16. Throws Error for the table's other types, which no such kernel takes.
template <typename F>
void with_type(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      f(static_cast<float*>(nullptr));
      break;
    case DType::kF16:
      f(static_cast<__half*>(nullptr));
      break;
    case DType::kBf16:
      f(static_cast<__nv_bfloat16*>(nullptr));
      break;
    default:
      throw Error(std::string("no float32, float16 or bfloat16 kernel for ") + dtype_name(t));
  }
}

}  // namespace scalebench::gpu
