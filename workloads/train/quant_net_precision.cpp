// Which layers of a quantized net run in which precision: the split (the first convolutions in
// the trained type, the rest in 8 bits), timed or given, and the forms each tensor is kept in.
#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/train/precision_split.hpp"
#include "workloads/train/quant_net_parts.hpp"

namespace scalebench::train {

using gpu::QuantFormat;

int QuantNet::convolutions() const {
  return static_cast<int>(std::count_if(steps_.begin(), steps_.end(), [](const auto& st) { return st->is_conv(); }));
}

// The first `n` convolutions unquantized (a pooling layer as the convolution after it, the global
// average pool as the last convolution), and so which forms each tensor is kept in: 8-bit for 8-bit
// readers, the trained type for unquantized ones, fp16 for an E4M3 layer's residual.
void QuantNet::assign_precisions(int n) {
  const int convs = convolutions();
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
  // Unquantized graphs in fp16 only: ResNet-style nets' bf16 graphs answered with nothing like the
  // bf16 net's logits on an H200 (cuDNN 9.19), and fp32's are untried. The image's legacy
  // convolution runs in any type.
  for (const auto& st : steps_)
    if (st->unquantized && st->kind == Step::Kind::kConv && input_type_ != DType::kF16)
      throw Error(std::string("quantized inference: ") + std::to_string(n) + " convolutions unquantized in " +
                  gpu::dtype_name(input_type_) +
                  "; past the image's, unquantized convolutions run in fp16 only (bf16's fused graphs answered "
                  "wrongly on an H200): quantize from an fp16 net, or keep only the image's convolution unquantized");
  for (auto& st : steps_)  // with no 8-bit layer, the features are averaged unquantized too
    if (st->kind == Step::Kind::kGlobalAvgPool) st->unquantized = n == convs;
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
  // An 8-bit layer writes 8 bits only (Step::writes_wide); the split is a prefix, so no 16-bit
  // layer reads it.
  for (auto& st : steps_)
    if (st->out && !st->unquantized && st->kind != Step::Kind::kQuantizeInput && st->out->wide)
      throw Error("quantized inference: layer " + std::to_string(st->layer) +
                  " runs in 8 bits and a 16-bit layer reads it");
  if (!tensors_[0]->quantized) steps_.erase(steps_.begin());  // kQuantizeInput: nothing reads its output
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

}  // namespace scalebench::train
