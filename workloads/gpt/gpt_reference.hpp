#pragma once
#include <vector>

#include "workloads/gpt/gpt_config.hpp"

// A plain fp64 forward pass of either family on the host: the reference the GPU step's loss and gradients
// are checked against (the gradients by central finite differences of this loss). Slow; meant for
// the tiny test model. Pure C++.
namespace scalebench::gpt {

// The mean cross-entropy of `targets` given `tokens` (both B x T) with the flat parameters `params`
// (parameter_layout(m, T) order). Only the first m.vocab logits take part (the padding does not).
double reference_loss(const ModelShape& m, int B, int T, const std::vector<double>& params,
                      const std::vector<int>& tokens, const std::vector<int>& targets);

}  // namespace scalebench::gpt
