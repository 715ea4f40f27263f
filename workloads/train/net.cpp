#include "workloads/train/net.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_conv_graph.hpp"
#include "workloads/train/conv_choice.hpp"

namespace scalebench::train {

namespace {
using compute::Precision;
using gpu::MatmulDesc;
using gpu::MatmulPreference;
using gpu::MatrixLayout;

constexpr double kBnEpsilon = 1e-5;
constexpr double kBnMomentum = 0.1;  // running = 0.9 running + 0.1 batch (PyTorch's default)
constexpr std::size_t kLtWorkspace = 32u << 20;

cudnnDataType_t cudnn_type(DType t) {
  return t == DType::kFloat ? CUDNN_DATA_FLOAT : t == DType::kHalf ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}
cudaDataType_t cuda_type(DType t) {
  return t == DType::kFloat ? CUDA_R_32F : t == DType::kHalf ? CUDA_R_16F : CUDA_R_16BF;
}

// fp32: no TF32 anywhere (FMA math, cuBLAS pedantic); tf32: TF32 Tensor Cores allowed for fp32
// data; fp16/bf16: Tensor Cores with fp32 sums.
cudnnMathType_t conv_math(Precision p) {
  return p == Precision::kFp32 ? CUDNN_FMA_MATH : p == Precision::kTf32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}
cublasComputeType_t gemm_compute(Precision p) {
  return p == Precision::kFp32   ? CUBLAS_COMPUTE_32F_PEDANTIC
         : p == Precision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                 : CUBLAS_COMPUTE_32F;
}

// One cuBLASLt matmul, C(m x n) = op(A) op(B) + beta C, column-major, its algorithm chosen once.
struct Gemm {
  std::optional<MatmulDesc> desc;
  std::optional<MatrixLayout> a, b, c;
  cublasLtMatmulAlgo_t algo{};
  void setup(cublasLtHandle_t lt, Precision p, DType t, bool ta, bool tb, long long m, long long n, long long k,
             long long lda, long long ldb, long long ldc) {
    desc.emplace(gemm_compute(p), CUDA_R_32F);
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    desc->set(CUBLASLT_MATMUL_DESC_TRANSA, opa);
    desc->set(CUBLASLT_MATMUL_DESC_TRANSB, opb);
    a.emplace(cuda_type(t), ta ? k : m, ta ? m : k, lda);
    b.emplace(cuda_type(t), tb ? n : k, tb ? k : n, ldb);
    c.emplace(cuda_type(t), m, n, ldc);
    MatmulPreference pref(kLtWorkspace);
    cublasLtMatmulHeuristicResult_t r{};
    int found = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc->get(), a->get(), b->get(), c->get(), c->get(), pref.get(), 1,
                                                &r, &found));
    if (found < 1)
      throw Error("cuBLASLt has no algorithm for a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k) + " matmul");
    algo = r.algo;
  }
  void run(cublasLtHandle_t lt, const void* A, const void* B, void* C, bool accumulate, void* ws,
           cudaStream_t s) const {
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    CUBLAS_CHECK(cublasLtMatmul(lt, desc->get(), &alpha, A, a->get(), B, b->get(), &beta, C, c->get(), C, c->get(),
                                &algo, ws, kLtWorkspace, s));
  }
};

// A convolution's chosen algorithm: a legacy cudnnConvolution* algorithm, or (plan set) an
// execution plan of cuDNN's graph API.
struct ConvAlgo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::shared_ptr<gpu::ConvPlan> plan;
  std::size_t workspace = 0;
  float ms = -1;
  Json search;  // with `algo: search`: what Find reported and what was timed again
  std::string name() const { return plan ? plan->name() : "legacy algo " + std::to_string(algo); }
};

// The largest power of two up to 16 that divides every address: what the graph API may assume.
std::int64_t alignment_of(std::initializer_list<const void*> ptrs) {
  std::uintptr_t bits = 16;
  for (const void* p : ptrs) bits |= reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::int64_t>(bits & (~bits + 1));
}

// GPU milliseconds of one run of `run`: the median of 3 after one untimed run (which also
// compiles a runtime-compiled engine). Negative if it fails to run.
template <typename Run>
float median_ms(cudaStream_t s, Run run) {
  try {
    run();
    gpu::Event e0, e1;
    std::vector<float> ms;
    for (int r = 0; r < 3; ++r) {
      CUDA_CHECK(cudaEventRecord(e0.get(), s));
      run();
      CUDA_CHECK(cudaEventRecord(e1.get(), s));
      CUDA_CHECK(cudaEventSynchronize(e1.get()));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0.get(), e1.get()));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[1];
  } catch (const Error&) {
    (void)cudaGetLastError();
    return -1;
  }
}

// What pick_algo needs of the net and the convolution it chooses for.
struct PickContext {
  Precision precision;
  bool search;         // time the candidates (`algo: search`)
  std::size_t wsb;     // the search's workspace, bytes (0 without search)
  std::size_t free_b;  // free GPU memory before the search
  cudaStream_t stream;
  const std::string& layer;  // its name and shape key, for messages
  const std::string& key;
};

// With `algo: search` cuDNN's Find times each algorithm once, and that timing can include
// its kernel's first launch. On an H100 Find's first choice was a slower algorithm in every
// tf32 run (0.21 against 0.11 ms) and, now and then, one 2-3x slower than the tensor-core
// algorithm (13% of a step; docs/results/2026-11-23-train-h100-find). So Find's algorithms
// within 2x of its fastest, and the heuristic's first choice, are timed again (median of 3
// after a warm-up run, as the graph API's plans are) and the fastest stays. Without search:
// the heuristic's first choice that fits in a quarter of the free memory.
template <typename Perf, typename WorkspaceSize, typename Run>
ConvAlgo pick_algo(const PickContext& c, Perf* found, int found_count, Perf* heuristic, int heuristic_count,
                   cudnnConvolutionDescriptor_t desc, WorkspaceSize wsize, Run run) {
  auto offers = [&](auto* perf, int count, bool timed) {
    std::vector<ConvOffer> out;
    for (int k = 0; k < count; ++k) {
      ConvOffer o;
      o.algo = static_cast<int>(perf[k].algo);
      o.math = c.precision == Precision::kFp32 ? CUDNN_FMA_MATH : perf[k].mathType;
      o.find_ms = timed ? perf[k].time : -1.0f;
      if (perf[k].status == CUDNN_STATUS_SUCCESS) {
        CUDNN_CHECK(cudnnSetConvolutionMathType(desc, static_cast<cudnnMathType_t>(o.math)));
        o.usable =
            wsize(o.algo, &o.workspace) == CUDNN_STATUS_SUCCESS && o.workspace <= (c.search ? c.wsb : c.free_b / 4);
      }
      out.push_back(o);
    }
    return out;
  };
  const std::vector<ConvOffer> candidates =
      offers_to_time(offers(found, found_count, true), offers(heuristic, heuristic_count, false));
  if (candidates.empty())
    throw Error("cuDNN has no algorithm for " + c.layer + " (" + c.key + ") in " + compute::name(c.precision));
  auto as_algo = [](const ConvOffer& o, float ms) {
    ConvAlgo a;
    a.algo = o.algo;
    a.math = static_cast<cudnnMathType_t>(o.math);
    a.workspace = o.workspace;
    a.ms = ms;
    return a;
  };
  if (!c.search) return as_algo(candidates[0], -1.0f);
  Json find = Json::array(), timed = Json::array();
  for (int k = 0; k < found_count; ++k)
    if (found[k].status != CUDNN_STATUS_NOT_SUPPORTED)  // most of the list, and always the same
      find.push_back({static_cast<int>(found[k].algo), static_cast<int>(found[k].mathType),
                      static_cast<int>(found[k].status), found[k].time});
  std::vector<float> ms;
  for (const ConvOffer& o : candidates) {
    CUDNN_CHECK(cudnnSetConvolutionMathType(desc, static_cast<cudnnMathType_t>(o.math)));
    ms.push_back(median_ms(c.stream, [&] { CUDNN_CHECK(run(o.algo)); }));
    timed.push_back({o.algo, o.math, ms.back()});
  }
  const int best = fastest(ms);
  if (best < 0) throw Error("no algorithm cuDNN offered for " + c.layer + " (" + c.key + ") ran");
  ConvAlgo chosen = as_algo(candidates[static_cast<std::size_t>(best)], ms[static_cast<std::size_t>(best)]);
  chosen.search = Json{{"find", find}, {"timed", timed}};
  return chosen;
}

}  // namespace

DType compute_dtype(compute::Precision p) {
  switch (p) {
    case compute::Precision::kFp32:
    case compute::Precision::kTf32:
      return DType::kFloat;
    case compute::Precision::kFp16:
      return DType::kHalf;
    case compute::Precision::kBf16:
      return DType::kBf16;
    default:
      throw Error(std::string("the train workload runs fp32, tf32, fp16 or bf16, not ") + compute::name(p));
  }
}

struct Net::LayerState {
  gpu::DeviceBuffer y, dy;
  gpu::TensorDescriptor y_desc;
  bool acc_input = false, acc_residual = false;  // backward adds into the gradient (another wrote it first)
  // conv
  gpu::FilterDescriptor w_desc;
  gpu::ConvolutionDescriptor fwd_desc, bwd_data_desc, bwd_filter_desc;
  gpu::TensorDescriptor bias_desc;
  ConvAlgo fwd, bwd_data, bwd_filter;
  // batch norm
  gpu::TensorDescriptor bn_desc;
  gpu::DeviceBuffer saved_mean, saved_inv_var, running_mean, running_var, reserve;
  gpu::DeviceBuffer relu_mask;  // our kernels, training, with ReLU: which outputs are > 0
  bool fused = false;
  std::string unfused_reason;
  float* bn_grad32 = nullptr;  // fp32 gradients of scale and shift (the flat buffer itself in fp32)
  // maxpool
  PoolShape pool;
  gpu::DeviceBuffer argmax;  // training: each output's maximum in its window
  // fc
  Gemm fc_fwd, fc_bwd_data, fc_bwd_weight;
};

std::byte* Net::alloc(gpu::DeviceBuffer& b, std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t rc = cudaMalloc(&p, std::max<std::size_t>(bytes, 1));
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw OutOfMemory("out of GPU memory allocating " + std::to_string(bytes) + " bytes (" +
                      std::to_string(allocated_) + " bytes allocated before) for " + model_.name + " at batch " +
                      std::to_string(cfg_.batch));
  }
  CUDA_CHECK(rc);
  CUDA_CHECK(cudaFree(p));  // owned below; the probe keeps the OOM path free of CUDA_CHECK's message
  b = gpu::DeviceBuffer(std::max<std::size_t>(bytes, 1));
  allocated_ += bytes;
  return b.get();
}

// What the algorithm search of the constructor shares between layers: the workspace cuDNN's
// searches may use, the free memory before it, and the algorithms chosen per convolution shape.
struct Net::AlgoSearch {
  std::size_t free_b = 0;
  gpu::DeviceBuffer ws;
  std::size_t bytes = 0;
  std::map<std::string, std::tuple<ConvAlgo, ConvAlgo, ConvAlgo>> cache;
};

Net::Net(const Model& m, const NetConfig& cfg, cudaStream_t stream)
    : model_(m), cfg_(cfg), ct_(compute_dtype(cfg.precision)), stream_(stream) {
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  CUDNN_CHECK(cudnnSetActivationDescriptor(relu_.get(), CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  alloc_parameters();
  alloc_activations();
  init_weights();
  init_data();
  find_first_writers();
  choose_algorithms();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Master weights, their compute copy, momentum, gradients and the loss scaler's state.
void Net::alloc_parameters() {
  const long long params = model_.param_count;
  const std::size_t eb = static_cast<std::size_t>(dtype_bytes(ct_));
  const bool mixed = ct_ != DType::kFloat;

  alloc(master_, static_cast<std::size_t>(params) * 4);
  if (mixed) alloc(compute_copy_, static_cast<std::size_t>(params) * eb);
  if (cfg_.training) {
    alloc(velocity_, static_cast<std::size_t>(params) * 4);
    grads_ = cfg_.grad_buffer ? static_cast<std::byte*>(cfg_.grad_buffer)
                              : alloc(grad_, static_cast<std::size_t>(params) * eb);
    CUDA_CHECK(cudaMemsetAsync(velocity_.get(), 0, velocity_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(grads_, 0, static_cast<std::size_t>(params) * eb, stream_));
  }
  alloc(loss_, sizeof(double));
  alloc(scale_, sizeof(float));
  alloc(good_steps_, sizeof(int));
  alloc(overflow_, sizeof(int));
  alloc(lt_workspace_, kLtWorkspace);
  // PyTorch's GradScaler starts at 2^16; bf16 and fp32 need no scaling.
  fill_value(reinterpret_cast<float*>(scale_.get()), 1, ct_ == DType::kHalf ? 65536.0f : 1.0f, stream_);
  CUDA_CHECK(cudaMemsetAsync(good_steps_.get(), 0, sizeof(int), stream_));
  CUDA_CHECK(cudaMemsetAsync(overflow_.get(), 0, sizeof(int), stream_));
}

// Activations (and their gradients): one buffer per layer; the input layer's is the images. Then
// the buffers the passes share: labels, scratch, bias sums, batch norm work.
void Net::alloc_activations() {
  const int n = cfg_.batch;
  const std::size_t eb = static_cast<std::size_t>(dtype_bytes(ct_));
  const bool mixed = ct_ != DType::kFloat;
  std::size_t largest = 0, bn_params = 0;
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    const Layer& l = model_.layers[i];
    auto st = std::make_unique<LayerState>();
    const std::size_t bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(l.out.elements()) * eb;
    if (l.op != Op::kSoftmaxLoss) {
      // cuDNN's legacy tensor descriptors count elements in 32 bits.
      if (static_cast<long long>(n) * l.out.elements() > 0x7fffffffLL)
        throw TooLarge(l.name + "'s output at batch " + std::to_string(n) + " has " +
                       std::to_string(static_cast<long long>(n) * l.out.elements()) +
                       " elements, more than cuDNN's tensor descriptors take (2^31 - 1)");
      alloc(st->y, bytes);
      CUDNN_CHECK(cudnnSetTensor4dDescriptor(st->y_desc.get(), CUDNN_TENSOR_NHWC, cudnn_type(ct_), n, l.out.c, l.out.h,
                                             l.out.w));
      if (cfg_.training && i > 0) alloc(st->dy, bytes);
      largest = std::max(largest, bytes);
    }
    if (l.op == Op::kBatchNorm) bn_params += static_cast<std::size_t>(l.params);
    layers_.push_back(std::move(st));
  }
  alloc(labels_, static_cast<std::size_t>(n) * sizeof(int));
  if (cfg_.training) alloc(scratch_, largest);
  int widest = 1;
  for (const Layer& l : model_.layers) widest = std::max(widest, l.bias ? l.channels : 1);
  if (cfg_.training) alloc(bias32_, static_cast<std::size_t>(widest) * 4);
  int bn_channels = 1;
  for (const Layer& l : model_.layers) bn_channels = std::max(bn_channels, l.op == Op::kBatchNorm ? l.out.c : 1);
  alloc(bn_work_, bn_work_bytes(bn_channels));
  if (cfg_.training && mixed) alloc(bn_grad32_, bn_params * 4);
}

// Weights as torchvision initialises them: convolutions He-normal (fan out), batch norm scale 1
// and shift 0, linear layers normal(0, 0.01), biases 0. The same seed on every rank. With them
// each batch norm's and max-pooling's own state.
void Net::init_weights() {
  const int n = cfg_.batch;
  const bool mixed = ct_ != DType::kFloat;
  std::size_t bn_at = 0;
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    const Layer& l = model_.layers[i];
    LayerState& st = *layers_[i];
    float* w = master() + l.param_offset;
    if (l.op == Op::kConv) {
      fill_normal(w, DType::kFloat, l.weight_params(), 0.0f,
                  std::sqrt(2.0f / (static_cast<float>(l.channels) * l.kernel * l.kernel)), cfg_.seed * 1000 + i,
                  stream_);
    } else if (l.op == Op::kFc) {
      fill_normal(w, DType::kFloat, l.weight_params(), 0.0f, 0.01f, cfg_.seed * 1000 + i, stream_);
    } else if (l.op == Op::kBatchNorm) {
      fill_value(w, l.out.c, 1.0f, stream_);
      fill_value(w + l.out.c, l.out.c, 0.0f, stream_);
    }
    if (l.bias) fill_value(w + l.weight_params(), l.channels, 0.0f, stream_);
    if (l.op == Op::kBatchNorm) {
      CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(st.bn_desc.get(),
                                                layers_[static_cast<std::size_t>(l.input)]->y_desc.get(),
                                                CUDNN_BATCHNORM_SPATIAL_PERSISTENT));
      const std::size_t c4 = static_cast<std::size_t>(l.out.c) * 4;
      alloc(st.saved_mean, c4);
      alloc(st.saved_inv_var, c4);
      alloc(st.running_mean, c4);
      alloc(st.running_var, c4);
      fill_value(reinterpret_cast<float*>(st.running_mean.get()), l.out.c, 0.0f, stream_);
      fill_value(reinterpret_cast<float*>(st.running_var.get()), l.out.c, 1.0f, stream_);
      if (cfg_.training)
        st.bn_grad32 = mixed ? reinterpret_cast<float*>(bn_grad32_.get()) + bn_at
                             : reinterpret_cast<float*>(grad(static_cast<int>(i)));
      bn_at += static_cast<std::size_t>(l.params);
    }
    if (l.op == Op::kMaxPool) {
      if (l.kernel > kMaxPoolWindow)
        throw Error(l.name + ": a max-pooling window of " + std::to_string(l.kernel) + " is wider than " +
                    std::to_string(kMaxPoolWindow));
      const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
      st.pool = PoolShape{n, d.h, d.w, d.c, l.out.h, l.out.w, l.kernel, l.stride, l.pad};
      if (cfg_.training) alloc(st.argmax, static_cast<std::size_t>(n) * static_cast<std::size_t>(l.out.elements()));
    }
  }
}

// The compute copy of the weights, the images and the labels.
void Net::init_data() {
  const int n = cfg_.batch;
  sync_weights();
  fill_normal(act(0), ct_, static_cast<long long>(n) * model_.layers[0].out.elements(), 0.0f, 1.0f,
              cfg_.data_seed * 7919 + 1, stream_);
  fill_labels(reinterpret_cast<int*>(labels_.get()), n, model_.classes, cfg_.data_seed * 104729 + 3, stream_);
  // cuDNN's search times every algorithm on the layers' own buffers. Fresh from cudaMalloc they
  // hold zeros, on which some algorithms look faster than they run on real activations, so the
  // search gets normal data there (the first step overwrites it).
  if (cfg_.search)
    for (std::size_t i = 1; i < model_.layers.size(); ++i)
      if (model_.layers[i].op != Op::kSoftmaxLoss)
        fill_normal(layers_[i]->y.get(), ct_, static_cast<long long>(n) * model_.layers[i].out.elements(), 0.0f, 1.0f,
                    cfg_.data_seed * 31 + i, stream_);
}

// Who writes each gradient first in the backward pass (layers in reverse): the first writes,
// the others add.
void Net::find_first_writers() {
  if (!cfg_.training) return;
  std::vector<bool> written(model_.layers.size(), false);
  auto writes = [&](int target, bool& acc) {
    acc = written[static_cast<std::size_t>(target)];
    written[static_cast<std::size_t>(target)] = true;
  };
  for (int i = static_cast<int>(model_.layers.size()) - 1; i > 0; --i) {
    const Layer& l = model_.layers[static_cast<std::size_t>(i)];
    LayerState& st = *layers_[static_cast<std::size_t>(i)];
    if (l.residual >= 0) writes(l.residual, st.acc_residual);
    if (l.input > 0) writes(l.input, st.acc_input);
  }
}

// Each layer's algorithms (convolutions, matmuls) and batch norm fusion, then the workspace the
// chosen ones need.
void Net::choose_algorithms() {
  AlgoSearch search;
  // The workspace cuDNN's searches may use: half the free memory, at most 2 GiB.
  std::size_t total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&search.free_b, &total_b));
  search.bytes = std::min<std::size_t>(search.free_b / 2, std::size_t{2} << 30);
  if (cfg_.search) alloc(search.ws, search.bytes);
  std::size_t ws_need = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    const Layer& l = model_.layers[i];
    if (l.op == Op::kFc) setup_fc(static_cast<int>(i));
    if (l.op == Op::kConv) ws_need = std::max(ws_need, choose_conv(static_cast<int>(i), search));
    if (l.op == Op::kBatchNorm && cfg_.training) ws_need = std::max(ws_need, choose_bn_fusion(static_cast<int>(i)));
  }
  for (std::size_t i = 0; i < model_.layers.size() && cfg_.training; ++i)
    if (model_.layers[i].op == Op::kBatchNorm && model_.layers[i].relu && !layers_[i]->fused)
      alloc_relu_mask(static_cast<int>(i));
  search_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  search.ws = gpu::DeviceBuffer();
  allocated_ -= cfg_.search ? search.bytes : 0;
  alloc(workspace_, ws_need);
}

// A convolution's algorithms for its three directions (the cache's if a layer of its shape has
// them); returns the workspace they need.
std::size_t Net::choose_conv(int layer, AlgoSearch& search) {
  const std::size_t i = static_cast<std::size_t>(layer);
  const Layer& l = model_.layers[i];
  LayerState& st = *layers_[i];
  setup_conv(layer);
  const Layer& in = model_.layers[static_cast<std::size_t>(l.input)];
  // "best" asks the graph API in fp32 only: there it has FMA kernels the legacy API lacks
  // (163 -> 127 ms per ResNet-50 step at batch 128 on an H200), in tf32 it gained nothing,
  // and in fp16 its search had not finished after two minutes.
  const bool use_graph =
      cfg_.conv_api == "graph" || (cfg_.conv_api == "best" && cfg_.search && cfg_.precision == Precision::kFp32);
  // A graph plan has beta baked in: shapes that accumulate their input gradient need their own.
  const std::string key = std::to_string(in.out.c) + "x" + std::to_string(in.out.h) + "x" + std::to_string(in.out.w) +
                          ">" + std::to_string(l.channels) + "k" + std::to_string(l.kernel) + "s" +
                          std::to_string(l.stride) + "p" + std::to_string(l.pad) +
                          (use_graph && st.acc_input ? "+acc" : "");
  if (auto hit = search.cache.find(key); hit != search.cache.end()) {
    std::tie(st.fwd, st.bwd_data, st.bwd_filter) = hit->second;
  } else {
    find_legacy_algos(layer, key, search);
    if (use_graph) find_graph_plans(layer, search);
    search.cache[key] = {st.fwd, st.bwd_data, st.bwd_filter};
    record_algos(layer, key);
  }
  CUDNN_CHECK(cudnnSetConvolutionMathType(st.fwd_desc.get(), st.fwd.math));
  CUDNN_CHECK(cudnnSetConvolutionMathType(st.bwd_data_desc.get(), st.bwd_data.math));
  CUDNN_CHECK(cudnnSetConvolutionMathType(st.bwd_filter_desc.get(), st.bwd_filter.math));
  return std::max({st.fwd.workspace, st.bwd_data.workspace, st.bwd_filter.workspace});
}

// The legacy API's algorithms of a convolution: forward, and in training backward filter and
// (past the input layer) backward data, each picked by pick_algo.
void Net::find_legacy_algos(int layer, const std::string& key, AlgoSearch& search) {
  const std::size_t i = static_cast<std::size_t>(layer);
  const Layer& l = model_.layers[i];
  LayerState& st = *layers_[i];
  cudnnHandle_t h = cudnn_.get();
  const LayerState& ist = *layers_[static_cast<std::size_t>(l.input)];
  void* ws = search.ws.get();
  const std::size_t wsb = cfg_.search ? search.bytes : 0;
  const float one = 1.0f, zero = 0.0f;
  const PickContext c{cfg_.precision, cfg_.search, wsb, search.free_b, stream_, l.name, key};
  constexpr int kMax = 16;
  int got = 0, hgot = 0;  // Find's and the heuristic's counts (Find's stays 0 without search)
  {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax], heur[kMax];
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, ist.y_desc.get(), st.w_desc.get(), st.fwd_desc.get(),
                                                       st.y_desc.get(), kMax, &hgot, heur));
    if (cfg_.search)
      CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, ist.y_desc.get(), ist.y.get(), st.w_desc.get(),
                                                         weight(layer), st.fwd_desc.get(), st.y_desc.get(), st.y.get(),
                                                         kMax, &got, perf, ws, wsb));
    st.fwd = pick_algo(
        c, perf, got, heur, hgot, st.fwd_desc.get(),
        [&](int a, std::size_t* b) {
          return cudnnGetConvolutionForwardWorkspaceSize(h, ist.y_desc.get(), st.w_desc.get(), st.fwd_desc.get(),
                                                         st.y_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(a), b);
        },
        [&](int a) {
          return cudnnConvolutionForward(h, &one, ist.y_desc.get(), ist.y.get(), st.w_desc.get(), weight(layer),
                                         st.fwd_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(a), ws, wsb, &zero,
                                         st.y_desc.get(), st.y.get());
        });
  }
  if (!cfg_.training) return;
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax], heur[kMax];
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      h, ist.y_desc.get(), st.y_desc.get(), st.bwd_filter_desc.get(), st.w_desc.get(), kMax, &hgot, heur));
  if (cfg_.search)
    CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, ist.y_desc.get(), ist.y.get(), st.y_desc.get(),
                                                              st.y.get(), st.bwd_filter_desc.get(), st.w_desc.get(),
                                                              grad(layer), kMax, &got, perf, ws, wsb));
  st.bwd_filter = pick_algo(
      c, perf, got, heur, hgot, st.bwd_filter_desc.get(),
      [&](int a, std::size_t* b) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, ist.y_desc.get(), st.y_desc.get(),
                                                              st.bwd_filter_desc.get(), st.w_desc.get(),
                                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), b);
      },
      [&](int a) {
        return cudnnConvolutionBackwardFilter(h, &one, ist.y_desc.get(), ist.y.get(), st.y_desc.get(), st.y.get(),
                                              st.bwd_filter_desc.get(), static_cast<cudnnConvolutionBwdFilterAlgo_t>(a),
                                              ws, wsb, &zero, st.w_desc.get(), grad(layer));
      });
  if (l.input <= 0) return;
  cudnnConvolutionBwdDataAlgoPerf_t dperf[kMax], dheur[kMax];
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, st.w_desc.get(), st.y_desc.get(), st.bwd_data_desc.get(),
                                                          ist.y_desc.get(), kMax, &hgot, dheur));
  if (cfg_.search)
    CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, st.w_desc.get(), weight(layer), st.y_desc.get(),
                                                            st.y.get(), st.bwd_data_desc.get(), ist.y_desc.get(),
                                                            scratch_.get(), kMax, &got, dperf, ws, wsb));
  st.bwd_data = pick_algo(
      c, dperf, got, dheur, hgot, st.bwd_data_desc.get(),
      [&](int a, std::size_t* b) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, st.w_desc.get(), st.y_desc.get(), st.bwd_data_desc.get(),
                                                            ist.y_desc.get(),
                                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(a), b);
      },
      [&](int a) {
        return cudnnConvolutionBackwardData(h, &one, st.w_desc.get(), weight(layer), st.y_desc.get(), st.y.get(),
                                            st.bwd_data_desc.get(), static_cast<cudnnConvolutionBwdDataAlgo_t>(a), ws,
                                            wsb, &zero, ist.y_desc.get(), scratch_.get());
      });
}

// The graph API's plans for the same convolution, timed on the same buffers as Find timed the
// legacy algorithms; the faster one stays ("graph": the fastest plan even if slower; with no
// search, the heuristic's first plan).
void Net::find_graph_plans(int layer, AlgoSearch& search) {
  const std::size_t i = static_cast<std::size_t>(layer);
  const Layer& l = model_.layers[i];
  LayerState& st = *layers_[i];
  const Layer& in = model_.layers[static_cast<std::size_t>(l.input)];
  const LayerState& ist = *layers_[static_cast<std::size_t>(l.input)];
  cudnnHandle_t h = cudnn_.get();
  const int n = cfg_.batch;
  gpu::ConvShape sh;
  sh.n = n, sh.c = in.out.c, sh.h = in.out.h, sh.w = in.out.w;
  sh.k = l.channels, sh.r = l.kernel, sh.s = l.kernel, sh.p = l.out.h, sh.q = l.out.w;
  sh.pad = l.pad, sh.stride = l.stride;
  sh.data = cudnn_type(ct_);
  sh.strict_fp32 = cfg_.precision == Precision::kFp32;
  void* w = weight(layer);
  void* g = cfg_.training ? grad(layer) : nullptr;
  sh.alignment = alignment_of({ist.y.get(), w, st.y.get(), st.dy.get(), g, scratch_.get(),
                               l.input > 0 && cfg_.training ? dact(l.input) : nullptr});
  const std::int64_t max_ws = static_cast<std::int64_t>(cfg_.search ? search.bytes : search.free_b / 4);
  auto consider = [&](ConvAlgo& current, gpu::ConvDirection dir, float beta, void* a, void* b, void* c) {
    std::vector<std::shared_ptr<gpu::ConvPlan>> plans;
    try {
      plans = gpu::conv_plans(h, sh, dir, beta, max_ws, cfg_.search ? 12 : 1);
    } catch (const Error& e) {
      // "best" keeps the legacy algorithm and says why; "graph" was asked for, so fails.
      if (cfg_.conv_api == "graph") throw;
      graph_api_error_ = e.what();
    }
    for (auto& plan : plans) {
      ++graph_plans_tried_;
      const float ms = cfg_.search ? median_ms(stream_, [&] { plan->execute(h, a, b, c, search.ws.get()); }) : 0.0f;
      if (ms < 0) continue;
      const bool better =
          cfg_.conv_api == "graph" ? (!current.plan || ms < current.ms) : (current.ms < 0 || ms < current.ms);
      if (!better) continue;
      current.plan = plan;
      current.ms = cfg_.search ? ms : -1.0f;
      current.workspace = static_cast<std::size_t>(plan->workspace());
    }
  };
  consider(st.fwd, gpu::ConvDirection::kForward, 0.0f, ist.y.get(), w, st.y.get());
  if (cfg_.training) {
    consider(st.bwd_filter, gpu::ConvDirection::kBackwardFilter, 0.0f, ist.y.get(), g, st.y.get());
    if (l.input > 0)
      consider(st.bwd_data, gpu::ConvDirection::kBackwardData, st.acc_input ? 1.0f : 0.0f, scratch_.get(), w,
               st.y.get());
  }
}

// The chosen algorithms of a convolution shape, for describe().
void Net::record_algos(int layer, const std::string& key) {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  const LayerState& st = *layers_[static_cast<std::size_t>(layer)];
  algos_[key] = Json{{"fwd", st.fwd.name()},
                     {"fwd_ms", st.fwd.ms},
                     {"bwd_data", l.input > 0 && cfg_.training ? Json(st.bwd_data.name()) : Json(nullptr)},
                     {"bwd_data_ms", st.bwd_data.ms},
                     {"bwd_filter", cfg_.training ? Json(st.bwd_filter.name()) : Json(nullptr)},
                     {"bwd_filter_ms", st.bwd_filter.ms},
                     {"math", static_cast<int>(st.fwd.math)}};
  // [algo, math, status, ms] as Find gave them (not those it does not support); [algo, math,
  // ms] timed again
  if (cfg_.search)
    algos_[key]["search"] =
        Json{{"fwd", st.fwd.search}, {"bwd_data", st.bwd_data.search}, {"bwd_filter", st.bwd_filter.search}};
}

// cuDNN fuses the add and the ReLU into its NHWC batch norm (fp16); where it cannot, or another
// layer wrote the residual's gradient first, our kernels do them. Returns the workspace the fused
// batch norm needs (0 when not fused).
std::size_t Net::choose_bn_fusion(int layer) {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  LayerState& st = *layers_[static_cast<std::size_t>(layer)];
  const cudnnBatchNormOps_t ops = l.residual >= 0 ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION
                                  : l.relu        ? CUDNN_BATCHNORM_OPS_BN_ACTIVATION
                                                  : CUDNN_BATCHNORM_OPS_BN;
  const cudnnTensorDescriptor_t xd = layers_[static_cast<std::size_t>(l.input)]->y_desc.get();
  std::size_t fw = 0, bw = 0, rs = 0;
  if (!cfg_.fuse)
    st.unfused_reason = "fuse off";
  else if (!l.relu)
    st.unfused_reason = "nothing to fuse";
  else if (st.acc_residual)
    st.unfused_reason = "the residual's gradient is not written first here";
  else if (ct_ != DType::kHalf)
    st.unfused_reason = "cuDNN fuses batch norm with add and ReLU for fp16 NHWC data only";
  else if (l.out.c % 4 != 0)
    st.unfused_reason = "channels not a multiple of 4";
  else {
    cudnnStatus_t s1 = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, xd, l.residual >= 0 ? st.y_desc.get() : nullptr,
        st.y_desc.get(), st.bn_desc.get(), relu_.get(), &fw);
    cudnnStatus_t s2 = cudnnGetBatchNormalizationBackwardExWorkspaceSize(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, xd, st.y_desc.get(), st.y_desc.get(),
        l.residual >= 0 ? st.y_desc.get() : nullptr, xd, st.bn_desc.get(), relu_.get(), &bw);
    cudnnStatus_t s3 = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, relu_.get(), xd, &rs);
    if (s1 != CUDNN_STATUS_SUCCESS || s2 != CUDNN_STATUS_SUCCESS || s3 != CUDNN_STATUS_SUCCESS)
      st.unfused_reason = "cuDNN: " + cudnn_status_text(s1 != CUDNN_STATUS_SUCCESS   ? s1
                                                        : s2 != CUDNN_STATUS_SUCCESS ? s2
                                                                                     : s3);
    else {
      st.fused = true;
      alloc(st.reserve, rs);
      return std::max(fw, bw);
    }
  }
  return 0;
}

Net::~Net() = default;

void* Net::act(int layer) const { return layers_[static_cast<std::size_t>(layer)]->y.get(); }
void* Net::dact(int layer) const { return layers_[static_cast<std::size_t>(layer)]->dy.get(); }
void* Net::logits() const { return act(model_.layers.back().input); }
void* Net::weight(int layer) const {
  const long long off = model_.layers[static_cast<std::size_t>(layer)].param_offset;
  if (ct_ == DType::kFloat) return master() + off;
  return compute_copy_.get() + off * dtype_bytes(ct_);
}
void* Net::grad(int layer) const {
  return grads_ + model_.layers[static_cast<std::size_t>(layer)].param_offset * dtype_bytes(ct_);
}

void Net::sync_weights() {
  if (ct_ != DType::kFloat) convert_from_float(master(), compute_copy_.get(), ct_, model_.param_count, stream_);
}

double Net::read_loss() const {
  double v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, loss_.get(), sizeof v, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return v;
}

void Net::setup_conv(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const Layer& in = model_.layers[static_cast<std::size_t>(l.input)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(st.w_desc.get(), cudnn_type(ct_), CUDNN_TENSOR_NHWC, l.channels, in.out.c,
                                         l.kernel, l.kernel));
  for (cudnnConvolutionDescriptor_t d : {st.fwd_desc.get(), st.bwd_data_desc.get(), st.bwd_filter_desc.get()}) {
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d, l.pad, l.pad, l.stride, l.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(d, conv_math(cfg_.precision)));
  }
  int on = 0, oc = 0, oh = 0, ow = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(st.fwd_desc.get(),
                                                    layers_[static_cast<std::size_t>(l.input)]->y_desc.get(),
                                                    st.w_desc.get(), &on, &oc, &oh, &ow));
  if (oc != l.out.c || oh != l.out.h || ow != l.out.w)
    throw Error(l.name + ": cuDNN's output shape differs from the model's");
  if (l.bias)
    CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(st.bias_desc.get(), CUDNN_TENSOR_NHWC, cudnn_type(ct_), 1, l.channels, 1, 1));
}

// Row-major W[out][in] is column-major in x out; X[n][in] is in x n; Y[n][out] is out x n.
void Net::setup_fc(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const long long in = model_.layers[static_cast<std::size_t>(l.input)].out.elements(), out = l.channels,
                  n = cfg_.batch;
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  st.fc_fwd.setup(lt_.get(), cfg_.precision, ct_, true, false, out, n, in, in, in, out);
  if (cfg_.training) {
    st.fc_bwd_data.setup(lt_.get(), cfg_.precision, ct_, false, false, in, n, out, in, out, in);
    st.fc_bwd_weight.setup(lt_.get(), cfg_.precision, ct_, false, true, in, out, n, in, out, in);
  }
  if (l.bias)
    CUDNN_CHECK(
        cudnnSetTensor4dDescriptor(st.bias_desc.get(), CUDNN_TENSOR_NHWC, cudnn_type(ct_), 1, l.channels, 1, 1));
}

void Net::conv_forward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f;
  if (st.fwd.plan)
    st.fwd.plan->execute(cudnn_.get(), in.y.get(), weight(i), st.y.get(), workspace_.get());
  else
    CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, in.y_desc.get(), in.y.get(), st.w_desc.get(), weight(i),
                                        st.fwd_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(st.fwd.algo),
                                        workspace_.get(), workspace_.bytes(), &zero, st.y_desc.get(), st.y.get()));
  if (l.bias)
    CUDNN_CHECK(cudnnAddTensor(cudnn_.get(), &one, st.bias_desc.get(),
                               static_cast<std::byte*>(weight(i)) + l.weight_params() * dtype_bytes(ct_), &one,
                               st.y_desc.get(), st.y.get()));
}

void Net::conv_backward(int i, const std::function<void(int)>& done) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f;
  if (st.bwd_filter.plan)
    st.bwd_filter.plan->execute(cudnn_.get(), in.y.get(), grad(i), st.dy.get(), workspace_.get());
  else
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(cudnn_.get(), &one, in.y_desc.get(), in.y.get(), st.y_desc.get(),
                                               st.dy.get(), st.bwd_filter_desc.get(),
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(st.bwd_filter.algo),
                                               workspace_.get(), workspace_.bytes(), &zero, st.w_desc.get(), grad(i)));
  if (l.bias) bias_backward(i);
  done(i);
  if (l.input > 0) {
    const float beta = st.acc_input ? 1.0f : 0.0f;
    if (st.bwd_data.plan)
      st.bwd_data.plan->execute(cudnn_.get(), dact(l.input), weight(i), st.dy.get(), workspace_.get());
    else
      CUDNN_CHECK(cudnnConvolutionBackwardData(
          cudnn_.get(), &one, st.w_desc.get(), weight(i), st.y_desc.get(), st.dy.get(), st.bwd_data_desc.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(st.bwd_data.algo), workspace_.get(), workspace_.bytes(), &beta,
          in.y_desc.get(), dact(l.input)));
  }
}

// cuDNN's backward bias has no bf16: per-channel sums in fp32, then into the flat buffer.
void Net::bias_backward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  float* sums = reinterpret_cast<float*>(bias32_.get());
  CUDA_CHECK(cudaMemsetAsync(sums, 0, static_cast<std::size_t>(l.channels) * 4, stream_));
  train::bias_grad(dact(i), ct_, static_cast<long long>(cfg_.batch) * l.out.h * l.out.w, l.channels, sums, stream_);
  void* db = static_cast<std::byte*>(grad(i)) + l.weight_params() * dtype_bytes(ct_);
  if (ct_ == DType::kFloat)
    CUDA_CHECK(cudaMemcpyAsync(db, sums, static_cast<std::size_t>(l.channels) * 4, cudaMemcpyDeviceToDevice, stream_));
  else
    convert_from_float(sums, db, ct_, l.channels, stream_);
}

void Net::fc_forward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  st.fc_fwd.run(lt_.get(), weight(i), act(l.input), st.y.get(), false, lt_workspace_.get(), stream_);
  const float one = 1.0f;
  if (l.bias)
    CUDNN_CHECK(cudnnAddTensor(cudnn_.get(), &one, st.bias_desc.get(),
                               static_cast<std::byte*>(weight(i)) + l.weight_params() * dtype_bytes(ct_), &one,
                               st.y_desc.get(), st.y.get()));
}

void Net::fc_backward(int i, const std::function<void(int)>& done) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  st.fc_bwd_weight.run(lt_.get(), act(l.input), st.dy.get(), grad(i), false, lt_workspace_.get(), stream_);
  if (l.bias) bias_backward(i);
  done(i);
  if (l.input > 0)
    st.fc_bwd_data.run(lt_.get(), weight(i), st.dy.get(), dact(l.input), st.acc_input, lt_workspace_.get(), stream_);
}

void Net::bn_forward(int i, Pass pass) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f;
  const float* scale = master() + l.param_offset;
  const float* shift = scale + l.out.c;
  const void* z = l.residual >= 0 ? act(l.residual) : nullptr;
  const long long rows = static_cast<long long>(cfg_.batch) * l.out.h * l.out.w;
  if (pass == Pass::kInfer) {
    bn_forward_infer(in.y.get(), z, st.y.get(), ct_, rows, l.out.c, scale, shift,
                     reinterpret_cast<const float*>(st.running_mean.get()),
                     reinterpret_cast<const float*>(st.running_var.get()), kBnEpsilon, l.relu, bn_work_.get(), stream_);
  } else if (st.fused && pass == Pass::kTrain) {
    const cudnnBatchNormOps_t ops =
        l.residual >= 0 ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    CUDNN_CHECK(cudnnBatchNormalizationForwardTrainingEx(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, &one, &zero, in.y_desc.get(), in.y.get(),
        l.residual >= 0 ? st.y_desc.get() : nullptr, z, st.y_desc.get(), st.y.get(), st.bn_desc.get(), scale, shift,
        kBnMomentum, st.running_mean.get(), st.running_var.get(), kBnEpsilon, st.saved_mean.get(),
        st.saved_inv_var.get(), relu_.get(), workspace_.get(), workspace_.bytes(), st.reserve.get(),
        st.reserve.bytes()));
  } else {
    bn_forward_train(in.y.get(), z, st.y.get(), ct_, rows, l.out.c, scale, shift,
                     reinterpret_cast<float*>(st.saved_mean.get()), reinterpret_cast<float*>(st.saved_inv_var.get()),
                     reinterpret_cast<float*>(st.running_mean.get()), reinterpret_cast<float*>(st.running_var.get()),
                     pass == Pass::kCalibrate ? 1.0 : kBnMomentum, kBnEpsilon, l.relu,
                     reinterpret_cast<std::uint8_t*>(st.relu_mask.get()), bn_work_.get(), stream_);
  }
}

void Net::bn_backward(int i, const std::function<void(int)>& done) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f, beta_dx = st.acc_input ? 1.0f : 0.0f;
  const float* scale = master() + l.param_offset;
  const float* shift = scale + l.out.c;
  const long long count = cfg_.batch * l.out.elements();
  if (st.fused) {
    const cudnnBatchNormOps_t ops =
        l.residual >= 0 ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    CUDNN_CHECK(cudnnBatchNormalizationBackwardEx(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, &one, &beta_dx, &one, &zero, in.y_desc.get(), in.y.get(),
        st.y_desc.get(), st.y.get(), st.y_desc.get(), st.dy.get(), l.residual >= 0 ? st.y_desc.get() : nullptr,
        l.residual >= 0 ? dact(l.residual) : nullptr, in.y_desc.get(), dact(l.input), st.bn_desc.get(), scale, shift,
        st.bn_grad32, st.bn_grad32 + l.out.c, kBnEpsilon, st.saved_mean.get(), st.saved_inv_var.get(), relu_.get(),
        workspace_.get(), workspace_.bytes(), st.reserve.get(), st.reserve.bytes()));
  } else {
    train::bn_backward(in.y.get(), reinterpret_cast<const std::uint8_t*>(st.relu_mask.get()), st.dy.get(),
                       dact(l.input), l.residual >= 0 ? dact(l.residual) : nullptr, st.acc_input, st.acc_residual, ct_,
                       count / l.out.c, l.out.c, scale, reinterpret_cast<const float*>(st.saved_mean.get()),
                       reinterpret_cast<const float*>(st.saved_inv_var.get()), l.relu, st.bn_grad32, bn_work_.get(),
                       stream_);
  }
  if (ct_ != DType::kFloat) convert_from_float(st.bn_grad32, grad(i), ct_, l.params, stream_);
  done(i);
}

bool Net::needs_every_sm(int layer) const {
  const std::size_t i = static_cast<std::size_t>(layer);
  return i < layers_.size() && model_.layers[i].op == Op::kBatchNorm && layers_[i]->fused;
}

void Net::unfuse(int layer, const std::string& why) {
  if (!needs_every_sm(layer)) return;
  LayerState& st = *layers_[static_cast<std::size_t>(layer)];
  st.fused = false;
  st.unfused_reason = why;
  if (model_.layers[static_cast<std::size_t>(layer)].relu) alloc_relu_mask(layer);
}

void Net::alloc_relu_mask(int layer) {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  alloc(layers_[static_cast<std::size_t>(layer)]->relu_mask,
        bn_relu_mask_bytes(static_cast<long long>(cfg_.batch) * l.out.h * l.out.w, l.out.c, ct_));
}

void Net::forward(Pass pass) {
  if (pass == Pass::kTrain && !cfg_.training) throw Error("a net built for inference cannot train");
  if (marks_) mark(marks_->fwd[0]);
  for (std::size_t k = 1; k < model_.layers.size(); ++k) {
    const int i = static_cast<int>(k);
    const Layer& l = model_.layers[k];
    LayerState& st = *layers_[k];
    const long long n = cfg_.batch;
    switch (l.op) {
      case Op::kInput:
        break;
      case Op::kConv:
        conv_forward(i);
        break;
      case Op::kBatchNorm:
        bn_forward(i, pass);
        break;
      case Op::kRelu:
        relu_forward(act(l.input), st.y.get(), ct_, n * l.out.elements(), stream_);
        break;
      case Op::kMaxPool:
        // argmax: null in a net built for inference
        maxpool_forward(act(l.input), st.y.get(), reinterpret_cast<std::uint8_t*>(st.argmax.get()), ct_, st.pool,
                        stream_);
        break;
      case Op::kGlobalAvgPool: {
        const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
        avgpool_forward(act(l.input), st.y.get(), ct_, cfg_.batch, d.h * d.w, d.c, stream_);
        break;
      }
      case Op::kFc:
        fc_forward(i);
        break;
      case Op::kSoftmaxLoss:
        if (pass == Pass::kInfer) break;  // inference ends at the logits
        CUDA_CHECK(cudaMemsetAsync(loss_.get(), 0, sizeof(double), stream_));
        softmax_cross_entropy(act(l.input), reinterpret_cast<const int*>(labels_.get()),
                              pass == Pass::kTrain ? dact(l.input) : nullptr, ct_, cfg_.batch, model_.classes,
                              loss_scale_device(), loss_device(), stream_, cfg_.label_smoothing);
        break;
    }
    if (marks_) mark(marks_->fwd[k]);
  }
}

void Net::backward(const std::function<void(int)>& grads_done) {
  if (!cfg_.training) throw Error("a net built for inference has no backward pass");
  if (marks_) mark(marks_->bwd[model_.layers.size()]);
  for (int i = static_cast<int>(model_.layers.size()) - 1; i > 0; --i) {
    const Layer& l = model_.layers[static_cast<std::size_t>(i)];
    LayerState& st = *layers_[static_cast<std::size_t>(i)];
    const long long n = cfg_.batch;
    switch (l.op) {
      case Op::kInput:
      case Op::kSoftmaxLoss:  // its gradient came with the forward pass
        break;
      case Op::kConv:
        conv_backward(i, grads_done);
        break;
      case Op::kBatchNorm:
        bn_backward(i, grads_done);
        break;
      case Op::kRelu:
        relu_backward(st.y.get(), st.dy.get(), dact(l.input), st.acc_input, ct_, n * l.out.elements(), stream_);
        break;
      case Op::kMaxPool:
        maxpool_backward(st.dy.get(), reinterpret_cast<const std::uint8_t*>(st.argmax.get()), dact(l.input),
                         st.acc_input, ct_, st.pool, stream_);
        break;
      case Op::kGlobalAvgPool: {
        const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
        avgpool_backward(st.dy.get(), dact(l.input), st.acc_input, ct_, cfg_.batch, d.h * d.w, d.c, stream_);
        break;
      }
      case Op::kFc:
        fc_backward(i, grads_done);
        break;
    }
    if (marks_) mark(marks_->bwd[static_cast<std::size_t>(i)]);
  }
}

Net::LayerMarks::LayerMarks(std::size_t layers) : fwd(layers), bwd(layers + 1) {}

void Net::mark(const gpu::Event& e) const {
  CUDA_CHECK(
      cudaEventRecordWithFlags(e.get(), stream_, marks_->external ? cudaEventRecordExternal : cudaEventRecordDefault));
}

std::vector<double> Net::forward_ms(const LayerMarks& m) {
  std::vector<double> out(m.fwd.size(), 0.0);
  for (std::size_t k = 1; k < m.fwd.size(); ++k) {
    float f = 0;
    CUDA_CHECK(cudaEventElapsedTime(&f, m.fwd[k - 1].get(), m.fwd[k].get()));
    out[k] = f;
  }
  return out;
}

std::vector<double> Net::backward_ms(const LayerMarks& m) {
  const std::size_t n = m.fwd.size();
  std::vector<double> out(n, 0.0);
  // Backward runs from the last layer down: layer k's time ends at its mark, starts at k+1's.
  for (std::size_t k = 1; k < n; ++k) {
    float b = 0;
    CUDA_CHECK(cudaEventElapsedTime(&b, m.bwd[k + 1].get(), m.bwd[k].get()));
    out[k] = b;
  }
  return out;
}

Json Net::time_by_op() {
  const std::size_t n = model_.layers.size();
  LayerMarks m(n);
  marks_ = &m;
  try {
    forward(Pass::kTrain);
    backward([](int) {});
  } catch (...) {
    marks_ = nullptr;
    throw;
  }
  marks_ = nullptr;
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  const std::vector<double> fwd = forward_ms(m), bwd = backward_ms(m);
  std::map<std::string, double> ms;
  std::vector<std::pair<double, std::string>> layers;
  for (std::size_t k = 1; k < n; ++k) {
    const double f = fwd[k], b = bwd[k];
    const std::string op = name(model_.layers[k].op);
    ms[op + " fwd"] += f;
    ms[op + " bwd"] += b;
    layers.push_back({f + b, model_.layers[k].name});
  }
  std::sort(layers.rbegin(), layers.rend());
  Json top = Json::array();
  for (std::size_t k = 0; k < std::min<std::size_t>(5, layers.size()); ++k)
    top.push_back(Json{{"layer", layers[k].second}, {"ms", layers[k].first}});
  return Json{{"by_op_ms", ms}, {"slowest_layers", top}};
}

void Net::optimizer_step(float divisor) {
  int* flag = reinterpret_cast<int*>(overflow_.get());
  find_nonfinite(grads_, ct_, model_.param_count, flag, stream_);
  sgd_step(master(), reinterpret_cast<float*>(velocity_.get()), grads_,
           ct_ == DType::kFloat ? nullptr : compute_copy_.get(), ct_, model_.param_count, cfg_.lr, cfg_.momentum,
           cfg_.weight_decay, divisor, loss_scale_device(), flag, stream_, cfg_.lr_device, cfg_.nesterov);
  update_loss_scale(loss_scale_device(), reinterpret_cast<int*>(good_steps_.get()), flag, cfg_.loss_scale_interval,
                    ct_ == DType::kHalf, stream_);
}

Json Net::describe() const {
  Json bn = Json::object();
  int fused = 0, bns = 0;
  for (std::size_t i = 0; i < model_.layers.size(); ++i)
    if (model_.layers[i].op == Op::kBatchNorm) {
      ++bns;
      fused += layers_[i]->fused;
      if (!layers_[i]->fused && !layers_[i]->unfused_reason.empty())
        bn[layers_[i]->unfused_reason] = bn.value(layers_[i]->unfused_reason, 0) + 1;
    }
  return Json{{"conv_algorithms", algos_},
              {"algo_selection", cfg_.search ? "search" : "heuristic"},
              {"conv_api", cfg_.conv_api},
              {"graph_plans_tried", graph_plans_tried_},
              {"graph_api_error", graph_api_error_},
              {"algo_search_s", search_seconds_},
              {"workspace_bytes", workspace_.bytes()},
              {"batchnorm_fused", fused},
              {"batchnorm_layers", bns},
              {"batchnorm_unfused_why", bn},
              {"allocated_bytes", allocated_}};
}

}  // namespace scalebench::train
