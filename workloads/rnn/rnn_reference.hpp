#pragma once
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/rnn/rnn_config.hpp"

// The forward pass of a stacked, optionally bidirectional recurrent network in fp64 on the host:
// the reference the GPU's output is checked against. Pure: the caller reads the weights the GPU
// used (cuDNN's weight space) into this form. Initial hidden and cell states are zero.
namespace scalebench::rnn {

// One layer in one direction. Per gate g, in cuDNN's order (LSTM: input, forget, cell, output;
// GRU: reset, update, new): w[g] is hidden x in (row-major), r[g] hidden x hidden, bw[g] and
// br[g] hidden. `in` is the input size for layer 0 and directions x hidden above it.
struct LayerWeights {
  std::vector<std::vector<double>> w, r, bw, br;
};

struct Network {
  Cell cell = Cell::kLstm;
  int layers = 1, directions = 1, input = 0, hidden = 0;
  std::vector<LayerWeights> lw;  // index layer * directions + direction
};

// The equations are cuDNN's (and PyTorch's):
//   rnn_tanh/relu: h' = f(W x + bw + R h + br)
//   lstm: i,f,o = sigmoid(W_g x + bw_g + R_g h + br_g), c~ = tanh(...), c' = f c + i c~, h' = o tanh(c')
//   gru:  r,z = sigmoid(...), n = tanh(W_n x + bw_n + r * (R_n h + br_n)), h' = (1 - z) n + z h
// `x` is one batch entry's sequence, seq x input. Returns the last layer's output, seq x
// (directions x hidden): at step t the forward direction's h then the backward one's (which ran
// from the last step to the first).
std::vector<double> forward(const Network& net, const std::vector<double>& x, int seq);

// The output size errors are judged against (compute::within_tolerance's `scale`). Rounding
// inside a cell is relative to the sizes it works with, which are those of its outputs, so the
// base is the root mean square of the reference outputs (with this workload's inputs, 0.02..0.35
// depending on cell and depth: judging each element against itself would make small ones fail).
// Rounding made at one step is carried into the next through R, whose entries are uniform in
// +-1/sqrt(hidden): its spectral radius is about 1/sqrt(3) < 1 and the activations' slopes are at
// most 1, so an error shrinks by that factor each step and the sum over 32 (or any number of)
// steps stays under 1 / (1 - 0.58) ~ 2.4 times one step's. Each layer adds its own such sum to
// what it receives, hence 2.5 x layers x rms(ref).
double check_scale(int layers, const std::vector<double>& ref);

// Output elements of `got` off `ref` beyond the precision's tolerance at `scale`
// (compute::within_tolerance); a NaN or infinity counts as off. Sizes must match.
long long count_wrong(compute::Precision p, const std::vector<double>& got, const std::vector<double>& ref,
                      double scale);

}  // namespace scalebench::rnn
