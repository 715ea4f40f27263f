// The conv workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace scalebench {
namespace {

std::string check_conv(const Json& params) {
  // Lists of words: every item must be one of the choices (the workload re-parses them).
  auto list_error = [&](const char* key, std::vector<std::string> choices) -> std::string {
    const Json v = params.at(key);
    if (!v.is_string()) return std::string(key) + ": expected a word or a comma-separated list, got " + v.dump();
    std::string all;
    for (const auto& c : choices) all += (all.empty() ? "" : ", ") + c;
    std::stringstream items(v.get<std::string>());
    std::string item;
    int n = 0;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      ++n;
      if (std::find(choices.begin(), choices.end(), item) == choices.end())
        return std::string(key) + ": unknown value '" + item + "'; expected one of: " + all;
    }
    return n == 0 ? std::string(key) + ": empty; expected one or more of: " + all : "";
  };
  for (std::string e : {list_error("precision", {"fp32", "tf32", "fp16", "bf16", "int8", "fp8e4m3"}),
                        list_error("layout", {"nchw", "nhwc"}), list_error("pass", {"fwd", "bwd_data", "bwd_filter"})})
    if (!e.empty()) return e;
  const Json shapes = params.at("shapes");
  const std::string text = shapes.is_string() ? shapes.get<std::string>() : shapes.dump();
  if (text != "resnet50" && text != "deepbench-train" && text != "deepbench-inference") {
    static const std::regex kShape(R"(\d+x\d+x\d+x\d+@\d+x\d+(:[spdg]\d+)*)");
    std::stringstream items(text);
    std::string item;
    int n = 0;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      ++n;
      if (!std::regex_match(item, kShape))
        return "shapes: '" + item +
               "' is not resnet50, deepbench-train, deepbench-inference or KxCxRxS@HxW[:sSTRIDE][:pPAD][:dDILATION]"
               "[:gGROUPS] (e.g. 256x64x1x1@56x56 or 64x64x3x3@56x56:p1)";
    }
    if (n == 0) return "shapes: empty";
  }
  return "";
}

}  // namespace

WorkloadDef conv_declaration() {
  WorkloadDef d;
  d.name = "conv";
  d.help =
      "cuDNN convolution (forward, backward-data, backward-filter) on ResNet-50's and DeepBench's layers, every GPU "
      "at once; int8 and fp8e4m3 forward with a fused epilogue (docs/conv.md)";
  d.params = {
      {"precision",
       ParamType::kText,
       "fp32,tf32,fp16,bf16",
       {},
       {},
       "fp32 (CUDA cores), tf32, fp16, bf16 (Tensor Cores; fp32 sums), one or a comma-separated list; int8 "
       "(int32 sums) and fp8e4m3 (fp32 sums, Hopper) run the forward pass in NHWC only, as inference does, with "
       "the epilogue fused (see epilogue)"},
      {"layout", ParamType::kText, "nhwc", {}, {}, "nchw or nhwc (channels last), or both: nchw,nhwc"},
      {"pass",
       ParamType::kText,
       "fwd,bwd_data,bwd_filter",
       {},
       {},
       "fwd, bwd_data, bwd_filter, or a comma-separated list of them"},
      {"shapes",
       ParamType::kText,
       "resnet50",
       {},
       {},
       "resnet50 (its 23 distinct convolutions), deepbench-train, deepbench-inference, or a comma-separated "
       "list of KxCxRxS@HxW[:sSTRIDE][:pPAD][:dDILATION][:gGROUPS]"},
      {"batch",
       ParamType::kInt,
       64,
       {},
       1,
       "images per batch for resnet50 and explicit shapes (DeepBench's carry their own)"},
      {"algo",
       ParamType::kEnum,
       "heuristic",
       {"heuristic", "search"},
       {},
       "heuristic: cuDNN's first pick (cudnnGet*Algorithm_v7); search: the fastest cuDNN measures "
       "(cudnnFind*AlgorithmEx)"},
      {"epilogue",
       ParamType::kEnum,
       "bias-relu",
       {"bias", "bias-relu", "bias-residual-relu"},
       {},
       "int8 and fp8e4m3 only: what cuDNN fuses after the convolution, y = conv(x, w) * scale[k] + bias[k] "
       "(+ a residual with its own scale) (then ReLU), requantized to the input's format: a ResNet-50 layer's "
       "inference"},
      {"plans",
       ParamType::kInt,
       4,
       {},
       1,
       "int8 and fp8e4m3 only: how many of cuDNN's plans for the graph (its heuristics' order) are timed on the "
       "point's tensors, the fastest kept; each may compile a kernel at run time"},
      timing::check("compare sampled outputs with an fp64 reference"),
      {"graph",
       ParamType::kBool,
       true,
       {},
       {},
       "time CUDA graphs of 20 back-to-back convolutions (the GPU's time); false: one cuDNN call from the host "
       "each (adds the host's cost per call where it exceeds the convolution's)"},
      timing::warmup(5, "untimed operations (graphs of 20 convolutions, or single ones with graph false) first"),
      timing::iters("auto", "operations per timed sample; auto: enough for about 5 ms a sample"),
      timing::time_cap(1.0, "stop sampling a point after this many timed seconds (min 3 samples)"),
  };
  d.needs_gpus = true;
  d.check = &check_conv;
  d.measurement_params = {"warmup", "iters", "time_cap", "check"};
  d.table_columns = {"algo"};
  return d;
}

}  // namespace scalebench
