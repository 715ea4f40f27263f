// The gemm workload's declaration in the registry (catalog/registry.hpp): its
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

std::string check_gemm(const Json& params) {
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
  for (const std::string& s : items(params.at("shapes")))
    if (s != "square" && s != "deepbench" && s != "deepbench-train" && s != "deepbench-inference" &&
        s != "deepbench-device" && !std::regex_match(s, shape))
      return "shapes: '" + s +
             "' is neither a set (square, deepbench-train, deepbench-inference, deepbench-device, deepbench) nor "
             "MxNxK[:op]";
  for (const std::string& e : items(params.at("sizes")))
    if (!std::regex_match(e, edge) || e.find_first_not_of('0') == std::string::npos)
      return "sizes: '" + e + "' is not a positive integer";
  return "";
}

}  // namespace

WorkloadDef gemm_declaration() {
  WorkloadDef d;
  d.name = "gemm";
  d.help =
      "matrix multiply on cuBLASLt in one precision, square and DeepBench shapes, TFLOP/s and % of the GPU's "
      "peak, on every GPU at once (docs/gemm.md)";
  d.params = {
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
      timing::check("compare sampled outputs with an fp64 reference"),
      timing::warmup(5, "untimed GEMMs before each shape's samples"),
      timing::iters("auto", "GEMMs per timed sample; auto: enough for about 5 ms a sample"),
      timing::time_cap(1.0, "stop sampling a shape after this many seconds (min 3 samples)"),
  };
  d.needs_gpus = true;
  d.check = &check_gemm;
  d.measurement_params = {"warmup", "iters", "time_cap", "check"};
  d.table_columns = {"precision", "op", "algo"};
  return d;
}

}  // namespace scalebench
