#pragma once
#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "workloads/gpu/cublas_check.hpp"
#include "workloads/gpu/unique_handle.hpp"

namespace scalebench::gpu {

// Move-only owner of one cuBLASLt object; `Destroy` frees it.
template <typename T, cublasStatus_t (*Destroy)(T)>
using LtObject = UniqueHandle<T, FreeWith<Destroy>>;

class LtHandle : public LtObject<cublasLtHandle_t, cublasLtDestroy> {
 public:
  LtHandle() { CUBLAS_CHECK(cublasLtCreate(out())); }
};

class MatmulDesc : public LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> {
 public:
  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(out(), compute, scale));
  }
  template <typename V>
  void set(cublasLtMatmulDescAttributes_t attr, const V& value) {
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(get(), attr, &value, sizeof value));
  }
};

// A column-major matrix of `rows` x `cols` elements, `ld` apart between columns.
class MatrixLayout : public LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> {
 public:
  MatrixLayout(cudaDataType_t type, long long rows, long long cols, long long ld) {
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(out(), type, static_cast<std::uint64_t>(rows),
                                            static_cast<std::uint64_t>(cols), ld));
  }
};

class MatmulPreference : public LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> {
 public:
  explicit MatmulPreference(std::size_t workspace_bytes) {
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(out()));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                      sizeof workspace_bytes));
  }
  // The heuristic assumes 256-byte aligned matrices unless told otherwise, and its pick then fails
  // at launch ("not supported") on a matrix that starts inside a larger buffer.
  void min_alignment(std::uint32_t bytes) {
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(get(), attr, &bytes, sizeof bytes));
  }
};

}  // namespace scalebench::gpu

// The names the gemm and gpt workloads call their matmul objects by.
namespace scalebench::gemm {
using gpu::LtHandle;
using gpu::MatmulDesc;
using gpu::MatmulPreference;
using gpu::MatrixLayout;
}  // namespace scalebench::gemm
