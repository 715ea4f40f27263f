#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "workloads/train/model.hpp"

// The `dump` parameter (docs/train.md, "The same network in PyTorch"): a point's starting state
// and first losses written to a folder, so that a PyTorch definition of the same network can
// train from the same weights on the same batch and compare its losses. Built only with
// SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

class Net;

// The net before its first step: fp32 master weights, the batch's images (compute type, NHWC)
// and labels, copied to the host.
struct DumpStart {
  std::vector<float> weights;
  std::vector<unsigned char> images;
  std::vector<int> labels;
};
DumpStart dump_start(const Net& net);

// The gradients the net's last step left (fp32 data only: in 16 bits they are the loss-scaled
// compute copy), so that another framework can compare them tensor by tensor; empty otherwise.
std::vector<float> dump_gradients(const Net& net);

// Writes into `dir` (made if missing): weights.f32 (param_count floats), images.bin (batch x h x
// w x c of the compute type), labels.i32 (batch int32), and model.json: the model, precision,
// batch, optimiser settings, `losses` (one per step from the first, weights as in weights.f32
// before it), and the layers that hold parameters with their offsets and shapes; with `grads1`
// (dump_gradients after the first step) also grads1.f32, laid out as the weights. Throws Error
// naming the file that could not be written.
void write_dump(const std::string& dir, const Net& net, const DumpStart& start, const std::vector<double>& losses,
                const std::vector<float>& grads1);

}  // namespace scalebench::train
