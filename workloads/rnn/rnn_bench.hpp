#pragma once
#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/rnn/rnn_config.hpp"

// One point of the rnn workload on the current GPU through cuDNN's RNN API (cuDNN 9): set-up,
// algorithm choice, CUDA-event timing of steps, and the check of a sample of the output against
// the fp64 reference (rnn_reference.hpp). Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::rnn {

// A step is, in inference mode, cudnnRNNForward (CUDNN_FWD_MODE_INFERENCE); in training mode,
// what one optimiser step of torch.nn.LSTM does: cudnnRNNForward (TRAINING), cudnnRNNBackwardData_v8
// with dy = 1, zeroing the weight gradients, cudnnRNNBackwardWeights_v8 (which adds into them) and
// the SGD update w -= lr * dw over the flat weight space.
compute::RankOutcome measure_point(const Config& cfg, int hidden, const compute::TimingConfig& timing,
                                   const compute::DeviceInfo& gpu);

}  // namespace scalebench::rnn
