#pragma once
#include <nccl.h>

#include <string>

#include "common/error.hpp"
#include "workloads/gpu/dtype.hpp"

namespace scalebench::gpu {

// NCCL's enumerator of a DType; fp8 has none (throws Error naming the type).
inline ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
    case DType::kF16:
      return ncclFloat16;
    case DType::kBf16:
      return ncclBfloat16;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kI8:
      return ncclInt8;
    case DType::kU8:
      return ncclUint8;
    default:
      throw Error(std::string("no NCCL type for ") + dtype_name(t));
  }
}

}  // namespace scalebench::gpu
