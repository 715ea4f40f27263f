#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/net.hpp"

// Per-layer GPU time of the passes, from events recorded between layers.
namespace scalebench::train {

Net::LayerMarks::LayerMarks(std::size_t layers) : fwd(layers), bwd(layers + 1) {}

void Net::mark(const gpu::Event& e) const {
  CUDA_CHECK(
      cudaEventRecordWithFlags(e.get(), stream_, marks_->external ? cudaEventRecordExternal : cudaEventRecordDefault));
}

std::vector<double> Net::forward_ms(const LayerMarks& m) {
  std::vector<double> out(m.fwd.size(), 0.0);
  for (std::size_t k = 1; k < m.fwd.size(); ++k) {
    float f = 0;
    CUDA_CHECK(cudaEventElapsedTime(&f, m.fwd[k - 1].get(), m.fwd[k].get()));
    out[k] = f;
  }
  return out;
}

std::vector<double> Net::backward_ms(const LayerMarks& m) {
  const std::size_t n = m.fwd.size();
  std::vector<double> out(n, 0.0);
  // Backward runs from the last layer down: layer k's time ends at its mark, starts at k+1's.
  for (std::size_t k = 1; k < n; ++k) {
    float b = 0;
    CUDA_CHECK(cudaEventElapsedTime(&b, m.bwd[k + 1].get(), m.bwd[k].get()));
    out[k] = b;
  }
  return out;
}

Json Net::time_by_op() {
  const std::size_t n = model_.layers.size();
  LayerMarks m(n);
  marks_ = &m;
  try {
    forward(Pass::kTrain);
    backward([](int) {});
  } catch (...) {
    marks_ = nullptr;
    throw;
  }
  marks_ = nullptr;
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  const std::vector<double> fwd = forward_ms(m), bwd = backward_ms(m);
  std::map<std::string, double> ms;
  std::vector<std::pair<double, std::string>> layers;
  for (std::size_t k = 1; k < n; ++k) {
    const double f = fwd[k], b = bwd[k];
    // Depthwise convolutions apart from the others: what the `depthwise` parameter changes.
    const Layer& l = model_.layers[k];
    const bool depthwise = l.op == Op::kConv && l.groups > 1 && l.groups == l.channels;
    const std::string op = depthwise ? "depthwise conv" : name(l.op);
    ms[op + " fwd"] += f;
    ms[op + " bwd"] += b;
    layers.push_back({f + b, model_.layers[k].name});
  }
  std::sort(layers.rbegin(), layers.rend());
  Json top = Json::array();
  for (std::size_t k = 0; k < std::min<std::size_t>(5, layers.size()); ++k)
    top.push_back(Json{{"layer", layers[k].second}, {"ms", layers[k].first}});
  return Json{{"by_op_ms", ms}, {"slowest_layers", top}};
}

}  // namespace scalebench::train
