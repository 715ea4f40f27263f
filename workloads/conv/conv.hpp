#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/conv/conv_shape.hpp"

// The conv workload's parameters and points: which shapes, passes, precisions and layouts it
// measures, and the work of each point. Pure: no CUDA.
namespace scalebench::conv {

// fwd: y = conv(x, w); bwd_data: dx from dy and w; bwd_filter: dw from dy and x.
enum class ConvPass { kForward, kBackwardData, kBackwardFilter };
const char* name(ConvPass p);
ConvPass parse_pass(std::string_view text);  // throws Error naming the choices

// The memory order of x, y and the filter alike: NCHW (filter KCRS) or NHWC (filter KRSC).
enum class Layout { kNchw, kNhwc };
const char* name(Layout l);
Layout parse_layout(std::string_view text);

// The precisions conv runs: fp32 (CUDA cores), tf32, fp16, bf16 (Tensor Cores), fp32 compute.
compute::Precision parse_conv_precision(std::string_view text);

// One measured point.
struct ConvPoint {
  ConvShape shape;
  ConvPass pass = ConvPass::kForward;
  compute::Precision precision = compute::Precision::kFp32;
  Layout layout = Layout::kNhwc;

  Json to_json() const;
  static ConvPoint from_json(const Json& j);
};

struct Config {
  std::vector<compute::Precision> precisions;
  std::vector<Layout> layouts;
  std::vector<ConvPass> passes;
  std::vector<ConvShape> shapes;
  bool search = false;  // algo=search: cuDNN times every algorithm (Find); else its heuristic's pick
  bool check = true;
  bool graph = true;  // time CUDA graphs of back-to-back convolutions; false: one host call each
  // From the params (precision, layout, pass: one value or a comma-separated list; shapes,
  // batch, algo, check). Throws Error naming the parameter.
  static Config from_params(const Json& params);
};

// Comma-separated items, empty ones dropped.
std::vector<std::string> split_list(std::string_view text);

// Precision outermost, then layout, shape, pass: one layer's three passes print together.
std::vector<ConvPoint> plan(const Config& cfg);

// FLOPs per operation, reported as TFLOP/s.
compute::Throughput throughput(const ConvPoint& p);

}  // namespace scalebench::conv
