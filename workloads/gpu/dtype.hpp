#pragma once
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

// The element types the workloads store, in one table: each type's name, size in bytes, and the
// CUDA and cuDNN enumerators for it. Pure: host code reads names and sizes without CUDA headers;
// dtype_cuda.hpp maps onto the libraries' enums from the same rows.
namespace scalebench::gpu {

// X(enumerator, name, bytes, CUDA data type, cuDNN data type)
#define SCALEBENCH_DTYPES(X)                                      \
  X(kF32, "float32", 4, CUDA_R_32F, CUDNN_DATA_FLOAT)             \
  X(kF64, "float64", 8, CUDA_R_64F, CUDNN_DATA_DOUBLE)            \
  X(kF16, "float16", 2, CUDA_R_16F, CUDNN_DATA_HALF)              \
  X(kBf16, "bfloat16", 2, CUDA_R_16BF, CUDNN_DATA_BFLOAT16)       \
  X(kI32, "int32", 4, CUDA_R_32I, CUDNN_DATA_INT32)               \
  X(kI64, "int64", 8, CUDA_R_64I, CUDNN_DATA_INT64)               \
  X(kI8, "int8", 1, CUDA_R_8I, CUDNN_DATA_INT8)                   \
  X(kU8, "uint8", 1, CUDA_R_8U, CUDNN_DATA_UINT8)                 \
  X(kE4M3, "float8_e4m3", 1, CUDA_R_8F_E4M3, CUDNN_DATA_FP8_E4M3) \
  X(kE5M2, "float8_e5m2", 1, CUDA_R_8F_E5M2, CUDNN_DATA_FP8_E5M2)

// A value-initialised DType is kF32, the first row.
enum class DType {
#define SCALEBENCH_DTYPE_ENUM(e, name, bytes, cuda, cudnn) e,
  SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_ENUM)
#undef SCALEBENCH_DTYPE_ENUM
};

// A row of the table, as host code reads it; kDTypes[int(t)] is t's (the enum follows the rows).
struct DTypeRow {
  const char* name;       // "bfloat16", ...
  int bytes;              // of one element
  const char* cuda_name;  // the CUDA enumerator's name ("CUDA_R_16BF"), as cuBLAS documents and logs it
};
inline constexpr DTypeRow kDTypes[] = {
#define SCALEBENCH_DTYPE_ROW(e, name, bytes, cuda, cudnn) {name, bytes, #cuda},
    SCALEBENCH_DTYPES(SCALEBENCH_DTYPE_ROW)
#undef SCALEBENCH_DTYPE_ROW
};

constexpr const char* dtype_name(DType t) { return kDTypes[static_cast<int>(t)].name; }
constexpr int dtype_bytes(DType t) { return kDTypes[static_cast<int>(t)].bytes; }
constexpr const char* cuda_type_name(DType t) { return kDTypes[static_cast<int>(t)].cuda_name; }

// The type named `text` ("float32", ...); nothing for another name.
constexpr std::optional<DType> parse_dtype(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kDTypes); ++i)
    if (text == kDTypes[i].name) return static_cast<DType>(i);
  return std::nullopt;
}

}  // namespace scalebench::gpu
