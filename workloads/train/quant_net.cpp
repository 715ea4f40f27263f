#include "workloads/train/quant_net.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cudnn_check.hpp"
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
  enum class Kind { kQuantizeInput, kConv, kMaxPool, kGlobalAvgPool, kFc } kind = Kind::kConv;
  int layer = 0;  // the model's layer (a convolution's batch norm is the next)
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  Tensor* residual = nullptr;
  PoolShape pool;
  std::unique_ptr<gpu::QuantConvGraph> graph;
  gpu::DeviceBuffer weights;
  double weight_scale_min = 0, weight_scale_max = 0;
};

namespace {
std::string op_error(const Layer& l, const std::string& why) {
  return "quantized inference: layer " + l.name + " (" + name(l.op) + ") " + why +
         "; it runs convolutions each followed by a batch norm, max pooling after a ReLU, global average "
         "pooling and a final fc (fmnist-resnet, the ResNets)";
}

int channel_multiple(QuantFormat f) { return f == QuantFormat::kInt8 ? 4 : 16; }
}  // namespace

QuantNet::QuantNet(Net& trained, QuantFormat f, int calibration_batches, const std::function<void(int)>& load)
    : format_(f),
      stream_(trained.stream()),
      batch_(trained.config().batch),
      input_type_(trained.compute_type()),
      calibration_batches_(calibration_batches) {
  if (calibration_batches < 1) throw Error("quantized inference: at least one calibration batch");
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  plan(trained.model());
  calibrate(trained, calibration_batches, load);
  build(trained);
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
        const Layer* bn = i + 1 < m.layers.size() ? &m.layers[i + 1] : nullptr;
        if (!bn || bn->op != Op::kBatchNorm || bn->input != at)
          throw Error(op_error(l, "is not followed by its batch norm"));
        for (const Layer& other : m.layers) {
          const std::vector<int> reads = other.reads();
          if (&other != bn && std::count(reads.begin(), reads.end(), at) > 0)
            throw Error(op_error(l, "is read by " + other.name + " as well as by its batch norm"));
        }
        if (l.groups != 1 || l.kernel_h != l.kernel_w || l.pad_h != l.pad_w)
          throw Error(op_error(l, "is grouped or not square"));
        step->kind = Step::Kind::kConv;
        step->in = tensor_of(l, l.input);
        step->out = add_tensor(at + 1, true, bn->relu);
        if (bn->residual >= 0) {
          step->residual = tensor_of(*bn, bn->residual);
          step->residual->residual = true;
        }
        break;
      }
      case Op::kBatchNorm:
        if (i == 0 || m.layers[i - 1].op != Op::kConv || l.input != at - 1)
          throw Error(op_error(l, "does not follow its convolution"));
        continue;  // folded into the convolution's step
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

// Each calibrated tensor's largest magnitude over the batches, as the trained net computes it.
void QuantNet::calibrate(Net& trained, int batches, const std::function<void(int)>& load) {
  const std::size_t n = tensors_.size();
  amax_ = gpu::DeviceBuffer(n * sizeof(float));
  CUDA_CHECK(cudaMemsetAsync(amax_.get(), 0, n * sizeof(float), stream_));
  auto* amax = reinterpret_cast<float*>(amax_.get());
  for (int b = 0; b < batches; ++b) {
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
    const Layer& l = m.layers[static_cast<std::size_t>(step->layer)];
    if (step->kind == Step::Kind::kFc) {
      const std::vector<float> p = trained.host_params(step->layer);
      const auto w = static_cast<std::size_t>(l.weight_params());
      fc_weight_ = gpu::DeviceBuffer(w * sizeof(float));
      fc_bias_ = gpu::DeviceBuffer(static_cast<std::size_t>(classes_) * sizeof(float));
      CUDA_CHECK(cudaMemcpy(fc_weight_.get(), p.data(), w * sizeof(float), cudaMemcpyHostToDevice));
      std::vector<float> bias(static_cast<std::size_t>(classes_), 0.0f);
      if (l.bias) std::copy(p.begin() + static_cast<long long>(w), p.end(), bias.begin());
      CUDA_CHECK(cudaMemcpy(fc_bias_.get(), bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    if (step->kind != Step::Kind::kConv) continue;
    // The batch norm folded into the convolution: w' = w g / sqrt(var + eps) per output channel k,
    // b' = shift + (bias - mean) g / sqrt(var + eps).
    const Layer& bn = m.layers[static_cast<std::size_t>(step->layer + 1)];
    const std::vector<float> p = trained.host_params(step->layer), bnp = trained.host_params(step->layer + 1),
                             stats = trained.running_stats(step->layer + 1);
    const int k = l.channels, c = step->in->dims.c, sc = step->in->stored_c, rs = l.kernel_h * l.kernel_w;
    const auto per_k = static_cast<std::size_t>(rs) * c;
    std::vector<double> folded_bias(static_cast<std::size_t>(k)), w_scales(static_cast<std::size_t>(k));
    std::vector<std::uint8_t> wq(static_cast<std::size_t>(k) * rs * sc, 0);
    for (int o = 0; o < k; ++o) {
      const auto ko = static_cast<std::size_t>(o);
      const double g = bnp[ko] / std::sqrt(static_cast<double>(stats[static_cast<std::size_t>(k) + ko]) + bn.eps);
      const double conv_bias = l.bias ? p[static_cast<std::size_t>(k) * per_k + ko] : 0.0;
      folded_bias[ko] = bnp[static_cast<std::size_t>(k) + ko] + (conv_bias - stats[ko]) * g;
      double amax = 0;
      for (std::size_t j = 0; j < per_k; ++j) amax = std::max(amax, std::abs(p[ko * per_k + j] * g));
      w_scales[ko] = gpu::scale_from_amax(amax, format_);
      for (int pos = 0; pos < rs; ++pos)
        for (int ch = 0; ch < c; ++ch) {
          const double v = p[ko * per_k + static_cast<std::size_t>(pos) * c + ch] * g / w_scales[ko];
          wq[(ko * rs + pos) * sc + ch] =
              format_ == QuantFormat::kInt8 ? static_cast<std::uint8_t>(gpu::quantize_int8(v)) : gpu::encode_e4m3(v);
        }
    }
    step->weight_scale_min = *std::min_element(w_scales.begin(), w_scales.end());
    step->weight_scale_max = *std::max_element(w_scales.begin(), w_scales.end());
    step->weights = gpu::DeviceBuffer(wq.size());
    CUDA_CHECK(cudaMemcpy(step->weights.get(), wq.data(), wq.size(), cudaMemcpyHostToDevice));

    gpu::QuantConvSpec spec;
    spec.shape = gpu::QuantConvShape{batch_,     sc,         step->in->dims.h, step->in->dims.w, k,
                                     l.kernel_h, l.kernel_w, l.pad_h,          l.stride};
    spec.input = format_;
    spec.output = format_ == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_FP8_E4M3;
    spec.relu = bn.relu;
    spec.residual = step->residual != nullptr;
    spec.residual_type = format_ == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_HALF;
    step->graph = std::make_unique<gpu::QuantConvGraph>(cudnn_.get(), spec);
    const double y_scale = step->out->scale;
    std::vector<float> bias(static_cast<std::size_t>(k));
    for (std::size_t o = 0; o < bias.size(); ++o) bias[o] = static_cast<float>(folded_bias[o] / y_scale);
    // A residual in int8 is q x its scale; in fp16 (E4M3 nets) its real value.
    const double residual_scale =
        !step->residual ? 1.0 : (format_ == QuantFormat::kInt8 ? step->residual->scale : 1.0) / y_scale;
    step->graph->set_epilogue(gpu::channel_scales(step->in->scale, w_scales, y_scale), bias,
                              static_cast<float>(residual_scale), stream_);
    step->graph->tune(gpu::QuantConvTensors{step->in->q.get(), step->weights.get(), step->out->q.get(),
                                            !step->residual                 ? nullptr
                                            : format_ == QuantFormat::kInt8 ? step->residual->q.get()
                                                                            : step->residual->half.get()},
                      3);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void QuantNet::forward() {
  for (const auto& step : steps_) {
    switch (step->kind) {
      case Step::Kind::kQuantizeInput:
        quantize_rows(images_.get(), input_type_, step->out->dims.c, step->out->bytes(), step->out->stored_c,
                      static_cast<long long>(batch_) * step->out->dims.h * step->out->dims.w,
                      static_cast<float>(step->out->scale), format_, stream_);
        break;
      case Step::Kind::kConv: {
        const void* residual = !step->residual                 ? nullptr
                               : format_ == QuantFormat::kInt8 ? step->residual->q.get()
                                                               : step->residual->half.get();
        step->graph->execute({step->in->q.get(), step->weights.get(), step->out->q.get(), residual});
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
        fc_f32(reinterpret_cast<const float*>(features_.get()), reinterpret_cast<const float*>(fc_weight_.get()),
               reinterpret_cast<const float*>(fc_bias_.get()), reinterpret_cast<float*>(logits_.get()), batch_,
               features_width_, classes_, stream_);
        break;
    }
    if (step->out && step->out->half.get())
      dequantize_half(step->out->bytes(), format_, static_cast<float>(step->out->scale), step->out->half.get(),
                      static_cast<long long>(batch_) * step->out->dims.elements(), stream_);
  }
}

Json QuantNet::describe() const {
  Json layers = Json::array();
  for (const auto& step : steps_) {
    if (step->kind != Step::Kind::kConv) continue;
    layers.push_back(Json{{"layer", step->layer},
                          {"graph", step->graph->spec().shape.text() + " " + step->graph->spec().epilogue_text()},
                          {"plan", step->graph->plan_name()},
                          {"input_scale", step->in->scale},
                          {"output_scale", step->out->scale},
                          {"weight_scales", {step->weight_scale_min, step->weight_scale_max}}});
  }
  return Json{{"format", gpu::name(format_)},
              {"calibration", Json{{"method",
                                    "max: each tensor's largest magnitude, per tensor; weights per "
                                    "output channel"},
                                   {"batches", calibration_batches_},
                                   {"images", calibration_batches_ * batch_}}},
              {"convolutions", layers},
              {"classifier", "fp32, after a dequantizing global average pool"}};
}

}  // namespace scalebench::train
