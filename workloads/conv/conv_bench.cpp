#include "workloads/conv/conv_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/compute/peak.hpp"
#include "workloads/conv/conv_kernels.cuh"
#include "workloads/conv/conv_quant_bench.hpp"
#include "workloads/conv/conv_reference.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/gpu/graph_capture.hpp"

namespace scalebench::conv {

namespace {
using compute::Precision;

// fp32: CUDA cores only (FMA math forbids TF32); tf32: default math, which lets fp32 data through
// the TF32 Tensor Cores on Ampere and later (as frameworks run fp32 with TF32 allowed); fp16 and
// bf16: Tensor Core math.
cudnnMathType_t requested_math(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return CUDNN_FMA_MATH;
    case Precision::kTf32:
      return CUDNN_DEFAULT_MATH;
    default:
      return CUDNN_TENSOR_OP_MATH;
  }
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH:
      return "default";
    case CUDNN_TENSOR_OP_MATH:
      return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH:
      return "fma";
  }
  return "?";
}

std::string algo_name(ConvPass pass, int algo) {
  static const char* const kFwd[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                     "WINOGRAD",      "WINOGRAD_NONFUSED"};
  static const char* const kBwdData[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const char* const kBwdFilter[] = {"ALGO_0",    "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                           "FFT_TILING"};
  auto pick = [&](const char* const* names, int count) {
    return algo >= 0 && algo < count ? std::string(names[algo]) : "algo " + std::to_string(algo);
  };
  switch (pass) {
    case ConvPass::kForward:
      return pick(kFwd, static_cast<int>(std::size(kFwd)));
    case ConvPass::kBackwardData:
      return pick(kBwdData, static_cast<int>(std::size(kBwdData)));
    case ConvPass::kBackwardFilter:
      return pick(kBwdFilter, static_cast<int>(std::size(kBwdFilter)));
  }
  return "?";
}

struct Candidate {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  float search_ms = -1;  // cuDNN's own timing when found by search
};

// The candidates of a perf list (heuristic or search order), and why cuDNN ruled the others out.
template <typename Perf>
std::vector<Candidate> candidates(ConvPass pass, const std::vector<Perf>& perf, int returned, bool searched,
                                  Json& rejected) {
  std::vector<Candidate> out;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[static_cast<std::size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS) {
      rejected.push_back(Json{{"algo", algo_name(pass, p.algo)}, {"reason", cudnnGetErrorString(p.status)}});
      continue;
    }
    out.push_back(Candidate{static_cast<int>(p.algo), p.mathType, searched ? p.time : -1.0f});
  }
  return out;
}

// One point's convolution on a stream: its descriptors, its tensors, and its pass as one cuDNN
// call. x, w and y hold x, w, y (fwd), dx, w, dy (bwd_data) or x, dw, dy (bwd_filter).
struct Convolution {
  Convolution(cudnnHandle_t handle, cudaStream_t on, ConvPass p) : h(handle), stream(on), pass(p) {}

  cudnnHandle_t h;
  cudaStream_t stream;
  ConvPass pass;
  gpu::TensorDescriptor x_desc, y_desc;
  gpu::FilterDescriptor w_desc;
  gpu::ConvolutionDescriptor conv_desc;
  gpu::DeviceBuffer x, w, y;

  static constexpr float kAlpha = 1.0f, kBeta = 0.0f;  // fp32 scalars: the compute type is fp32

  // The pass with algorithm `algo` and workspace `ws`; its output is written whole (beta = 0).
  cudnnStatus_t run(int algo, void* ws, std::size_t ws_bytes) const {
    switch (pass) {
      case ConvPass::kForward:
        return cudnnConvolutionForward(h, &kAlpha, x_desc.get(), x.get(), w_desc.get(), w.get(), conv_desc.get(),
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, ws_bytes, &kBeta, y_desc.get(),
                                       y.get());
      case ConvPass::kBackwardData:
        return cudnnConvolutionBackwardData(h, &kAlpha, w_desc.get(), w.get(), y_desc.get(), y.get(), conv_desc.get(),
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, ws_bytes, &kBeta,
                                            x_desc.get(), x.get());
      case ConvPass::kBackwardFilter:
        return cudnnConvolutionBackwardFilter(h, &kAlpha, x_desc.get(), x.get(), y_desc.get(), y.get(), conv_desc.get(),
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws, ws_bytes, &kBeta,
                                              w_desc.get(), w.get());
    }
    return CUDNN_STATUS_BAD_PARAM;
  }

  cudnnStatus_t workspace_size(int algo, std::size_t* bytes) const {
    switch (pass) {
      case ConvPass::kForward:
        return cudnnGetConvolutionForwardWorkspaceSize(h, x_desc.get(), w_desc.get(), conv_desc.get(), y_desc.get(),
                                                       static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
      case ConvPass::kBackwardData:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, w_desc.get(), y_desc.get(), conv_desc.get(),
                                                            x_desc.get(),
                                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
      case ConvPass::kBackwardFilter:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, x_desc.get(), y_desc.get(), conv_desc.get(), w_desc.get(),
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
    }
    return CUDNN_STATUS_BAD_PARAM;
  }

  // The tensor the pass writes.
  const gpu::DeviceBuffer& result() const {
    return pass == ConvPass::kForward ? y : pass == ConvPass::kBackwardData ? x : w;
  }
};

// The descriptors: x and y (or dx and dy) and the filter share the layout and data type; sums are
// fp32 for every precision. The math type is the precision's (requested_math).
void describe(Convolution& conv, const ConvPoint& pt) {
  const ConvShape& s = pt.shape;
  const cudnnDataType_t dt = gpu::cudnn_type(compute::element_dtype(pt.precision));
  const cudnnTensorFormat_t fmt = pt.layout == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(conv.x_desc.get(), fmt, dt, s.n, s.c, s.h, s.w));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(conv.w_desc.get(), dt, fmt, s.k, s.c / s.groups, s.r, s.s));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.conv_desc.get(), s.pad_h, s.pad_w, s.stride_h, s.stride_w, s.dil_h,
                                              s.dil_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv.conv_desc.get(), s.groups));
  // The FLOP count and the reference rest on our output size: cuDNN's must agree.
  int on = 0, oc = 0, oh = 0, ow = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv.conv_desc.get(), conv.x_desc.get(), conv.w_desc.get(), &on,
                                                    &oc, &oh, &ow));
  if (on != s.n || oc != s.k || oh != s.p() || ow != s.q())
    throw Error(s.name + ": cuDNN's output is " + std::to_string(on) + "x" + std::to_string(oc) + "x" +
                std::to_string(oh) + "x" + std::to_string(ow) + ", expected " + std::to_string(s.n) + "x" +
                std::to_string(s.k) + "x" + std::to_string(s.p()) + "x" + std::to_string(s.q()));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(conv.y_desc.get(), fmt, dt, s.n, s.k, oh, ow));
  CUDNN_CHECK(cudnnSetConvolutionMathType(conv.conv_desc.get(), requested_math(pt.precision)));
}

// The tensors, allocated: the pass's two inputs get grid values (the reference's), its output none.
void fill_inputs(Convolution& conv, const ConvPoint& pt) {
  const ConvShape& s = pt.shape;
  const Dims xd = input_dims(s), wd = filter_dims(s), yd = output_dims(s);
  const auto bytes_of = [&](const Dims& d) {
    return static_cast<std::size_t>(element_count(d)) * static_cast<std::size_t>(compute::element_bytes(pt.precision));
  };
  conv.x = gpu::DeviceBuffer(bytes_of(xd));
  conv.w = gpu::DeviceBuffer(bytes_of(wd));
  conv.y = gpu::DeviceBuffer(bytes_of(yd));
  const gpu::DType kind = compute::element_dtype(pt.precision);
  const bool nhwc = pt.layout == Layout::kNhwc;
  if (conv.pass != ConvPass::kBackwardData)
    fill_grid(conv.x.get(), kind, xd.data(), nhwc, TensorRole::kInput, conv.stream);
  if (conv.pass != ConvPass::kBackwardFilter)
    fill_grid(conv.w.get(), kind, wd.data(), nhwc, TensorRole::kFilter, conv.stream);
  if (conv.pass != ConvPass::kForward)
    fill_grid(conv.y.get(), kind, yd.data(), nhwc, TensorRole::kOutputGrad, conv.stream);
  CUDA_CHECK(cudaStreamSynchronize(conv.stream));
}

// cuDNN's list of algorithms for the pass: its status, the candidates (best first) and those it
// ruled out with why, and how long a search took.
struct Listing {
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  std::vector<Candidate> candidates;
  Json rejected = Json::array();
  double search_seconds = 0;
};

// The candidates, best first: cuDNN's heuristic order, or its measured order with `search` (Find
// runs every algorithm on these tensors, with up to half the free memory, at most 4 GiB, as
// workspace). The three passes differ only in the cuDNN functions and their perf type.
Listing list_candidates(const Convolution& conv, bool search) {
  Listing out;
  const cudnnHandle_t h = conv.h;
  const Convolution& c = conv;  // short, for the calls below
  auto list = [&](auto max_count, auto heuristic, auto find, auto perf_tag) {
    using Perf = decltype(perf_tag);
    int max = 0, returned = 0;
    CUDNN_CHECK(max_count(h, &max));
    std::vector<Perf> perf(static_cast<std::size_t>(std::max(max, 1)));
    if (!search) {
      out.status = heuristic(max, &returned, perf.data());
    } else {
      std::size_t free_bytes = 0, total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      const std::size_t ws_bytes = std::min<std::size_t>(free_bytes / 2, std::size_t{4} << 30);
      gpu::DeviceBuffer ws(ws_bytes);
      const auto t0 = std::chrono::steady_clock::now();
      out.status = find(max, &returned, perf.data(), ws.get(), ws_bytes);
      CUDA_CHECK(cudaStreamSynchronize(conv.stream));
      out.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (out.status == CUDNN_STATUS_SUCCESS)
      out.candidates = candidates(conv.pass, perf, returned, search, out.rejected);
  };
  switch (conv.pass) {
    case ConvPass::kForward:
      list([](cudnnHandle_t hh, int* m) { return cudnnGetConvolutionForwardAlgorithmMaxCount(hh, m); },
           [&](int m, int* r, cudnnConvolutionFwdAlgoPerf_t* p) {
             return cudnnGetConvolutionForwardAlgorithm_v7(h, c.x_desc.get(), c.w_desc.get(), c.conv_desc.get(),
                                                           c.y_desc.get(), m, r, p);
           },
           [&](int m, int* r, cudnnConvolutionFwdAlgoPerf_t* p, void* ws, std::size_t wsb) {
             return cudnnFindConvolutionForwardAlgorithmEx(h, c.x_desc.get(), c.x.get(), c.w_desc.get(), c.w.get(),
                                                           c.conv_desc.get(), c.y_desc.get(), c.y.get(), m, r, p, ws,
                                                           wsb);
           },
           cudnnConvolutionFwdAlgoPerf_t{});
      break;
    case ConvPass::kBackwardData:
      list([](cudnnHandle_t hh, int* m) { return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(hh, m); },
           [&](int m, int* r, cudnnConvolutionBwdDataAlgoPerf_t* p) {
             return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, c.w_desc.get(), c.y_desc.get(), c.conv_desc.get(),
                                                                c.x_desc.get(), m, r, p);
           },
           [&](int m, int* r, cudnnConvolutionBwdDataAlgoPerf_t* p, void* ws, std::size_t wsb) {
             return cudnnFindConvolutionBackwardDataAlgorithmEx(h, c.w_desc.get(), c.w.get(), c.y_desc.get(), c.y.get(),
                                                                c.conv_desc.get(), c.x_desc.get(), c.x.get(), m, r, p,
                                                                ws, wsb);
           },
           cudnnConvolutionBwdDataAlgoPerf_t{});
      break;
    case ConvPass::kBackwardFilter:
      list([](cudnnHandle_t hh, int* m) { return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(hh, m); },
           [&](int m, int* r, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
             return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, c.x_desc.get(), c.y_desc.get(), c.conv_desc.get(),
                                                                  c.w_desc.get(), m, r, p);
           },
           [&](int m, int* r, cudnnConvolutionBwdFilterAlgoPerf_t* p, void* ws, std::size_t wsb) {
             return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, c.x_desc.get(), c.x.get(), c.y_desc.get(),
                                                                  c.y.get(), c.conv_desc.get(), c.w_desc.get(),
                                                                  c.w.get(), m, r, p, ws, wsb);
           },
           cudnnConvolutionBwdFilterAlgoPerf_t{});
      break;
  }
  return out;
}

// The algorithm chosen, its rank in cuDNN's list (0: its first pick ran) and its workspace.
struct Choice {
  std::optional<Candidate> candidate;
  std::size_t rank = 0;
  gpu::DeviceBuffer ws;
};

// The first candidate that runs here: its workspace allocated, one untimed run to prove it; those
// that do not run go to `rejected` with why. fp32 always runs with FMA math, whatever a perf entry
// reports, so no TF32 slips in.
Choice choose(const Convolution& conv, Precision precision, const std::vector<Candidate>& cands, Json& rejected) {
  Choice chosen;
  for (std::size_t i = 0; i < cands.size() && !chosen.candidate; ++i) {
    const Candidate& c = cands[i];
    const cudnnMathType_t math = precision == Precision::kFp32 ? CUDNN_FMA_MATH : c.math;
    auto reject = [&](const std::string& why) {
      rejected.push_back(Json{{"algo", algo_name(conv.pass, c.algo)}, {"math_type", math_name(math)}, {"reason", why}});
    };
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv.conv_desc.get(), math));
    std::size_t bytes = 0;
    if (cudnnStatus_t st = conv.workspace_size(c.algo, &bytes); st != CUDNN_STATUS_SUCCESS) {
      reject("workspace size: " + cudnn_status_text(st));
      continue;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes > free_bytes / 10 * 9) {
      reject("needs " + std::to_string(bytes) + " bytes of workspace, " + std::to_string(free_bytes) + " free");
      continue;
    }
    gpu::DeviceBuffer b(bytes);
    if (cudnnStatus_t st = conv.run(c.algo, b.get(), bytes); st != CUDNN_STATUS_SUCCESS) {
      reject(cudnn_status_text(st));
      continue;
    }
    CUDA_CHECK(cudaStreamSynchronize(conv.stream));
    chosen.candidate = c;
    chosen.candidate->math = math;
    chosen.rank = i;
    chosen.ws = std::move(b);
  }
  return chosen;
}

// A point no algorithm runs: skipped, with each one's reason.
void no_algorithm(const ConvPoint& pt, const Json& rejected, compute::RankOutcome& out) {
  out.status = "skipped";
  out.reason = std::string("cuDNN has no algorithm that runs this convolution (") + name(pt.layout) + ", " +
               compute::name(pt.precision) + ")";
  for (const Json& r : rejected)
    out.reason += "; " + r.at("algo").get<std::string>() + ": " + r.at("reason").get<std::string>();
}

// Seconds per convolution with the chosen algorithm. Graph timing: kGraphConvs convolutions
// captured into one CUDA graph and replayed, so the host's cost per cuDNN call (large in cuDNN 9's
// legacy API) cannot starve the GPU between short convolutions. A capture cuDNN refuses falls back
// to direct calls, with the reason recorded.
std::vector<double> time_convolutions(const Convolution& conv, int algo, const gpu::DeviceBuffer& ws, bool use_graph,
                                      const compute::TimingConfig& timing, Json& details) {
  auto direct = [&](cudaStream_t) { CUDNN_CHECK(conv.run(algo, ws.get(), ws.bytes())); };
  constexpr int kGraphConvs = 20;
  std::optional<gpu::GraphExec> graph;
  if (use_graph) {
    auto convs = [&] {
      for (int i = 0; i < kGraphConvs; ++i)
        if (const cudnnStatus_t st = conv.run(algo, ws.get(), ws.bytes()); st != CUDNN_STATUS_SUCCESS)
          throw Error("cuDNN during capture: " + cudnn_status_text(st));
    };
    try {
      // Thread-local: an unsafe call cuDNN makes during the capture refuses it (direct calls then).
      graph = gpu::capture_graph(conv.stream, convs, 0, cudaStreamCaptureModeThreadLocal);
    } catch (const std::exception& e) {
      (void)cudaGetLastError();  // a refused capture leaves no sticky error; clear the last one
      details["graph_problem"] = e.what();
    }
  }
  if (!graph) {
    std::vector<double> seconds = compute::time_on_stream(conv.stream, timing, direct);
    details["timing"] = "direct";
    return seconds;
  }
  std::vector<double> seconds = compute::time_on_stream(
      conv.stream, timing, [&](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(graph->get(), s)); });
  for (double& sec : seconds) sec /= kGraphConvs;
  details["timing"] = "graph";
  details["graph_convs"] = kGraphConvs;
  return seconds;
}

// The output of the last timed run (beta = 0: every run rewrites it whole) at sampled positions,
// against the fp64 sum of the same grid values: out.wrong and out.checked, and in `details` the
// error bound, the first wrong element, the largest relative error and the tolerance.
void check_result(const Convolution& conv, const ConvPoint& pt, int algo, compute::RankOutcome& out, Json& details) {
  const ConvShape& s = pt.shape;
  const ConvPass pass = conv.pass;
  const Dims rd = result_dims(s, pass);
  const std::vector<Index> picks = sample_indices(rd, sample_count(s, pass));
  std::vector<long long> offsets;
  for (const Index& i : picks) offsets.push_back(storage_offset(rd, pt.layout, i));
  const int count = static_cast<int>(offsets.size());
  gpu::DeviceBuffer d_offsets(offsets.size() * sizeof(long long)), d_values(offsets.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(d_offsets.get(), offsets.data(), d_offsets.bytes(), cudaMemcpyHostToDevice, conv.stream));
  gather_as_float(conv.result().get(), compute::element_dtype(pt.precision),
                  reinterpret_cast<const long long*>(d_offsets.get()), count, reinterpret_cast<float*>(d_values.get()),
                  conv.stream);
  std::vector<float> got(offsets.size());
  CUDA_CHECK(cudaMemcpyAsync(got.data(), d_values.get(), d_values.bytes(), cudaMemcpyDeviceToHost, conv.stream));
  CUDA_CHECK(cudaStreamSynchronize(conv.stream));
  const std::string algo_text = algo_name(pass, algo);
  const bool transform = algo_text.find("FFT") != std::string::npos || algo_text.find("WINOGRAD") != std::string::npos;
  const double scale = result_scale(s, pass, transform);
  details["error_bound"] = transform ? "worst-case (transform algorithm)" : "typical";
  long long wrong = 0;
  double worst = 0;  // largest |got - ref| / max(|ref|, scale)
  for (std::size_t j = 0; j < picks.size(); ++j) {
    const double ref = reference_element(s, pass, picks[j]);
    const double err = std::fabs(got[j] - ref) / std::max(std::fabs(ref), scale);
    worst = std::isfinite(got[j]) ? std::max(worst, err) : INFINITY;
    if (!compute::within_tolerance(pt.precision, got[j], ref, scale)) {
      if (wrong == 0) details["first_wrong"] = Json{{"index", picks[j]}, {"got", got[j]}, {"expected", ref}};
      ++wrong;
    }
  }
  out.wrong = wrong;
  out.checked = count;
  details["max_rel_error"] = std::isfinite(worst) ? Json(worst) : Json("inf");
  details["tolerance"] = compute::rel_tolerance(pt.precision);
}
}  // namespace

ConvBench::ConvBench() { CUDNN_CHECK(cudnnSetStream(handle_.get(), stream_.get())); }

// In phases: the descriptors and tensors, cuDNN's candidates, the first that runs, its timing and
// the check of its output; a point that cannot run here is skipped with why.
compute::RankOutcome ConvBench::measure(const ConvPoint& pt, const Config& cfg, const compute::TimingConfig& timing,
                                        const compute::DeviceInfo& gpu) {
  compute::RankOutcome out;
  if (std::string why = compute::unsupported_on(pt.precision, gpu.cc_major, gpu.cc_minor); !why.empty()) {
    out.status = "skipped";
    out.reason = why;
    return out;
  }
  const double peak =
      compute::peak_ops_per_second(pt.precision, gpu.cc_major, gpu.cc_minor, gpu.sm_count, gpu.max_clock_mhz);
  if (quantized(pt.precision)) return measure_quantized(handle_.get(), stream_.get(), pt, cfg, timing, peak);
  Convolution conv{handle_.get(), stream_.get(), pt.pass};
  describe(conv, pt);
  fill_inputs(conv, pt);

  Listing listing = list_candidates(conv, cfg.search);
  const char* selection = cfg.search ? "search" : "heuristic";
  if (listing.status != CUDNN_STATUS_SUCCESS) {
    out.status = "skipped";
    out.reason = std::string("cuDNN ") + selection + " found no algorithm: " + cudnn_status_text(listing.status);
    return out;
  }
  const Choice chosen = choose(conv, pt.precision, listing.candidates, listing.rejected);
  Json details{{"selection", selection}, {"peak_tflops", peak * 1e-12}};
  if (cfg.search) details["search_s"] = listing.search_seconds;
  if (!listing.rejected.empty()) details["rejected"] = listing.rejected;
  if (!chosen.candidate) {
    no_algorithm(pt, listing.rejected, out);
    out.details = details;
    return out;
  }
  const int algo = chosen.candidate->algo;
  details["algo"] = algo_name(pt.pass, algo);
  details["algo_id"] = algo;
  details["math_type"] = math_name(chosen.candidate->math);
  details["workspace_bytes"] = chosen.ws.bytes();
  details["choice_rank"] = chosen.rank;  // 0: cuDNN's first pick ran
  if (chosen.candidate->search_ms >= 0) details["search_ms"] = chosen.candidate->search_ms;

  out.seconds = time_convolutions(conv, algo, chosen.ws, cfg.graph, timing, details);
  if (cfg.check) check_result(conv, pt, algo, out, details);
  out.details = details;
  return out;
}

}  // namespace scalebench::conv
