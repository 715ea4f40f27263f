#include "workloads/gpt/gpt_main.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/compute/peak.hpp"
#include "workloads/gpt/gpt_bench.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/registry/registry.hpp"

namespace scalebench {

int run_gpt_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const Json& spec = run.spec;
  const Json params = with_defaults("gpt", spec.at("params"));  // the registry's defaults
  const gpt::Config cfg = gpt::Config::from_params(params);
  if (cfg.dp * cfg.tp != mpi.size())
    throw Error("dp x tp = " + std::to_string(cfg.dp * cfg.tp) + " must equal the run's ranks (" +
                std::to_string(mpi.size()) + ")");
  if (cfg.dp > 1 || cfg.tp > 1 || cfg.zero > 0)
    throw Error(
        "dp: the gpt workload runs on one GPU so far (dp 1, tp 1, zero 0); data, ZeRO and tensor "
        "parallelism are planned (docs/gpt.md)");
  compute::TimingConfig timing = compute::TimingConfig::from_params(params, spec.value("repetitions", 5));
  timing.iters = cfg.steps;
  const gpt::ModelShape shape = cfg.shape();
  const double tokens_per_step = static_cast<double>(cfg.micro_batch) * cfg.seq * cfg.grad_accum;

  std::unique_ptr<gpu::Stream> stream;
  std::unique_ptr<gpt::GptModel> model;
  compute::ComputeWorkload w;
  w.plan = [&](const Json&) { return std::vector<Json>{cfg.to_json()}; };
  w.throughput = [&](const Json&, const Json&) { return compute::Throughput{tokens_per_step, 1, "tokens/s"}; };
  w.measure = [&](const Json&, const Json&, const compute::DeviceInfo& gpu) {
    compute::RankOutcome o;
    if (!stream) stream = std::make_unique<gpu::Stream>();
    if (!model)
      model = std::make_unique<gpt::GptModel>(shape, cfg.micro_batch, cfg.seq, cfg.seed, stream->get(),
                                              gpt::attention_from_name(cfg.attention));
    const gpt::Hyper h{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, cfg.clip};
    const gpt::StepTiming t = gpt::time_steps(*model, stream->get(), cfg.grad_accum, h, std::max(timing.warmup, 1),
                                              std::max(timing.repetitions, 1), cfg.steps);
    o.seconds = t.step_seconds;
    std::vector<double> sorted = t.step_seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    double peak = gpt::dense_bf16_peak(gpu.cc_major, gpu.cc_minor);
    if (peak == 0)
      peak = compute::peak_ops_per_second(compute::Precision::kBf16, gpu.cc_major, gpu.cc_minor, gpu.sm_count,
                                          gpu.max_clock_mhz);
    const double fpt = gpt::flops_per_token(shape, cfg.seq);
    o.details = Json{{"tokens_per_s", tokens_per_step / median},
                     {"mfu_pct", gpt::mfu_percent(tokens_per_step / median, fpt, peak)},
                     {"flops_per_token", fpt},
                     {"flop_formula",
                      "6 x parameters a token multiplies with (no position embedding; no input embedding when the "
                      "head is untied) + 12 x layers x width x seq"},
                     {"peak_tflops", peak / 1e12},
                     {"parameters", gpt::parameter_count(shape, cfg.seq)},
                     {"step_ms", median * 1e3},
                     {"forward_ms", t.forward_ms},
                     {"backward_ms", t.backward_ms},
                     {"optimizer_ms", t.optimizer_ms},
                     {"exposed_communication_ms", 0.0},
                     {"model_bytes", model->device_bytes()},
                     {"device_memory_used_bytes", t.peak_bytes},
                     {"loss_first", t.loss_first},
                     {"loss_last", t.loss_last},
                     {"attention", cfg.attention},
                     {"data", "synthetic"}};
    // Training on one fixed synthetic batch: the loss must have fallen and stay finite.
    o.checked = 1;
    o.wrong = cfg.check && !(std::isfinite(t.loss_last) && t.loss_last < t.loss_first) ? 1 : 0;
    if (!cfg.check) o.wrong = -1;
    return o;
  };
  int v = 0;
  cublasLtGetProperty(MAJOR_VERSION, &v);
  std::string lt = std::to_string(v);
  cublasLtGetProperty(MINOR_VERSION, &v);
  lt += "." + std::to_string(v);
  cublasLtGetProperty(PATCH_LEVEL, &v);
  lt += "." + std::to_string(v);
  w.versions = Json{{"cublaslt", lt}};
  return compute::run_compute_workload(mpi, run.run_id, spec, run.records, run.emit, w);
}

}  // namespace scalebench
