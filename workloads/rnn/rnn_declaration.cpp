// The rnn workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

#include <string>

namespace scalebench {
namespace {

std::string check_rnn(const Json& params) {
  // One size or a comma-separated list of sizes, each 1..1048576.
  const Json& h = params.at("hidden");
  const std::string text = h.is_number_integer() ? std::to_string(h.get<long long>())
                           : h.is_string()       ? h.get<std::string>()
                                                 : "";
  std::size_t pos = 0;
  do {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const auto v = parse_integer(item);
    if (!v || *v < 1 || *v > (1 << 20))
      return "hidden: '" + item + "' is not a size from 1 to 1048576 (write one size or a list such as 128,256)";
    pos = comma + 1;
  } while (pos <= text.size());
  return "";
}

}  // namespace

WorkloadDef rnn_declaration() {
  WorkloadDef d;
  d.name = "rnn";
  d.help =
      "recurrent networks on cuDNN (vanilla tanh/relu, LSTM, GRU): inference or a full training step, samples/s "
      "per GPU and on all GPUs at once (docs/rnn.md)";
  d.params = {
      {"cell", ParamType::kEnum, "lstm", {"lstm", "gru", "rnn_tanh", "rnn_relu"}, {}, "the recurrent cell"},
      {"layers", ParamType::kInt, 1, {}, 1, "stacked layers"},
      {"bidirectional", ParamType::kBool, false, {}, {}, "both directions, outputs concatenated"},
      {"seq", ParamType::kInt, 32, {}, 1, "time steps per sequence"},
      {"batch", ParamType::kInt, 128, {}, 1, "sequences per step"},
      {"hidden",
       ParamType::kText,
       "128,256,512,1024",
       {},
       {},
       "hidden size, or a comma-separated list of them (one point each)"},
      {"input", ParamType::kIntOrAuto, "auto", {}, 1, "input size; auto: the hidden size"},
      {"mode",
       ParamType::kEnum,
       "training",
       {"training", "inference"},
       {},
       "training: forward, backward data, backward weights and an SGD update; inference: forward"},
      {"precision",
       ParamType::kEnum,
       "fp32",
       {"fp32", "tf32", "fp16"},
       {},
       "fp32: no Tensor Cores; tf32: fp32 data, TF32 Tensor Cores allowed (PyTorch's default for RNNs); fp16: "
       "fp16 data, fp32 math inside, Tensor Cores"},
      {"algo",
       ParamType::kEnum,
       "auto",
       {"auto", "standard", "persist_static"},
       {},
       "cuDNN's RNN algorithm; auto: both, the faster kept (recorded in details.algo)"},
      timing::check("compare a sample of the output with an fp64 host reference"),
      {"cuda_graph",
       ParamType::kBool,
       false,
       {},
       {},
       "capture a step into a CUDA graph and time its launches (no host launch cost per kernel)"},
      timing::warmup(5, "untimed steps before timing"),
      timing::iters("auto", "steps per timed sample; auto: about 5 ms a sample"),
      timing::time_cap(1.0, "stop sampling a point after this many seconds (min 3 samples)"),
  };
  d.needs_gpus = true;
  d.check = &check_rnn;
  d.measurement_params = {"warmup", "iters", "time_cap", "check"};
  d.table_columns = {"cell", "mode", "precision"};
  return d;
}

}  // namespace scalebench
