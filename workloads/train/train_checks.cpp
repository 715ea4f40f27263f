#include "workloads/train/train_checks.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/train/directional_check.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/train_bench.hpp"
#include "workloads/train/train_step.hpp"

namespace scalebench::train {

using compute::Precision;

// The all-reduce as the steps run it, on gradients whose sums are known: 3 rounds of small
// integers, each different at every element, so that a shard lost, stale or summed twice shows.
Json check_allreduce(const MpiSession& mpi, Net& net, const Model& model, StepRunner& run, StepGraphs& graphs,
                     cudaStream_t s) {
  gpu::DeviceBuffer wrong(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemsetAsync(wrong.get(), 0, wrong.bytes(), s));
  constexpr int kRounds = 3;
  for (int round = 1; round <= kRounds; ++round) {
    fill_allreduce_pattern(net.grads(), net.compute_type(), model.param_slots, mpi.rank(), round, s);
    if (graphs.reduce)
      CUDA_CHECK(cudaGraphLaunch(graphs.reduce->get(), s));
    else
      run.allreduce_only();
    count_allreduce_errors(net.grads(), net.compute_type(), model.param_slots, mpi.size(), round,
                           reinterpret_cast<unsigned long long*>(wrong.get()), s);
  }
  unsigned long long bad = 0;
  CUDA_CHECK(cudaMemcpyAsync(&bad, wrong.get(), sizeof bad, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return Json{{"rounds", kRounds}, {"elements", model.param_slots}, {"wrong_elements", bad}};
}

// Every rank's weights must be bit for bit the same after the all-reduced steps.
bool weights_agree(const MpiSession& mpi, const Net& net, const Model& model, cudaStream_t s) {
  gpu::DeviceBuffer sums(sizeof(unsigned long long) + sizeof(double));
  CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, sums.bytes(), s));
  checksum(net.master(), model.param_slots, reinterpret_cast<unsigned long long*>(sums.get()),
           reinterpret_cast<double*>(sums.get() + sizeof(unsigned long long)), s);
  unsigned long long bits = 0;
  CUDA_CHECK(cudaMemcpyAsync(&bits, sums.get(), sizeof bits, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  const std::vector<std::string> all = mpi.all_gather(std::to_string(bits));
  const bool same = std::all_of(all.begin(), all.end(), [&](const std::string& x) { return x == all[0]; });
  return same;
}

// The point's correctness: the loss fell on its fixed batch, the all-reduce summed right, the
// ranks' weights agree, and the tiny net's gradients match finite differences.
void TrainBench::record_checks(compute::RankOutcome& out, Json& details, const Net& net, double loss_first,
                               const std::optional<Json>& allreduce_check, std::optional<bool> ranks_agree,
                               cudaStream_t s) {
  long long wrong = 0, checked = 0;
  // Training on one fixed batch: the loss must have fallen since the first step.
  const double loss_last = net.read_loss();
  float scale = 1;
  CUDA_CHECK(cudaMemcpy(&scale, net.loss_scale_device(), sizeof scale, cudaMemcpyDeviceToHost));
  details["loss_first"] = loss_first;
  details["loss_last"] = loss_last;
  details["loss_scale"] = scale;
  ++checked;
  if (!(std::isfinite(loss_last) && loss_last < loss_first)) ++wrong;
  if (allreduce_check) {
    details["allreduce_check"] = *allreduce_check;
    ++checked;
    if (allreduce_check->at("wrong_elements").get<unsigned long long>() != 0) ++wrong;
  }
  if (ranks_agree) {
    details["weights_identical_across_ranks"] = *ranks_agree;
    ++checked;
    if (!*ranks_agree) ++wrong;
  }
  const std::string tiny = gradient_check_model(net.model());
  const std::string& depthwise = net.config().depthwise;
  // The tiny net runs in fp32, where `auto` takes no matmuls: a run that takes some is checked
  // with every 1x1 convolution as one.
  const std::string pointwise = net.pointwise_matmuls() > 0 ? "gemm" : net.config().pointwise;
  if (!grad_check_ || grad_check_->at("model") != tiny || grad_check_->at("depthwise") != depthwise ||
      grad_check_->at("pointwise") != pointwise)
    grad_check_ = gradient_check(s, tiny, depthwise, pointwise);
  details["gradient_check"] = *grad_check_;
  checked += grad_check_->at("tensors").get<long long>();
  wrong += grad_check_->at("wrong").get<long long>();
  out.wrong = wrong;
  out.checked = checked;
}

std::string TrainBench::gradient_check_model(const Model& m) {
  for (const Layer& l : m.layers)
    if (l.op == Op::kAdd || l.op == Op::kSubsample || l.groups > 1) return "tiny-nasnet";
  for (const Layer& l : m.layers)
    if (l.op == Op::kConcat || l.op == Op::kAvgPool || l.aux) return "tiny-inception";
  return "tiny";
}

Json TrainBench::gradient_check(cudaStream_t s, const std::string& model_name, const std::string& depthwise,
                                const std::string& pointwise) {
  const Model model = build_model(model_name);
  NetConfig nc;
  nc.precision = Precision::kFp32;
  nc.batch = 8;
  nc.search = false;
  nc.fuse = false;
  nc.depthwise = depthwise;
  nc.pointwise = pointwise;
  Net net(model, nc, s);
  net.forward(Pass::kTrain);
  net.backward([](int) {});
  const std::size_t p = static_cast<std::size_t>(model.param_slots);
  std::vector<float> analytic(p), w(p);
  CUDA_CHECK(cudaMemcpyAsync(analytic.data(), net.grads(), p * 4, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(w.data(), net.master(), p * 4, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  // Central differences of the fp32 loss along each parameter tensor's own gradient direction
  // (directional_check.hpp): the loss moves in steps of 2.4e-7, where one weight's effect is ~1e-7.
  const double tol = 0.02, ulp = std::ldexp(1.0, std::ilogb(std::max(net.read_loss(), 1e-30)) - 23);
  long long wrong = 0, tensors = 0;
  double worst = 0;
  Json per_tensor = Json::object();
  std::vector<float> moved(p);
  auto loss_with = [&](long long begin, long long end, const std::vector<double>& v, double e) {
    moved = w;
    for (long long k = begin; k < end; ++k)
      moved[static_cast<std::size_t>(k)] =
          static_cast<float>(w[static_cast<std::size_t>(k)] + e * v[static_cast<std::size_t>(k - begin)]);
    CUDA_CHECK(cudaMemcpyAsync(net.master(), moved.data(), p * 4, cudaMemcpyHostToDevice, s));
    net.forward(Pass::kTrain);
    return net.read_loss();
  };
  for (const Layer& l : model.layers) {
    if (l.params == 0) continue;
    const long long split = l.weight_params();  // weights, then the bias or BN shift as their own tensor
    for (auto [begin, end] : {std::pair{l.param_offset, l.param_offset + split},
                              std::pair{l.param_offset + split, l.param_offset + l.params}}) {
      if (begin == end) continue;
      double norm = 0;
      for (long long k = begin; k < end; ++k)
        norm += static_cast<double>(analytic[static_cast<std::size_t>(k)]) * analytic[static_cast<std::size_t>(k)];
      norm = std::sqrt(norm);
      std::vector<double> v(static_cast<std::size_t>(end - begin));
      for (long long k = begin; k < end; ++k)
        v[static_cast<std::size_t>(k - begin)] = norm > 0 ? analytic[static_cast<std::size_t>(k)] / norm : 0.0;
      const DirectionalCheck c = check_direction([&](double e) { return loss_with(begin, end, v, e); }, norm, ulp, tol);
      const double rel = c.rel_error;
      per_tensor[l.name + (begin == l.param_offset ? "" : ".bias")] =
          Json{{"grad_norm", norm}, {"finite_difference", c.finite_difference}, {"step", c.step}, {"rel_error", rel}};
      worst = std::isfinite(rel) ? std::max(worst, rel) : INFINITY;
      ++tensors;
      if (!(rel <= tol)) ++wrong;
    }
  }
  CUDA_CHECK(cudaMemcpyAsync(net.master(), w.data(), p * 4, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return Json{{"model", model_name},
              {"precision", "fp32"},
              {"depthwise", depthwise},
              {"pointwise", pointwise},
              {"pointwise_matmuls", net.pointwise_matmuls()},
              {"method", "central difference along each tensor's gradient direction, the best of 3 steps"},
              {"tensors", tensors},
              {"wrong", wrong},
              {"tolerance_rel", tol},
              {"max_rel_error", std::isfinite(worst) ? Json(worst) : Json("inf")},
              {"by_tensor", per_tensor}};
}

}  // namespace scalebench::train
