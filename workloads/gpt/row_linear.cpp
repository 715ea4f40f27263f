#include "workloads/gpt/row_linear.hpp"

#include <algorithm>

#include "workloads/gpt/skinny_linear.cuh"

namespace scalebench::gpt {

int RowLinear::row_bucket(int n, long long cap) {
  int g = 1;
  while (g < n && g < 64) g *= 2;
  if (n > 64) g = (n + 63) / 64 * 64;
  return static_cast<int>(std::min<long long>(g, cap));
}

void RowLinear::run(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, int n, long long cap,
                    bool add, bool gelu, void* workspace, cudaStream_t s) {
  if (skinny_linear_fits(n, in, y, x, w, bias)) {
    skinny_linear(y, x, w, bias, n, in, out, add, gelu, s);
    return;
  }
  // cuBLASLt's epilogues in the same order: D = GELU(A B + C + bias).
  Gemm g = linear_gemm(y, x, w, in, out, row_bucket(n, cap));
  g.bias = bias;
  g.epilogue = gelu ? (bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
                    : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  if (add) {
    g.c = y;
    g.beta = 1.f;
  }
  gemms_.run(g, workspace, kWorkspaceBytes, s);
}

}  // namespace scalebench::gpt
