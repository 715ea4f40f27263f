#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads/gpt/fp8_kernels.cuh"
#include "workloads/gpt/fp8_scaling.hpp"
#include "workloads/gpt/gpt_kernels.cuh"

// The blocks' linear layers in FP8 (precision fp8): each GEMM's operands cast from bf16 to FP8 with
// delayed scaling (fp8_scaling.hpp), E4M3 for the forward pass's activations and weights, E5M2 for
// the gradients, multiplied by cuBLASLt's FP8 matmul with the scales' inverses as its A and B scale
// factors, into bf16 (with fp32 accumulation). On Hopper cuBLASLt's FP8 kernels take only the "TN"
// form (both operands contiguous along the reduced dimension), so:
//   forward      y[rows, out] = x W^T:  W [out, in] and x [rows, in] as they are;
//   weight grad  dW[out, in] = dy^T x:  dy and x transposed ([out, rows], [in, rows]);
//   input grad   dx[rows, in] = dy W:   dy as it is, W transposed ([in, out]).
// Each operand is cast by one kernel that writes the layouts it is needed in and records its amax
// (fp8_kernels.cuh). A GEMM "site" (a layer's QKV, projection, MLP up, MLP down) has three scales:
// its input x, its weight W (both E4M3) and its output gradient dy (E5M2). Master weights, the
// bf16 weights and the optimizer are unchanged: the FP8 copies are scratch, made per GEMM.
namespace scalebench::gpt {

struct Planner;

// The shape of one GEMM site: y[rows, out] = x[rows, in] W^T.
struct Fp8Shape {
  int in = 0, out = 0;
};

class Fp8Linear {
 public:
  // `sites` GEMMs of the given shapes over `rows` token rows; every dimension must be a multiple of
  // 16 (cuBLASLt's FP8 alignment; Error naming precision otherwise).
  Fp8Linear(std::vector<Fp8Shape> sites, long long rows, DelayedScaling scaling);

  // Lays out the scales, their windows and the FP8 scratch in the step's arena (with `a.at` null,
  // counts the bytes).
  void plan(Planner& a);
  // Scales 1, windows and amax 0 (after plan with memory).
  void init(cudaStream_t s);

  // y = x W^T (+ bias) (+ residual as the GEMM's C input).
  void forward(int site, bf16* y, const bf16* x, const bf16* w, const bf16* bias, const bf16* residual);
  // dW (+)= dy^T x and, with `dbias`, db (+)= the sum of dy's rows; leaves dy cast for input_grad.
  void weight_grad(int site, bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, bool accumulate);
  // dx = dy W (dy cast again unless weight_grad just cast this dy for this site).
  void input_grad(int site, bf16* dx, const bf16* dy, const bf16* w);
  // The end of a step: every tensor's amax into its window, its scale from the window.
  void update_scales(cudaStream_t s);

  // For checks: the current scales of a site's x, W and dy (synchronises).
  std::vector<float> scales(int site, cudaStream_t s) const;
  int slots() const { return 3 * static_cast<int>(sites_.size()); }

  // Set by the step before use: its cuBLASLt handle, stream and workspace.
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;

 private:
  enum Operand { kX = 0, kW = 1, kDy = 2 };
  int slot(int site, Operand o) const { return 3 * site + o; }
  // The scales' inverses, each 16 bytes apart: what cuBLASLt's scale pointers point at.
  static constexpr int kScaleStride = 4;
  const float* scale_inv(int slot) const { return scale_inv_ + kScaleStride * slot; }
  // D[m, n] = (scale_a A)^T (scale_b B) (+ bias) (+ beta C), column-major, A [k, m], B [k, n].
  struct Gemm {
    int m = 0, n = 0, k = 0;
    const void* a = nullptr;
    const void* b = nullptr;
    Fp8Format fa = Fp8Format::kE4M3, fb = Fp8Format::kE4M3;
    const float *scale_a = nullptr, *scale_b = nullptr;
    bf16* d = nullptr;
    const bf16* c = nullptr;
    float beta = 0.f;
    const bf16* bias = nullptr;
    bool fast_accumulate = false;
  };
  // Runs g; the first time a shape runs, cuBLASLt's candidates are tried in order and the first
  // that runs is kept; where none runs with the bias in the epilogue, the bias is added apart.
  void run(const Gemm& g);
  void run_bias_apart(const Gemm& g);
  void cast(int slot, const bf16* x, long long rows, int cols, void* out, void* out_t, float* column_sums = nullptr);

  std::vector<Fp8Shape> sites_;
  long long rows_;
  DelayedScaling scaling_;
  // Per slot: the window, the amax so far this step, the scale and its inverse, the format's max.
  float *history_ = nullptr, *amax_ = nullptr, *scale_ = nullptr, *scale_inv_ = nullptr, *fp8_max_ = nullptr;
  // FP8 scratch: an activation (x or its transpose), a weight (or its transpose), dy and dy^T.
  unsigned char *act_ = nullptr, *weight_ = nullptr, *dy_ = nullptr, *dy_t_ = nullptr;
  float* column_sums_ = nullptr;  // the bias gradient's per-tile sums (cast_fp8)
  // The dy that dy_ holds (pointer and site), so that input_grad after weight_grad reuses it.
  std::pair<const bf16*, int> dy_cast_{nullptr, -1};
  using Key = std::tuple<int, int, int, int, int, int, int, int>;
  std::map<Key, cublasLtMatmulAlgo_t> algos_;
  std::set<Key> bias_apart_;  // shapes whose bias epilogue cuBLASLt refused
};

}  // namespace scalebench::gpt
