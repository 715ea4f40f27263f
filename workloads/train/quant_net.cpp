#include "workloads/train/quant_net.hpp"

#include <algorithm>
#include <chrono>

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
std::string op_error(const Layer& l, const std::string& why) {
  return "quantized inference: layer " + l.name + " (" + name(l.op) + ") " + why +
         "; it runs convolutions each followed by a batch norm, max pooling after a ReLU, global average "
         "pooling and a final fc (fmnist-resnet, the ResNets)";
}

int channel_multiple(QuantFormat f) { return f == QuantFormat::kInt8 ? 4 : 16; }
}  // namespace

QuantNet::QuantNet(Net& trained, const QuantOptions& o, const std::function<void(int)>& load)
    : options_(o),
      format_(o.format),
      stream_(trained.stream()),
      batch_(trained.config().batch),
      input_type_(trained.compute_type()) {
  if (o.calibration_batches < 1) throw Error("quantized inference: at least one calibration batch");
  if (o.trained_convolutions < QuantOptions::kEvery)
    throw Error("quantized inference: trained_convolutions " + std::to_string(o.trained_convolutions) +
                " (a count, kByTiming or kEvery)");
  if (!options_.plans) options_.plans = std::make_shared<gpu::QuantPlanCache>();
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  plan(trained.model());
  const bool every = o.trained_convolutions == QuantOptions::kEvery || o.trained_convolutions == convolutions();
  if (!every) calibrate(trained, load);  // with no 8-bit layer, no scale is used
  const auto t1 = Clock::now();
  if (every) {
    assign_precisions(convolutions());
    split_by_ = "option";
  } else if (const QuantNet* from = options_.scales_from) {
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
  void* y = step.writes_wide() ? step.out->wide_data : step.out->q.get();
  return {x, step.weights.get(), y, residual};
}

// After a step: its unquantized output quantized for the 8-bit layers that read it, and an 8-bit
// output's fp16 copy for an E4M3 residual.
void QuantNet::convert_output(const Step& step) {
  const Tensor* t = step.out;
  if (!t) return;
  const long long positions = static_cast<long long>(batch_) * t->dims.h * t->dims.w;
  if (step.quantize_out())
    quantize_rows(t->wide_data, input_type_, t->dims.c, t->bytes(), t->stored_c, positions,
                  static_cast<float>(t->scale), format_, stream_);
  if (t->half_copy)
    dequantize_half(t->bytes(), format_, static_cast<float>(t->scale), t->half.get(), positions * t->dims.c, stream_);
}

void QuantNet::forward() {
  for (const auto& step : steps_) {
    run_step(*step);
    convert_output(*step);
  }
}

void QuantNet::run_step(const Step& step) {
  switch (step.kind) {
    case Step::Kind::kQuantizeInput:
      quantize_rows(images_.get(), input_type_, step.out->dims.c, step.out->bytes(), step.out->stored_c,
                    static_cast<long long>(batch_) * step.out->dims.h * step.out->dims.w,
                    static_cast<float>(step.out->scale), format_, stream_);
      break;
    case Step::Kind::kConv:
      step.graph->execute(conv_tensors(step));
      break;
    case Step::Kind::kTrainedConv: {
      const float one = 1.0f, zero = 0.0f;
      void* y = step.writes_wide() ? step.out->wide_data : step.y.get();
      CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, step.x_desc.get(), images_.get(), step.w_desc.get(),
                                          step.weights.get(), step.conv_desc.get(), step.algo, step.workspace.get(),
                                          step.workspace.bytes(), &zero, step.y_desc.get(), y));
      const long long rows = static_cast<long long>(batch_) * step.out->dims.h * step.out->dims.w;
      if (step.writes_wide())
        bias_relu_forward(y, step.bias.get(), y, input_type_, rows, step.out->dims.c, stream_);
      else
        bias_act_quantize(y, input_type_, reinterpret_cast<const float*>(step.bias.get()), step.relu, step.out->bytes(),
                          rows, step.out->dims.c, static_cast<float>(step.out->scale), format_, stream_);
      break;
    }
    case Step::Kind::kMaxPool:
      if (step.unquantized)
        maxpool_forward(step.in->wide_data, step.out->wide_data, nullptr, input_type_, step.pool, stream_);
      else
        maxpool_bytes(step.in->bytes(), step.out->bytes(), step.pool, stream_);
      break;
    case Step::Kind::kGlobalAvgPool:
      if (step.unquantized) {
        global_avgpool_wide(step.in->wide_data, input_type_, reinterpret_cast<float*>(features_.get()), batch_,
                            step.in->dims.h * step.in->dims.w, step.in->dims.c, stream_);
        break;
      }
      global_avgpool_dequant(step.in->bytes(), format_, static_cast<float>(step.in->scale),
                             reinterpret_cast<float*>(features_.get()), batch_, step.in->dims.h * step.in->dims.w,
                             step.in->dims.c, stream_);
      break;
    case Step::Kind::kFc:
      fc_.run(lt_.get(), fc_weight_.get(), features_.get(), logits_.get(), false, fc_workspace_.get(), stream_);
      add_bias_rows(reinterpret_cast<float*>(logits_.get()), reinterpret_cast<const float*>(fc_bias_.get()), batch_,
                    classes_, stream_);
      break;
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
      layers.push_back(
          Json{{"layer", step->layer},
               {"graph", std::string("cuDNN legacy convolution in ") + gpu::dtype_name(input_type_) +
                             (step->writes_wide() ? ", bias and ReLU" : ", bias and ReLU, then quantized")},
               {"output_scale", step->writes_wide() ? Json(nullptr) : Json(step->out->scale)},
               {"cudnn_fwd_algo", static_cast<int>(step->algo)}});  // cudnnConvolutionFwdAlgo_t's value
    if (step->kind != Step::Kind::kConv) continue;
    const double s = step->graph->plan_seconds();
    ++convs;
    if (s >= 0) conv_s += s, ++timed;
    const gpu::QuantConvSpec& spec = step->graph->spec();
    layers.push_back(Json{
        {"layer", step->layer},
        {"graph", spec.shape.text() + " " + spec.inputs_text() + " " + spec.epilogue_text() +
                      (step->quantize_out() ? ", then quantized" : "")},
        {"plan", step->graph->plan_name()},
        {"plan_us", s >= 0 ? Json(s * 1e6) : Json(nullptr)},
        {"input_scale", step->unquantized ? Json(nullptr) : Json(step->in->scale)},
        {"output_scale", step->writes_wide() ? Json(nullptr) : Json(step->out->scale)},
        {"weight_scales", step->unquantized ? Json(nullptr) : Json{step->weight_scale_min, step->weight_scale_max}}});
  }
  Json split{{"trained_convolutions", trained_convs_}, {"chosen_by", split_by_}};
  if (!conv_times_.empty()) split["times"] = conv_times_;
  const bool eight_bit = trained_convs_ < convolutions();
  const std::string wide = gpu::dtype_name(input_type_);
  return Json{
      {"format", eight_bit ? std::string(gpu::name(format_)) : "none: every layer in " + wide},
      {"calibration", eight_bit ? Json{{"method",
                                        "max: each tensor's largest magnitude, per tensor; weights per "
                                        "output channel"},
                                       {"batches", options_.calibration_batches},
                                       {"images", options_.calibration_batches * batch_}}
                                : Json("none: no 8-bit layer")},
      {"first_convolution", trained_convs_ > 0 ? "trained precision: " + wide : std::string(gpu::name(format_))},
      // The first convolutions kept unquantized (in the trained type), and each one's time
      // both ways where timing chose how many.
      {"split", split},
      {"build_s", Json{{"calibration", calibrate_s_}, {"graphs_and_weights", build_s_}}},
      {"plans", Json{{"distinct_graphs", options_.plans->specs()}, {"graphs_sharing", options_.plans->hits()}}},
      // Where a batch's time goes: the convolutions' graphs, as their plans' tuning timed
      // each alone (the image's legacy one is not timed).
      {"convolutions_us", Json{{"sum", conv_s * 1e6}, {"timed", timed}, {"of", convs}}},
      {"convolutions", layers},
      {"classifier", eight_bit ? "fp32 cuBLASLt matmul, after a dequantizing global average pool"
                               : "fp32 cuBLASLt matmul, after a global average pool into fp32"}};
}

}  // namespace scalebench::train
