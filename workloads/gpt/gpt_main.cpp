#include "workloads/gpt/gpt_main.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "workloads/compute/compute_main.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/compute/peak.hpp"
#include "workloads/gpt/gpt_bench.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/gpt_parallel.hpp"
#include "workloads/gpt/parallel_plan.hpp"
#include "workloads/gpt/pipeline_schedule.hpp"
#include "workloads/gpt/text_training.hpp"
#include "workloads/gpu/cublaslt_version.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/nccl_check.hpp"
#include "workloads/runtime/nccl_transport.hpp"

namespace scalebench {

namespace {

// A communicator over the ranks of one group: its rank 0 (world rank `leader`) makes the id and
// MPI carries it to the others. Every rank calls this for its own group at the same moment.
std::unique_ptr<gpu::NcclComm> group_comm(const MpiSession& mpi, int leader, int size, int rank_in_group) {
  ncclUniqueId id{};
  if (mpi.rank() == leader) NCCL_CHECK(ncclGetUniqueId(&id));
  const std::vector<std::string> ids = mpi.all_gather(std::string(id.internal, sizeof id.internal));
  std::memcpy(id.internal, ids[static_cast<std::size_t>(leader)].data(), sizeof id.internal);
  return std::make_unique<gpu::NcclComm>(size, id, rank_in_group);
}

int highest_priority() {
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}

// The rank's communicators: its tp group (consecutive ranks), its dp group (same stage and tp
// rank) and its pipeline (same dp and tp rank, one rank a stage; Placement's order), NCCL's log of
// the transports they connected with, and the stream the gradient buckets travel on.
struct Comms {
  std::optional<NcclLog> log;  // before the communicators, so that NCCL logs to it
  std::unique_ptr<gpu::NcclComm> tp, dp, pp;
  std::unique_ptr<gpt::NcclTpReduce> tp_reduce;
  std::unique_ptr<gpt::NcclPipeLink> pipe;
  std::unique_ptr<gpu::Stream> comm_stream;
  Comms(const MpiSession& mpi, const gpt::Placement& at) {
    if (mpi.size() > 1) log.emplace();
    const int stage_first = at.pp_rank * at.dp * at.tp;  // the stage's rank 0
    if (at.tp > 1) {
      tp = group_comm(mpi, stage_first + at.dp_rank * at.tp, at.tp, at.tp_rank);
      tp_reduce = std::make_unique<gpt::NcclTpReduce>(tp->get());
    }
    if (at.dp > 1) {
      dp = group_comm(mpi, stage_first + at.tp_rank, at.dp, at.dp_rank);
      comm_stream = std::make_unique<gpu::Stream>(highest_priority());
    }
    if (at.pp > 1) {
      pp = group_comm(mpi, at.dp_rank * at.tp + at.tp_rank, at.pp, at.pp_rank);
      pipe = std::make_unique<gpt::NcclPipeLink>(pp->get());
    }
  }
};

// tp groups must lie inside a node: their all-reduces run in every layer.
void check_tp_inside_nodes(const MpiSession& mpi, int tp) {
  if (tp == 1) return;
  const std::vector<std::string> hosts = mpi.all_gather(mpi.hostname());
  for (std::size_t r = 0; r < hosts.size(); ++r)
    if (hosts[r] != hosts[r - r % static_cast<std::size_t>(tp)])
      throw Error("tp: " + std::to_string(tp) + " consecutive ranks must share a node, but rank " + std::to_string(r) +
                  " is on " + hosts[r] + " and rank " + std::to_string(r - r % static_cast<std::size_t>(tp)) + " on " +
                  hosts[r - r % static_cast<std::size_t>(tp)]);
}

// With `data`: the corpus cut into this rank's windows, or the first rank's problem (a missing,
// short or non-UTF-8 file names itself) thrown on every rank alike, before any communicator exists.
std::unique_ptr<gpt::TextBatches> load_text(const MpiSession& mpi, const gpt::Config& cfg, const gpt::Placement& at) {
  std::unique_ptr<gpt::TextBatches> data;
  std::string mine;
  try {
    gpt::TextLayout l;
    l.seq = cfg.seq;
    l.micro_batch = cfg.micro_batch;
    l.dp = cfg.dp;
    l.dp_rank = at.dp_rank;
    l.seed = cfg.seed;
    l.eval_batches = cfg.eval_batches;
    data = std::make_unique<gpt::TextBatches>(gpt::read_text_corpus(gpt::corpus_path(cfg.data)), l);
  } catch (const Error& e) {
    mine = e.what();
  }
  if (const std::string problem = mpi.first_problem(mine); !problem.empty()) throw Error("data: " + problem);
  return data;
}

// The table format's progress line of a run on text (the records carry the whole curve).
void print_evaluation(const gpt::CurvePoint& p) {
  if (p.step == 0)
    std::printf("# text: step 0 held-out loss %.4f (uniform over bytes: ln 256 = 5.545)\n", *p.eval_loss);
  else
    std::printf("# text: step %d train loss %.4f held-out loss %.4f\n", p.step, p.train_loss, *p.eval_loss);
  std::fflush(stdout);
}

void add_text_details(Json& d, const gpt::TextTraining& r, const gpt::TextBatches& text, const gpt::Config& cfg) {
  d["tokenizer"] = "bytes (vocabulary 256; uniform: ln 256 = 5.545)";
  d["train_steps"] = cfg.train_steps;
  d["eval_every"] = cfg.eval_every;
  d["lr_warmup"] = cfg.lr_warmup;
  d["train_tokens"] = text.split().train_end;
  d["held_out_tokens"] = text.split().size - text.split().train_end;
  d["eval_tokens"] = static_cast<long long>(text.eval_batches()) * cfg.micro_batch * cfg.seq * cfg.dp;
  d["epochs"] = static_cast<double>(cfg.train_steps) * cfg.grad_accum * cfg.micro_batch / text.windows_per_rank();
  d["train_seconds"] = r.train_seconds;
  d["eval_loss_initial"] = r.eval_loss_initial;
  d["train_loss_final"] = r.train_loss;
  d["eval_loss_final"] = r.eval_loss;
  d["loss_curve"] = r.curve_json();
}

}  // namespace

int run_gpt_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const Json& spec = run.spec;
  const Json params = with_defaults("gpt", spec.at("params"));  // the registry's defaults
  const gpt::Config cfg = gpt::Config::from_params(params).resolved(mpi.size(), mpi.local_size());
  check_tp_inside_nodes(mpi, cfg.tp);
  const gpt::Placement at = gpt::Placement::of(mpi.rank(), cfg.dp, cfg.tp, cfg.pp);
  compute::TimingConfig timing = compute::TimingConfig::from_params(params, spec.value("repetitions", 5));
  timing.iters = cfg.steps;
  const gpt::ModelShape shape = cfg.shape();
  // Tokens of one step on all ranks, and the share each GPU is credited with (a tp group and a
  // pipeline's stages work on the same tokens), so that the GPUs' figures add up to the total.
  const double tokens_per_step = static_cast<double>(cfg.micro_batch) * cfg.seq * cfg.grad_accum * cfg.dp;
  const double tokens_per_gpu = tokens_per_step / mpi.size();

  std::unique_ptr<gpu::Stream> stream;
  std::unique_ptr<Comms> comms;
  std::unique_ptr<gpt::GptModel> model;
  std::unique_ptr<gpt::TextBatches> text;
  compute::ComputeWorkload w;
  w.plan = [&](const Json&) { return std::vector<Json>{cfg.to_json()}; };
  w.throughput = [&](const Json&, const Json&) { return compute::Throughput{tokens_per_gpu, 1, "tokens/s"}; };
  w.measure = [&](const Json&, const Json&, const compute::DeviceInfo& gpu) {
    compute::RankOutcome o;
    if (cfg.text() && !text) text = load_text(mpi, cfg, at);
    if (!stream) stream = std::make_unique<gpu::Stream>();
    if (!comms) comms = std::make_unique<Comms>(mpi, at);
    std::map<std::string, int> transports;
    std::string transport_problem;
    if (comms->log) {
      transports = comms->log->transports();
      transport_problem =
          transport_mismatch(transports, spec.value("env", Json::object()), spec.value("transport", ""));
    }
    gpt::Parallel par;
    par.at = at;
    par.zero = cfg.zero;
    par.sequence_parallel = cfg.sequence_parallel;
    par.overlap = cfg.overlap;
    par.bucket_mb = cfg.bucket_mb;
    par.tp_reduce = comms->tp_reduce.get();
    par.dp_comm = comms->dp ? comms->dp->get() : nullptr;
    par.comm_stream = comms->comm_stream ? comms->comm_stream->get() : nullptr;
    par.pipe = comms->pipe.get();
    par.virtual_stages = cfg.virtual_stages;
    par.micro_batches = cfg.grad_accum;
    if (!model) {
      model = std::make_unique<gpt::GptModel>(shape, cfg.micro_batch, cfg.seq, cfg.seed, stream->get(),
                                              gpt::attention_from_name(cfg.attention), par, cfg.recompute,
                                              gpt::Precision{cfg.fp8(), {cfg.fp8_history, cfg.fp8_margin}});
      // Rank r of dp takes rows r x B .. of one token stream: dp = k gives the batch of dp = 1
      // with k x micro_batch.
      model->synthetic_tokens(cfg.seed ^ 0x5eedull, static_cast<long long>(at.dp_rank) * cfg.micro_batch);
    }
    const gpt::Hyper h{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay, cfg.clip};
    gpt::StepTiming t;
    std::optional<gpt::TextTraining> trained;
    if (text) {
      const gpt::RankMean mean = [&](double v) { return mpi.allreduce_sum(v) / mpi.size(); };
      gpt::OnEvaluation progress;
      if (!run.records && mpi.rank() == 0) progress = print_evaluation;
      const gpt::TextSchedule plan{cfg.grad_accum, cfg.train_steps, cfg.eval_every, cfg.lr_warmup, h};
      trained = gpt::train_on_text(*model, stream->get(), *text, plan, mean, progress);
      t.step_seconds = trained->step_seconds;
      std::size_t free_b = 0, total_b = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      t.peak_bytes = total_b - free_b;
    } else {
      t = gpt::time_steps(*model, stream->get(), cfg.grad_accum, h, std::max(timing.warmup, 1),
                          std::max(timing.repetitions, 1), cfg.steps, cfg.cuda_graph);
    }
    o.seconds = t.step_seconds;
    std::vector<double> sorted = t.step_seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    double peak = gpt::dense_bf16_peak(gpu.cc_major, gpu.cc_minor);
    if (peak == 0)
      peak = compute::peak_ops_per_second(compute::Precision::kBf16, gpu.cc_major, gpu.cc_minor, gpu.sm_count,
                                          gpu.max_clock_mhz);
    const double fpt = gpt::flops_per_token(shape, cfg.seq);
    // The loss of the whole batch: the mean over the ranks that hold it, the last pipeline stage's
    // dp x tp ranks (a tp group's ranks agree; the other stages hold none).
    const double holders = static_cast<double>(cfg.dp) * cfg.tp;
    const double loss_first = trained ? trained->curve.front().train_loss : mpi.allreduce_sum(t.loss_first) / holders;
    const double loss_last = trained ? trained->train_loss : mpi.allreduce_sum(t.loss_last) / holders;
    o.details = Json{{"tokens_per_s", tokens_per_step / median},
                     {"tokens_per_s_per_gpu", tokens_per_gpu / median},
                     {"mfu_pct", gpt::mfu_percent(tokens_per_gpu / median, fpt, peak)},
                     {"flops_per_token", fpt},
                     {"flop_formula",
                      "6 x parameters a token multiplies with (no position embedding; no input embedding when the "
                      "head is untied) + 12 x layers x width x seq"},
                     {"peak_tflops", peak / 1e12},
                     {"parameters", gpt::parameter_count(shape, cfg.seq)},
                     {"dp", cfg.dp},
                     {"tp", cfg.tp},
                     {"sequence_parallel", cfg.sequence_parallel},
                     {"zero", cfg.zero},
                     {"overlap", cfg.overlap},
                     {"cuda_graph", cfg.cuda_graph},
                     {"step_ms", median * 1e3},
                     {"forward_ms", t.forward_ms},
                     {"backward_ms", t.backward_ms},
                     {"optimizer_ms", t.optimizer_ms},
                     {"exposed_communication_ms", t.exposed_communication_ms},
                     {"model_bytes", model->device_bytes()},
                     {"optimizer_state_bytes", model->optimizer_state_bytes()},
                     {"device_memory_used_bytes", t.peak_bytes},
                     {"loss_first", loss_first},
                     {"loss_last", loss_last},
                     {"attention", cfg.attention},
                     {"data", cfg.text() ? text->corpus().path : "synthetic"}};
    if (comms->log) o.details["nccl_transports"] = describe_transports(transports);
    o.details["pp"] = cfg.pp;
    if (cfg.pp > 1) {
      // Every rank's stage waits for its neighbours (pipe_wait in step_core.cpp): the step's
      // bubble is their mean, set beside the schedule's theory for equal stages.
      const double mine = t.bubble.fraction();
      std::vector<double> per_stage(static_cast<std::size_t>(cfg.pp), 0.0);
      const std::vector<std::string> all = mpi.all_gather(std::to_string(mine));
      for (std::size_t r = 0; r < all.size(); ++r)
        per_stage[static_cast<std::size_t>(gpt::Placement::of(static_cast<int>(r), cfg.dp, cfg.tp, cfg.pp).pp_rank)] +=
            std::stod(all[r]) / (cfg.dp * cfg.tp);
      double mean = 0;
      for (double x : per_stage) mean += x / cfg.pp;
      const int v = cfg.virtual_stages;
      o.details["pp_schedule"] = v > 1 ? "interleaved-1f1b" : "1f1b";
      o.details["pp_virtual_stages"] = v;
      o.details["pp_bubble_measured"] = mean;
      o.details["pp_bubble_measured_per_stage"] = per_stage;
      o.details["pp_bubble_theory"] = gpt::bubble_theory(cfg.pp, cfg.grad_accum, v);
      o.details["pp_bubble_theory_formula"] =
          v > 1 ? "(pp-1)/(virtual_stages x grad_accum+pp-1) of the step: Narayanan et al. 2021's (1/v)(pp-1)/m of "
                  "the ideal time, as a share of the step"
                : "(pp-1)/(grad_accum+pp-1) of the step";
      // The paper's own figure, the bubble over the bubble-free time: (1/v)(pp-1)/m.
      o.details["pp_bubble_theory_over_ideal"] = gpt::bubble_over_ideal(cfg.pp, cfg.grad_accum, v);
      // The blocks each (virtual) stage held, in virtual-stage order (chunk c of rank r is
      // c x pp + r): the split balances the ranks' sums, the head's cost counted.
      const double head = gpt::head_cost_in_blocks(shape, cfg.seq);
      Json blocks = Json::array();
      for (const gpt::StageBlocks& b : gpt::virtual_stage_blocks(shape.layers, cfg.pp, v, head))
        blocks.push_back(b.blocks());
      o.details["pp_stage_blocks"] = blocks;
      o.details["pp_head_cost_blocks"] = head;
      o.details["pp_bubble_method"] =
          "per stage, in one extra step: CUDA-event time inside the send/recv groups, the tied embedding's exchange "
          "and the gradient norm's sum over the stages (waiting for a neighbour, transfers included), over the time "
          "from the stage's first action to the end of that sum; mean over the stages";
      for (const char* split : {"forward_ms", "backward_ms", "optimizer_ms"}) o.details.erase(split);
    }
    o.checked = 1;
    if (trained) {
      add_text_details(o.details, *trained, *text, cfg);
      // From the initial weights on real text: the held-out loss must have fallen and stay finite.
      o.wrong =
          cfg.check && !(std::isfinite(trained->eval_loss) && trained->eval_loss < trained->eval_loss_initial) ? 1 : 0;
    } else {
      // Training on one fixed synthetic batch: the loss must have fallen and stay finite.
      o.wrong = cfg.check && !(std::isfinite(loss_last) && loss_last < loss_first) ? 1 : 0;
    }
    if (!cfg.check) o.wrong = -1;
    if (!transport_problem.empty()) {
      o.status = "failed";
      o.reason = transport_problem;
    }
    return o;
  };
  w.versions = Json{{"cublaslt", gpu::cublaslt_version()}};
  return compute::run_compute_workload(mpi, run.run_id, spec, run.records, run.emit, w);
}

}  // namespace scalebench
