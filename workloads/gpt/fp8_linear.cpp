#include "workloads/gpt/fp8_linear.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "workloads/gpt/step_core.hpp"

namespace scalebench::gpt {

using gemm::MatmulDesc;
using gemm::MatmulPreference;
using gemm::MatrixLayout;

namespace {
cudaDataType_t fp8_cuda_type(Fp8Format f) { return f == Fp8Format::kE4M3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2; }
}  // namespace

Fp8Linear::Fp8Linear(std::vector<Fp8Shape> sites, long long rows, DelayedScaling scaling)
    : sites_(std::move(sites)), rows_(rows), scaling_(scaling) {
  if (scaling_.history < 1) throw Error("fp8_history: must be at least 1");
  if (rows_ % 16 != 0)
    throw Error("precision: fp8 needs micro_batch x seq (here " + std::to_string(rows_) +
                " token rows a GEMM) to be a multiple of 16 (cuBLASLt's FP8 alignment)");
  for (const Fp8Shape& x : sites_)
    if (x.in % 16 != 0 || x.out % 16 != 0)
      throw Error("precision: fp8 needs every layer's width to be a multiple of 16; a " + std::to_string(x.out) +
                  " x " + std::to_string(x.in) + " weight is not");
}

void Fp8Linear::plan(Planner& a) {
  long long act = 0, dy = 0, sums = 0;
  for (const Fp8Shape& x : sites_) {
    act = std::max(act, rows_ * x.in);
    dy = std::max(dy, rows_ * x.out);
    sums = std::max(sums, cast_column_sums_size(rows_, x.out));
  }
  const long long n = slots();
  gemm_amax_ = a.f32(1);
  history_ = a.f32(n * scaling_.history);
  amax_ = a.f32(n);
  scale_ = a.f32(n);
  scale_inv_ = a.f32(n * kScaleStride);
  fp8_max_ = a.f32(n);
  auto bytes = [&](long long count) {
    const std::size_t o = a.take(static_cast<std::size_t>(count));
    return a.at ? reinterpret_cast<unsigned char*>(a.at + o) : nullptr;
  };
  act_ = bytes(act);
  gelu_fp8_ = bytes(act);
  dy_ = bytes(dy);
  dy_t_ = bytes(dy);
  act_t_.clear();
  weight_.clear();
  weight_t_.clear();
  for (const Fp8Shape& x : sites_) {
    act_t_.push_back(bytes(rows_ * x.in));
    weight_.push_back(bytes(static_cast<long long>(x.in) * x.out));
    weight_t_.push_back(bytes(static_cast<long long>(x.in) * x.out));
  }
  act_t_from_.assign(sites_.size(), nullptr);
  weight_cast_.assign(sites_.size(), 0);
  column_sums_ = a.f32(sums);
}

void Fp8Linear::init(cudaStream_t s) {
  const int n = slots();
  std::vector<float> ones(n, 1.f), maxima(n);
  for (int i = 0; i < n; ++i) maxima[i] = i % 3 == kDy ? kE5M2Max : kE4M3Max;
  CUDA_CHECK(cudaMemsetAsync(history_, 0, sizeof(float) * n * scaling_.history, s));
  CUDA_CHECK(cudaMemsetAsync(amax_, 0, sizeof(float) * n, s));
  CUDA_CHECK(cudaMemcpyAsync(scale_, ones.data(), sizeof(float) * n, cudaMemcpyHostToDevice, s));
  const std::vector<float> inverse(static_cast<std::size_t>(n) * kScaleStride, 1.f);
  CUDA_CHECK(cudaMemcpyAsync(scale_inv_, inverse.data(), sizeof(float) * inverse.size(), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(fp8_max_, maxima.data(), sizeof(float) * n, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors go now
  dy_cast_ = {};
  gelu_cast_ = {nullptr, -1};
  act_t_from_.assign(sites_.size(), nullptr);
  weights_changed();
}

void Fp8Linear::cast(int slot, const bf16* x, long long rows, int cols, void* out, void* out_t, float* column_sums) {
  cast_fp8(x, rows, cols, slot % 3 == kDy ? Fp8Format::kE5M2 : Fp8Format::kE4M3, scale_ + slot, out, out_t,
           amax_ + slot, column_sums, stream);
}

void Fp8Linear::cast_weight(int site, const bf16* w) {
  const auto i = static_cast<std::size_t>(site);
  if (weight_cast_[i]) return;
  const Fp8Shape sh = sites_[i];
  cast(slot(site, kW), w, sh.out, sh.in, weight_[i], weight_t_[i]);
  weight_cast_[i] = 1;
}

void Fp8Linear::forward(int site, bf16* y, const bf16* x, const bf16* w, const bf16* bias, const bf16* residual,
                        bf16* gelu_out, int gelu_site) {
  const auto i = static_cast<std::size_t>(site);
  const Fp8Shape sh = sites_[i];
  const bool cast_by_gemm = gelu_cast_ == std::pair{x, site};  // the GELU before it wrote x in FP8
  gelu_cast_ = {nullptr, -1};
  if (!cast_by_gemm) cast(slot(site, kX), x, rows_, sh.in, act_, act_t_[i]);
  act_t_from_[i] = x;
  cast_weight(site, w);
  Gemm g;
  g.m = sh.out;
  g.n = static_cast<int>(rows_);
  g.k = sh.in;
  g.a = weight_[i];
  g.scale_a = scale_inv(slot(site, kW));
  g.b = cast_by_gemm ? gelu_fp8_ : act_;
  g.scale_b = scale_inv(slot(site, kX));
  g.d = y;
  g.c = residual;
  g.beta = residual ? 1.f : 0.f;
  g.bias = bias;
  g.epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (gelu_out) {
    if (residual) throw Error("Fp8Linear::forward: GELU after a residual is not a layer of these models");
    g.d = gelu_out;
    g.aux = y;
    g.epilogue = bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
  }
  g.fast_accumulate = true;  // as Transformer Engine: the forward pass's GEMMs, not the gradients'
  if (gelu_out && gelu_site >= 0) {
    const auto next = static_cast<std::size_t>(gelu_site);
    if (sites_.at(next).in != sh.out)
      throw Error("Fp8Linear::forward: GELU's site " + std::to_string(gelu_site) + " has not " +
                  std::to_string(sh.out) + " inputs");
    Gemm q = g;
    q.d8 = gelu_fp8_;
    q.scale_d = scale_ + slot(gelu_site, kX);
    q.amax_d = gemm_amax_;
    if (try_run(q)) {
      transpose_fp8(gelu_fp8_, rows_, sh.out, act_t_[next], gemm_amax_, amax_ + slot(gelu_site, kX), stream);
      gelu_cast_ = {gelu_out, gelu_site};
      act_t_from_[next] = gelu_out;  // a recomputation's, too, whose forward(gelu_site) does not follow
      return;
    }
  }
  run(g);
}

void Fp8Linear::weight_grad(int site, bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, bool accumulate) {
  const auto i = static_cast<std::size_t>(site);
  const Fp8Shape sh = sites_[i];
  // The bias gradient is summed from the bf16 dy in the same pass (cuBLASLt's bias-gradient
  // epilogue would sum the FP8 values).
  if (!dy_cast_.holds(dy, site) || !dy_cast_.transposed || (dbias && !dy_cast_.column_sums)) {
    cast(slot(site, kDy), dy, rows_, sh.out, dy_, dy_t_, dbias ? column_sums_ : nullptr);
    dy_cast_ = {dy, site, true, dbias != nullptr};
  }
  if (act_t_from_[i] != x) {  // not the forward pass's x (a check calling this alone)
    cast(slot(site, kX), x, rows_, sh.in, nullptr, act_t_[i]);
    act_t_from_[i] = x;
  }
  Gemm g;
  g.m = sh.in;
  g.n = sh.out;
  g.k = static_cast<int>(rows_);
  g.a = act_t_[i];
  g.scale_a = scale_inv(slot(site, kX));
  g.b = dy_t_;
  g.fb = Fp8Format::kE5M2;
  g.scale_b = scale_inv(slot(site, kDy));
  g.d = dw;
  g.beta = accumulate ? 1.f : 0.f;
  run(g);
  if (dbias) add_column_sums(dbias, column_sums_, rows_, sh.out, accumulate, stream);
}

void Fp8Linear::input_grad(int site, bf16* dx, const bf16* dy, const bf16* w, const bf16* gelu_input, int gelu_site) {
  const auto i = static_cast<std::size_t>(site);
  const Fp8Shape sh = sites_[i];
  if (!dy_cast_.holds(dy, site)) {
    cast(slot(site, kDy), dy, rows_, sh.out, dy_, nullptr);
    dy_cast_ = {dy, site, false, false};
  }
  cast_weight(site, w);
  Gemm g;
  g.m = sh.in;
  g.n = static_cast<int>(rows_);
  g.k = sh.out;
  g.a = weight_t_[i];
  g.scale_a = scale_inv(slot(site, kW));
  g.b = dy_;
  g.fb = Fp8Format::kE5M2;
  g.scale_b = scale_inv(slot(site, kDy));
  g.d = dx;
  run(g);
  dy_cast_ = {};  // the next GEMM may write where this dy was
  // GELU' after the GEMM: cuBLASLt's FP8 GEMM with the DGELU epilogue made GPT-2 1.5B's backward
  // pass slower than the GEMM and a kernel (docs/results/2026-11-30-gpt-fp8-fused-2xh200).
  if (!gelu_input) return;
  if (gelu_site < 0) {
    gelu_backward(dx, gelu_input, rows_ * sh.in, stream);
    return;
  }
  // dx is the gradient of gelu_site's output: cast in both layouts, with the bias gradient's sums.
  // dy_ was this GEMM's operand; the stream's order lets the cast overwrite it.
  if (sites_.at(static_cast<std::size_t>(gelu_site)).out != sh.in)
    throw Error("Fp8Linear::input_grad: GELU's site " + std::to_string(gelu_site) + " has not " +
                std::to_string(sh.in) + " outputs");
  const int s = slot(gelu_site, kDy);
  cast_fp8_gelu_grad(dx, gelu_input, rows_, sh.in, Fp8Format::kE5M2, scale_ + s, dy_, dy_t_, amax_ + s, column_sums_,
                     stream);
  dy_cast_ = {dx, gelu_site, true, true};
}

void Fp8Linear::update_scales(cudaStream_t s) {
  update_fp8_scales(history_, amax_, scale_, scale_inv_, kScaleStride, fp8_max_, slots(), scaling_.history,
                    scaling_.margin, s);
  weights_changed();  // the optimizer's update follows, and W's scale has just changed
}

std::vector<float> Fp8Linear::scales(int site, cudaStream_t s) const {
  std::vector<float> out(3);
  CUDA_CHECK(cudaMemcpyAsync(out.data(), scale_ + slot(site, kX), sizeof(float) * 3, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

Fp8Linear::Key Fp8Linear::key_of(const Gemm& g) {
  return std::make_tuple(g.m, g.n, g.k, static_cast<int>(g.fa), static_cast<int>(g.fb), static_cast<int>(g.epilogue),
                         g.beta != 0.f ? 1 : 0, g.fast_accumulate ? 1 : 0, g.d8 ? 1 : 0);
}

void Fp8Linear::run_epilogue_apart(const Gemm& g) {
  Gemm plain = g;
  plain.aux = nullptr;
  switch (g.epilogue) {
    case CUBLASLT_EPILOGUE_BIAS:
      plain.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
      plain.bias = nullptr;
      run(plain);
      add_bias(g.d, g.bias, g.n, g.m, stream);
      return;
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      plain.epilogue = g.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      plain.d = g.aux;  // GELU's input, kept for the backward pass
      run(plain);
      gelu_forward(g.d, g.aux, static_cast<long long>(g.m) * g.n, stream);
      return;
    default:
      throw Error("Fp8Linear: no kernel does epilogue " + std::to_string(static_cast<int>(g.epilogue)) + " apart");
  }
}

void Fp8Linear::run(const Gemm& g) {
  if (apart_.count(key_of(g))) return run_epilogue_apart(g);
  if (try_run(g)) return;
  // None with the epilogue: the GEMM without it, then the epilogue's work apart.
  if (g.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    apart_.insert(key_of(g));
    return run_epilogue_apart(g);
  }
  throw Error("cuBLASLt has no FP8 algorithm it runs for the GEMM m=" + std::to_string(g.m) +
              " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) + (g.beta != 0.f ? " with C" : ""));
}

bool Fp8Linear::try_run(const Gemm& g) {
  const Key key = key_of(g);
  if (refused_.count(key)) return false;
  MatmulDesc desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(g.scale_a));
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(g.scale_b));
  desc.set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(g.fast_accumulate ? 1 : 0));
  desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE, g.epilogue);
  if (g.bias) {
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(g.bias));
    desc.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF);
  }
  if (g.d8) {
    desc.set(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(g.scale_d));
    desc.set(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(g.amax_d));
  }
  if (g.aux) {
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<void*>(g.aux));
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(g.m));
    desc.set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, CUDA_R_16BF);
  }
  MatrixLayout la(fp8_cuda_type(g.fa), g.k, g.m, g.k), lb(fp8_cuda_type(g.fb), g.k, g.n, g.k),
      lc(CUDA_R_16BF, g.m, g.n, g.m), ld(g.d8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF, g.m, g.n, g.m);
  const float alpha = 1.f;
  const bf16* c = g.c ? g.c : g.d;
  void* d = g.d8 ? g.d8 : static_cast<void*>(g.d);
  auto launch = [&](const cublasLtMatmulAlgo_t& algo) {
    return cublasLtMatmul(lt, desc.get(), &alpha, g.a, la.get(), g.b, lb.get(), &g.beta, c, lc.get(), d, ld.get(),
                          &algo, workspace, workspace_bytes, stream);
  };
  if (auto it = algos_.find(key); it != algos_.end()) {
    CUBLAS_CHECK(launch(it->second));
    return true;
  }
  // The first time a shape runs: cuBLASLt's candidates in its order, the first it does not refuse
  // at launch (it can offer algorithms it then refuses) runs and is kept.
  MatmulPreference pref(workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> found(16);
  int returned = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(lt, desc.get(), la.get(), lb.get(), lc.get(), ld.get(), pref.get(),
                                     static_cast<int>(found.size()), found.data(), &returned);
  // An FP8 D's combination cuBLASLt does not take is INVALID_VALUE (its documentation's word):
  // refused, as NOT_SUPPORTED is; for any other GEMM that is an error.
  const bool refused = hs == CUBLAS_STATUS_NOT_SUPPORTED || (g.d8 && hs == CUBLAS_STATUS_INVALID_VALUE);
  if (!refused) CUBLAS_CHECK(hs);
  for (int i = 0; hs == CUBLAS_STATUS_SUCCESS && i < returned; ++i) {
    const cublasStatus_t rc = launch(found[static_cast<std::size_t>(i)].algo);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED || (g.d8 && rc == CUBLAS_STATUS_INVALID_VALUE)) continue;
    CUBLAS_CHECK(rc);
    algos_.emplace(key, found[static_cast<std::size_t>(i)].algo);
    return true;
  }
  refused_.insert(key);
  return false;
}

}  // namespace scalebench::gpt
