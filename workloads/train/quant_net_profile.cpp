// Where a quantized net's batch spends its time, step by step and by what the steps do: the
// records' answer to "which layers to move to 8 bits next" (the split's timing sees only the
// convolutions, alone).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_cuda.hpp"
#include "workloads/train/quant_net_parts.hpp"

namespace scalebench::train {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
}  // namespace

std::string QuantNet::step_kind(const Step& step) const {
  const std::string wide = gpu::dtype_name(input_type_);
  switch (step.kind) {
    case Step::Kind::kQuantizeInput:
      return "quantizing";
    case Step::Kind::kConv:
      return step.unquantized ? "convolutions in " + wide : std::string("convolutions in ") + gpu::name(format_);
    case Step::Kind::kTrainedConv:
      return "the image's convolution";
    case Step::Kind::kMaxPool:
      return "max pooling";
    case Step::Kind::kGlobalAvgPool:
      return "global average pooling";
    case Step::Kind::kFc:
      return "classifier";
  }
  return "?";
}

Json QuantNet::profile(int passes) {
  if (passes < 1) throw Error("quantized net profile: at least one pass");
  const std::size_t n = steps_.size();
  // Per step: before it, after its kernel or graph, after its output's conversions.
  std::vector<gpu::Event> marks(2 * n + 1);
  std::vector<std::vector<double>> body(n), convert(n);
  for (int pass = 0; pass <= passes; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      CUDA_CHECK(cudaEventRecord(marks[2 * i].get(), stream_));
      run_step(*steps_[i]);
      CUDA_CHECK(cudaEventRecord(marks[2 * i + 1].get(), stream_));
      convert_output(*steps_[i]);
    }
    CUDA_CHECK(cudaEventRecord(marks[2 * n].get(), stream_));
    CUDA_CHECK(cudaEventSynchronize(marks[2 * n].get()));
    if (pass == 0) continue;  // the first warms the caches and clocks
    for (std::size_t i = 0; i < n; ++i) {
      float a = 0, b = 0;
      CUDA_CHECK(cudaEventElapsedTime(&a, marks[2 * i].get(), marks[2 * i + 1].get()));
      CUDA_CHECK(cudaEventElapsedTime(&b, marks[2 * i + 1].get(), marks[2 * i + 2].get()));
      body[i].push_back(a * 1e3);
      convert[i].push_back(b * 1e3);
    }
  }
  std::map<std::string, double> by_kind;
  Json steps = Json::array();
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = *steps_[i];
    const bool converts = st.quantize_out() || (st.out && st.out->half_copy);
    // Without conversions, the gap to the next step's mark is this step's too.
    const double us = median(body[i]) + (converts ? 0 : median(convert[i])),
                 convert_us = converts ? median(convert[i]) : 0;
    by_kind[step_kind(st)] += us;
    if (converts) by_kind["quantizing"] += convert_us;
    total += us + convert_us;
    steps.push_back(Json{{"layer", st.layer}, {"what", step_kind(st)}, {"us", us}, {"conversions_us", convert_us}});
  }
  return Json{{"passes", passes}, {"batch_us", total}, {"by_kind_us", by_kind}, {"steps", steps}};
}

}  // namespace scalebench::train
