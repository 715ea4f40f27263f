#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "workloads/gpu/alignment.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_conv_graph.hpp"
#include "workloads/train/conv_choice.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/net_layer_state.hpp"

// The net's algorithm search: which cuDNN algorithm (legacy or graph plan) each convolution runs
// and in which direction, and which batch norms cuDNN fuses.
namespace scalebench::train {

namespace {
using compute::Precision;

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

// The alignment (bytes, at most 16) of every buffer a convolution's graph plans touch: a plan
// assumes it, so a plan made for one layer may serve another only at the same alignment.
std::size_t Net::conv_alignment(int layer) const {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  const LayerState& st = *layers_[static_cast<std::size_t>(layer)];
  const LayerState& ist = *layers_[static_cast<std::size_t>(l.input)];
  return gpu::alignment_of({ist.y, weight(layer), st.y, st.dy.get(), cfg_.training ? grad(layer) : nullptr,
                            scratch_.get(), l.input > 0 && cfg_.training ? dact(l.input) : nullptr},
                           16);
}

// A convolution's algorithms for its three directions (the cache's if a layer of its shape has
// them); returns the workspace they need.
std::size_t Net::choose_conv(int layer, AlgoSearch& search) {
  const std::size_t i = static_cast<std::size_t>(layer);
  const Layer& l = model_.layers[i];
  LayerState& st = *layers_[i];
  setup_conv(layer);
  const Layer& in = model_.layers[static_cast<std::size_t>(l.input)];
  // A depthwise convolution in our kernels skips cuDNN's search; its workspace is the filter
  // gradient's partial sums.
  if (cfg_.depthwise == "ours" && l.groups == in.out.c && l.channels == in.out.c && l.kernel_h == l.kernel_w &&
      l.pad_h == l.pad_w && depthwise_supported(l.kernel_h, l.stride)) {
    st.depthwise = true;
    st.pool = PoolShape{cfg_.batch, in.out.h, in.out.w, in.out.c, l.out.h, l.out.w, l.kernel_h, l.stride, l.pad_h};
    ++depthwise_kernels_;
    return cfg_.training ? depthwise_filter_work_bytes(st.pool) : 0;
  }
  if (pointwise_as_matmul(layer)) {
    st.matmul = true;
    setup_matmuls(layer, in.out.c, static_cast<long long>(cfg_.batch) * l.out.h * l.out.w);
    ++pointwise_matmuls_;
    return 0;  // the matmuls use lt_workspace_
  }
  // "best" asks the graph API in fp32 only: there it has FMA kernels the legacy API lacks
  // (163 -> 127 ms per ResNet-50 step at batch 128 on an H200), in tf32 it gained nothing,
  // and in fp16 its search had not finished after two minutes.
  const bool use_graph =
      cfg_.conv_api == "graph" || (cfg_.conv_api == "best" && cfg_.search && cfg_.precision == Precision::kFp32);
  // A graph plan has beta and the pointers' alignment baked in: shapes that accumulate their input
  // gradient, or whose buffers lie less aligned (and so keep the legacy algorithms), need their own.
  const std::string key = std::to_string(in.out.c) + "x" + std::to_string(in.out.h) + "x" + std::to_string(in.out.w) +
                          ">" + std::to_string(l.channels) + "k" + std::to_string(l.kernel_h) + "x" +
                          std::to_string(l.kernel_w) + "s" + std::to_string(l.stride) + "p" + std::to_string(l.pad_h) +
                          "x" + std::to_string(l.pad_w) + (l.groups > 1 ? "g" + std::to_string(l.groups) : "") +
                          (use_graph && st.acc_input ? "+acc" : "") +
                          (use_graph ? "a" + std::to_string(conv_alignment(layer)) : "");
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

// Whether a convolution runs as matmuls (NetConfig::pointwise): a 1x1 of stride 1, unpadded and
// ungrouped, is one over its NHWC rows.
bool Net::pointwise_as_matmul(int layer) const {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  const int c = model_.layers[static_cast<std::size_t>(l.input)].out.c;
  const bool pointwise =
      l.kernel_h == 1 && l.kernel_w == 1 && l.stride == 1 && l.pad_h == 0 && l.pad_w == 0 && l.groups == 1;
  if (!pointwise || cfg_.pointwise == "cudnn") return false;
  if (cfg_.pointwise == "gemm") return true;
  return ct_ != DType::kF32 && (c % 8 != 0 || l.channels % 8 != 0);
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
      CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, ist.y_desc.get(), ist.y, st.w_desc.get(), weight(layer),
                                                         st.fwd_desc.get(), st.y_desc.get(), st.y, kMax, &got, perf, ws,
                                                         wsb));
    st.fwd = pick_algo(
        c, perf, got, heur, hgot, st.fwd_desc.get(),
        [&](int a, std::size_t* b) {
          return cudnnGetConvolutionForwardWorkspaceSize(h, ist.y_desc.get(), st.w_desc.get(), st.fwd_desc.get(),
                                                         st.y_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(a), b);
        },
        [&](int a) {
          return cudnnConvolutionForward(h, &one, ist.y_desc.get(), ist.y, st.w_desc.get(), weight(layer),
                                         st.fwd_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(a), ws, wsb, &zero,
                                         st.y_desc.get(), st.y);
        });
  }
  if (!cfg_.training) return;
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax], heur[kMax];
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      h, ist.y_desc.get(), st.y_desc.get(), st.bwd_filter_desc.get(), st.w_desc.get(), kMax, &hgot, heur));
  if (cfg_.search)
    CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, ist.y_desc.get(), ist.y, st.y_desc.get(), st.y,
                                                              st.bwd_filter_desc.get(), st.w_desc.get(), grad(layer),
                                                              kMax, &got, perf, ws, wsb));
  st.bwd_filter = pick_algo(
      c, perf, got, heur, hgot, st.bwd_filter_desc.get(),
      [&](int a, std::size_t* b) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, ist.y_desc.get(), st.y_desc.get(),
                                                              st.bwd_filter_desc.get(), st.w_desc.get(),
                                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), b);
      },
      [&](int a) {
        return cudnnConvolutionBackwardFilter(h, &one, ist.y_desc.get(), ist.y, st.y_desc.get(), st.y,
                                              st.bwd_filter_desc.get(), static_cast<cudnnConvolutionBwdFilterAlgo_t>(a),
                                              ws, wsb, &zero, st.w_desc.get(), grad(layer));
      });
  if (l.input <= 0) return;
  cudnnConvolutionBwdDataAlgoPerf_t dperf[kMax], dheur[kMax];
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, st.w_desc.get(), st.y_desc.get(), st.bwd_data_desc.get(),
                                                          ist.y_desc.get(), kMax, &hgot, dheur));
  if (cfg_.search)
    CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, st.w_desc.get(), weight(layer), st.y_desc.get(), st.y,
                                                            st.bwd_data_desc.get(), ist.y_desc.get(), scratch_.get(),
                                                            kMax, &got, dperf, ws, wsb));
  st.bwd_data = pick_algo(
      c, dperf, got, dheur, hgot, st.bwd_data_desc.get(),
      [&](int a, std::size_t* b) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, st.w_desc.get(), st.y_desc.get(), st.bwd_data_desc.get(),
                                                            ist.y_desc.get(),
                                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(a), b);
      },
      [&](int a) {
        return cudnnConvolutionBackwardData(h, &one, st.w_desc.get(), weight(layer), st.y_desc.get(), st.y,
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
  // The graph API's shape has one padding for both sides and no group count: 1x7 and 7x1
  // convolutions, and grouped (depthwise) ones, keep the legacy algorithms, which take the group
  // count from cudnnSetConvolutionGroupCount. ("best" asks for graph plans in fp32 only.)
  // Nor do buffers less than 16-byte aligned (parameters at odd offsets in the flat buffer): plans
  // made for them ran into misaligned-address faults (tiny-inception and NASNet in fp32).
  if (l.pad_h != l.pad_w || l.groups > 1 || conv_alignment(layer) < 16) {
    ++legacy_only_;
    return;
  }
  cudnnHandle_t h = cudnn_.get();
  const int n = cfg_.batch;
  gpu::ConvShape sh;
  sh.n = n, sh.c = in.out.c, sh.h = in.out.h, sh.w = in.out.w;
  sh.k = l.channels, sh.r = l.kernel_h, sh.s = l.kernel_w, sh.p = l.out.h, sh.q = l.out.w;
  sh.pad = l.pad_h, sh.stride = l.stride;
  sh.data = cudnn_type(ct_);
  sh.strict_fp32 = cfg_.precision == Precision::kFp32;
  void* w = weight(layer);
  void* g = cfg_.training ? grad(layer) : nullptr;
  sh.alignment = static_cast<std::int64_t>(conv_alignment(layer));
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
  consider(st.fwd, gpu::ConvDirection::kForward, 0.0f, ist.y, w, st.y);
  if (cfg_.training) {
    consider(st.bwd_filter, gpu::ConvDirection::kBackwardFilter, 0.0f, ist.y, g, st.y);
    if (l.input > 0)
      consider(st.bwd_data, gpu::ConvDirection::kBackwardData, st.acc_input ? 1.0f : 0.0f, scratch_.get(), w, st.y);
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
  else if (ct_ != DType::kF16)
    st.unfused_reason = "cuDNN fuses batch norm with add and ReLU for fp16 NHWC data only";
  else if (l.out.c % 4 != 0)
    st.unfused_reason = "channels not a multiple of 4";
  else if (gpu::alignment_of({master() + l.param_offset, st.bn_grad32}, 16) < 16)
    // Its persistent kernel reads scale and shift as vectors: where a layer's parameters lie
    // unaligned in the flat buffers (NASNet's odd channel counts), it fails with a misaligned
    // address, and every call after it fails too.
    st.unfused_reason = "scale and shift not 16-byte aligned in the parameter buffers";
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

}  // namespace scalebench::train
