#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
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
// bf16 weights and the optimizer are unchanged. Each cast is made once where it can be kept: a
// site's weight once per optimizer step, in both layouts; its x by the forward pass, in both
// layouts, the transpose kept for the same micro-batch's weight gradient (each a pass over bf16
// that the backward pass no longer makes). GELU runs in the up projection's epilogue where
// cuBLASLt's FP8 kernels take it, as in bf16; its derivative after the GEMM (faster than DGELU), in
// the pass that casts the up projection's output gradient.
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

  // y = x W^T (+ bias) (+ residual as the GEMM's C input); with `gelu_out`, also
  // gelu_out = gelu(y) (y kept as GELU's input for the backward pass; no residual then). W is cast
  // the first time a step uses it; x^T is kept for weight_grad. With `gelu_site` too (the site that
  // takes gelu_out as its x), the GEMM writes GELU's output in FP8 at that site's scale, with its
  // amax, and gelu_out is not written: forward(gelu_site, .., x = gelu_out, ..) takes the FP8 bytes
  // as they are, and the transpose for its weight gradient is made from them (1 byte an element
  // read instead of 2). Where cuBLASLt has no such GEMM, gelu_out is written and cast as before.
  // The caller passes gelu_site only where nothing reads gelu_out in bf16: gelu_site's
  // weight_grad must come before another forward pass of `site` (one micro-batch in flight).
  void forward(int site, bf16* y, const bf16* x, const bf16* w, const bf16* bias, const bf16* residual,
               bf16* gelu_out = nullptr, int gelu_site = -1);
  // dW (+)= dy^T x and, with `dbias`, db (+)= the sum of dy's rows; leaves dy cast for input_grad.
  // x^T is the one forward(site) cast from the same `x` (the same micro-batch's values: x is the
  // forward pass's buffer, or recomputed into it); any other x is cast here.
  void weight_grad(int site, bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, bool accumulate);
  // dx = dy W (dy cast again unless weight_grad just cast this dy for this site); with
  // `gelu_input` (forward's y), dx *= gelu'(gelu_input). With `gelu_site` too (the site whose
  // forward made gelu_input, the gradient's next user), the product is cast for that site's
  // weight_grad and input_grad as it is made, and dx keeps dy W: the product is never stored in
  // bf16, nor read back to be cast.
  void input_grad(int site, bf16* dx, const bf16* dy, const bf16* w, const bf16* gelu_input = nullptr,
                  int gelu_site = -1);
  // The end of a step: every tensor's amax into its window, its scale from the window. The weights'
  // casts are made again from the next forward pass on (the optimizer changes them next).
  void update_scales(cudaStream_t s);
  // The bf16 weights were written outside a step (initialised, loaded): cast them again.
  void weights_changed() { std::fill(weight_cast_.begin(), weight_cast_.end(), 0); }

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
  // D[m, n] = epilogue((scale_a A)^T (scale_b B) (+ bias) (+ beta C)), column-major, A [k, m],
  // B [k, n]; GELU_AUX(_BIAS) writes its input to `aux`.
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
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    bf16* aux = nullptr;
    bool fast_accumulate = false;
    // D in FP8 (E4M3) instead of `d`: d8 = scale_d x the result, its amax (before the scale) into
    // *amax_d. `d` stays a bf16 [m, n] buffer, C's layout (unread: beta 0).
    void* d8 = nullptr;
    const float* scale_d = nullptr;
    float* amax_d = nullptr;
  };
  using Key = std::tuple<int, int, int, int, int, int, int, int, int>;
  static Key key_of(const Gemm& g);
  // Runs g; the first time a shape runs, cuBLASLt's candidates are tried in order and the first
  // that runs is kept; where none runs with the epilogue, the GEMM runs without it and a kernel of
  // its own does the epilogue's work (the bias, or GELU).
  void run(const Gemm& g);
  // As run, but false where cuBLASLt has no algorithm for g (it is then not asked again).
  bool try_run(const Gemm& g);
  void run_epilogue_apart(const Gemm& g);
  void cast(int slot, const bf16* x, long long rows, int cols, void* out, void* out_t, float* column_sums = nullptr);
  // The site's weight in both FP8 layouts, cast once a step.
  void cast_weight(int site, const bf16* w);

  std::vector<Fp8Shape> sites_;
  long long rows_;
  DelayedScaling scaling_;
  // Per slot: the window, the amax so far this step, the scale and its inverse, the format's max.
  float *history_ = nullptr, *amax_ = nullptr, *scale_ = nullptr, *scale_inv_ = nullptr, *fp8_max_ = nullptr;
  // FP8 scratch: the forward pass's x, dy and dy^T; GELU's output as its GEMM wrote it, and that
  // GEMM's amax.
  unsigned char *act_ = nullptr, *dy_ = nullptr, *dy_t_ = nullptr, *gelu_fp8_ = nullptr;
  float* gemm_amax_ = nullptr;
  // The x that gelu_fp8_ holds (the bf16 buffer it stands for, the site it is cast for).
  std::pair<const bf16*, int> gelu_cast_{nullptr, -1};
  // Kept, per site: x^T from the forward pass and the bf16 x it was cast from; W and W^T, and
  // whether they were cast since the weights last changed.
  std::vector<unsigned char*> act_t_, weight_, weight_t_;
  std::vector<const bf16*> act_t_from_;
  std::vector<char> weight_cast_;
  float* column_sums_ = nullptr;  // the bias gradient's per-tile sums (cast_fp8)
  // The dy that dy_ holds, so that a site's second use of a gradient does not cast it again: the
  // bf16 tensor it stands for, the site, and whether dy_t_ and the column sums hold it too.
  struct DyCast {
    const bf16* dy = nullptr;
    int site = -1;
    bool transposed = false, column_sums = false;
    bool holds(const bf16* d, int s) const { return dy == d && site == s; }
  };
  DyCast dy_cast_;
  std::map<Key, cublasLtMatmulAlgo_t> algos_;
  std::set<Key> apart_;    // shapes whose epilogue cuBLASLt refused
  std::set<Key> refused_;  // shapes cuBLASLt has no algorithm for (try_run)
};

}  // namespace scalebench::gpt
