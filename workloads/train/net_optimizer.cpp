#include "workloads/train/net.hpp"

// The optimizer: SGD with momentum on the fp32 master weights, the loss scaler, and the compute
// copy of the weights rewritten from the master.
namespace scalebench::train {

void Net::optimizer_step(float divisor) {
  int* flag = reinterpret_cast<int*>(overflow_.get());
  find_nonfinite(grads_, ct_, model_.param_slots, flag, stream_);
  sgd_step(master(), reinterpret_cast<float*>(velocity_.get()), grads_,
           ct_ == DType::kF32 ? nullptr : compute_copy_.get(), ct_, model_.param_slots, cfg_.lr, cfg_.momentum,
           cfg_.weight_decay, divisor, loss_scale_device(), flag, stream_, cfg_.lr_device, cfg_.nesterov);
  update_loss_scale(loss_scale_device(), reinterpret_cast<int*>(good_steps_.get()), flag, cfg_.loss_scale_interval,
                    ct_ == DType::kF16, stream_);
}

void Net::sync_weights() {
  if (ct_ != DType::kF32) convert_from_float(master(), compute_copy_.get(), ct_, model_.param_slots, stream_);
}

}  // namespace scalebench::train
