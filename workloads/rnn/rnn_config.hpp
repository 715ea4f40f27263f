#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/precision.hpp"

// The rnn workload's parameters, its points and the work each step does (docs/rnn.md). Pure: no
// CUDA, no cuDNN.
namespace scalebench::rnn {

// cuDNN's four recurrent cells. Gates = the matrices each of W (input) and R (recurrent) holds:
// 1 for the vanilla cells, 3 for GRU (reset, update, new), 4 for LSTM (input, forget, cell, output).
enum class Cell { kRnnTanh, kRnnRelu, kLstm, kGru };
Cell parse_cell(std::string_view text);  // "rnn_tanh", "rnn_relu", "lstm", "gru"; throws Error
const char* name(Cell c);
int gates(Cell c);

enum class Mode { kInference, kTraining };

enum class Algo { kStandard, kPersistStatic, kAuto };
Algo parse_algo(std::string_view text);  // "standard", "persist_static", "auto"; throws Error
const char* name(Algo a);

struct Config {
  Cell cell = Cell::kLstm;
  int layers = 1;
  bool bidirectional = false;
  int seq = 32;
  int batch = 128;
  std::vector<int> hidden{128, 256, 512, 1024};  // one point each, in this order
  int input = 0;                                 // 0: the point's hidden size
  Mode mode = Mode::kTraining;
  compute::Precision precision = compute::Precision::kFp32;
  Algo algo = Algo::kAuto;
  bool check = true;
  bool cuda_graph = false;  // time steps captured into a CUDA graph

  int directions() const { return bidirectional ? 2 : 1; }
  int input_size(int hidden_size) const { return input > 0 ? input : hidden_size; }
  // From resolved workload parameters; throws Error naming the parameter that is wrong.
  static Config from_params(const Json& params);
};

// `hidden` as written: one size (an integer) or a comma-separated list ("128,256,512,1024").
// Throws Error naming the bad element.
std::vector<int> parse_hidden_list(const Json& value);

// The points of a run: one per hidden size. Each carries what identifies it in records.
std::vector<Json> plan(const Config& cfg);

// Matrix FLOPs of one step over the whole batch (a multiply-add counts 2; element-wise gate
// arithmetic, biases and the SGD update are not counted, as DeepBench counts RNNs):
//   forward = seq x batch x sum over layers and directions of 2 x gates x hidden x (in + hidden),
//   where `in` is the input size for layer 0 and directions x hidden above it;
//   training = 3 x forward: backward data (W^T and R^T times the gate gradients) and backward
//   weights (gate gradients times the inputs and previous hidden states) are each one more pass
//   of the same matrix shapes.
double forward_flops(Cell cell, int layers, int directions, int seq, int batch, int input, int hidden);
double step_flops(const Config& cfg, int hidden);

// The figure of a point: samples (batch entries) per second of steps.
compute::Throughput throughput(const Config& cfg);

}  // namespace scalebench::rnn
