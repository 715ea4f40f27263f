#include "workloads/train/model_graph.hpp"

namespace scalebench::train {

namespace {
Json layer_entry(const Layer& l, int index) {
  Json j{{"index", index}, {"name", l.name}, {"op", name(l.op)}, {"out", {l.out.c, l.out.h, l.out.w}}};
  if (l.input >= 0) j["input"] = l.input;
  if (!l.inputs.empty()) j["inputs"] = l.inputs;
  if (l.params > 0) {
    j["param_offset"] = l.param_offset;
    j["params"] = l.params;
    j["weight_params"] = l.weight_params();
  }
  if (l.aux) j["aux"] = true;
  switch (l.op) {
    case Op::kConv:
      j["kernel"] = {l.kernel_h, l.kernel_w};
      j["stride"] = l.stride;
      j["padding"] = {l.pad_h, l.pad_w};
      j["groups"] = l.groups;
      [[fallthrough]];
    case Op::kFc:
      j["channels"] = l.channels;
      j["bias"] = l.bias;
      break;
    case Op::kBatchNorm:
      j["eps"] = l.eps;
      j["relu"] = l.relu;
      if (l.residual >= 0) j["residual"] = l.residual;
      break;
    case Op::kMaxPool:
    case Op::kAvgPool:
      j["kernel"] = l.kernel_h;
      j["stride"] = l.stride;
      j["padding"] = l.pad_h;
      if (l.op == Op::kAvgPool) j["count_pad"] = l.count_pad;
      break;
    case Op::kSubsample:
      j["stride"] = l.stride;
      j["offset"] = l.offset;
      break;
    case Op::kSoftmaxLoss:
      j["loss_weight"] = l.loss_weight;
      break;
    default:
      break;
  }
  return j;
}
}  // namespace

Json model_graph(const Model& m) {
  Json layers = Json::array();
  for (std::size_t i = 0; i < m.layers.size(); ++i) layers.push_back(layer_entry(m.layers[i], static_cast<int>(i)));
  return layers;
}

}  // namespace scalebench::train
