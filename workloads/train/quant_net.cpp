#include "workloads/train/quant_net.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/gpu/quant_scale.hpp"
#include "workloads/train/precision_split.hpp"
#include "workloads/train/quant_kernels.cuh"

namespace scalebench::train {

using gpu::QuantFormat;

// A layer's output: in 8 bits (q x scale) where an 8-bit layer reads it, unquantized in the
// trained type (`wide`) where a 16-bit layer reads it, and as fp16 (`half`) where an E4M3 layer
// takes it as a residual (cuDNN's graph takes int8 or fp16 residuals, not E4M3).
struct QuantNet::Tensor {
  int layer = 0;
  Dims dims;                // per image, channels as the model has them
  int stored_c = 0;         // channels of q in memory (the input's padded to cuDNN's multiple)
  bool calibrated = false;  // its own scale from calibration (else its input's: max pooling)
  bool non_negative = false;
  bool quantized = false, wide = false, half_copy = false;  // which forms its readers take
  double amax = 0, scale = 1;
  gpu::DeviceBuffer q, half, wide_buffer;
  void* wide_data = nullptr;  // wide_buffer, or the net's images for the input
  std::uint8_t* bytes() const { return reinterpret_cast<std::uint8_t*>(q.get()); }
};

struct QuantNet::Step {
  // kTrainedConv: the image's convolution through cuDNN's legacy API in the trained net's type,
  // then bias and ReLU (unquantized) or bias, ReLU and quantization in one kernel.
  enum class Kind { kQuantizeInput, kConv, kTrainedConv, kMaxPool, kGlobalAvgPool, kFc } kind = Kind::kConv;
  int layer = 0;     // the model's layer (a convolution's, for the two convolution kinds)
  int bn_layer = 0;  // the convolutions' batch norm, folded in
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  Tensor* residual = nullptr;
  bool relu = false;
  bool unquantized = false;   // runs in the trained type
  bool writes_wide = false;   // its output unquantized (else in 8 bits)
  bool quantize_out = false;  // then quantized for the 8-bit layers that read it too
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
  bool is_conv() const { return kind == Kind::kConv || kind == Kind::kTrainedConv; }
};

namespace {
std::string op_error(const Layer& l, const std::string& why) {
  return "quantized inference: layer " + l.name + " (" + name(l.op) + ") " + why +
         "; it runs convolutions each followed by a batch norm, max pooling after a ReLU, global average "
         "pooling and a final fc (fmnist-resnet, the ResNets)";
}

int channel_multiple(QuantFormat f) { return f == QuantFormat::kInt8 ? 4 : 16; }

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

QuantNet::QuantNet(Net& trained, const QuantOptions& o, const std::function<void(int)>& load)
    : options_(o),
      format_(o.format),
      stream_(trained.stream()),
      batch_(trained.config().batch),
      input_type_(trained.compute_type()) {
  if (o.calibration_batches < 1) throw Error("quantized inference: at least one calibration batch");
  if (o.trained_convolutions < QuantOptions::kByTiming)
    throw Error("quantized inference: trained_convolutions " + std::to_string(o.trained_convolutions) +
                " (a count, or kByTiming)");
  if (!options_.plans) options_.plans = std::make_shared<gpu::QuantPlanCache>();
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  plan(trained.model());
  calibrate(trained, load);
  const auto t1 = Clock::now();
  if (const QuantNet* from = options_.scales_from) {
    assign_precisions(from->trained_convs_);
    split_by_ = "the net whose scales it took";
  } else if (o.trained_convolutions == QuantOptions::kByTiming) {
    assign_precisions(choose_split(trained));
    split_by_ = "timing";
  } else {
    assign_precisions(o.trained_convolutions);
    split_by_ = "option";
  }
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
        step->kind = Step::Kind::kConv;
        step->in = tensor_of(conv, conv.input);
        step->out = add_tensor(at, true, l.relu);
        step->relu = l.relu;
        if (l.residual >= 0) step->residual = tensor_of(l, l.residual);
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
}

// The first `n` convolutions unquantized (a pooling layer as the convolution after it), and so
// which forms each tensor is kept in: 8-bit for 8-bit readers, the trained type for unquantized
// ones, fp16 for an E4M3 layer's residual.
void QuantNet::assign_precisions(int n) {
  const int convs =
      static_cast<int>(std::count_if(steps_.begin(), steps_.end(), [](const auto& st) { return st->is_conv(); }));
  if (n > convs)
    throw Error("quantized inference: " + std::to_string(n) + " convolutions unquantized; the net has " +
                std::to_string(convs));
  trained_convs_ = n;
  int conv = 0;
  for (auto& st : steps_)
    if (st->is_conv()) {
      st->unquantized = conv++ < n;
      if (st->unquantized && st->in == tensors_[0].get()) st->kind = Step::Kind::kTrainedConv;
      if (st->kind == Step::Kind::kTrainedConv && st->residual)
        throw Error("quantized inference: the image's convolution adds a residual");
    }
  for (std::size_t i = steps_.size(); i-- > 0;)  // a pool as the convolution after it
    if (steps_[i]->kind == Step::Kind::kMaxPool) {
      auto next = std::find_if(steps_.begin() + static_cast<long>(i) + 1, steps_.end(),
                               [](const auto& st) { return st->is_conv(); });
      steps_[i]->unquantized = next != steps_.end() && (*next)->unquantized;
    }
  tensors_[0]->wide = true;  // the images, in the trained type
  // An E4M3 net's unquantized convolutions write their output unquantized, a kernel quantizing it
  // for the 8-bit layers: ResNet-50's last convolution in fp16 requantizing to E4M3 in cuDNN's
  // epilogue (engine 4, cuDNN 9.19, an H200) answered 5.4 x the samples' spread apart alone and in
  // a batch. An E4M3 layer then takes it as its fp16 residual as it is.
  if (format_ == QuantFormat::kE4M3)
    for (auto& st : steps_)
      if (st->unquantized && st->kind == Step::Kind::kConv) st->out->wide = true;
  for (auto& st : steps_) {
    if (st->kind == Step::Kind::kQuantizeInput || st->kind == Step::Kind::kFc) continue;
    if (st->unquantized) {
      st->in->wide = true;
      if (st->residual) st->residual->wide = true;
      if (st->kind == Step::Kind::kMaxPool) st->out->wide = true;
      continue;
    }
    st->in->quantized = true;
    if (!st->residual) continue;
    // An E4M3 residual is fp16: the unquantized tensor itself in an fp16 net, else a copy.
    if (format_ == QuantFormat::kInt8)
      st->residual->quantized = true;
    else if (!(st->residual->wide && input_type_ == DType::kF16))
      st->residual->quantized = st->residual->half_copy = true;
  }
  // Who writes which form: an unquantized layer its output unquantized where a 16-bit layer reads
  // it (then quantized too, where an 8-bit one does), else in 8 bits directly.
  for (auto& st : steps_) {
    if (!st->out || st->kind == Step::Kind::kQuantizeInput) continue;
    if (st->unquantized) {
      st->writes_wide = st->out->wide;
      st->quantize_out = st->out->wide && st->out->quantized;
    } else if (st->out->wide) {
      throw Error("quantized inference: layer " + std::to_string(st->layer) +
                  " runs in 8 bits and a 16-bit layer reads it");  // the split is a prefix: never
    }
  }
  if (!tensors_[0]->quantized) steps_.erase(steps_.begin());  // kQuantizeInput: nothing reads its output
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

// Every convolution after the image's built and timed both ways on scratch tensors, with the plans
// the net then runs (the cache keeps them; the last fp16 convolution of the split then requantizes
// in its epilogue, a graph timed when it is built), and the split whose sum is least. The image's
// stays unquantized. What the split adds outside the convolutions (a quantizing kernel where a
// tensor is read in both precisions, pooling in fp16) is not counted.
int QuantNet::choose_split(const Net& trained) {
  std::size_t x_bytes = 0, y_bytes = 0, w_bytes = 0;
  const auto wide = static_cast<std::size_t>(dtype_bytes(input_type_));
  const Model& m = trained.model();
  for (const auto& st : steps_)
    if (st->is_conv()) {
      const Layer& l = m.layers[static_cast<std::size_t>(st->layer)];
      const auto c = static_cast<std::size_t>(std::max(st->in->stored_c, st->in->dims.c));
      x_bytes = std::max(x_bytes, static_cast<std::size_t>(batch_ * st->in->dims.h * st->in->dims.w) * c * wide);
      y_bytes = std::max(y_bytes, static_cast<std::size_t>(batch_ * st->out->dims.elements()) * wide);
      w_bytes = std::max(w_bytes, static_cast<std::size_t>(l.channels * l.kernel_h * l.kernel_w) * c * wide);
    }
  // Random operands, as a real batch draws the Tensor Cores' power (zeros draw less); an 8-bit
  // graph reads their bytes as its format's.
  gpu::DeviceBuffer x(x_bytes), y(y_bytes), w(w_bytes), r(y_bytes);
  for (gpu::DeviceBuffer* b : {&x, &w, &r})
    fill_normal(b->get(), DType::kF16, static_cast<long long>(b->bytes() / 2), 0.0f, 1.0f, 17, stream_);
  auto time = [&](const Step& st, bool unquantized) {
    const gpu::QuantConvSpec spec = conv_spec(trained, st, unquantized, unquantized);
    std::unique_ptr<gpu::QuantConvGraph> g;
    try {
      g = std::make_unique<gpu::QuantConvGraph>(cudnn_.get(), spec, std::int64_t{1} << 30, max_plans(unquantized),
                                                options_.plans.get());
    } catch (const Error&) {
      return -1.0;  // cuDNN takes no such graph: the split keeps this convolution in the other precision
    }
    const auto k = static_cast<std::size_t>(spec.shape.k);
    g->set_epilogue(std::vector<float>(k, 1.0f), std::vector<float>(k, 0.0f), 1.0f, stream_);
    g->tune({x.get(), w.get(), y.get(), r.get()}, 3);
    return g->plan_seconds();
  };
  std::vector<ConvTimes> times;
  for (const auto& st : steps_) {
    if (!st->is_conv()) continue;
    if (st->in == tensors_[0].get()) {
      times.push_back({0, -1});  // the image's: unquantized, its time the same in every split
      conv_times_.push_back(Json{{"layer", st->layer}, {"note", "the image's: unquantized in every split"}});
      continue;
    }
    const ConvTimes t{time(*st, true), time(*st, false)};
    times.push_back(t);
    auto us = [](double s) { return s >= 0 ? Json(s * 1e6) : Json(nullptr); };
    conv_times_.push_back(Json{{"layer", st->layer}, {"unquantized_us", us(t.sixteen)}, {"eight_bit_us", us(t.eight)}});
  }
  return cheapest_split(times, 1);
}

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
  step.writes_wide = step.quantize_out = step.out->wide = true;
  step.out->wide_buffer = gpu::DeviceBuffer(static_cast<std::size_t>(batch_ * step.out->dims.elements()) *
                                            static_cast<std::size_t>(dtype_bytes(input_type_)));
  step.out->wide_data = step.out->wide_buffer.get();
}

// An unquantized graph takes cuDNN's heuristic's first plan: on an H200 (cuDNN 9.19) ResNet-50's
// fp16 graphs with the plans timing chose (engines 2 and 7) answered for other samples in the
// engine's batching check, with engine 4, the heuristic's first, exactly.
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
    CUDA_CHECK(cudaMemcpy(w32.get(), folded.weights.data(), w32.bytes(), cudaMemcpyHostToDevice));
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
    CUDA_CHECK(cudaMemcpy(step.weights.get(), wq.data(), wq.size(), cudaMemcpyHostToDevice));
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
  if (step.unquantized && !step.writes_wide) {
    try {
      step.graph = make(false);
    } catch (const Error&) {
      use_wide_output(step);
    }
  }
  if (!step.graph) step.graph = make(step.unquantized && step.writes_wide);
  const double y_scale = step.writes_wide ? 1.0 : step.out->scale;
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
  const auto n = static_cast<long long>(folded.weights.size());
  gpu::DeviceBuffer w32(folded.weights.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpy(w32.get(), folded.weights.data(), w32.bytes(), cudaMemcpyHostToDevice));
  step.weights = gpu::DeviceBuffer(folded.weights.size() * static_cast<std::size_t>(dtype_bytes(input_type_)));
  convert_from_float(reinterpret_cast<const float*>(w32.get()), step.weights.get(), input_type_, n, stream_);
  // The bias in fp32 for the quantizing kernel, in the trained type for the unquantized one.
  const std::vector<float> bias(folded.bias.begin(), folded.bias.end());
  gpu::DeviceBuffer b32(bias.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpy(b32.get(), bias.data(), b32.bytes(), cudaMemcpyHostToDevice));
  if (step.writes_wide) {
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
  CUDA_CHECK(cudaMemcpy(fc_weight_.get(), p.data(), w * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> bias(static_cast<std::size_t>(classes_), 0.0f);
  if (l.bias) std::copy(p.begin() + static_cast<long long>(w), p.end(), bias.begin());
  CUDA_CHECK(cudaMemcpy(fc_bias_.get(), bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  // logits (classes x batch, column-major) = weights (features x classes, transposed) x features
  fc_workspace_ = gpu::DeviceBuffer(FcMatmul::kWorkspace);
  fc_.setup(lt_.get(), compute::Precision::kFp32, DType::kF32, true, false, classes_, batch_, features_width_,
            features_width_, features_width_, classes_, 256);
}

// A convolution's tensors: unquantized ones read the trained type; 8-bit ones their input's q and
// a residual in int8 (q x its scale) or, in an E4M3 net, fp16 (the tensor itself where it is
// unquantized in an fp16 net, else its copy).
gpu::QuantConvTensors QuantNet::conv_tensors(const Step& step) const {
  const Tensor* r = step.residual;
  const void* residual = !r                              ? nullptr
                         : step.unquantized              ? r->wide_data
                         : format_ == QuantFormat::kInt8 ? r->q.get()
                         : r->half_copy                  ? r->half.get()
                                                         : r->wide_data;
  const void* x = step.unquantized ? step.in->wide_data : step.in->q.get();
  void* y = step.writes_wide ? step.out->wide_data : step.out->q.get();
  return {x, step.weights.get(), y, residual};
}

// After a step: its unquantized output quantized for the 8-bit layers that read it, and an 8-bit
// output's fp16 copy for an E4M3 residual.
void QuantNet::convert_output(const Step& step) {
  const Tensor* t = step.out;
  if (!t) return;
  const long long positions = static_cast<long long>(batch_) * t->dims.h * t->dims.w;
  if (step.quantize_out)
    quantize_rows(t->wide_data, input_type_, t->dims.c, t->bytes(), t->stored_c, positions,
                  static_cast<float>(t->scale), format_, stream_);
  if (t->half_copy)
    dequantize_half(t->bytes(), format_, static_cast<float>(t->scale), t->half.get(), positions * t->dims.c, stream_);
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
        void* y = step->writes_wide ? step->out->wide_data : step->y.get();
        CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, step->x_desc.get(), images_.get(), step->w_desc.get(),
                                            step->weights.get(), step->conv_desc.get(), step->algo,
                                            step->workspace.get(), step->workspace.bytes(), &zero, step->y_desc.get(),
                                            y));
        const long long rows = static_cast<long long>(batch_) * step->out->dims.h * step->out->dims.w;
        if (step->writes_wide)
          bias_relu_forward(y, step->bias.get(), y, input_type_, rows, step->out->dims.c, stream_);
        else
          bias_act_quantize(y, input_type_, reinterpret_cast<const float*>(step->bias.get()), step->relu,
                            step->out->bytes(), rows, step->out->dims.c, static_cast<float>(step->out->scale), format_,
                            stream_);
        break;
      }
      case Step::Kind::kMaxPool:
        if (step->unquantized)
          maxpool_forward(step->in->wide_data, step->out->wide_data, nullptr, input_type_, step->pool, stream_);
        else
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
    convert_output(*step);
  }
}

std::size_t QuantNet::device_bytes() const {
  std::size_t b = images_.bytes() + amax_.bytes() + features_.bytes() + fc_weight_.bytes() + fc_bias_.bytes() +
                  logits_.bytes() + fc_workspace_.bytes();
  for (const auto& t : tensors_)
    if (t) b += t->q.bytes() + t->half.bytes() + t->wide_buffer.bytes();
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
                                          (step->writes_wide ? ", bias and ReLU" : ", bias and ReLU, then quantized")},
                            {"output_scale", step->out->scale}});
    if (step->kind != Step::Kind::kConv) continue;
    const double s = step->graph->plan_seconds();
    ++convs;
    if (s >= 0) conv_s += s, ++timed;
    const gpu::QuantConvSpec& spec = step->graph->spec();
    layers.push_back(Json{
        {"layer", step->layer},
        {"graph", spec.shape.text() + " " + spec.inputs_text() + " " + spec.epilogue_text() +
                      (step->quantize_out ? ", then quantized" : "")},
        {"plan", step->graph->plan_name()},
        {"plan_us", s >= 0 ? Json(s * 1e6) : Json(nullptr)},
        {"input_scale", step->unquantized ? Json(nullptr) : Json(step->in->scale)},
        {"output_scale", step->writes_wide ? Json(nullptr) : Json(step->out->scale)},
        {"weight_scales", step->unquantized ? Json(nullptr) : Json{step->weight_scale_min, step->weight_scale_max}}});
  }
  Json split{{"trained_convolutions", trained_convs_}, {"chosen_by", split_by_}};
  if (!conv_times_.empty()) split["times"] = conv_times_;
  return Json{
      {"format", gpu::name(format_)},
      {"calibration", Json{{"method",
                            "max: each tensor's largest magnitude, per tensor; weights per "
                            "output channel"},
                           {"batches", options_.calibration_batches},
                           {"images", options_.calibration_batches * batch_}}},
      {"first_convolution", trained_convs_ > 0 ? std::string("trained precision: ") + gpu::dtype_name(input_type_)
                                               : std::string(gpu::name(format_))},
      // The first convolutions kept unquantized (in the trained type), and each one's time
      // both ways where timing chose how many.
      {"split", split},
      {"build_s", Json{{"calibration", calibrate_s_}, {"graphs_and_weights", build_s_}}},
      {"plans", Json{{"distinct_graphs", options_.plans->specs()}, {"graphs_sharing", options_.plans->hits()}}},
      // Where a batch's time goes: the convolutions' graphs, as their plans' tuning timed
      // each alone (the image's legacy one is not timed).
      {"convolutions_us", Json{{"sum", conv_s * 1e6}, {"timed", timed}, {"of", convs}}},
      {"convolutions", layers},
      {"classifier", "fp32 cuBLASLt matmul, after a dequantizing global average pool"}};
}

}  // namespace scalebench::train
