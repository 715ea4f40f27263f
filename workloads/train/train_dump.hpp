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

// fp32 gradients for another framework to compare tensor by tensor (empty in 16 bits, where the
// buffer holds the loss-scaled compute copy): `pass_first` runs a forward and backward pass at
// the net's weights first (what the step's own passes compute, alone); otherwise the gradients
// the last step left.
std::vector<float> dump_gradients(Net& net, bool pass_first);

// Writes into `dir` (made if missing): weights.f32 (param_slots floats), images.bin (batch x h x
// w x c of the compute type), labels.i32 (batch int32), and model.json: the model, precision,
// batch, optimiser settings, `losses` (one per step from the first, weights as in weights.f32
// before it), and the layers that hold parameters with their offsets and shapes; with gradients
// also grads0.f32 (a pass alone at the starting weights) and grads1.f32 (the first step's), laid
// out as the weights. Throws Error naming the file that could not be written.
void write_dump(const std::string& dir, const Net& net, const DumpStart& start, const std::vector<double>& losses,
                const std::vector<float>& grads0, const std::vector<float>& grads1);

}  // namespace scalebench::train
