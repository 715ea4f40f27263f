#include "common/workload_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <regex>
#include <sstream>

#include "common/units.hpp"

namespace scalebench {

const ParamDef* WorkloadDef::find(std::string_view param) const {
  for (const auto& p : params)
    if (p.name == param) return &p;
  static const ParamDef text{"", ParamType::kText, {}, {}, {}, "a value substituted into the program's arguments"};
  return free_params ? &text : nullptr;
}

const std::vector<WorkloadDef>& workload_defs() {
  static const std::vector<WorkloadDef> defs = {
      {"collective",
       "NCCL (GPU) or MPI (host memory) collectives over a message-size sweep, nccl-tests' algbw/busbw",
       {
           {"backend", ParamType::kEnum, "auto", {"auto", "nccl", "mpi"}, {}, "auto: nccl on GPUs, mpi on host memory"},
           {"op",
            ParamType::kEnum,
            "all_reduce",
            {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
            {},
            "the collective"},
           {"dtype",
            ParamType::kEnum,
            "float32",
            {"float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8"},
            {},
            "element type"},
           {"reduce_op", ParamType::kEnum, "sum", {"sum", "prod", "max", "min", "avg"}, {}, "reduction (reducing ops)"},
           {"min_bytes", ParamType::kSize, 8, {}, 1, "smallest message size"},
           {"max_bytes", ParamType::kSize, 64 * 1024 * 1024, {}, 1, "largest message size"},
           {"step_factor", ParamType::kNumber, 2, {}, 1, "multiply the size by this each step (1: one size)"},
           {"warmup", ParamType::kInt, 5, {}, 0, "untimed iterations before each size"},
           {"iters",
            ParamType::kIntOrAuto,
            "auto",
            {},
            1,
            "operations per timed sample; auto: enough for about 10 ms a sample (nccl-tests uses 20)"},
           {"in_place", ParamType::kBool, false, {}, {}, "output buffer is the input buffer"},
           {"cuda_graph",
            ParamType::kBool,
            false,
            {},
            {},
            "launch each sample's operations as one captured CUDA graph"},
           {"blocking", ParamType::kBool, false, {}, {}, "wait for each operation before launching the next"},
           {"gpus_per_process",
            ParamType::kInt,
            1,
            {},
            1,
            "GPUs each process drives (one NCCL rank per GPU, grouped launches), as nccl-tests -g"},
           {"root", ParamType::kInt, 0, {}, 0, "root rank of broadcast and reduce"},
           {"check", ParamType::kBool, true, {}, {}, "verify the result after timing"},
           {"time_cap_s", ParamType::kNumber, 2.0, {}, 0, "stop sampling a size after this long (min 3 samples)"},
           {"target_cv", ParamType::kNumber, 0.0, {}, 0, "stop sampling once the CV is under this (0: off)"},
       }},
      {"copy",
       "GPU<->GPU and host<->GPU copy bandwidth, every GPU pair one at a time, measured as nvbandwidth does",
       {
           {"test", ParamType::kEnum, "d2d", {"d2d", "h2d", "d2h"}, {}, "GPU to GPU, pinned host to GPU, GPU to host"},
           {"engine",
            ParamType::kEnum,
            "ce",
            {"ce", "sm"},
            {},
            "ce: copy engine (cudaMemcpyPeerAsync / cudaMemcpyAsync); sm: a copy kernel on the issuing GPU"},
           {"direction",
            ParamType::kEnum,
            "write",
            {"write", "read"},
            {},
            "d2d: which GPU issues the copy. write (default): the source pushes, as cudaMemcpyPeerAsync on the "
            "source's stream does, nvbandwidth's device_to_device_memcpy_write_ce; read: the destination pulls. Host "
            "copies are always issued by their GPU (recorded as read for h2d, write for d2h)"},
           {"bidirectional",
            ParamType::kBool,
            false,
            {},
            {},
            "both directions at once; each direction and their sum are reported"},
           {"peer_access",
            ParamType::kBool,
            true,
            {},
            {},
            "d2d: enable peer access between the pair (off: the driver stages CE copies through host memory)"},
           {"bytes", ParamType::kSize, 512 * 1024 * 1024, {}, 1, "bytes per copy (nvbandwidth's default 512 MiB)"},
           {"iters",
            ParamType::kIntOrAuto,
            "auto",
            {},
            1,
            "copies per timed sample; auto: enough for about 10 ms a sample (nvbandwidth uses 16)"},
           {"warmup",
            ParamType::kInt,
            4,
            {},
            0,
            "untimed copies queued before every sample's timed copies (nvbandwidth uses 4)"},
           {"check", ParamType::kBool, true, {}, {}, "after timing, copy a known pattern once and verify it"},
           {"time_cap_s",
            ParamType::kNumber,
            0.1,
            {},
            0,
            "stop sampling a pair after this many seconds of timed copies (min 3 samples)"},
           {"target_cv", ParamType::kNumber, 0.0, {}, 0, "stop sampling once the CV is under this (0: off)"},
       }},
      {"gemm",
       "matrix multiply on cuBLASLt in one precision, square and DeepBench shapes, TFLOP/s and % of the GPU's "
       "peak, on every GPU at once (docs/gemm.md)",
       {
           {"precision",
            ParamType::kEnum,
            "bf16",
            {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "int8"},
            {},
            "number format: fp32 on the CUDA cores, tf32 fp32 data on the Tensor Cores, fp8/int8 run as TN"},
           {"shapes",
            ParamType::kText,
            "square",
            {},
            {},
            "comma-separated: square, deepbench-train, deepbench-inference, deepbench-device, deepbench, or "
            "MxNxK[:op]"},
           {"sizes", ParamType::kText, "1024,2048,4096,8192", {}, {}, "edges of the square shapes, comma-separated"},
           {"op",
            ParamType::kEnum,
            "nn",
            {"nn", "nt", "tn", "tt"},
            {},
            "transposes of A and B (BLAS column-major) for square and MxNxK shapes; DeepBench's keep their own"},
           {"algo",
            ParamType::kEnum,
            "search",
            {"heuristic", "search"},
            {},
            "heuristic: cuBLASLt's first choice; search: time its top candidates and keep the fastest"},
           {"candidates", ParamType::kInt, 8, {}, 1, "search: how many heuristic candidates are timed"},
           {"check", ParamType::kBool, true, {}, {}, "compare sampled outputs with an fp64 reference"},
           {"warmup", ParamType::kInt, 5, {}, 0, "untimed GEMMs before each shape's samples"},
           {"iters",
            ParamType::kIntOrAuto,
            "auto",
            {},
            1,
            "GEMMs per timed sample; auto: enough for about 5 ms a sample"},
           {"time_cap",
            ParamType::kNumber,
            1.0,
            {},
            0,
            "stop sampling a shape after this many seconds (min 3 samples)"},
       }},
      {"rnn",
       "recurrent networks on cuDNN (vanilla tanh/relu, LSTM, GRU): inference or a full training step, samples/s "
       "per GPU and on all GPUs at once (docs/rnn.md)",
       {
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
           {"check", ParamType::kBool, true, {}, {}, "compare a sample of the output with an fp64 host reference"},
           {"cuda_graph",
            ParamType::kBool,
            false,
            {},
            {},
            "capture a step into a CUDA graph and time its launches (no host launch cost per kernel)"},
           {"warmup", ParamType::kInt, 5, {}, 0, "untimed steps before timing"},
           {"iters", ParamType::kIntOrAuto, "auto", {}, 1, "steps per timed sample; auto: about 5 ms a sample"},
           {"time_cap",
            ParamType::kNumber,
            1.0,
            {},
            0,
            "stop sampling a point after this many seconds (min 3 samples)"},
       }},
      {"conv",
       "cuDNN convolution (forward, backward-data, backward-filter) on ResNet-50's and DeepBench's layers, every GPU "
       "at once (docs/conv.md)",
       {
           {"precision",
            ParamType::kText,
            "fp32,tf32,fp16,bf16",
            {},
            {},
            "fp32 (CUDA cores), tf32, fp16, bf16 (Tensor Cores; fp32 sums), one or a comma-separated list"},
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
           {"check", ParamType::kBool, true, {}, {}, "compare sampled outputs with an fp64 reference"},
           {"graph",
            ParamType::kBool,
            true,
            {},
            {},
            "time CUDA graphs of 20 back-to-back convolutions (the GPU's time); false: one cuDNN call from the host "
            "each (adds the host's cost per call where it exceeds the convolution's)"},
           {"warmup",
            ParamType::kInt,
            5,
            {},
            0,
            "untimed operations (graphs of 20 convolutions, or single ones with graph false) first"},
           {"iters", ParamType::kInt, 0, {}, 0, "operations per timed sample; 0: enough for about 5 ms a sample"},
           {"time_cap",
            ParamType::kNumber,
            1.0,
            {},
            0,
            "stop sampling a point after this many timed seconds (min 3 samples)"},
       }},
      {"train",
       "data-parallel CNN training (ResNet-50/101/152, VGG-16) on cuDNN and cuBLASLt, gradients all-reduced through "
       "NCCL in buckets overlapped with the backward pass; or inference: images/s per GPU and on all GPUs "
       "(docs/train.md)",
       {
           {"model",
            ParamType::kEnum,
            "resnet50",
            {"resnet50", "resnet101", "resnet152", "vgg16", "tiny"},
            {},
            "the network (torchvision's layouts; tiny: a few layers for checks)"},
           {"mode",
            ParamType::kEnum,
            "train",
            {"train", "inference"},
            {},
            "train: forward, backward, all-reduce, SGD step; inference: forward only, with latency percentiles"},
           {"precision",
            ParamType::kText,
            "fp32",
            {},
            {},
            "fp32 (no TF32), tf32, fp16 (mixed: fp32 master weights, dynamic loss scaling), bf16 (mixed); one or a "
            "comma-separated list"},
           {"batch", ParamType::kText, "64", {}, {}, "images per GPU per step; one or a comma-separated list"},
           {"image", ParamType::kInt, 224, {}, 32, "image height and width (3 channels, synthetic, made on the GPU)"},
           {"steps", ParamType::kInt, 5, {}, 1, "steps (or forward passes) per timed sample"},
           {"warmup", ParamType::kInt, 10, {}, 0, "untimed steps before timing"},
           {"bucket_mb", ParamType::kNumber, 25.0, {}, 0.001, "gradient bytes per all-reduce bucket (MiB)"},
           {"bucket_policy",
            ParamType::kEnum,
            "size",
            {"size", "taper"},
            {},
            "size: every bucket bucket_mb (DDP's); taper: bucket_mb scaled by the share of the model's FLOPs still "
            "to back-propagate (at least 1 MiB), so little is left to all-reduce after the backward pass"},
           {"overlap",
            ParamType::kBool,
            true,
            {},
            {},
            "all-reduce each bucket as soon as its gradients are done (during the backward pass); false: after it"},
           {"bucket_launch",
            ParamType::kEnum,
            "after_fused_bn",
            {"after_fused_bn", "ready"},
            {},
            "after_fused_bn: launch each bucket's all-reduce as soon as its gradients are done, unless the next batch "
            "norm is cuDNN's persistent fused kernel (fp16), then after it, so that it does not wait for the SMs the "
            "all-reduce holds; ready: as soon as its gradients are done, always (DDP's)"},
           {"unfuse_after_launch",
            ParamType::kInt,
            0,
            {},
            0,
            "how many of cuDNN's persistent fused batch norms (fp16) after each all-reduce's launch run in our "
            "kernels instead, which share SMs with it rather than wait for the SMs it holds; 0: none"},
           {"comm_ctas",
            ParamType::kInt,
            0,
            {},
            0,
            "most thread blocks (CTAs) an all-reduce may take, so that it leaves SMs to the backward pass it "
            "overlaps; 0: NCCL's choice"},
           {"cta_policy",
            ParamType::kEnum,
            "default",
            {"default", "efficiency"},
            {},
            "NCCL's CTA policy for the gradient all-reduce: default (fastest alone) or efficiency (fewest CTAs that "
            "keep it fast, for overlap with the backward pass)"},
           {"comm_cga",
            ParamType::kInt,
            0,
            {},
            0,
            "CTAs per thread-block cluster in the gradient all-reduce (NCCL's cgaClusterSize, Hopper and later): "
            "a cluster waits for that many free SMs of one GPC beside the backward pass; 0: NCCL's choice",
            8},
           {"symmetric",
            ParamType::kBool,
            true,
            {},
            {},
            "on several GPUs, keep the gradients in NCCL memory registered as a symmetric window on every rank, so "
            "that the all-reduce may use NCCL's symmetric kernels (NCCL 2.27+, GPUs of one node); not with "
            "NCCL_P2P_DISABLE=1, whose PCIe path those kernels would bypass"},
           {"allreduce",
            ParamType::kEnum,
            "nccl",
            {"nccl", "copy_engine"},
            {},
            "how the gradients are all-reduced on several GPUs: nccl (ncclAllReduce), or copy_engine (GPUs of one "
            "node that map each other's memory: the copy engines scatter each bucket's shards to their owners and "
            "gather the sums back, so that only a short sum kernel takes SMs from the backward pass; NCCL only "
            "synchronises); not with NCCL_P2P_DISABLE=1"},
           {"graph", ParamType::kBool, true, {}, {}, "run each step as one CUDA graph; false: host calls each step"},
           {"conv_api",
            ParamType::kEnum,
            "best",
            {"best", "legacy", "graph"},
            {},
            "convolution algorithms from cuDNN's legacy API (Find), its graph API's plans, or best: in fp32 the "
            "faster of both per convolution, elsewhere legacy"},
           {"algo",
            ParamType::kEnum,
            "search",
            {"search", "heuristic"},
            {},
            "search: cuDNN times every convolution algorithm once per shape; heuristic: its first pick"},
           {"fuse",
            ParamType::kBool,
            true,
            {},
            {},
            "cuDNN's batch norm fused with the residual add and ReLU where the precision has it (fp16)"},
           {"check",
            ParamType::kBool,
            true,
            {},
            {},
            "train: gradient check of a tiny net, loss falls, weights equal on every rank; inference: logits "
            "against an fp32 net"},
           {"timeline",
            ParamType::kBool,
            false,
            {},
            {},
            "on several GPUs, one more measurement of the step with events at the passes' ends and at each "
            "bucket's gradients ready and all-reduced: where the all-reduce ran against the backward pass "
            "(details.timeline)"},
           {"lr", ParamType::kNumber, 0.02, {}, 0, "SGD learning rate (small: the loss check trains one fixed batch)"},
           {"momentum", ParamType::kNumber, 0.9, {}, 0, "SGD momentum"},
           {"weight_decay", ParamType::kNumber, 1e-4, {}, 0, "SGD weight decay (L2, every parameter)"},
           {"time_cap",
            ParamType::kNumber,
            10.0,
            {},
            0,
            "stop sampling a point after this many timed seconds (min 3 samples)"},
       }},
      {"command",
       "any program (nccl-tests, a PyTorch script, ...) launched on the run's GPUs; its figures read from its "
       "output (the experiment's `command:` block, docs/command.md)",
       {},
       true},
  };
  return defs;
}

int processes_per_node(std::string_view workload, const Json& params, int gpus, std::string* why) {
  if (workload == "collective") {
    const int per = params.value("gpus_per_process", 1);
    if (per < 1 || gpus % per != 0) {
      *why =
          "gpus_per_process " + std::to_string(per) + " does not divide the " + std::to_string(gpus) + " GPUs placed";
      return gpus;
    }
    return gpus / per;
  }
  if (workload == "copy") return 1;  // one process drives every GPU of the node
  return gpus;
}

const WorkloadDef* find_workload(std::string_view name) {
  for (const auto& d : workload_defs())
    if (d.name == name) return &d;
  return nullptr;
}

namespace {
std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}
// A bound as written: whole numbers without decimals.
std::string bound_text(double m) {
  return m == std::floor(m) ? std::to_string(static_cast<long long>(m)) : std::to_string(m);
}
}  // namespace

ParamValue parse_param(const ParamDef& def, std::string_view text) {
  auto below_min = [&](double v) { return def.min && v < *def.min; };
  auto above_max = [&](double v) { return def.max && v > *def.max; };
  switch (def.type) {
    case ParamType::kIntOrAuto:
      if (text == "auto") return {"auto", ""};
      [[fallthrough]];
    case ParamType::kInt: {
      auto v = parse_int(text);
      if (!v) return {{}, "expected an integer, got '" + std::string(text) + "'"};
      if (below_min(static_cast<double>(*v)))
        return {{}, "must be at least " + bound_text(*def.min) + ", got " + std::string(text)};
      if (above_max(static_cast<double>(*v)))
        return {{}, "must be at most " + bound_text(*def.max) + ", got " + std::string(text)};
      return {*v, ""};
    }
    case ParamType::kSize: {
      auto v = parse_size(text);
      if (!v) return {{}, "expected a non-negative size such as 4096, 64KiB or 1GiB, got '" + std::string(text) + "'"};
      if (below_min(static_cast<double>(*v))) return {{}, "must be at least " + bound_text(*def.min) + " bytes"};
      return {*v, ""};
    }
    case ParamType::kNumber: {
      double v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v))
        return {{}, "expected a number, got '" + std::string(text) + "'"};
      if (below_min(v)) return {{}, "must be at least " + bound_text(*def.min) + ", got " + std::string(text)};
      if (above_max(v)) return {{}, "must be at most " + bound_text(*def.max) + ", got " + std::string(text)};
      return {v, ""};
    }
    case ParamType::kBool:
      if (text == "true" || text == "yes" || text == "on") return {true, ""};
      if (text == "false" || text == "no" || text == "off") return {false, ""};
      return {{}, "expected true or false, got '" + std::string(text) + "'"};
    case ParamType::kText: {
      if (auto v = parse_int(text)) return {*v, ""};
      double d = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(d)) return {d, ""};
      return {std::string(text), ""};
    }
    case ParamType::kEnum:
      if (std::find(def.choices.begin(), def.choices.end(), text) != def.choices.end()) return {std::string(text), ""};
      {
        std::string list;
        for (const auto& c : def.choices) list += (list.empty() ? "" : ", ") + c;
        return {{}, "unknown value '" + std::string(text) + "'; expected one of: " + list};
      }
  }
  return {{}, "unsupported type"};
}

std::string check_param_set(const WorkloadDef& def, const Json& params) {
  if (def.name == "collective") {
    if (params.value("min_bytes", 0ull) > params.value("max_bytes", 0ull))
      return "min_bytes (" + std::to_string(params.value("min_bytes", 0ull)) + ") is larger than max_bytes (" +
             std::to_string(params.value("max_bytes", 0ull)) + ")";
    std::string op = params.value("op", "");
    std::string red = params.value("reduce_op", "");
    std::string dtype = params.value("dtype", "");
    if (red == "avg" && dtype.rfind("float", 0) != 0 && dtype != "bfloat16")
      return "reduce_op avg needs a floating-point dtype, got " + dtype;
    if (params.value("cuda_graph", false) && params.value("blocking", false))
      return "cuda_graph and blocking exclude each other (a graph launches a sample's operations at once)";
    if (params.value("gpus_per_process", 1) > 1 && params.value("backend", "") == "mpi")
      return "gpus_per_process applies to the nccl backend only";
  }
  if (def.name == "gemm") {
    // The same syntax the workload reads (workloads/gemm/gemm_config.cpp), checked at validation.
    static const std::regex shape(R"(\d+x\d+x\d+(:(nn|nt|tn|tt))?)");
    static const std::regex edge(R"(\d+)");
    auto items = [](const Json& v) {
      std::vector<std::string> out;
      std::stringstream in(v.is_string() ? v.get<std::string>() : v.dump());
      for (std::string item; std::getline(in, item, ',');) {
        item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
        if (!item.empty()) out.push_back(item);
      }
      return out;
    };
    for (const std::string& s : items(params.value("shapes", Json("square"))))
      if (s != "square" && s != "deepbench" && s != "deepbench-train" && s != "deepbench-inference" &&
          s != "deepbench-device" && !std::regex_match(s, shape))
        return "shapes: '" + s +
               "' is neither a set (square, deepbench-train, deepbench-inference, deepbench-device, deepbench) nor "
               "MxNxK[:op]";
    for (const std::string& e : items(params.value("sizes", Json("1024"))))
      if (!std::regex_match(e, edge) || e.find_first_not_of('0') == std::string::npos)
        return "sizes: '" + e + "' is not a positive integer";
  }
  if (def.name == "conv") {
    // Lists of words: every item must be one of the choices (the workload re-parses them).
    auto list_error = [&](const char* key, std::vector<std::string> choices) -> std::string {
      const Json v = params.value(key, Json(""));
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
    for (std::string e :
         {list_error("precision", {"fp32", "tf32", "fp16", "bf16"}), list_error("layout", {"nchw", "nhwc"}),
          list_error("pass", {"fwd", "bwd_data", "bwd_filter"})})
      if (!e.empty()) return e;
    const Json shapes = params.value("shapes", Json("resnet50"));
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
  }
  if (def.name == "train") {
    for (const char* key : {"precision", "batch"}) {
      const Json v = params.value(key, Json(""));
      const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      std::stringstream in(text);
      std::string item;
      int n = 0;
      while (std::getline(in, item, ',')) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (item.empty()) continue;
        ++n;
        if (std::string(key) == "precision" && item != "fp32" && item != "tf32" && item != "fp16" && item != "bf16")
          return "precision: unknown value '" + item + "'; expected one of: fp32, tf32, fp16, bf16";
        if (std::string(key) == "batch") {
          const auto b = parse_int(item);
          if (!b || *b < 1 || *b > (1 << 20)) return "batch: '" + item + "' is not a positive integer";
        }
      }
      if (n == 0) return std::string(key) + ": empty";
    }
  }
  if (def.name == "copy") {
    if (params.value("test", "d2d") == "d2d" && params.value("engine", "ce") == "sm" &&
        !params.value("peer_access", true))
      return "engine sm copies between GPUs need peer_access true (a kernel cannot address another GPU's memory "
             "without it); use engine ce to measure copies without peer access";
  }
  if (def.name == "rnn" && params.contains("hidden")) {
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
      const auto v = parse_int(item);
      if (!v || *v < 1 || *v > (1 << 20))
        return "hidden: '" + item + "' is not a size from 1 to 1048576 (write one size or a list such as 128,256)";
      pos = comma + 1;
    } while (pos <= text.size());
  }
  return "";
}

}  // namespace scalebench
