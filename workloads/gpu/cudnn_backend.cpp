#include "workloads/gpu/cudnn_backend.hpp"

#include <algorithm>
#include <array>

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

BackendDescriptor nhwc_tensor_descriptor(std::int64_t uid, const std::array<std::int64_t, 4>& nchw,
                                         cudnnDataType_t type, std::int64_t alignment, bool is_virtual) {
  const auto [n, c, h, w] = nchw;
  (void)n;
  const std::array<std::int64_t, 4> strides{c * h * w, 1, w * c, c};
  BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, nchw.data());
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  return t;
}

BackendDescriptor convolution_descriptor(std::int64_t pad, std::int64_t stride, cudnnDataType_t compute) {
  BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t dims = 2;
  const std::array<std::int64_t, 2> pads{pad, pad}, strides{stride, stride}, dilation{1, 1};
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
  return conv;
}

BackendDescriptor device_properties(cudnnHandle_t handle) {
  BackendDescriptor device(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  device.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  device.finalize();
  return device;
}

std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph, const BackendDescriptor& device,
                                                 cudnnBackendHeurMode_t mode, cudnnStatus_t* status) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendDescriptor_t g = graph.get(), d = device.get();
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
  cudnnStatus_t st = heur.try_finalize();
  if (status) *status = st;
  if (st != CUDNN_STATUS_SUCCESS) return {};
  std::int64_t count = 0;
  st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                nullptr);
  if (status) *status = st;
  if (st != CUDNN_STATUS_SUCCESS) return {};
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

}  // namespace scalebench::gpu
