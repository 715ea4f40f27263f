#include "workloads/gpu/cudnn_quant_conv_graph.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <utility>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/plan_agreement.hpp"

namespace scalebench::gpu {

namespace {

// The variant pack's ids of the graph's real tensors; virtual ones count up from kUidVirtual.
constexpr std::int64_t kUidX = 1, kUidW = 2, kUidY = 3, kUidScale = 4, kUidBias = 5, kUidResidual = 6,
                       kUidResidualScale = 7, kUidVirtual = 100;

std::string type_name(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_INT8:
      return "int8";
    case CUDNN_DATA_FP8_E4M3:
      return "fp8e4m3";
    case CUDNN_DATA_HALF:
      return "fp16";
    case CUDNN_DATA_BFLOAT16:
      return "bf16";
    case CUDNN_DATA_FLOAT:
      return "fp32";
    case CUDNN_DATA_INT32:
      return "int32";
    default:
      return "cudnnDataType_t " + std::to_string(static_cast<int>(t));
  }
}

cudnnDataType_t cudnn_type(QuantFormat f) { return f == QuantFormat::kInt8 ? CUDNN_DATA_INT8 : CUDNN_DATA_FP8_E4M3; }

// The sums' type: exact int32 for int8, fp32 for E4M3.
cudnnDataType_t accumulation(QuantFormat f) { return f == QuantFormat::kInt8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT; }

// A descriptor cuDNN may refuse for what it describes (a data type, a mode): the error says which.
void finalize(BackendDescriptor& d, const std::string& what) {
  if (const cudnnStatus_t st = d.try_finalize(); st != CUDNN_STATUS_SUCCESS)
    throw Error("quantized convolution graph: cuDNN refused " + what + ": " + cudnn_status_text(st));
}

// The graph's tensors, per-channel and scalar ones too; every one 16-byte aligned.
BackendDescriptor tensor(std::int64_t uid, std::array<std::int64_t, 4> nchw, cudnnDataType_t type, bool is_virtual,
                         const std::string& what) {
  BackendDescriptor t = nhwc_tensor_descriptor(uid, nchw, type, 16, is_virtual);
  finalize(t, "tensor " + what + " (" + type_name(type) + ")");
  return t;
}

int node_count(const QuantConvSpec& s) { return 3 + (s.residual ? 2 : 0) + (s.relu ? 1 : 0); }

// A graph of the spec's first `nodes` nodes, the last writing y as `out`: every descriptor it
// holds (the graph last) and the names of its nodes.
struct Built {
  std::vector<BackendDescriptor> parts;
  std::vector<std::string> nodes;
  const BackendDescriptor& graph() const { return parts.back(); }
};

Built build(const QuantConvSpec& spec, int nodes, cudnnDataType_t out) {
  const QuantConvShape& sh = spec.shape;
  const std::array<std::int64_t, 4> ydims{sh.n, sh.k, sh.p(), sh.q()}, channel{1, sh.k, 1, 1}, scalar{1, 1, 1, 1};
  Built b;
  b.parts.reserve(32);  // raw handles stay valid across moves; the reserve only saves reallocations
  auto keep = [&](BackendDescriptor d) {
    b.parts.push_back(std::move(d));
    return b.parts.back().get();
  };
  std::vector<cudnnBackendDescriptor_t> ops;
  std::int64_t next_virtual = kUidVirtual;
  const cudnnDataType_t in = spec.unquantized.value_or(cudnn_type(spec.input));
  const cudnnDataType_t acc = spec.unquantized ? CUDNN_DATA_FLOAT : accumulation(spec.input);
  // Node i's output: y (non-virtual, the cast to `out`) when it is the last, else virtual: the
  // convolution's in its sums' type (int32 for int8, as cuDNN's int8 fusions take it), the
  // epilogue's in fp32.
  auto output_of = [&](std::size_t i) {
    if (static_cast<int>(i) + 1 == nodes) return keep(tensor(kUidY, ydims, out, false, "y"));
    return keep(
        tensor(next_virtual++, ydims, i == 0 ? acc : CUDNN_DATA_FLOAT, true, "after node " + std::to_string(i + 1)));
  };

  cudnnBackendDescriptor_t x = keep(tensor(kUidX, {sh.n, sh.c, sh.h, sh.w}, in, false, "x"));
  cudnnBackendDescriptor_t w = keep(tensor(kUidW, {sh.k, sh.c, sh.r, sh.s}, in, false, "w"));
  const std::string conv_name = "CONVOLUTION_FORWARD (x and w " + type_name(in) + ", " + type_name(acc) + " sums)";
  BackendDescriptor conv = convolution_descriptor(sh.pad, sh.stride, acc);
  finalize(conv, "the convolution descriptor of node 1, " + conv_name);
  cudnnBackendDescriptor_t cd = keep(std::move(conv));

  cudnnBackendDescriptor_t current = output_of(0);
  const float alpha = 1.0f, beta = 0.0f;
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &current);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
  op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  finalize(op, "node 1, " + conv_name);
  ops.push_back(keep(std::move(op)));
  b.nodes.push_back(conv_name);

  // One pointwise node on the chain's value and `operand` (none for RELU_FWD), in fp32.
  auto pointwise = [&](cudnnPointwiseMode_t pw_mode, cudnnBackendDescriptor_t operand, const std::string& what) {
    if (static_cast<int>(b.nodes.size()) >= nodes) return;
    const std::string node = "node " + std::to_string(b.nodes.size() + 1) + ", " + what;
    const cudnnDataType_t math = CUDNN_DATA_FLOAT;
    BackendDescriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &pw_mode);
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
    finalize(pw, "the pointwise descriptor of " + node);
    cudnnBackendDescriptor_t pwd = keep(std::move(pw));
    cudnnBackendDescriptor_t result = output_of(b.nodes.size());
    BackendDescriptor p(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    p.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pwd);
    p.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &current);
    if (operand) p.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &operand);
    p.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &result);
    finalize(p, node);
    ops.push_back(keep(std::move(p)));
    b.nodes.push_back(what);
    current = result;
  };
  pointwise(CUDNN_POINTWISE_MUL, keep(tensor(kUidScale, channel, CUDNN_DATA_FLOAT, false, "scale")),
            "POINTWISE MUL by the per-channel scale (fp32, 1xKx1x1)");
  pointwise(CUDNN_POINTWISE_ADD, keep(tensor(kUidBias, channel, CUDNN_DATA_FLOAT, false, "bias")),
            "POINTWISE ADD of the per-channel bias (fp32, 1xKx1x1)");
  if (spec.residual) {
    pointwise(CUDNN_POINTWISE_ADD, keep(tensor(kUidResidual, ydims, spec.residual_type, false, "residual")),
              "POINTWISE ADD of the residual (" + type_name(spec.residual_type) + ", NxKxPxQ)");
    pointwise(CUDNN_POINTWISE_MUL, keep(tensor(kUidResidualScale, scalar, CUDNN_DATA_FLOAT, false, "residual scale")),
              "POINTWISE MUL by the residual's scale (fp32, 1x1x1x1)");
  }
  if (spec.relu) pointwise(CUDNN_POINTWISE_RELU_FWD, nullptr, "POINTWISE RELU_FWD");

  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(ops.size()),
            ops.data());
  finalize(graph, "the operation graph of " + std::to_string(ops.size()) + " nodes, output " + type_name(out));
  b.parts.push_back(std::move(graph));
  return b;
}

// The plans of a finalised graph: every configuration of the heuristics (mode A, then its
// fallback list) whose plan cuDNN finalises, at most `max_plans`, each within `max_workspace`.
struct Plans {
  std::vector<BackendDescriptor> plans;
  std::vector<std::string> names;
  std::vector<std::int64_t> workspaces;
  std::string heuristics;  // the heuristics' statuses and the configurations refused, for errors
};

Plans make_plans(const BackendDescriptor& graph, const BackendDescriptor& device, int max_plans,
                 std::int64_t max_workspace) {
  Plans out;
  std::set<std::int64_t> seen;
  int configs = 0, refused = 0, too_big = 0;
  for (cudnnBackendHeurMode_t hm : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    std::vector<BackendDescriptor> list = heuristic_configs(graph, device, hm, &status);
    if (status != CUDNN_STATUS_SUCCESS)
      out.heuristics += std::string(out.heuristics.empty() ? "" : "; ") +
                        (hm == CUDNN_HEUR_MODE_A ? "heuristics A: " : "fallback: ") + cudnn_status_text(status);
    for (BackendDescriptor& config : list) {
      if (static_cast<int>(out.plans.size()) >= max_plans) break;
      const EngineInfo info = engine_info(config.get(), false);
      if (!seen.insert(info.index).second) continue;
      ++configs;
      BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnBackendDescriptor_t cfg = config.get(), dd = device.get();
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dd);
      if (const cudnnStatus_t st = plan.try_finalize(); st != CUDNN_STATUS_SUCCESS) {
        ++refused;
        continue;
      }
      std::int64_t ws = 0, got = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &got, &ws));
      if (ws > max_workspace) {
        ++too_big;
        continue;
      }
      out.plans.push_back(std::move(plan));
      out.names.push_back("engine " + std::to_string(info.index));
      out.workspaces.push_back(ws);
    }
  }
  out.heuristics += std::string(out.heuristics.empty() ? "" : "; ") + std::to_string(configs) +
                    " engine configurations offered, " + std::to_string(refused) + " refused at finalisation, " +
                    std::to_string(too_big) + " over the workspace limit";
  return out;
}

// Why no engine takes the spec's graph: the graph's leading nodes are tried one more at a time
// (the first that has no engine is the one cuDNN refuses), and each failing one again with an fp32
// output (if that runs, the refused part is the output's data type).
std::string diagnose(const QuantConvSpec& spec, const BackendDescriptor& device,
                     const std::vector<std::string>& names) {
  auto runs = [&](int nodes, cudnnDataType_t out) {
    try {
      const Built b = build(spec, nodes, out);
      return !make_plans(b.graph(), device, 1, std::numeric_limits<std::int64_t>::max()).plans.empty();
    } catch (const Error&) {
      return false;
    }
  };
  const int total = node_count(spec);
  int failing = total;
  for (int m = 1; m < total; ++m)
    if (!runs(m, spec.output)) {
      failing = m;
      break;
    }
  const std::string node =
      "node " + std::to_string(failing) + " (" + names[static_cast<std::size_t>(failing - 1)] + ")";
  if (spec.output != CUDNN_DATA_FLOAT && runs(failing, CUDNN_DATA_FLOAT))
    return "the graph up to " + node + " runs with an fp32 output: cuDNN refuses the output type " +
           type_name(spec.output) + " there";
  if (failing == 1)
    return "no engine runs the convolution alone (" + names[0] + ", " + spec.shape.text() +
           "): this cuDNN has no such convolution on this GPU";
  return "the graph runs up to node " + std::to_string(failing - 1) + " (" +
         names[static_cast<std::size_t>(failing - 2)] + "); no engine takes " + node;
}

}  // namespace

std::string QuantConvSpec::invalid() const {
  const cudnnDataType_t requantized = cudnn_type(input);
  if (unquantized) {
    const cudnnDataType_t t = *unquantized;
    if (t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16 && t != CUDNN_DATA_FLOAT)
      return "unquantized convolution: type " + type_name(t) + " is not one of fp16, bf16, fp32";
    // Tensor Core rows of 16 bytes; cuDNN's graph engines refuse narrower NHWC channels.
    if (shape.c % 8 != 0 || shape.k % 8 != 0)
      return "unquantized convolutions need input and output channels (C=" + std::to_string(shape.c) +
             ", K=" + std::to_string(shape.k) + ") that are multiples of 8";
    if (output != t && output != requantized && output != CUDNN_DATA_FLOAT)
      return type_name(t) + " convolution: output type " + type_name(output) + " is not one of " + type_name(t) + ", " +
             type_name(requantized) + ", fp32";
    if (residual && residual_type != t)
      return type_name(t) + " convolution: residual type " + type_name(residual_type) + " is not " + type_name(t);
    return "";
  }
  if (std::string why = shape.invalid(input); !why.empty()) return why;
  if (output != requantized && output != CUDNN_DATA_HALF && output != CUDNN_DATA_FLOAT)
    return std::string(name(input)) + " convolution: output type " + type_name(output) + " is not one of " +
           type_name(requantized) + ", fp16, fp32";
  if (residual && residual_type != CUDNN_DATA_INT8 && residual_type != CUDNN_DATA_HALF)
    return "residual type " + type_name(residual_type) + " is not one of int8, fp16";
  return "";
}

std::string QuantConvSpec::inputs_text() const {
  return unquantized ? type_name(*unquantized) : std::string(name(input));
}

std::string QuantConvSpec::epilogue_text() const {
  std::string t = "scale,bias";
  if (residual) t += ",residual(" + type_name(residual_type) + ")";
  if (relu) t += ",relu";
  return t + "->" + type_name(output);
}

struct QuantConvPlans {
  std::vector<BackendDescriptor> descriptors;  // the graph's tensors and operations, kept alive
  std::vector<BackendDescriptor> plans;
  std::vector<std::string> names;
  std::vector<std::int64_t> workspaces;
  std::size_t chosen = 0;
  bool tuned = false;
  std::vector<QuantPlanTrial> trials;  // the tuning's
};

QuantPlanCache::QuantPlanCache() = default;
QuantPlanCache::~QuantPlanCache() = default;

namespace {
std::shared_ptr<QuantConvPlans> plans_for(cudnnHandle_t handle, const QuantConvSpec& spec, std::int64_t max_workspace,
                                          int max_plans) {
  const BackendDescriptor device = device_properties(handle);
  Built built = build(spec, node_count(spec), spec.output);
  Plans found = make_plans(built.graph(), device, max_plans, max_workspace);
  if (found.plans.empty())
    throw Error("quantized convolution graph " + spec.shape.text() + " " + spec.inputs_text() + " " +
                spec.epilogue_text() + ": no engine of cuDNN " + std::to_string(CUDNN_MAJOR) + "." +
                std::to_string(CUDNN_MINOR) + " (headers) takes it (" + found.heuristics + "); " +
                diagnose(spec, device, built.nodes));
  auto p = std::make_shared<QuantConvPlans>();
  p->descriptors = std::move(built.parts);
  p->plans = std::move(found.plans);
  p->names = std::move(found.names);
  p->workspaces = std::move(found.workspaces);
  return p;
}
}  // namespace

QuantConvGraph::QuantConvGraph(cudnnHandle_t handle, const QuantConvSpec& spec, std::int64_t max_workspace,
                               int max_plans, QuantPlanCache* cache)
    : handle_(handle), spec_(spec) {
  if (std::string why = spec.invalid(); !why.empty()) throw Error("quantized convolution: " + why);
  if (cache) {
    const std::string key = spec.shape.text() + " " + spec.inputs_text() + " " + spec.epilogue_text() + " ws" +
                            std::to_string(max_workspace) + " plans" + std::to_string(max_plans);
    // A spec cuDNN refused is refused again at once: the search and diagnosis cost seconds.
    if (const auto no = cache->refused_.find(key); no != cache->refused_.end()) throw Error(no->second);
    if (const auto kept = cache->plans_.find(key); kept != cache->plans_.end()) {
      ++cache->hits_;
      plans_ = kept->second;
    } else {
      try {
        plans_ = plans_for(handle, spec, max_workspace, max_plans);
      } catch (const Error& e) {
        cache->refused_.emplace(key, e.what());
        throw;
      }
      cache->plans_.emplace(key, plans_);
    }
  } else {
    plans_ = plans_for(handle, spec, max_workspace, max_plans);
  }
  std::int64_t most = 0;
  for (std::int64_t ws : plans_->workspaces) most = std::max(most, ws);
  workspace_ = DeviceBuffer(static_cast<std::size_t>(plans_->tuned ? workspace_bytes() : most));
  const auto k = static_cast<std::size_t>(spec.shape.k);
  scale_ = DeviceBuffer(k * sizeof(float));
  bias_ = DeviceBuffer(k * sizeof(float));
  residual_scale_ = DeviceBuffer(sizeof(float));
}

QuantConvGraph::~QuantConvGraph() = default;

const std::string& QuantConvGraph::plan_name() const { return plans_->names[plans_->chosen]; }
double QuantConvGraph::plan_seconds() const { return plans_->tuned ? plans_->trials[plans_->chosen].seconds : -1; }
std::int64_t QuantConvGraph::workspace_bytes() const { return plans_->workspaces[plans_->chosen]; }
std::size_t QuantConvGraph::plan_count() const { return plans_->plans.size(); }

void QuantConvGraph::set_epilogue(const std::vector<float>& scale, const std::vector<float>& bias, float residual_scale,
                                  cudaStream_t stream) {
  const auto k = static_cast<std::size_t>(spec_.shape.k);
  if (scale.size() != k || bias.size() != k)
    throw Error("quantized convolution epilogue: " + std::to_string(scale.size()) + " scales and " +
                std::to_string(bias.size()) + " biases for K=" + std::to_string(k) + " output channels");
  // Without a residual the chain ends at the bias (the scalar is not in the graph): unfolded.
  const FoldedEpilogue f =
      spec_.residual ? fold_residual_scale(scale, bias, residual_scale) : FoldedEpilogue{scale, bias};
  CUDA_CHECK(cudaMemcpyAsync(scale_.get(), f.scale.data(), k * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(bias_.get(), f.bias.data(), k * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(residual_scale_.get(), &residual_scale, sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  epilogue_set_ = true;
}

cudnnStatus_t QuantConvGraph::run(std::size_t plan, const QuantConvTensors& t) const {
  if (!epilogue_set_) throw Error("quantized convolution: set_epilogue before running it");
  if (spec_.residual && !t.residual) throw Error("quantized convolution: the spec has a residual, the call none");
  std::vector<std::int64_t> uids{kUidX, kUidW, kUidY, kUidScale, kUidBias};
  std::vector<void*> ptrs{const_cast<void*>(t.x), const_cast<void*>(t.w), t.y, scale_.get(), bias_.get()};
  if (spec_.residual) {
    uids.insert(uids.end(), {kUidResidual, kUidResidualScale});
    ptrs.insert(ptrs.end(), {const_cast<void*>(t.residual), residual_scale_.get()});
  }
  void* ws = workspace_.get();
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(ptrs.size()),
           ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  pack.finalize();
  return cudnnBackendExecute(handle_, plans_->plans[plan].get(), pack.get());
}

void QuantConvGraph::execute(const QuantConvTensors& t) const { CUDNN_CHECK(run(plans_->chosen, t)); }

std::vector<QuantPlanTrial> QuantConvGraph::tune(const QuantConvTensors& t, int reps) {
  if (plans_->tuned) return plans_->trials;
  cudaStream_t stream = nullptr;
  CUDNN_CHECK(cudnnGetStream(handle_, &stream));
  std::vector<QuantPlanTrial> trials;
  double best = -1;
  std::size_t chosen = 0;
  const QuantConvShape& sh = spec_.shape;
  const std::int64_t outputs = sh.n * sh.p() * sh.q() * sh.k;
  std::vector<double> reference;  // the first plan that ran: the heuristic's choice
  std::string reference_name;
  for (std::size_t i = 0; i < plans_->plans.size(); ++i) {
    QuantPlanTrial trial{plans_->names[i], -1, ""};
    if (const cudnnStatus_t st = run(i, t); st != CUDNN_STATUS_SUCCESS) {
      trial.problem = cudnn_status_text(st);
      trials.push_back(trial);
      continue;
    }
    const std::vector<double> answer = sample_output(t.y, outputs, spec_.output, stream);
    if (reference.empty()) {
      reference = answer;
      reference_name = plans_->names[i];
    } else if (const double d = disagreement(answer, reference, spec_.output); d > 1) {
      trial.problem =
          "answers otherwise than " + reference_name + " (" + std::to_string(d) + " x what rounding allows)";
      trials.push_back(trial);
      continue;
    }
    Event start, stop;
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int r = 0; r < reps; ++r) CUDNN_CHECK(run(i, t));
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    trial.seconds = ms * 1e-3 / reps;
    if (best < 0 || trial.seconds < best) {
      best = trial.seconds;
      chosen = i;
    }
    trials.push_back(trial);
  }
  if (best < 0) {
    std::string why;
    for (const QuantPlanTrial& tr : trials) why += "; " + tr.name + ": " + tr.problem;
    throw Error("quantized convolution graph " + spec_.shape.text() + " " + spec_.inputs_text() + " " +
                spec_.epilogue_text() + ": none of its plans ran" + why);
  }
  plans_->chosen = chosen;
  plans_->tuned = true;
  plans_->trials = trials;
  return trials;
}

}  // namespace scalebench::gpu
