// Token and position embeddings, forward and backward.
#include "workloads/gpt/gpt_kernel_common.cuh"

namespace scalebench::gpt {

namespace {

__global__ void embedding_forward_kernel(bf16* x, const int* tokens, const bf16* wte, const bf16* wpe, long long rows,
                                         long long first_row, int T, int C) {
  const long long pairs = rows * (C / 2);
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= pairs) return;
  const long long row = i / (C / 2);
  const int c = static_cast<int>(i % (C / 2)) * 2;
  const int t = static_cast<int>((first_row + row) % T);
  const int tok = tokens[first_row + row];
  float2 e = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(wte + static_cast<long long>(tok) * C + c));
  if (wpe) {
    const float2 p =
        __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(wpe + static_cast<long long>(t) * C + c));
    e.x += p.x;
    e.y += p.y;
  }
  *reinterpret_cast<__nv_bfloat162*>(x + row * C + c) = __float22bfloat162_rn(e);
}

__global__ void embedding_token_backward_kernel(bf16* dwte, const bf16* dx, const int* tokens, long long rows,
                                                long long first_row, int C) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * (C / 2)) return;
  const long long row = i / (C / 2);
  const int c = static_cast<int>(i % (C / 2)) * 2;
  atomicAdd(reinterpret_cast<__nv_bfloat162*>(dwte + static_cast<long long>(tokens[first_row + row]) * C + c),
            *reinterpret_cast<const __nv_bfloat162*>(dx + row * C + c));
}

// Position t's gradient sums the rows at t, t + T, ... that lie in first_row .. first_row + rows.
__global__ void embedding_position_backward_kernel(bf16* dwpe, const bf16* dx, long long rows, long long first_row,
                                                   int T, int C, bool accumulate) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(T) * C) return;
  const int t = static_cast<int>(i / C), c = static_cast<int>(i % C);
  float acc = accumulate ? __bfloat162float(dwpe[i]) : 0.f;
  for (long long r = first_row + ((t - first_row % T) + T) % T; r < first_row + rows; r += T)
    acc += __bfloat162float(dx[(r - first_row) * C + c]);
  dwpe[i] = __float2bfloat16(acc);
}

// One warp per row.

}  // namespace

void embedding_forward(bf16* x, const int* tokens, const bf16* wte, const bf16* wpe, long long rows,
                       long long first_row, int T, int C, cudaStream_t s) {
  const long long n = rows * (C / 2);
  embedding_forward_kernel<<<grid_for(n, 256), 256, 0, s>>>(x, tokens, wte, wpe, rows, first_row, T, C);
  CUDA_CHECK(cudaGetLastError());
}

void embedding_backward(bf16* dwte, bf16* dwpe, const bf16* dx, const int* tokens, long long rows, long long first_row,
                        int T, int C, bool accumulate_positions, cudaStream_t s) {
  embedding_token_backward_kernel<<<grid_for(rows * (C / 2), 256), 256, 0, s>>>(dwte, dx, tokens, rows, first_row, C);
  CUDA_CHECK(cudaGetLastError());
  if (dwpe) {
    embedding_position_backward_kernel<<<grid_for(static_cast<long long>(T) * C, 256), 256, 0, s>>>(
        dwpe, dx, rows, first_row, T, C, accumulate_positions);
    CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace scalebench::gpt
