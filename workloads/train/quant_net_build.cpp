// A quantized net's layers made: each convolution's batch norm folded in, its weights quantized
// per output channel (or kept in the trained type) and its cuDNN graph with the epilogue that maps
// its sums to its output's units; the image's legacy convolution; the fp32 classifier.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/gpu/quant_scale.hpp"
#include "workloads/train/quant_kernels.cuh"
#include "workloads/train/quant_net_parts.hpp"

namespace scalebench::train {

using gpu::QuantFormat;

namespace {
cudnnDataType_t eight_bit_type(QuantFormat f) {
  return f == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_FP8_E4M3;
}

// A convolution with the batch norm after it folded in: w' = w g / sqrt(var + eps) per output
// channel k (KRSC, C as the layer has it), b' = shift + (bias - mean) g / sqrt(var + eps).
struct FoldedConv {
  std::vector<float> weights;
  std::vector<double> bias;
};
FoldedConv fold(const Net& trained, int conv, int bn_layer) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(conv)];
  const Layer& bn = trained.model().layers[static_cast<std::size_t>(bn_layer)];
  const std::vector<float> p = trained.host_params(conv), bnp = trained.host_params(bn_layer),
                           stats = trained.running_stats(bn_layer);
  const auto k = static_cast<std::size_t>(l.channels);
  const std::size_t per_k = static_cast<std::size_t>(l.weight_params()) / k;
  FoldedConv f{std::vector<float>(k * per_k), std::vector<double>(k)};
  for (std::size_t o = 0; o < k; ++o) {
    const double g = bnp[o] / std::sqrt(static_cast<double>(stats[k + o]) + bn.eps);
    const double conv_bias = l.bias ? p[k * per_k + o] : 0.0;
    f.bias[o] = bnp[k + o] + (conv_bias - stats[o]) * g;
    for (std::size_t j = 0; j < per_k; ++j) f.weights[o * per_k + j] = static_cast<float>(p[o * per_k + j] * g);
  }
  return f;
}
}  // namespace

// Every host-to-device copy here goes on the net's stream: a cudaMemcpy from pageable memory may
// return before its DMA lands, and the net's non-blocking stream does not wait for the legacy
// stream, so a kernel there could read weights still being written: about one in four of the
// ResNet-50 engines' nets on an H200 answered otherwise before, none in 11 engines since (2026-12-02).
void QuantNet::build(const Net& trained) {
  const Model& m = trained.model();
  images_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * m.layers[0].out.elements() *
                              static_cast<std::size_t>(dtype_bytes(input_type_)));
  for (const auto& t : tensors_)
    if (t) {
      const auto positions = static_cast<std::size_t>(batch_) * t->dims.h * t->dims.w;
      if (t->quantized) t->q = gpu::DeviceBuffer(positions * t->stored_c);
      if (t->half_copy) t->half = gpu::DeviceBuffer(positions * t->dims.c * 2);
      if (t->wide && t.get() != tensors_[0].get())
        t->wide_buffer = gpu::DeviceBuffer(positions * t->dims.c * static_cast<std::size_t>(dtype_bytes(input_type_)));
      t->wide_data = t.get() == tensors_[0].get() ? images_.get() : t->wide_buffer.get();
    }
  features_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * features_width_ * sizeof(float));
  logits_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * classes_ * sizeof(float));
  for (const auto& step : steps_) {
    if (step->kind == Step::Kind::kConv) build_conv(trained, *step);
    if (step->kind == Step::Kind::kTrainedConv) build_trained_conv(trained, *step);
    if (step->kind == Step::Kind::kFc) build_fc(trained, *step);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// An unquantized layer's output written unquantized, then quantized by a kernel.
void QuantNet::use_wide_output(Step& step) {
  step.out->wide = true;
  step.out->wide_buffer = gpu::DeviceBuffer(static_cast<std::size_t>(batch_ * step.out->dims.elements()) *
                                            static_cast<std::size_t>(dtype_bytes(input_type_)));
  step.out->wide_data = step.out->wide_buffer.get();
}

// An unquantized graph takes cuDNN's heuristic's first plan. Timed (8 plans, each checked against the
// first), ResNet-50's fp16 graphs ran their convolutions in 6.64 ms a batch of 256 against 6.91 and
// the engine no faster (33,433 images/s against 33,536), while each plan finalised compiles its
// kernel: the int8 engine's build passed 100 s (an H200, cuDNN 9.19).
int QuantNet::max_plans(bool unquantized) const { return unquantized ? 1 : options_.max_plans; }

// The graph of a convolution: 8-bit (x and w in the format, the output requantized, an int8
// residual or E4M3's fp16 one) or unquantized (in the trained type, the output in it or
// requantized, the residual in it).
gpu::QuantConvSpec QuantNet::conv_spec(const Net& trained, const Step& step, bool unquantized, bool wide_output) const {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const int c = unquantized ? step.in->dims.c : step.in->stored_c;
  gpu::QuantConvSpec spec;
  spec.shape = gpu::QuantConvShape{batch_,     c,          step.in->dims.h, step.in->dims.w, l.channels,
                                   l.kernel_h, l.kernel_w, l.pad_h,         l.stride};
  spec.input = format_;
  spec.relu = step.relu;
  spec.residual = step.residual != nullptr;
  if (unquantized) {
    const cudnnDataType_t t = gpu::cudnn_type(input_type_);
    spec.unquantized = t;
    spec.output = wide_output ? t : eight_bit_type(format_);
    spec.residual_type = t;
  } else {
    spec.output = eight_bit_type(format_);
    spec.residual_type = format_ == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_HALF;
  }
  return spec;
}

// Per-channel weight scales of the folded weights (8-bit) or the folded weights in the trained type
// (unquantized), and the graph whose epilogue maps the sums to the output's units: q x scale in 8
// bits, real values unquantized; the residual in its own scale (int8) or real (fp16, unquantized).
void QuantNet::build_conv(const Net& trained, Step& step) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const FoldedConv folded = fold(trained, step.layer, step.bn_layer);
  const int k = l.channels, c = step.in->dims.c, rs = l.kernel_h * l.kernel_w;
  const auto per_k = static_cast<std::size_t>(rs) * c;
  std::vector<double> w_scales(static_cast<std::size_t>(k), 1.0);
  if (step.unquantized) {
    gpu::DeviceBuffer w32(folded.weights.size() * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(w32.get(), folded.weights.data(), w32.bytes(), cudaMemcpyHostToDevice, stream_));
    step.weights = gpu::DeviceBuffer(folded.weights.size() * static_cast<std::size_t>(dtype_bytes(input_type_)));
    convert_from_float(reinterpret_cast<const float*>(w32.get()), step.weights.get(), input_type_,
                       static_cast<long long>(folded.weights.size()), stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // w32 goes at the end of this scope
  } else {
    const int sc = step.in->stored_c;
    std::vector<std::uint8_t> wq(static_cast<std::size_t>(k) * rs * sc, 0);  // padded channels stay 0
    for (std::size_t o = 0; o < w_scales.size(); ++o) {
      double amax = 0;
      for (std::size_t j = 0; j < per_k; ++j)
        amax = std::max(amax, std::abs(static_cast<double>(folded.weights[o * per_k + j])));
      w_scales[o] = gpu::scale_from_amax(amax, format_);
      for (int pos = 0; pos < rs; ++pos)
        for (int ch = 0; ch < c; ++ch) {
          const double v = folded.weights[o * per_k + static_cast<std::size_t>(pos) * c + ch] / w_scales[o];
          wq[(o * rs + pos) * sc + ch] =
              format_ == QuantFormat::kInt8 ? static_cast<std::uint8_t>(gpu::quantize_int8(v)) : gpu::encode_e4m3(v);
        }
    }
    step.weights = gpu::DeviceBuffer(wq.size());
    CUDA_CHECK(cudaMemcpyAsync(step.weights.get(), wq.data(), wq.size(), cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // wq goes at the end of this scope
  }
  step.weight_scale_min = *std::min_element(w_scales.begin(), w_scales.end());
  step.weight_scale_max = *std::max_element(w_scales.begin(), w_scales.end());

  // An unquantized layer that only 8-bit layers read requantizes to int8 in its epilogue where
  // cuDNN takes that graph; else it writes its output unquantized and a kernel quantizes it (an
  // E4M3 net's always do: assign_precisions).
  auto make = [&](bool wide_output) {
    return std::make_unique<gpu::QuantConvGraph>(cudnn_.get(), conv_spec(trained, step, step.unquantized, wide_output),
                                                 std::int64_t{1} << 30, max_plans(step.unquantized),
                                                 options_.plans.get());
  };
  if (step.unquantized && !step.writes_wide()) {
    try {
      step.graph = make(false);
    } catch (const Error&) {
      use_wide_output(step);
    }
  }
  if (!step.graph) step.graph = make(step.writes_wide());
  const double y_scale = step.writes_wide() ? 1.0 : step.out->scale;
  const double x_scale = step.unquantized ? 1.0 : step.in->scale;
  std::vector<float> bias(static_cast<std::size_t>(k));
  for (std::size_t o = 0; o < bias.size(); ++o) bias[o] = static_cast<float>(folded.bias[o] / y_scale);
  // A residual in int8 is q x its scale; unquantized or in fp16, its real value.
  const bool residual_in_scale = step.residual && !step.unquantized && format_ == QuantFormat::kInt8;
  const double residual_scale = !step.residual ? 1.0 : (residual_in_scale ? step.residual->scale : 1.0) / y_scale;
  step.graph->set_epilogue(gpu::channel_scales(x_scale, w_scales, y_scale), bias, static_cast<float>(residual_scale),
                           stream_);
  if (step.graph->plan_count() > 1) step.graph->tune(conv_tensors(step), 3);
}

// The image's convolution's algorithm: the net whose scales this one takes chose it for the same
// batch size (so that an engine's nets of one size answer alike); else, with plans timed
// (max_plans > 1), cuDNN's Find, the fastest that succeeds; else the heuristic's first. Timed,
// since its 3 channels fit no tensor-core layout and the heuristic's pick is a guess there.
cudnnConvolutionFwdAlgo_t QuantNet::image_conv_algo(const Step& step) const {
  const QuantNet* from = options_.scales_from;
  if (from && from->batch_ == batch_)
    for (const auto& s : from->steps_)
      if (s->kind == Step::Kind::kTrainedConv && s->layer == step.layer) return s->algo;
  constexpr int kAlgos = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  cudnnConvolutionFwdAlgoPerf_t perf[kAlgos];
  int found = 0;
  if (options_.max_plans > 1)
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(cudnn_.get(), step.x_desc.get(), step.w_desc.get(),
                                                     step.conv_desc.get(), step.y_desc.get(), kAlgos, &found, perf));
  else
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(cudnn_.get(), step.x_desc.get(), step.w_desc.get(),
                                                       step.conv_desc.get(), step.y_desc.get(), kAlgos, &found, perf));
  const auto* ok = std::find_if(perf, perf + found, [](const auto& p) { return p.status == CUDNN_STATUS_SUCCESS; });
  if (ok == perf + found)
    throw Error("quantized inference: cuDNN has no algorithm for layer " + std::to_string(step.layer) + " in its type");
  return ok->algo;
}

// The folded convolution in the trained type through cuDNN's legacy API (image_conv_algo), fp32
// sums.
void QuantNet::build_trained_conv(const Net& trained, Step& step) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const FoldedConv folded = fold(trained, step.layer, step.bn_layer);
  const Dims& in = step.in->dims;
  const Dims& out = step.out->dims;
  const cudnnDataType_t t = gpu::cudnn_type(input_type_);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(step.x_desc.get(), CUDNN_TENSOR_NHWC, t, batch_, in.c, in.h, in.w));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(step.y_desc.get(), CUDNN_TENSOR_NHWC, t, batch_, out.c, out.h, out.w));
  CUDNN_CHECK(
      cudnnSetFilter4dDescriptor(step.w_desc.get(), t, CUDNN_TENSOR_NHWC, l.channels, in.c, l.kernel_h, l.kernel_w));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(step.conv_desc.get(), l.pad_h, l.pad_w, l.stride, l.stride, 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionMathType(step.conv_desc.get(),
                                          input_type_ == DType::kF32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  step.algo = image_conv_algo(step);
  std::size_t workspace = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(cudnn_.get(), step.x_desc.get(), step.w_desc.get(),
                                                      step.conv_desc.get(), step.y_desc.get(), step.algo, &workspace));
  step.workspace = gpu::DeviceBuffer(workspace);
  const auto n = static_cast<long long>(folded.weights.size());
  gpu::DeviceBuffer w32(folded.weights.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(w32.get(), folded.weights.data(), w32.bytes(), cudaMemcpyHostToDevice, stream_));
  step.weights = gpu::DeviceBuffer(folded.weights.size() * static_cast<std::size_t>(dtype_bytes(input_type_)));
  convert_from_float(reinterpret_cast<const float*>(w32.get()), step.weights.get(), input_type_, n, stream_);
  // The bias in fp32 for the quantizing kernel, in the trained type for the unquantized one.
  const std::vector<float> bias(folded.bias.begin(), folded.bias.end());
  gpu::DeviceBuffer b32(bias.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(b32.get(), bias.data(), b32.bytes(), cudaMemcpyHostToDevice, stream_));
  if (step.writes_wide()) {
    if (!step.relu || !bias_relu_fusable(input_type_, out.c))
      throw Error("quantized inference: the image's convolution " + l.name +
                  " unquantized needs a ReLU after it and channels in 16-byte vectors");
    step.bias = gpu::DeviceBuffer(bias.size() * static_cast<std::size_t>(dtype_bytes(input_type_)));
    convert_from_float(reinterpret_cast<const float*>(b32.get()), step.bias.get(), input_type_,
                       static_cast<long long>(bias.size()), stream_);
  } else {
    step.bias = std::move(b32);
    step.y = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * out.elements() *
                               static_cast<std::size_t>(dtype_bytes(input_type_)));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // w32 and b32 go at the end of this scope
}

void QuantNet::build_fc(const Net& trained, const Step& step) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const std::vector<float> p = trained.host_params(step.layer);
  const auto w = static_cast<std::size_t>(l.weight_params());
  fc_weight_ = gpu::DeviceBuffer(w * sizeof(float));
  fc_bias_ = gpu::DeviceBuffer(static_cast<std::size_t>(classes_) * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(fc_weight_.get(), p.data(), w * sizeof(float), cudaMemcpyHostToDevice, stream_));
  std::vector<float> bias(static_cast<std::size_t>(classes_), 0.0f);
  if (l.bias) std::copy(p.begin() + static_cast<long long>(w), p.end(), bias.begin());
  CUDA_CHECK(
      cudaMemcpyAsync(fc_bias_.get(), bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice, stream_));
  // logits (classes x batch, column-major) = weights (features x classes, transposed) x features
  fc_workspace_ = gpu::DeviceBuffer(FcMatmul::kWorkspace);
  fc_.setup(lt_.get(), compute::Precision::kFp32, DType::kF32, true, false, classes_, batch_, features_width_,
            features_width_, features_width_, classes_, 256);
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // p and bias go at the end of this scope
}

}  // namespace scalebench::train
