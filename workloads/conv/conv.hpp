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

// The precisions conv runs: fp32 (CUDA cores), tf32, fp16, bf16 (Tensor Cores), fp32 compute;
// and quantized, forward in NHWC only, with a fused epilogue: int8 (int32 sums) and fp8e4m3 (fp32
// sums), through cuDNN's graph API (workloads/gpu/cudnn_quant_conv_graph.hpp).
compute::Precision parse_conv_precision(std::string_view text);
bool quantized(compute::Precision p);  // int8, fp8e4m3

// The epilogue of a quantized point, after y = conv(x, w) * scale[k] + bias[k]: kBiasRelu adds
// ReLU, kBiasResidualRelu a residual (int8 for int8, fp16 for fp8e4m3, with its own scale) before
// it. The output is requantized to the inputs' format.
enum class Epilogue { kBias, kBiasRelu, kBiasResidualRelu };
const char* name(Epilogue e);  // "bias", "bias-relu", "bias-residual-relu" (the parameter's values)
Epilogue parse_epilogue(std::string_view text);
// What the point records as its `epilogue`: "scale,bias,relu->int8".
std::string epilogue_text(Epilogue e, compute::Precision p);

// One measured point.
struct ConvPoint {
  ConvShape shape;
  ConvPass pass = ConvPass::kForward;
  compute::Precision precision = compute::Precision::kFp32;
  Layout layout = Layout::kNhwc;
  Epilogue epilogue = Epilogue::kBiasRelu;  // quantized precisions only: their points carry it

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
  bool graph = true;                        // time CUDA graphs of back-to-back convolutions; false: one host call each
  Epilogue epilogue = Epilogue::kBiasRelu;  // of the quantized precisions' points
  int plans = 4;  // quantized precisions: the heuristics' first plans, each timed, the fastest kept
  // From the params (precision, layout, pass: one value or a comma-separated list; shapes,
  // batch, algo, check, epilogue, plans). Throws Error naming the parameter, and when a quantized
  // precision is asked for without the forward pass in NHWC (all it runs).
  static Config from_params(const Json& params);
};

// Comma-separated items, empty ones dropped.
std::vector<std::string> split_list(std::string_view text);

// Precision outermost, then layout, shape, pass: one layer's three passes print together. The
// quantized precisions get their forward points in NHWC only.
std::vector<ConvPoint> plan(const Config& cfg);

// FLOPs per operation, reported as TFLOP/s (integer operations as TOP/s for int8).
compute::Throughput throughput(const ConvPoint& p);

}  // namespace scalebench::conv
