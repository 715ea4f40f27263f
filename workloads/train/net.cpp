#include "workloads/train/net.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "workloads/gpu/alignment.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/net_layer_state.hpp"

// Building the net: its parameters, activations, weights and data, who writes each gradient
// first, then the algorithm search (net_algorithms.cpp).
namespace scalebench::train {

DType compute_dtype(compute::Precision p) {
  const DType t = compute::element_dtype(p);
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBf16)
    throw Error(std::string("the train workload runs fp32, tf32, fp16 or bf16, not ") + compute::name(p));
  return t;
}

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

Net::Net(const Model& m, const NetConfig& cfg, cudaStream_t stream)
    : model_(m), cfg_(cfg), ct_(compute_dtype(cfg.precision)), stream_(stream) {
  if (cfg_.depthwise != "ours" && cfg_.depthwise != "cudnn")
    throw Error("depthwise: '" + cfg_.depthwise + "' is not one of ours, cudnn");
  if (cfg_.pointwise != "auto" && cfg_.pointwise != "gemm" && cfg_.pointwise != "cudnn")
    throw Error("pointwise: '" + cfg_.pointwise + "' is not one of auto, gemm, cudnn");
  if (const Net* o = cfg_.outputs_of; o && (cfg_.training || !o->can_lend_outputs_to(m, cfg_.batch, ct_)))
    throw Error(
        "a net uses another's outputs only in inference, of the same model, image and type, at a batch no "
        "larger than the other's");
  CUDNN_CHECK(cudnnSetStream(cudnn_.get(), stream_));
  CUDNN_CHECK(cudnnSetActivationDescriptor(relu_.get(), CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
  alloc_parameters();
  alloc_activations();
  init_weights();
  init_data();
  find_first_writers();
  fuse_bias_relu();
  choose_algorithms();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Master weights, their compute copy, momentum, gradients and the loss scaler's state.
void Net::alloc_parameters() {
  const long long params = model_.param_slots;
  const std::size_t eb = static_cast<std::size_t>(dtype_bytes(ct_));
  const bool mixed = ct_ != DType::kF32;

  alloc(master_, static_cast<std::size_t>(params) * 4);
  if (mixed) alloc(compute_copy_, static_cast<std::size_t>(params) * eb);
  // The gaps between layers' parameters stay zero: checksums and all-reduces read them too.
  CUDA_CHECK(cudaMemsetAsync(master_.get(), 0, master_.bytes(), stream_));
  if (mixed) CUDA_CHECK(cudaMemsetAsync(compute_copy_.get(), 0, compute_copy_.bytes(), stream_));
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
  alloc(lt_workspace_, FcMatmul::kWorkspace);
  // PyTorch's GradScaler starts at 2^16; bf16 and fp32 need no scaling.
  fill_value(reinterpret_cast<float*>(scale_.get()), 1, ct_ == DType::kF16 ? 65536.0f : 1.0f, stream_);
  CUDA_CHECK(cudaMemsetAsync(good_steps_.get(), 0, sizeof(int), stream_));
  CUDA_CHECK(cudaMemsetAsync(overflow_.get(), 0, sizeof(int), stream_));
}

// Activations (and their gradients): one buffer per layer; the input layer's is the images. Then
// the buffers the passes share: labels, scratch, bias sums, batch norm work.
void Net::alloc_activations() {
  const int n = cfg_.batch;
  const std::size_t eb = static_cast<std::size_t>(dtype_bytes(ct_));
  const bool mixed = ct_ != DType::kF32;
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
      st->y = cfg_.outputs_of ? cfg_.outputs_of->layers_[i]->y : alloc(st->y_memory, bytes);
      CUDNN_CHECK(cudnnSetTensor4dDescriptor(st->y_desc.get(), CUDNN_TENSOR_NHWC, cudnn_type(ct_), n, l.out.c, l.out.h,
                                             l.out.w));
      if (cfg_.training && i > 0) alloc(st->dy, bytes);
      largest = std::max(largest, bytes);
    }
    if (l.op == Op::kBatchNorm) bn_params += static_cast<std::size_t>(align_params(l.params));
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
  const bool mixed = ct_ != DType::kF32;
  std::size_t bn_at = 0;
  for (std::size_t i = 0; i < model_.layers.size(); ++i) {
    const Layer& l = model_.layers[i];
    LayerState& st = *layers_[i];
    float* w = master() + l.param_offset;
    if (l.op == Op::kConv) {
      // fan out per group: a depthwise filter feeds k x k outputs of its one channel.
      fill_normal(w, DType::kF32, l.weight_params(), 0.0f,
                  std::sqrt(2.0f / (static_cast<float>(l.channels / l.groups) * l.kernel_h * l.kernel_w)),
                  cfg_.seed * 1000 + i, stream_);
    } else if (l.op == Op::kFc) {
      fill_normal(w, DType::kF32, l.weight_params(), 0.0f, 0.01f, cfg_.seed * 1000 + i, stream_);
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
      bn_at += static_cast<std::size_t>(align_params(l.params));
    }
    if (l.op == Op::kMaxPool || l.op == Op::kAvgPool) {
      if (l.kernel_h != l.kernel_w || l.pad_h != l.pad_w) throw Error(l.name + ": pooling takes square windows only");
      if (l.op == Op::kMaxPool && l.kernel_h > kMaxPoolWindow)
        throw Error(l.name + ": a max-pooling window of " + std::to_string(l.kernel_h) + " is wider than " +
                    std::to_string(kMaxPoolWindow));
      const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
      st.pool = PoolShape{n, d.h, d.w, d.c, l.out.h, l.out.w, l.kernel_h, l.stride, l.pad_h};
      if (cfg_.training && l.op == Op::kMaxPool)
        alloc(st.argmax, static_cast<std::size_t>(n) * static_cast<std::size_t>(l.out.elements()));
    }
    if (l.op == Op::kSubsample) {
      const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
      st.pool = PoolShape{n, d.h, d.w, d.c, l.out.h, l.out.w, 1, l.stride, 0};
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
        fill_normal(layers_[i]->y, ct_, static_cast<long long>(n) * model_.layers[i].out.elements(), 0.0f, 1.0f,
                    cfg_.data_seed * 31 + i, stream_);
}

// Who writes each gradient first in the backward pass (layers in reverse): the first writes,
// the others add, so a layer read by several (a block's input and its branches, a concat's
// inputs) gets the sum of their gradients.
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
    st.acc_inputs.assign(l.inputs.size(), false);
    for (std::size_t j = 0; j < l.inputs.size(); ++j)
      if (l.inputs[j] > 0) {
        bool acc = false;
        writes(l.inputs[j], acc);
        st.acc_inputs[j] = acc;
      }
  }
}

// A conv or fc layer with a bias whose one reader is the ReLU right after it leaves its bias to that
// ReLU: one pass over the output each way instead of two (VGG-16's biases and ReLUs were a third of
// its step in separate passes).
void Net::fuse_bias_relu() {
  std::vector<int> readers(model_.layers.size(), 0);
  for (const Layer& l : model_.layers)
    for (int r : l.reads()) ++readers[static_cast<std::size_t>(r)];
  bias_in_relu_.assign(model_.layers.size(), false);
  for (std::size_t i = 1; i + 1 < model_.layers.size(); ++i) {
    const Layer& l = model_.layers[i];
    const Layer& next = model_.layers[i + 1];
    bias_in_relu_[i] = l.bias && (l.op == Op::kConv || l.op == Op::kFc) && next.op == Op::kRelu &&
                       next.input == static_cast<int>(i) && readers[i] == 1 && bias_relu_fusable(ct_, l.channels) &&
                       gpu::alignment_of({bias(static_cast<int>(i))}, 16) == 16;
  }
}

Net::~Net() = default;

std::vector<float> Net::host_params(int layer) const {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  std::vector<float> out(static_cast<std::size_t>(l.params));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  CUDA_CHECK(cudaMemcpy(out.data(), master() + l.param_offset, out.size() * 4, cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> Net::running_stats(int layer) const {
  const Layer& l = model_.layers[static_cast<std::size_t>(layer)];
  const LayerState& st = *layers_[static_cast<std::size_t>(layer)];
  if (l.op != Op::kBatchNorm) throw Error(l.name + " is not a batch norm: it has no running statistics");
  const auto c = static_cast<std::size_t>(l.out.c);
  std::vector<float> out(2 * c);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  CUDA_CHECK(cudaMemcpy(out.data(), st.running_mean.get(), c * 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.data() + c, st.running_var.get(), c * 4, cudaMemcpyDeviceToHost));
  return out;
}

bool Net::can_lend_outputs_to(const Model& m, int batch, DType t) const {
  return m.name == model_.name && m.layers.size() == model_.layers.size() &&
         m.layers[0].out.elements() == model_.layers[0].out.elements() && batch <= cfg_.batch && t == ct_;
}

void* Net::act(int layer) const { return layers_[static_cast<std::size_t>(layer)]->y; }
void* Net::dact(int layer) const { return layers_[static_cast<std::size_t>(layer)]->dy.get(); }
void* Net::logits() const { return act(model_.layers.back().input); }
void* Net::weight(int layer) const {
  const long long off = model_.layers[static_cast<std::size_t>(layer)].param_offset;
  if (ct_ == DType::kF32) return master() + off;
  return compute_copy_.get() + off * dtype_bytes(ct_);
}
void* Net::bias(int layer) const {
  return static_cast<std::byte*>(weight(layer)) +
         model_.layers[static_cast<std::size_t>(layer)].weight_params() * dtype_bytes(ct_);
}
void* Net::grad(int layer) const {
  return grads_ + model_.layers[static_cast<std::size_t>(layer)].param_offset * dtype_bytes(ct_);
}

void Net::copy_parameters_from(const Net& from) {
  if (from.model_.name != model_.name || from.model_.param_slots != model_.param_slots || from.ct_ != ct_)
    throw Error("copying the parameters of " + from.model_.name + " (" + std::to_string(from.model_.param_count) +
                " parameters) into " + model_.name + " (" + std::to_string(model_.param_count) +
                " parameters): not the same model and precision");
  CUDA_CHECK(cudaStreamSynchronize(from.stream_));
  CUDA_CHECK(cudaMemcpyAsync(master(), from.master(), static_cast<std::size_t>(model_.param_slots) * 4,
                             cudaMemcpyDeviceToDevice, stream_));
  sync_weights();
  for (std::size_t i = 0; i < model_.layers.size(); ++i)
    if (model_.layers[i].op == Op::kBatchNorm) {
      const LayerState& src = *from.layers_[i];
      LayerState& dst = *layers_[i];
      CUDA_CHECK(cudaMemcpyAsync(dst.running_mean.get(), src.running_mean.get(), dst.running_mean.bytes(),
                                 cudaMemcpyDeviceToDevice, stream_));
      CUDA_CHECK(cudaMemcpyAsync(dst.running_var.get(), src.running_var.get(), dst.running_var.bytes(),
                                 cudaMemcpyDeviceToDevice, stream_));
    }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

double Net::read_loss() const {
  double v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, loss_.get(), sizeof v, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return v;
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
              {"graph_api_skipped_convs", legacy_only_},
              {"depthwise", cfg_.depthwise},
              {"depthwise_kernels", depthwise_kernels_},
              {"pointwise", cfg_.pointwise},
              {"pointwise_matmuls", pointwise_matmuls_},
              {"graph_api_error", graph_api_error_},
              {"algo_search_s", search_seconds_},
              {"workspace_bytes", workspace_.bytes()},
              {"batchnorm_fused", fused},
              {"bias_relu_fused", std::count(bias_in_relu_.begin(), bias_in_relu_.end(), true)},
              {"batchnorm_layers", bns},
              {"batchnorm_unfused_why", bn},
              {"allocated_bytes", allocated_}};
}

}  // namespace scalebench::train
