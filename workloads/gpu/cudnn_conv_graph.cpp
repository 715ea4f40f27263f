#include "workloads/gpu/cudnn_conv_graph.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace scalebench::gpu {

namespace {

// The variant pack's ids: the first, second and third tensor of every direction (see execute).
constexpr std::int64_t kUidA = 1, kUidB = 2, kUidC = 3;

BackendDescriptor tensor(std::int64_t uid, std::array<std::int64_t, 4> nchw, cudnnDataType_t type,
                         std::int64_t alignment) {
  BackendDescriptor t = nhwc_tensor_descriptor(uid, nchw, type, alignment);
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

  BackendDescriptor conv = convolution_descriptor(sh.pad, sh.stride, CUDNN_DATA_FLOAT);
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

  const BackendDescriptor device = device_properties(handle);
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
