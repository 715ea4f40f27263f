#pragma once
#include <cudnn.h>
#include <library_types.h>

#include "workloads/gpu/dtype.hpp"

// The CUDA (cuBLAS, cuBLASLt) and cuDNN enumerators of a DType, from dtype.hpp's table.
namespace scalebench::gpu {

inline constexpr cudaDataType_t kCudaTypes[] = {
#define SCALEBENCH_DTYPE_CUDA(e, name, bytes, cuda, cudnn) cuda,
    SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_CUDA)
#undef SCALEBENCH_DTYPE_CUDA
};
inline constexpr cudnnDataType_t kCudnnTypes[] = {
#define SCALEBENCH_DTYPE_CUDNN(e, name, bytes, cuda, cudnn) cudnn,
    SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_CUDNN)
#undef SCALEBENCH_DTYPE_CUDNN
};

constexpr cudaDataType_t cuda_type(DType t) { return kCudaTypes[static_cast<int>(t)]; }
constexpr cudnnDataType_t cudnn_type(DType t) { return kCudnnTypes[static_cast<int>(t)]; }

}  // namespace scalebench::gpu
