#include <cstdint>
#include <functional>
#include <string>

#include "workloads/gpu/alignment.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/net_layer_state.hpp"

// The layers' descriptors and their forward and backward passes, and the two passes over the net.
namespace scalebench::train {

using compute::Precision;

void Net::setup_conv(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const Layer& in = model_.layers[static_cast<std::size_t>(l.input)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  // A grouped (depthwise) convolution's filter holds in.c / groups input channels per output one.
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(st.w_desc.get(), cudnn_type(ct_), CUDNN_TENSOR_NHWC, l.channels,
                                         in.out.c / l.groups, l.kernel_h, l.kernel_w));
  for (cudnnConvolutionDescriptor_t d : {st.fwd_desc.get(), st.bwd_data_desc.get(), st.bwd_filter_desc.get()}) {
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d, l.pad_h, l.pad_w, l.stride, l.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(d, l.groups));
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

void Net::setup_fc(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  setup_matmuls(i, model_.layers[static_cast<std::size_t>(l.input)].out.elements(), cfg_.batch);
  if (l.bias)
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(layers_[static_cast<std::size_t>(i)]->bias_desc.get(), CUDNN_TENSOR_NHWC,
                                           cudnn_type(ct_), 1, l.channels, 1, 1));
}

// An fc's matmuls, or a 1x1 convolution's over its batch x h x w rows of NHWC channels: row-major
// W[out][in] is column-major in x out; X[n][in] is in x n; Y[n][out] is out x n.
void Net::setup_matmuls(int i, long long in, long long n) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const long long out = l.channels;
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  // The weights and their gradients lie at the layer's offset in the flat buffers (NASNet's fc,
  // at an odd offset, 4-byte aligned in fp16: cuBLASLt's pick for 256 bytes then refused to
  // launch); activations have buffers of their own.
  const auto align = static_cast<std::uint32_t>(gpu::alignment_of({weight(i), cfg_.training ? grad(i) : nullptr}, 256));
  st.fc_fwd.setup(lt_.get(), cfg_.precision, ct_, true, false, out, n, in, in, in, out, align);
  if (cfg_.training) {
    st.fc_bwd_data.setup(lt_.get(), cfg_.precision, ct_, false, false, in, n, out, in, out, in, align);
    st.fc_bwd_weight.setup(lt_.get(), cfg_.precision, ct_, false, true, in, out, n, in, out, in, align);
  }
}

void Net::conv_forward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f;
  if (st.depthwise)
    depthwise_forward(in.y, weight(i), st.y, ct_, st.pool, stream_);
  else if (st.matmul)
    st.fc_fwd.run(lt_.get(), weight(i), in.y, st.y, false, lt_workspace_.get(), stream_);
  else if (st.fwd.plan)
    st.fwd.plan->execute(cudnn_.get(), in.y, weight(i), st.y, workspace_.get());
  else
    CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, in.y_desc.get(), in.y, st.w_desc.get(), weight(i),
                                        st.fwd_desc.get(), static_cast<cudnnConvolutionFwdAlgo_t>(st.fwd.algo),
                                        workspace_.get(), workspace_.bytes(), &zero, st.y_desc.get(), st.y));
  if (l.bias) bias_forward(i);
}

void Net::conv_backward(int i, const std::function<void(int)>& done) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const LayerState& in = *layers_[static_cast<std::size_t>(l.input)];
  const float one = 1.0f, zero = 0.0f;
  if (st.depthwise)
    depthwise_backward_filter(in.y, st.dy.get(), grad(i), ct_, st.pool, workspace_.get(), stream_);
  else if (st.matmul)
    st.fc_bwd_weight.run(lt_.get(), in.y, st.dy.get(), grad(i), false, lt_workspace_.get(), stream_);
  else if (st.bwd_filter.plan)
    st.bwd_filter.plan->execute(cudnn_.get(), in.y, grad(i), st.dy.get(), workspace_.get());
  else
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(cudnn_.get(), &one, in.y_desc.get(), in.y, st.y_desc.get(), st.dy.get(),
                                               st.bwd_filter_desc.get(),
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(st.bwd_filter.algo),
                                               workspace_.get(), workspace_.bytes(), &zero, st.w_desc.get(), grad(i)));
  if (l.bias) bias_backward(i);
  done(i);
  if (l.input > 0) {
    const float beta = st.acc_input ? 1.0f : 0.0f;
    if (st.depthwise)
      depthwise_backward_data(st.dy.get(), weight(i), dact(l.input), st.acc_input, ct_, st.pool, stream_);
    else if (st.matmul)
      st.fc_bwd_data.run(lt_.get(), weight(i), st.dy.get(), dact(l.input), st.acc_input, lt_workspace_.get(), stream_);
    else if (st.bwd_data.plan)
      st.bwd_data.plan->execute(cudnn_.get(), dact(l.input), weight(i), st.dy.get(), workspace_.get());
    else
      CUDNN_CHECK(cudnnConvolutionBackwardData(
          cudnn_.get(), &one, st.w_desc.get(), weight(i), st.y_desc.get(), st.dy.get(), st.bwd_data_desc.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(st.bwd_data.algo), workspace_.get(), workspace_.bytes(), &beta,
          in.y_desc.get(), dact(l.input)));
  }
}

// y += the bias (stored after the layer's weights), broadcast over every row.
void Net::bias_forward(int i) {
  if (bias_in_relu_[static_cast<std::size_t>(i)]) return;  // the ReLU after this layer adds it
  const LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const float one = 1.0f;
  CUDNN_CHECK(cudnnAddTensor(cudnn_.get(), &one, st.bias_desc.get(), bias(i), &one, st.y_desc.get(), st.y));
}

// cuDNN's backward bias has no bf16: per-channel sums in fp32, then into the flat buffer.
void Net::bias_backward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  float* sums = reinterpret_cast<float*>(bias32_.get());
  if (!bias_in_relu_[static_cast<std::size_t>(i)]) {  // else the ReLU's backward pass summed them
    CUDA_CHECK(cudaMemsetAsync(sums, 0, static_cast<std::size_t>(l.channels) * 4, stream_));
    train::bias_grad(dact(i), ct_, static_cast<long long>(cfg_.batch) * l.out.h * l.out.w, l.channels, sums, stream_);
  }
  void* db = static_cast<std::byte*>(grad(i)) + l.weight_params() * dtype_bytes(ct_);
  if (ct_ == DType::kF32)
    CUDA_CHECK(cudaMemcpyAsync(db, sums, static_cast<std::size_t>(l.channels) * 4, cudaMemcpyDeviceToDevice, stream_));
  else
    convert_from_float(sums, db, ct_, l.channels, stream_);
}

void Net::fc_forward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  LayerState& st = *layers_[static_cast<std::size_t>(i)];
  st.fc_fwd.run(lt_.get(), weight(i), act(l.input), st.y, false, lt_workspace_.get(), stream_);
  if (l.bias) bias_forward(i);
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

// Each input into its slice of the output's channels.
void Net::concat_forward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const long long rows = static_cast<long long>(cfg_.batch) * l.out.h * l.out.w;
  int at = 0;
  for (int in : l.inputs) {
    const int c = model_.layers[static_cast<std::size_t>(in)].out.c;
    copy_channels(act(in), c, 0, act(i), l.out.c, at, c, false, ct_, rows, stream_);
    at += c;
  }
}

// Each slice of the gradient back to its input, added where another reader wrote first.
void Net::concat_backward(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const long long rows = static_cast<long long>(cfg_.batch) * l.out.h * l.out.w;
  int at = 0;
  for (std::size_t j = 0; j < l.inputs.size(); ++j) {
    const int in = l.inputs[j], c = model_.layers[static_cast<std::size_t>(in)].out.c;
    if (in > 0) copy_channels(st.dy.get(), l.out.c, at, dact(in), c, 0, c, st.acc_inputs[j], ct_, rows, stream_);
    at += c;
  }
}

// y = a + b.
void Net::add_forward_layer(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  add_forward(act(l.inputs[0]), act(l.inputs[1]), act(i), ct_, cfg_.batch * l.out.elements(), stream_);
}

// dy to each input, written or added (the two may be one layer: then written, then added).
void Net::add_backward_layer(int i) {
  const Layer& l = model_.layers[static_cast<std::size_t>(i)];
  const LayerState& st = *layers_[static_cast<std::size_t>(i)];
  const long long n = cfg_.batch * l.out.elements();
  for (std::size_t j = 0; j < l.inputs.size(); ++j) {
    const int in = l.inputs[j];
    if (in <= 0) continue;
    add_into(dact(in), st.dy.get(), st.acc_inputs[j], ct_, n, stream_);
  }
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
    bn_forward_infer(in.y, z, st.y, ct_, rows, l.out.c, scale, shift,
                     reinterpret_cast<const float*>(st.running_mean.get()),
                     reinterpret_cast<const float*>(st.running_var.get()), l.eps, l.relu, bn_work_.get(), stream_);
  } else if (st.fused && pass == Pass::kTrain) {
    const cudnnBatchNormOps_t ops =
        l.residual >= 0 ? CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION : CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    CUDNN_CHECK(cudnnBatchNormalizationForwardTrainingEx(
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, &one, &zero, in.y_desc.get(), in.y,
        l.residual >= 0 ? st.y_desc.get() : nullptr, z, st.y_desc.get(), st.y, st.bn_desc.get(), scale, shift,
        kBnMomentum, st.running_mean.get(), st.running_var.get(), l.eps, st.saved_mean.get(), st.saved_inv_var.get(),
        relu_.get(), workspace_.get(), workspace_.bytes(), st.reserve.get(), st.reserve.bytes()));
  } else {
    bn_forward_train(in.y, z, st.y, ct_, rows, l.out.c, scale, shift, reinterpret_cast<float*>(st.saved_mean.get()),
                     reinterpret_cast<float*>(st.saved_inv_var.get()), reinterpret_cast<float*>(st.running_mean.get()),
                     reinterpret_cast<float*>(st.running_var.get()), pass == Pass::kCalibrate ? 1.0 : kBnMomentum,
                     l.eps, l.relu, reinterpret_cast<std::uint8_t*>(st.relu_mask.get()), bn_work_.get(), stream_);
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
        cudnn_.get(), CUDNN_BATCHNORM_SPATIAL_PERSISTENT, ops, &one, &beta_dx, &one, &zero, in.y_desc.get(), in.y,
        st.y_desc.get(), st.y, st.y_desc.get(), st.dy.get(), l.residual >= 0 ? st.y_desc.get() : nullptr,
        l.residual >= 0 ? dact(l.residual) : nullptr, in.y_desc.get(), dact(l.input), st.bn_desc.get(), scale, shift,
        st.bn_grad32, st.bn_grad32 + l.out.c, l.eps, st.saved_mean.get(), st.saved_inv_var.get(), relu_.get(),
        workspace_.get(), workspace_.bytes(), st.reserve.get(), st.reserve.bytes()));
  } else {
    train::bn_backward(in.y, reinterpret_cast<const std::uint8_t*>(st.relu_mask.get()), st.dy.get(), dact(l.input),
                       l.residual >= 0 ? dact(l.residual) : nullptr, st.acc_input, st.acc_residual, ct_,
                       count / l.out.c, l.out.c, scale, reinterpret_cast<const float*>(st.saved_mean.get()),
                       reinterpret_cast<const float*>(st.saved_inv_var.get()), l.relu, st.bn_grad32, bn_work_.get(),
                       stream_);
  }
  if (ct_ != DType::kF32) convert_from_float(st.bn_grad32, grad(i), ct_, l.params, stream_);
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
  // Each loss layer adds its weighted loss (Inception v3's auxiliary one, then the main).
  if (pass != Pass::kInfer) CUDA_CHECK(cudaMemsetAsync(loss_.get(), 0, sizeof(double), stream_));
  for (std::size_t k = 1; k < model_.layers.size(); ++k) {
    const int i = static_cast<int>(k);
    const Layer& l = model_.layers[k];
    LayerState& st = *layers_[k];
    const long long n = cfg_.batch;
    if (pass == Pass::kInfer && l.aux) {  // an auxiliary head only trains
      if (marks_) mark(marks_->fwd[k]);
      continue;
    }
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
        if (bias_in_relu_[static_cast<std::size_t>(l.input)])
          bias_relu_forward(act(l.input), bias(l.input), st.y, ct_, n * l.out.h * l.out.w, l.out.c, stream_);
        else
          relu_forward(act(l.input), st.y, ct_, n * l.out.elements(), stream_);
        break;
      case Op::kMaxPool:
        // argmax: null in a net built for inference
        maxpool_forward(act(l.input), st.y, reinterpret_cast<std::uint8_t*>(st.argmax.get()), ct_, st.pool, stream_);
        break;
      case Op::kAvgPool:
        avgpool2d_forward(act(l.input), st.y, ct_, st.pool, l.count_pad, stream_);
        break;
      case Op::kGlobalAvgPool: {
        const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
        avgpool_forward(act(l.input), st.y, ct_, cfg_.batch, d.h * d.w, d.c, stream_);
        break;
      }
      case Op::kConcat:
        concat_forward(i);
        break;
      case Op::kAdd:
        add_forward_layer(i);
        break;
      case Op::kSubsample:
        subsample_forward(act(l.input), st.y, ct_, st.pool, l.offset, stream_);
        break;
      case Op::kFc:
        fc_forward(i);
        break;
      case Op::kSoftmaxLoss:
        if (pass == Pass::kInfer) break;  // inference ends at the logits
        softmax_cross_entropy(act(l.input), reinterpret_cast<const int*>(labels_.get()),
                              pass == Pass::kTrain ? dact(l.input) : nullptr, ct_, cfg_.batch, model_.classes,
                              loss_scale_device(), loss_device(), stream_, cfg_.label_smoothing, l.loss_weight);
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
        if (bias_in_relu_[static_cast<std::size_t>(l.input)]) {  // the bias's sums for its layer's backward pass
          CUDA_CHECK(cudaMemsetAsync(bias32_.get(), 0, static_cast<std::size_t>(l.out.c) * 4, stream_));
          relu_backward_bias(st.y, st.dy.get(), dact(l.input), ct_, n * l.out.h * l.out.w, l.out.c,
                             reinterpret_cast<float*>(bias32_.get()), stream_);
        } else {
          relu_backward(st.y, st.dy.get(), dact(l.input), st.acc_input, ct_, n * l.out.elements(), stream_);
        }
        break;
      case Op::kMaxPool:
        maxpool_backward(st.dy.get(), reinterpret_cast<const std::uint8_t*>(st.argmax.get()), dact(l.input),
                         st.acc_input, ct_, st.pool, stream_);
        break;
      case Op::kAvgPool:
        avgpool2d_backward(st.dy.get(), dact(l.input), st.acc_input, ct_, st.pool, l.count_pad, stream_);
        break;
      case Op::kGlobalAvgPool: {
        const Dims& d = model_.layers[static_cast<std::size_t>(l.input)].out;
        avgpool_backward(st.dy.get(), dact(l.input), st.acc_input, ct_, cfg_.batch, d.h * d.w, d.c, stream_);
        break;
      }
      case Op::kConcat:
        concat_backward(i);
        break;
      case Op::kAdd:
        add_backward_layer(i);
        break;
      case Op::kSubsample:
        if (l.input > 0) subsample_backward(st.dy.get(), dact(l.input), st.acc_input, ct_, st.pool, l.offset, stream_);
        break;
      case Op::kFc:
        fc_backward(i, grads_done);
        break;
    }
    if (marks_) mark(marks_->bwd[static_cast<std::size_t>(i)]);
  }
}

}  // namespace scalebench::train
