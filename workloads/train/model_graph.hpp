#pragma once
#include "common/json.hpp"
#include "workloads/train/model.hpp"

// A network as data another program can run: every layer in order with what it reads and its
// shape parameters. The dump writes it beside the weights, so that a reference (another framework,
// or scripts/reference-gradients.py in float64) computes the same function and its gradients
// without a definition of its own. Pure: no CUDA.
namespace scalebench::train {

// [{index, name, op, reads..., out, param_offset, params, ...}], the fields each op uses:
// conv (channels, kernel, stride, padding, groups, bias), fc (channels, bias), batchnorm (eps,
// relu, residual), pools (kernel, stride, padding, count_pad), subsample (stride, offset),
// concat and add (inputs), softmax_loss (input, loss_weight), and `aux` on an auxiliary head.
Json model_graph(const Model& m);

}  // namespace scalebench::train
