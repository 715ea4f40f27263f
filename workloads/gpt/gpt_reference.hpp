#pragma once
#include <vector>

#include "workloads/gpt/gpt_config.hpp"

// A plain fp64 forward pass of either family on the host: the reference the GPU step's loss and
// gradients (by central finite differences of this loss) and the decoder's logits are checked
// against. Slow; meant for the tiny test models. Pure C++.
namespace scalebench::gpt {

// The logits [B x T, padded_vocab] at every position of `tokens` (B x T, T <= seq) with the flat
// parameters `params` in parameter_layout(m, seq) order: what the next token at each position is
// scored by. Causal: a position's logits do not depend on the tokens after it.
std::vector<double> reference_logits(const ModelShape& m, int seq, int B, int T, const std::vector<double>& params,
                                     const std::vector<int>& tokens);

// The greedy choice among the first m.vocab logits (the lowest token on a tie).
int greedy_token(const ModelShape& m, const double* logits);

// `tokens` followed by `new_tokens` greedy choices, each from the logits of the whole sequence so
// far: the step-by-step reference a decoder with a KV cache is checked against.
std::vector<int> reference_greedy(const ModelShape& m, int seq, const std::vector<double>& params,
                                  std::vector<int> tokens, int new_tokens);

// The mean cross-entropy of `targets` given `tokens` (both B x T) with the flat parameters `params`
// (parameter_layout(m, T) order). Only the first m.vocab logits take part (the padding does not).
double reference_loss(const ModelShape& m, int B, int T, const std::vector<double>& params,
                      const std::vector<int>& tokens, const std::vector<int>& targets);

}  // namespace scalebench::gpt
