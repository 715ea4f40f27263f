#include "workloads/gpu/cudnn_conv_graph.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace scalebench::gpu {

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  CUDNN_CHECK(cudnnBackendCreateDescriptor(type, d_.out()));
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
                            const void* values) {
  CUDNN_CHECK(cudnnBackendSetAttribute(d_.get(), name, type, count, values));
}

void BackendDescriptor::finalize() { CUDNN_CHECK(cudnnBackendFinalize(d_.get())); }

cudnnStatus_t BackendDescriptor::try_finalize() { return cudnnBackendFinalize(d_.get()); }

namespace {

// The variant pack's ids: the first, second and third tensor of every direction (see execute).
constexpr std::int64_t kUidA = 1, kUidB = 2, kUidC = 3;

BackendDescriptor tensor(std::int64_t uid, std::array<std::int64_t, 4> nchw, cudnnDataType_t type,
                         std::int64_t alignment) {
  // NHWC in memory, described in cuDNN's logical NCHW order.
  const auto [n, c, h, w] = nchw;
  const std::array<std::int64_t, 4> strides{c * h * w, 1, w * c, c};
  (void)n;
  BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, nchw.data());
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  t.finalize();
  return t;
}

// The operation of each direction and its attributes for the first, second and third tensor
// (x, w, y forward; dx, w, dy backward data; x, dw, dy backward filter).
struct OpAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t a, b, c, conv, alpha, beta;
};

OpAttributes op_attributes(ConvDirection dir) {
  switch (dir) {
    case ConvDirection::kForward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvDirection::kBackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvDirection::kBackwardFilter:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
}

// The engine behind a heuristic's configuration: its global index and whether its numerics are
// allowed.
struct EngineInfo {
  std::int64_t index = -1;
  bool allowed = true;
};

EngineInfo engine_info(cudnnBackendDescriptor_t config, bool strict_fp32) {
  EngineInfo info;
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t got = 0;
  CUDNN_CHECK(
      cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &raw));
  CUDNN_CHECK(cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &info.index));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  CUDNN_CHECK(cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       static_cast<std::int64_t>(notes.size()), &got, notes.data()));
  if (strict_fp32)
    for (std::int64_t i = 0; i < got; ++i)
      if (notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
          notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
        info.allowed = false;
  return info;
}

// The heuristic's configurations for the graph, best first; none if the mode has nothing.
std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph, const BackendDescriptor& device,
                                                 cudnnBackendHeurMode_t mode) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendDescriptor_t g = graph.get(), d = device.get();
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
  if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return {};
  std::int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS)
    return {};
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  std::int64_t got = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                       &got, raw.data()));
  configs.erase(configs.begin() + static_cast<std::ptrdiff_t>(std::min(got, count)), configs.end());
  return configs;
}

}  // namespace

void ConvPlan::execute(cudnnHandle_t handle, void* a, void* b, void* c, void* workspace) const {
  const std::array<std::int64_t, 3> uids{kUidA, kUidB, kUidC};
  const std::array<void*, 3> ptrs{a, b, c};
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  CUDNN_CHECK(cudnnBackendExecute(handle, plan_.get(), pack.get()));
}

std::vector<std::shared_ptr<ConvPlan>> conv_plans(cudnnHandle_t handle, const ConvShape& sh, ConvDirection dir,
                                                  float beta, std::int64_t max_workspace, int max_plans) {
  const std::int64_t align = sh.alignment;
  BackendDescriptor x = tensor(kUidA, {sh.n, sh.c, sh.h, sh.w}, sh.data, align);
  BackendDescriptor w = tensor(kUidB, {sh.k, sh.c, sh.r, sh.s}, sh.data, align);
  BackendDescriptor y = tensor(kUidC, {sh.n, sh.k, sh.p, sh.q}, sh.data, align);

  BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t dims = 2;
  const std::array<std::int64_t, 2> pad{sh.pad, sh.pad}, stride{sh.stride, sh.stride}, dilation{1, 1};
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data());
  conv.finalize();

  const float alpha = 1.0f;
  cudnnBackendDescriptor_t xd = x.get(), wd = w.get(), yd = y.get(), cd = conv.get();
  const OpAttributes at = op_attributes(dir);
  BackendDescriptor op(at.type);
  op.set(at.a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
  op.set(at.b, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
  op.set(at.c, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
  op.set(at.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd);
  op.set(at.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  op.set(at.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  op.finalize();

  BackendDescriptor device(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  device.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  device.finalize();
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnBackendDescriptor_t od = op.get(), dd = device.get();
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &od);
  graph.finalize();

  std::vector<std::shared_ptr<ConvPlan>> plans;
  std::set<std::int64_t> seen;
  for (cudnnBackendHeurMode_t hm : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    for (BackendDescriptor& config : heuristic_configs(graph, device, hm)) {
      if (static_cast<int>(plans.size()) >= max_plans) return plans;
      const EngineInfo info = engine_info(config.get(), sh.strict_fp32);
      if (!info.allowed || !seen.insert(info.index).second) continue;
      BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnBackendDescriptor_t cfg = config.get();
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dd);
      if (plan.try_finalize() != CUDNN_STATUS_SUCCESS) continue;
      std::int64_t ws = 0, got = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &got, &ws));
      if (ws > max_workspace) continue;
      plans.push_back(std::make_shared<ConvPlan>(std::move(plan), ws, "engine " + std::to_string(info.index)));
    }
  }
  return plans;
}

}  // namespace scalebench::gpu
