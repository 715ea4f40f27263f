#include "workloads/train/quant_net.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/gpu/quant_scale.hpp"
#include "workloads/train/quant_kernels.cuh"

namespace scalebench::train {

using gpu::QuantFormat;

// An 8-bit tensor: a layer's output, q x scale. `half`: its real values in fp16 as well, for an
// E4M3 net's residuals (cuDNN's graph takes int8 or fp16 residuals, not E4M3).
struct QuantNet::Tensor {
  int layer = 0;
  Dims dims;                // per image, channels as the model has them
  int stored_c = 0;         // channels in memory (the input's padded to cuDNN's multiple)
  bool calibrated = false;  // its own scale from calibration (else its input's: max pooling)
  bool non_negative = false;
  bool residual = false;
  double amax = 0, scale = 1;
  gpu::DeviceBuffer q, half;
  std::uint8_t* bytes() const { return reinterpret_cast<std::uint8_t*>(q.get()); }
};

struct QuantNet::Step {
  // kTrainedConv: the first convolution through cuDNN's legacy API in the trained net's type, then
  // bias, ReLU and quantization in one kernel.
  enum class Kind { kQuantizeInput, kConv, kTrainedConv, kMaxPool, kGlobalAvgPool, kFc } kind = Kind::kConv;
  int layer = 0;     // the model's layer (a convolution's, for the two convolution kinds)
  int bn_layer = 0;  // the convolutions' batch norm, folded in
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  Tensor* residual = nullptr;
  bool relu = false;
  PoolShape pool;
  std::unique_ptr<gpu::QuantConvGraph> graph;
  gpu::DeviceBuffer weights;
  double weight_scale_min = 0, weight_scale_max = 0;
  // kTrainedConv
  gpu::TensorDescriptor x_desc, y_desc;
  gpu::FilterDescriptor w_desc;
  gpu::ConvolutionDescriptor conv_desc;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  gpu::DeviceBuffer workspace, y, bias;
};

namespace {
std::string op_error(const Layer& l, const std::string& why) {
  return "quantized inference: layer " + l.name + " (" + name(l.op) + ") " + why +
         "; it runs convolutions each followed by a batch norm, max pooling after a ReLU, global average "
         "pooling and a final fc (fmnist-resnet, the ResNets)";
}

int channel_multiple(QuantFormat f) { return f == QuantFormat::kInt8 ? 4 : 16; }

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

QuantNet::QuantNet(Net& trained, const QuantOptions& o, const std::function<void(int)>& load)
    : options_(o),
      format_(o.format),
      stream_(trained.stream()),
      batch_(trained.config().batch),
      input_type_(trained.compute_type()) {
  if (o.calibration_batches < 1) throw Error("quantized inference: at least one calibration batch");
  if (!options_.plans) options_.plans = std::make_shared<gpu::QuantPlanCache>();
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  plan(trained.model());
  calibrate(trained, load);
  const auto t1 = Clock::now();
  build(trained);
  calibrate_s_ = std::chrono::duration<double>(t1 - t0).count();
  build_s_ = std::chrono::duration<double>(Clock::now() - t1).count();
}

QuantNet::~QuantNet() { (void)cudaStreamSynchronize(stream_); }

// The steps in the model's order, and which tensors they read and write.
void QuantNet::plan(const Model& m) {
  tensors_.resize(m.layers.size());
  auto tensor_of = [&](const Layer& l, int layer) -> Tensor* {
    Tensor* t = layer >= 0 ? tensors_[static_cast<std::size_t>(layer)].get() : nullptr;
    if (!t) throw Error(op_error(l, "reads a layer the quantized net does not keep"));
    return t;
  };
  auto add_tensor = [&](int layer, bool calibrated, bool non_negative) {
    auto t = std::make_unique<Tensor>();
    t->layer = layer;
    t->dims = m.layers[static_cast<std::size_t>(layer)].out;
    t->stored_c = t->dims.c;
    t->calibrated = calibrated;
    t->non_negative = non_negative;
    tensors_[static_cast<std::size_t>(layer)] = std::move(t);
    return tensors_[static_cast<std::size_t>(layer)].get();
  };
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    const int at = static_cast<int>(i);
    if (l.aux) continue;  // auxiliary heads are training's only
    auto step = std::make_unique<Step>();
    step->layer = at;
    switch (l.op) {
      case Op::kInput: {
        step->kind = Step::Kind::kQuantizeInput;
        step->out = add_tensor(at, true, false);
        const int k = channel_multiple(format_);
        step->out->stored_c = (l.out.c + k - 1) / k * k;
        break;
      }
      case Op::kConv: {
        // Runs with its batch norm, where that is (ResNet's bn3 comes after the shortcut's layers).
        std::vector<std::size_t> readers;
        for (std::size_t j = 0; j < m.layers.size(); ++j) {
          const std::vector<int> reads = m.layers[j].reads();
          if (std::count(reads.begin(), reads.end(), at) > 0) readers.push_back(j);
        }
        if (readers.size() != 1 || m.layers[readers[0]].op != Op::kBatchNorm)
          throw Error(op_error(l, "is not read by its batch norm alone"));
        if (l.groups != 1 || l.kernel_h != l.kernel_w || l.pad_h != l.pad_w)
          throw Error(op_error(l, "is grouped or not square"));
        continue;
      }
      case Op::kBatchNorm: {
        const Layer& conv = m.layers[static_cast<std::size_t>(l.input)];
        if (conv.op != Op::kConv) throw Error(op_error(l, "does not read a convolution"));
        step->layer = l.input;
        step->bn_layer = at;
        step->kind = conv.input == 0 && options_.first_conv_trained ? Step::Kind::kTrainedConv : Step::Kind::kConv;
        step->in = tensor_of(conv, conv.input);
        step->out = add_tensor(at, true, l.relu);
        step->relu = l.relu;
        if (l.residual >= 0) {
          if (step->kind == Step::Kind::kTrainedConv) throw Error(op_error(l, "adds a residual to the image's layer"));
          step->residual = tensor_of(l, l.residual);
          step->residual->residual = true;
        }
        break;
      }
      case Op::kMaxPool: {
        step->kind = Step::Kind::kMaxPool;
        step->in = tensor_of(l, l.input);
        if (!step->in->non_negative) throw Error(op_error(l, "pools values that may be negative (no ReLU before it)"));
        step->out = add_tensor(at, false, true);
        const Dims& d = step->in->dims;
        step->pool = PoolShape{batch_, d.h, d.w, d.c, l.out.h, l.out.w, l.kernel_h, l.stride, l.pad_h};
        break;
      }
      case Op::kGlobalAvgPool:
        step->kind = Step::Kind::kGlobalAvgPool;
        step->in = tensor_of(l, l.input);
        features_width_ = l.out.c;
        break;
      case Op::kFc:
        if (m.layers[static_cast<std::size_t>(l.input)].op != Op::kGlobalAvgPool)
          throw Error(op_error(l, "does not read the global average pool"));
        step->kind = Step::Kind::kFc;
        classes_ = l.channels;
        break;
      case Op::kSoftmaxLoss:
        continue;
      default:
        throw Error(op_error(l, "is not supported"));
    }
    steps_.push_back(std::move(step));
  }
  if (classes_ == 0) throw Error("quantized inference: " + m.name + " has no final fc");
  // A first convolution in the trained precision reads the image itself: nothing quantizes it.
  const bool image_quantized = std::any_of(steps_.begin(), steps_.end(), [&](const auto& st) {
    return st->kind != Step::Kind::kTrainedConv && (st->in == tensors_[0].get() || st->residual == tensors_[0].get());
  });
  if (!image_quantized) {
    steps_.erase(steps_.begin());  // kQuantizeInput, the first
    tensors_[0]->calibrated = false;
  }
}

// Each calibrated tensor's largest magnitude over the batches, as the trained net computes it.
void QuantNet::calibrate(Net& trained, const std::function<void(int)>& load) {
  const std::size_t n = tensors_.size();
  if (const QuantNet* from = options_.scales_from) {
    if (from->tensors_.size() != n || from->format_ != format_)
      throw Error("quantized inference: scales from a net of another model or format");
    for (std::size_t i = 0; i < n; ++i)
      if (tensors_[i]) {
        if (!from->tensors_[i]) throw Error("quantized inference: scales from a net planned otherwise");
        tensors_[i]->amax = from->tensors_[i]->amax;
        tensors_[i]->scale = from->tensors_[i]->scale;
      }
    return;
  }
  amax_ = gpu::DeviceBuffer(n * sizeof(float));
  CUDA_CHECK(cudaMemsetAsync(amax_.get(), 0, n * sizeof(float), stream_));
  auto* amax = reinterpret_cast<float*>(amax_.get());
  for (int b = 0; b < options_.calibration_batches; ++b) {
    load(b);
    trained.forward(Pass::kInfer);
    for (const auto& t : tensors_)
      if (t && t->calibrated)
        abs_max(trained.output(t->layer), input_type_, static_cast<long long>(batch_) * t->dims.elements(),
                amax + t->layer, stream_);
  }
  std::vector<float> host(n);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), amax, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (const auto& step : steps_)  // in order: a pool's input is scaled before it
    if (Tensor* t = step->out) {
      t->amax = t->calibrated ? host[static_cast<std::size_t>(t->layer)] : step->in->amax;
      t->scale = t->calibrated ? gpu::scale_from_amax(t->amax, format_) : step->in->scale;
    }
}

void QuantNet::build(const Net& trained) {
  const Model& m = trained.model();
  for (const auto& t : tensors_)
    if (t) {
      const auto bytes = static_cast<std::size_t>(batch_) * t->dims.h * t->dims.w * t->stored_c;
      t->q = gpu::DeviceBuffer(bytes);
      if (t->residual && format_ == QuantFormat::kE4M3) t->half = gpu::DeviceBuffer(bytes * 2);
    }
  images_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * m.layers[0].out.elements() *
                              static_cast<std::size_t>(dtype_bytes(input_type_)));
  features_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * features_width_ * sizeof(float));
  logits_ = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * classes_ * sizeof(float));
  for (const auto& step : steps_) {
    if (step->kind == Step::Kind::kConv) build_conv(trained, *step);
    if (step->kind == Step::Kind::kTrainedConv) build_trained_conv(trained, *step);
    if (step->kind == Step::Kind::kFc) build_fc(trained, *step);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Per-channel weight scales of the folded weights, and the graph whose epilogue maps the sums to
// the output's scale (with the residual's, in its own scale or, in fp16, in real units).
void QuantNet::build_conv(const Net& trained, Step& step) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const FoldedConv folded = fold(trained, step.layer, step.bn_layer);
  const int k = l.channels, c = step.in->dims.c, sc = step.in->stored_c, rs = l.kernel_h * l.kernel_w;
  const auto per_k = static_cast<std::size_t>(rs) * c;
  std::vector<double> w_scales(static_cast<std::size_t>(k));
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
  step.weight_scale_min = *std::min_element(w_scales.begin(), w_scales.end());
  step.weight_scale_max = *std::max_element(w_scales.begin(), w_scales.end());
  step.weights = gpu::DeviceBuffer(wq.size());
  CUDA_CHECK(cudaMemcpy(step.weights.get(), wq.data(), wq.size(), cudaMemcpyHostToDevice));

  gpu::QuantConvSpec spec;
  spec.shape =
      gpu::QuantConvShape{batch_, sc, step.in->dims.h, step.in->dims.w, k, l.kernel_h, l.kernel_w, l.pad_h, l.stride};
  spec.input = format_;
  spec.output = format_ == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_FP8_E4M3;
  spec.relu = step.relu;
  spec.residual = step.residual != nullptr;
  spec.residual_type = format_ == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_HALF;
  step.graph = std::make_unique<gpu::QuantConvGraph>(cudnn_.get(), spec, std::int64_t{1} << 30, options_.max_plans,
                                                     options_.plans.get());
  const double y_scale = step.out->scale;
  std::vector<float> bias(static_cast<std::size_t>(k));
  for (std::size_t o = 0; o < bias.size(); ++o) bias[o] = static_cast<float>(folded.bias[o] / y_scale);
  // A residual in int8 is q x its scale; in fp16 (E4M3 nets) its real value.
  const double residual_scale =
      !step.residual ? 1.0 : (format_ == QuantFormat::kInt8 ? step.residual->scale : 1.0) / y_scale;
  step.graph->set_epilogue(gpu::channel_scales(step.in->scale, w_scales, y_scale), bias,
                           static_cast<float>(residual_scale), stream_);
  if (step.graph->plan_count() > 1) step.graph->tune(conv_tensors(step), 3);
}

// The folded convolution in the trained type through cuDNN's legacy API (its heuristic's first
// algorithm), fp32 sums.
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
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int found = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(cudnn_.get(), step.x_desc.get(), step.w_desc.get(),
                                                     step.conv_desc.get(), step.y_desc.get(), 8, &found, perf));
  const auto* ok = std::find_if(perf, perf + found, [](const auto& p) { return p.status == CUDNN_STATUS_SUCCESS; });
  if (ok == perf + found) throw Error("quantized inference: cuDNN has no algorithm for " + l.name + " in its type");
  step.algo = ok->algo;
  step.workspace = gpu::DeviceBuffer(ok->memory);
  gpu::DeviceBuffer w32(folded.weights.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpy(w32.get(), folded.weights.data(), w32.bytes(), cudaMemcpyHostToDevice));
  step.weights = gpu::DeviceBuffer(folded.weights.size() * static_cast<std::size_t>(dtype_bytes(input_type_)));
  convert_from_float(reinterpret_cast<const float*>(w32.get()), step.weights.get(), input_type_,
                     static_cast<long long>(folded.weights.size()), stream_);
  const std::vector<float> bias(folded.bias.begin(), folded.bias.end());
  step.bias = gpu::DeviceBuffer(bias.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpy(step.bias.get(), bias.data(), step.bias.bytes(), cudaMemcpyHostToDevice));
  step.y = gpu::DeviceBuffer(static_cast<std::size_t>(batch_) * out.elements() *
                             static_cast<std::size_t>(dtype_bytes(input_type_)));
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // w32 goes at the end of this scope
}

void QuantNet::build_fc(const Net& trained, const Step& step) {
  const Layer& l = trained.model().layers[static_cast<std::size_t>(step.layer)];
  const std::vector<float> p = trained.host_params(step.layer);
  const auto w = static_cast<std::size_t>(l.weight_params());
  fc_weight_ = gpu::DeviceBuffer(w * sizeof(float));
  fc_bias_ = gpu::DeviceBuffer(static_cast<std::size_t>(classes_) * sizeof(float));
  CUDA_CHECK(cudaMemcpy(fc_weight_.get(), p.data(), w * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> bias(static_cast<std::size_t>(classes_), 0.0f);
  if (l.bias) std::copy(p.begin() + static_cast<long long>(w), p.end(), bias.begin());
  CUDA_CHECK(cudaMemcpy(fc_bias_.get(), bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  // logits (classes x batch, column-major) = weights (features x classes, transposed) x features
  fc_workspace_ = gpu::DeviceBuffer(FcMatmul::kWorkspace);
  fc_.setup(lt_.get(), compute::Precision::kFp32, DType::kF32, true, false, classes_, batch_, features_width_,
            features_width_, features_width_, classes_, 256);
}

// A quantized convolution's tensors; its residual int8 (q x its scale) or, in an E4M3 net, fp16.
gpu::QuantConvTensors QuantNet::conv_tensors(const Step& step) const {
  const void* residual = !step.residual                  ? nullptr
                         : format_ == QuantFormat::kInt8 ? step.residual->q.get()
                                                         : step.residual->half.get();
  return {step.in->q.get(), step.weights.get(), step.out->q.get(), residual};
}

void QuantNet::forward() {
  for (const auto& step : steps_) {
    switch (step->kind) {
      case Step::Kind::kQuantizeInput:
        quantize_rows(images_.get(), input_type_, step->out->dims.c, step->out->bytes(), step->out->stored_c,
                      static_cast<long long>(batch_) * step->out->dims.h * step->out->dims.w,
                      static_cast<float>(step->out->scale), format_, stream_);
        break;
      case Step::Kind::kConv:
        step->graph->execute(conv_tensors(*step));
        break;
      case Step::Kind::kTrainedConv: {
        const float one = 1.0f, zero = 0.0f;
        CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, step->x_desc.get(), images_.get(), step->w_desc.get(),
                                            step->weights.get(), step->conv_desc.get(), step->algo,
                                            step->workspace.get(), step->workspace.bytes(), &zero, step->y_desc.get(),
                                            step->y.get()));
        bias_act_quantize(step->y.get(), input_type_, reinterpret_cast<const float*>(step->bias.get()), step->relu,
                          step->out->bytes(), static_cast<long long>(batch_) * step->out->dims.h * step->out->dims.w,
                          step->out->dims.c, static_cast<float>(step->out->scale), format_, stream_);
        break;
      }
      case Step::Kind::kMaxPool:
        maxpool_bytes(step->in->bytes(), step->out->bytes(), step->pool, stream_);
        break;
      case Step::Kind::kGlobalAvgPool:
        global_avgpool_dequant(step->in->bytes(), format_, static_cast<float>(step->in->scale),
                               reinterpret_cast<float*>(features_.get()), batch_, step->in->dims.h * step->in->dims.w,
                               step->in->dims.c, stream_);
        break;
      case Step::Kind::kFc:
        fc_.run(lt_.get(), fc_weight_.get(), features_.get(), logits_.get(), false, fc_workspace_.get(), stream_);
        add_bias_rows(reinterpret_cast<float*>(logits_.get()), reinterpret_cast<const float*>(fc_bias_.get()), batch_,
                      classes_, stream_);
        break;
    }
    if (step->out && step->out->half.get())
      dequantize_half(step->out->bytes(), format_, static_cast<float>(step->out->scale), step->out->half.get(),
                      static_cast<long long>(batch_) * step->out->dims.elements(), stream_);
  }
}

std::size_t QuantNet::device_bytes() const {
  std::size_t b = images_.bytes() + amax_.bytes() + features_.bytes() + fc_weight_.bytes() + fc_bias_.bytes() +
                  logits_.bytes() + fc_workspace_.bytes();
  for (const auto& t : tensors_)
    if (t) b += t->q.bytes() + t->half.bytes();
  for (const auto& st : steps_) {
    b += st->weights.bytes() + st->workspace.bytes() + st->y.bytes() + st->bias.bytes();
    if (st->graph) b += static_cast<std::size_t>(st->graph->workspace_bytes());
  }
  return b;
}

Json QuantNet::describe() const {
  Json layers = Json::array();
  double conv_s = 0;
  int timed = 0, convs = 0;
  for (const auto& step : steps_) {
    if (step->kind == Step::Kind::kTrainedConv)
      layers.push_back(Json{{"layer", step->layer},
                            {"graph", std::string("cuDNN legacy convolution in ") + gpu::dtype_name(input_type_) +
                                          ", bias and ReLU, then quantized"},
                            {"output_scale", step->out->scale}});
    if (step->kind != Step::Kind::kConv) continue;
    const double s = step->graph->plan_seconds();
    ++convs;
    if (s >= 0) conv_s += s, ++timed;
    layers.push_back(Json{{"layer", step->layer},
                          {"graph", step->graph->spec().shape.text() + " " + step->graph->spec().epilogue_text()},
                          {"plan", step->graph->plan_name()},
                          {"plan_us", s >= 0 ? Json(s * 1e6) : Json(nullptr)},
                          {"input_scale", step->in->scale},
                          {"output_scale", step->out->scale},
                          {"weight_scales", {step->weight_scale_min, step->weight_scale_max}}});
  }
  return Json{{"format", gpu::name(format_)},
              {"calibration", Json{{"method",
                                    "max: each tensor's largest magnitude, per tensor; weights per "
                                    "output channel"},
                                   {"batches", options_.calibration_batches},
                                   {"images", options_.calibration_batches * batch_}}},
              {"first_convolution", options_.first_conv_trained
                                        ? std::string("trained precision: ") + gpu::dtype_name(input_type_)
                                        : std::string(gpu::name(format_))},
              {"build_s", Json{{"calibration", calibrate_s_}, {"graphs_and_weights", build_s_}}},
              {"plans", Json{{"distinct_graphs", options_.plans->specs()}, {"graphs_sharing", options_.plans->hits()}}},
              // Where a batch's time goes: the 8-bit convolutions' share, as their plans' tuning
              // timed each alone.
              {"convolutions_us", Json{{"sum", conv_s * 1e6}, {"timed", timed}, {"of", convs}}},
              {"convolutions", layers},
              {"classifier", "fp32 cuBLASLt matmul, after a dequantizing global average pool"}};
}

}  // namespace scalebench::train
