// The infer workload's entry point: builds the engine (make_train_engine: the model's forward pass
// as CUDA graphs, one per batch size per stream; make_gpt_engine for text generation) on this
// rank's GPU, checks it, warms it up, runs the scenario (or the server's search) under the harness
// and reports one record per rank, the lead (rank 0) for all. Each rank runs on its own GPU, unsynchronised: no rank
// waits on another before the records are gathered, so one that fails early cannot hold the others. Built only with
// SCALEBENCH_HAVE_CUDA.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "record/record.hpp"
#include "record/table_printer.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/infer/engine.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/infer_records.hpp"
#include "workloads/infer/qps_search.hpp"
#include "workloads/infer/scenario_runner.hpp"
#include "workloads/infer/search_progress.hpp"
#include "workloads/infer/token_records.hpp"
#include "workloads/infer/token_runner.hpp"
#include "workloads/runtime/device_description.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/run_request.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench {

namespace {
using infer::InferConfig;

// The check: a batch of the largest size (less one, so that it is padded, where that leaves two
// samples) on the first stream against its first samples run alone in the smallest size on the
// last stream, so that batch sizes, padding, graphs and the streams' copies of the weights are all
// compared; and the same batch on every other stream against the first's, since each stream has
// nets of its own (on an H200 one net in about four of ResNet-50's 8-bit and fused engines answered
// otherwise, on any stream, until their weights were copied on the net's stream: a543eea).
struct CheckOutcome {
  Json details;
  long long wrong = 0, rows = 0;
};

CheckOutcome check_engine(infer::Engine& engine, const InferConfig& cfg) {
  CheckOutcome out;
  const int largest = engine.max_batch();
  const int batch = largest > 2 ? largest - 1 : largest;
  const int rows = std::min(batch, 16);
  if (rows < 2) {
    out.details = "not checked: max_batch " + std::to_string(largest) + " leaves no batch of two samples to compare";
    return out;
  }
  std::vector<std::uint64_t> samples(static_cast<std::size_t>(batch));
  std::iota(samples.begin(), samples.end(), 0);
  const std::vector<float> all = engine.outputs(0, samples);
  const auto classes = static_cast<std::size_t>(engine.output_size());
  std::vector<float> batched(all.begin(), all.begin() + static_cast<long>(rows * classes)), single;
  for (int i = 0; i < rows; ++i) {
    const std::uint64_t one = samples[static_cast<std::size_t>(i)];
    const std::vector<float> got = engine.outputs(engine.streams() - 1, std::span<const std::uint64_t>(&one, 1));
    single.insert(single.end(), got.begin(), got.end());
  }
  const double tol = infer::batching_tolerance(cfg.precision);
  const infer::BatchingCheck c = infer::batching_check(batched, single, rows, engine.output_size(), tol);
  out.wrong = c.wrong;
  out.rows = c.checked;
  double across_streams = 0;
  for (int s = 1; s < engine.streams(); ++s) {
    const std::vector<float> other = engine.outputs(s, samples);
    const std::vector<float> head(other.begin(), other.begin() + static_cast<long>(rows * classes));
    const infer::BatchingCheck o = infer::batching_check(batched, head, rows, engine.output_size(), tol);
    out.wrong += o.wrong;
    out.rows += o.checked;
    across_streams = std::max(across_streams, o.max_error);
  }
  out.details =
      Json{{"compared", "samples alone (smallest batch size, last stream) against a batch of " + std::to_string(batch) +
                            " (first stream), and that batch on every stream"},
           {"samples", rows},
           {"streams", engine.streams()},
           {"max_error_across_streams_x_spread", std::isfinite(across_streams) ? Json(across_streams) : Json("inf")},
           {"tolerance_x_spread", tol},
           {"max_error_x_spread", std::isfinite(c.max_error) ? Json(c.max_error) : Json("inf")},
           {"spread", c.spread},
           {"top1_agree", c.top1_agree}};
  return out;
}

infer::InferOutcome run_once(infer::Engine& engine, const InferConfig& cfg, double expected, double qps,
                             bool search_trial = false) {
  infer::InferOutcome o;
  o.expected_samples_per_s = expected;
  o.target_qps = qps;
  o.run = infer::run_scenario(engine, cfg.loop(expected, qps, search_trial));
  o.result = cfg.judge(o.run.tally);
  return o;
}

// What a trial's verdict judged, for the search's progress lines.
std::string judged_latency(const infer::InferOutcome& o) {
  return "p99 " + fixed_number(o.result.latency.p99, 2) + " ms";
}
std::string judged_latency(const infer::TokenOutcome& o) {
  return "p99 TTFT " + fixed_number(o.result.ttft_at_percentile_ms, 1) + " ms, TPOT " +
         fixed_number(o.result.tpot_at_percentile_ms, 3) + " ms";
}

// Server with target_qps 0: the highest rate within the latency bounds, from half the warm-up's
// rate, each trial a run at one rate (`run_at`). A trial is judged by its bounds alone (its
// duration is the search's, shorter than the rules'); the record's own verdict is the full one:
// the best rate's run within the bounds, else the lowest rate tried (why even that failed).
template <class Outcome, class RunAt>
Outcome search_server(const InferConfig& cfg, double start_qps, RunAt run_at) {
  std::vector<Outcome> trials;
  double longest_s = 0;
  infer::QpsSearch search = infer::search_max_qps(
      [&](double qps) {
        const auto t0 = std::chrono::steady_clock::now();
        trials.push_back(run_at(qps));
        const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        longest_s = std::max(longest_s, took_s);
        log::info(infer::search_progress_line({static_cast<int>(trials.size()), cfg.search_trials, qps,
                                               trials.back().result.within_bound, judged_latency(trials.back()), took_s,
                                               longest_s}));
        return trials.back().result.within_bound;
      },
      start_qps, cfg.search_tolerance, cfg.search_trials);
  std::size_t pick = 0;
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (search.best_valid_qps > 0 ? trials[i].target_qps == search.best_valid_qps && trials[i].result.within_bound
                                  : trials[i].target_qps < trials[pick].target_qps)
      pick = i;
  Outcome o = trials[pick];
  for (const auto& t : trials) o.trial_results.push_back(t.result);
  o.search = search;
  return o;
}

infer::TokenOutcome run_text_once(infer::TokenEngine& engine, const InferConfig& cfg, double expected, double qps,
                                  bool search_trial = false) {
  infer::TokenOutcome o;
  o.expected_queries_per_s = expected;
  o.target_qps = qps;
  o.tally = infer::run_token_scenario(engine, cfg.token_loop(expected, qps, search_trial));
  o.result = infer::judge_tokens(cfg.scenario, cfg.token_rules(), o.tally);
  return o;
}

// Text generation on this rank's GPU: the gpt decoder built (random weights or a checkpoint's),
// checked (cached decoding against the step-by-step recompute), warmed up (an Offline run of a
// slot's worth of queries, then the rate of twice as many, which sizes Offline and starts the
// search) and run through the scenario or the server's search.
Json measure_text_rank(const Json& context, const InferConfig& cfg, int rank) {
  try {
    infer::TokenEngineRequest r;
    r.model = cfg.model;
    r.slots = cfg.max_batch;
    r.longest_prompt = cfg.prompt_tokens;
    r.max_sequence = cfg.prompt_tokens + cfg.output_tokens;
    r.max_prefill_tokens = cfg.max_prefill_tokens;
    r.seed = cfg.seed;
    r.checkpoint = cfg.checkpoint;
    const std::unique_ptr<infer::TokenEngine> engine = infer::make_gpt_engine(r);
    infer::TokenEngine::Check check;
    if (cfg.check) check = engine->check(16);
    const infer::TokenLoopSettings shape = cfg.token_loop(0, 0);
    const auto slots = static_cast<std::uint64_t>(cfg.max_batch);
    infer::measure_token_rate(*engine, shape, slots);
    const double expected = infer::measure_token_rate(*engine, shape, 2 * slots);
    infer::TokenOutcome o = cfg.scenario == infer::Scenario::server && cfg.target_qps == 0
                                ? search_server<infer::TokenOutcome>(
                                      cfg, std::max(expected / 2, 0.1),
                                      [&](double qps) { return run_text_once(*engine, cfg, expected, qps, true); })
                                : run_text_once(*engine, cfg, expected, cfg.target_qps);
    if (cfg.check) {
      o.check = check.details;
      o.check_wrong = check.wrong;
      o.check_rows = check.rows;
    }
    return infer::token_record(context, cfg, o, rank, engine->describe());
  } catch (const infer::EngineDoesNotFit& e) {
    return status_record(context, "skipped", e.what());
  } catch (const std::exception& e) {
    return status_record(context, "failed", e.what());
  }
}

// This rank's record: the engine built on its GPU, checked, warmed up and run through the
// scenario (or the server's search); skipped when the engine does not fit the GPU, failed on an
// error. Text generation for a GPT-2 model.
Json measure_rank(const Json& context, const InferConfig& cfg, int rank) {
  if (cfg.generates_text()) return measure_text_rank(context, cfg, rank);
  try {
    infer::EngineRequest ec;
    ec.model = cfg.model;
    ec.image = cfg.image;
    ec.precision = cfg.precision;
    ec.batch_sizes = cfg.batch_sizes();
    ec.streams = cfg.streams;
    ec.pool_samples = std::max<std::uint64_t>(1024, 4 * static_cast<std::uint64_t>(cfg.max_batch));
    ec.seed = cfg.seed;
    ec.search = cfg.search;
    ec.conv_api = cfg.conv_api;
    ec.fp16_convolutions = cfg.fp16_convolutions;
    // Said before and after, since a build is long: an H200's first 13-size Server engine built in
    // 84 s, compiling cuDNN's kernels, later ones in 24-32 s (2026-12-02-server-dispatch-h200).
    log::info("infer: building " + cfg.model + " " + cfg.precision + ": " + std::to_string(ec.batch_sizes.size()) +
              " batch size(s) on " + std::to_string(ec.streams) +
              " stream(s), a CUDA graph each (a machine's first build compiles cuDNN's kernels: a minute or more)");
    const std::unique_ptr<infer::Engine> made = infer::make_train_engine(ec);
    infer::Engine& engine = *made;
    log::info("infer: engine built in " + fixed_number(engine.describe().value("build_s", 0.0), 1) + " s");
    CheckOutcome check;
    check.details = "not checked (check: false)";
    if (cfg.check) check = check_engine(engine, cfg);
    // Warm-up, then the throughput Offline sizes its query by (and the server search starts from).
    const int warm = std::max(cfg.warmup, 1);
    infer::measure_throughput(engine, warm);
    const double expected = infer::measure_throughput(engine, std::max(warm, 2 * cfg.streams));
    const infer::InferOutcome o =
        cfg.scenario == infer::Scenario::server && cfg.target_qps == 0
            ? search_server<infer::InferOutcome>(cfg, std::max(expected / 2, 1.0),
                                                 [&](double qps) { return run_once(engine, cfg, expected, qps, true); })
            : run_once(engine, cfg, expected, cfg.target_qps);
    return infer::infer_record(context, cfg, o, rank, engine.describe(), check.details, check.wrong,
                               cfg.check ? check.rows : 0);
  } catch (const infer::EngineDoesNotFit& e) {
    return status_record(context, "skipped", e.what());
  } catch (const std::exception& e) {
    return status_record(context, "failed", e.what());
  }
}

// A rank's record as the table format shows it.
void print_summary(const Json& r) {
  if (r.contains("details") && r.at("details").contains("ttft_ms"))
    std::printf("%s", infer::token_summary(r).c_str());
  else if (r.contains("details"))
    std::printf("%s", infer::infer_summary(r).c_str());
  else
    std::printf("infer: %s: %s\n", r.at("status").get<std::string>().c_str(),
                r.at("reason").get<std::string>().c_str());
}
}  // namespace

int run_infer_workload(const RunRequest& request) {
  RunRequest run = request;
  run.spec["params"] = with_defaults("infer", request.spec.at("params"));
  const Json& params = run.spec.at("params");
  const InferConfig cfg = InferConfig::from_params(params);
  const MpiSession& mpi = *run.mpi;

  int count = 0;
  std::string problem;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    problem = "no GPU visible to rank " + std::to_string(mpi.rank());
  std::vector<DeviceId> devices;
  Json versions = Json::object();
  if (problem.empty()) {
    CUDA_CHECK(cudaSetDevice(mpi.local_rank() % count));  // one rank per GPU, by local rank
    devices.push_back(describe_device(mpi.local_rank() % count));
    versions = gpu_versions();
  }
  WorkloadRun shell(run, params, "cuda", devices, versions);
  const Json record = problem.empty() ? measure_rank(shell.context(), cfg, mpi.rank())
                                      : status_record(shell.context(), "failed", problem);
  // Every rank's record, on every rank: a failed one fails the run on all.
  for (const Json& r : shell.gather(record)) {
    if (r.at("status") == "failed") shell.note_failed();
    if (shell.records())
      shell.emit(r);
    else if (shell.lead())
      print_summary(r);
  }
  return shell.exit_code();
}

}  // namespace scalebench
