#pragma once
#include <cudnn.h>
#include <library_types.h>

#include "workloads/gpu/dtype.hpp"

// The CUDA (cuBLAS, cuBLASLt) and cuDNN enumerators of a DType, from dtype.hpp's table.
namespace scalebench::gpu {

constexpr cudaDataType_t cuda_type(DType t) {
  switch (t) {
#define SCALEBENCH_DTYPE_CUDA(e, name, bytes, cuda, cudnn) \
  case DType::e:                                           \
    return cuda;
    SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_CUDA)
#undef SCALEBENCH_DTYPE_CUDA
  }
  return CUDA_R_32F;
}

constexpr cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
#define SCALEBENCH_DTYPE_CUDNN(e, name, bytes, cuda, cudnn) \
  case DType::e:                                            \
    return cudnn;
    SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_CUDNN)
#undef SCALEBENCH_DTYPE_CUDNN
  }
  return CUDNN_DATA_FLOAT;
}

}  // namespace scalebench::gpu
