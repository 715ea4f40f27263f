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
#include "workloads/gpt/checkpoint.hpp"
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

// A gpt run on one rank: what it builds on the first measurement, once the rank's GPU is current
// (the corpus, the stream, the communicators, the model), and the measurement in phases.
class GptRun {
 public:
  GptRun(const RunRequest& run, const gpt::Config& cfg, const compute::TimingConfig& timing)
      : run_(run),
        mpi_(*run.mpi),
        cfg_(cfg),
        at_(gpt::Placement::of(mpi_.rank(), cfg.dp, cfg.tp, cfg.pp)),
        timing_(timing),
        shape_(cfg.shape()),
        tokens_per_step_(static_cast<double>(cfg.micro_batch) * cfg.seq * cfg.grad_accum * cfg.dp),
        tokens_per_gpu_(tokens_per_step_ / mpi_.size()) {}

  // Tokens of one step on all ranks, and the share each GPU is credited with (a tp group and a
  // pipeline's stages work on the same tokens), so that the GPUs' figures add up to the total.
  double tokens_per_gpu() const { return tokens_per_gpu_; }

  // Set up (once), the transports NCCL connected with, the steps (trained on text or timed on
  // the synthetic batch), the figures, the check.
  compute::RankOutcome measure(const compute::DeviceInfo& gpu) {
    set_up_communication();
    std::map<std::string, int> transports;
    std::string transport_problem;
    if (comms_->log) {
      transports = comms_->log->transports();
      transport_problem =
          transport_mismatch(transports, run_.spec.value("env", Json::object()), run_.spec.value("transport", ""));
    }
    set_up_model();
    std::optional<gpt::TextTraining> trained;
    const gpt::StepTiming t = run_steps(trained);
    // The loss of the whole batch: the mean over the ranks that hold it, the last pipeline stage's
    // dp x tp ranks (a tp group's ranks agree; the other stages hold none).
    const double holders = static_cast<double>(cfg_.dp) * cfg_.tp;
    const double loss_first = trained ? trained->curve.front().train_loss : mpi_.allreduce_sum(t.loss_first) / holders;
    const double loss_last = trained ? trained->train_loss : mpi_.allreduce_sum(t.loss_last) / holders;

    compute::RankOutcome o;
    o.seconds = t.step_seconds;
    o.details = step_details(t, gpu, loss_first, loss_last);
    if (comms_->log) o.details["nccl_transports"] = describe_transports(transports);
    o.details["pp"] = cfg_.pp;
    if (cfg_.pp > 1) add_pipeline_details(o.details, t);
    o.checked = 1;
    if (trained) {
      add_text_details(o.details, *trained, *text_, cfg_);
      if (!cfg_.save.empty() && mpi_.rank() == 0) save_checkpoint(o, *trained);
      // From the initial weights on real text: the held-out loss must have fallen and stay finite.
      o.wrong =
          cfg_.check && !(std::isfinite(trained->eval_loss) && trained->eval_loss < trained->eval_loss_initial) ? 1 : 0;
    } else {
      // Training on one fixed synthetic batch: the loss must have fallen and stay finite.
      o.wrong = cfg_.check && !(std::isfinite(loss_last) && loss_last < loss_first) ? 1 : 0;
    }
    if (!cfg_.check) o.wrong = -1;
    if (!transport_problem.empty()) {
      o.status = "failed";
      o.reason = transport_problem;
    }
    return o;
  }

 private:
  // `save`: the trained fp32 master weights as a checkpoint (every rank holds the whole model: the
  // config refuses tp, pp and ZeRO with it), in parameter_layout's order; a failure to write fails
  // this rank's record, naming the file.
  void save_checkpoint(compute::RankOutcome& o, const gpt::TextTraining& trained) {
    try {
      gpt::Checkpoint c;
      c.shape = shape_;
      c.seq = cfg_.seq;
      c.values = gpt::in_layout_order(model_->master(), model_->layout(), gpt::parameter_layout(shape_, cfg_.seq));
      c.trained = Json{{"data", cfg_.data},
                       {"train_steps", cfg_.train_steps},
                       {"eval_loss_final", trained.eval_loss},
                       {"tokenizer", "bytes"},
                       {"seed", cfg_.seed}};
      gpt::write_checkpoint(cfg_.save, c);
      o.details["checkpoint"] = cfg_.save;
    } catch (const std::exception& e) {
      o.status = "failed";
      o.reason = std::string("save: ") + e.what();
    }
  }

  // The corpus (with `data`), the stream and the communicators, before the model.
  void set_up_communication() {
    if (cfg_.text() && !text_) text_ = load_text(mpi_, cfg_, at_);
    if (!stream_) stream_ = std::make_unique<gpu::Stream>();
    if (!comms_) comms_ = std::make_unique<Comms>(mpi_, at_);
  }

  gpt::Parallel parallel() const {
    gpt::Parallel par;
    par.at = at_;
    par.zero = cfg_.zero;
    par.sequence_parallel = cfg_.sequence_parallel;
    par.overlap = cfg_.overlap;
    par.bucket_mb = cfg_.bucket_mb;
    par.tp_reduce = comms_->tp_reduce.get();
    par.dp_comm = comms_->dp ? comms_->dp->get() : nullptr;
    par.comm_stream = comms_->comm_stream ? comms_->comm_stream->get() : nullptr;
    par.pipe = comms_->pipe.get();
    par.virtual_stages = cfg_.virtual_stages;
    par.micro_batches = cfg_.grad_accum;
    return par;
  }

  void set_up_model() {
    if (model_) return;
    model_ = std::make_unique<gpt::GptModel>(shape_, cfg_.micro_batch, cfg_.seq, cfg_.seed, stream_->get(),
                                             gpt::attention_from_name(cfg_.attention), parallel(), cfg_.recompute,
                                             gpt::Precision{cfg_.fp8(), {cfg_.fp8_history, cfg_.fp8_margin}});
    // Rank r of dp takes rows r x B .. of one token stream: dp = k gives the batch of dp = 1
    // with k x micro_batch.
    model_->synthetic_tokens(cfg_.seed ^ 0x5eedull, static_cast<long long>(at_.dp_rank) * cfg_.micro_batch);
  }

  // With `data`, trained on text to the end of its schedule (`trained`: the curve); else timed
  // on the synthetic batch.
  gpt::StepTiming run_steps(std::optional<gpt::TextTraining>& trained) {
    const gpt::Hyper h{cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps, cfg_.weight_decay, cfg_.clip};
    if (!text_)
      return gpt::time_steps(*model_, stream_->get(), cfg_.grad_accum, h, std::max(timing_.warmup, 1),
                             std::max(timing_.repetitions, 1), cfg_.steps, cfg_.cuda_graph);
    const gpt::RankMean mean = [&](double v) { return mpi_.allreduce_sum(v) / mpi_.size(); };
    gpt::OnEvaluation progress;
    if (!run_.records && mpi_.rank() == 0) progress = print_evaluation;
    const gpt::TextSchedule plan{cfg_.grad_accum, cfg_.train_steps, cfg_.eval_every, cfg_.lr_warmup, h};
    trained = gpt::train_on_text(*model_, stream_->get(), *text_, plan, mean, progress);
    gpt::StepTiming t;
    t.step_seconds = trained->step_seconds;
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    t.peak_bytes = total_b - free_b;
    return t;
  }

  // The step's figures at its median time: tokens/s, MFU against the GPU's dense bf16 peak, the
  // split of the step, memory, the loss, the run's shape.
  Json step_details(const gpt::StepTiming& t, const compute::DeviceInfo& gpu, double loss_first,
                    double loss_last) const {
    std::vector<double> sorted = t.step_seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    double peak = gpt::dense_bf16_peak(gpu.cc_major, gpu.cc_minor);
    if (peak == 0)
      peak = compute::peak_ops_per_second(compute::Precision::kBf16, gpu.cc_major, gpu.cc_minor, gpu.sm_count,
                                          gpu.max_clock_mhz);
    const double fpt = gpt::flops_per_token(shape_, cfg_.seq);
    return Json{{"tokens_per_s", tokens_per_step_ / median},
                {"tokens_per_s_per_gpu", tokens_per_gpu_ / median},
                {"mfu_pct", gpt::mfu_percent(tokens_per_gpu_ / median, fpt, peak)},
                {"flops_per_token", fpt},
                {"flop_formula",
                 "6 x parameters a token multiplies with (no position embedding; no input embedding when the "
                 "head is untied) + 12 x layers x width x seq"},
                {"peak_tflops", peak / 1e12},
                {"parameters", gpt::parameter_count(shape_, cfg_.seq)},
                {"dp", cfg_.dp},
                {"tp", cfg_.tp},
                {"sequence_parallel", cfg_.sequence_parallel},
                {"zero", cfg_.zero},
                {"overlap", cfg_.overlap},
                {"cuda_graph", cfg_.cuda_graph},
                {"step_ms", median * 1e3},
                {"forward_ms", t.forward_ms},
                {"backward_ms", t.backward_ms},
                {"optimizer_ms", t.optimizer_ms},
                {"exposed_communication_ms", t.exposed_communication_ms},
                {"model_bytes", model_->device_bytes()},
                {"optimizer_state_bytes", model_->optimizer_state_bytes()},
                {"device_memory_used_bytes", t.peak_bytes},
                {"loss_first", loss_first},
                {"loss_last", loss_last},
                {"attention", cfg_.attention},
                {"data", cfg_.text() ? text_->corpus().path : "synthetic"}};
  }

  // A pipeline's bubble, measured and in theory, and how its blocks were split.
  void add_pipeline_details(Json& d, const gpt::StepTiming& t) const {
    // Every rank's stage waits for its neighbours (pipe_wait in step_core.cpp): the step's
    // bubble is their mean, set beside the schedule's theory for equal stages.
    const double mine = t.bubble.fraction();
    std::vector<double> per_stage(static_cast<std::size_t>(cfg_.pp), 0.0);
    const std::vector<std::string> all = mpi_.all_gather(std::to_string(mine));
    for (std::size_t r = 0; r < all.size(); ++r)
      per_stage[static_cast<std::size_t>(gpt::Placement::of(static_cast<int>(r), cfg_.dp, cfg_.tp, cfg_.pp).pp_rank)] +=
          std::stod(all[r]) / (cfg_.dp * cfg_.tp);
    double mean = 0;
    for (double x : per_stage) mean += x / cfg_.pp;
    const int v = cfg_.virtual_stages;
    d["pp_schedule"] = v > 1 ? "interleaved-1f1b" : "1f1b";
    d["pp_virtual_stages"] = v;
    d["pp_bubble_measured"] = mean;
    d["pp_bubble_measured_per_stage"] = per_stage;
    d["pp_bubble_theory"] = gpt::bubble_theory(cfg_.pp, cfg_.grad_accum, v);
    d["pp_bubble_theory_formula"] =
        v > 1 ? "(pp-1)/(virtual_stages x grad_accum+pp-1) of the step: Narayanan et al. 2021's (1/v)(pp-1)/m of "
                "the ideal time, as a share of the step"
              : "(pp-1)/(grad_accum+pp-1) of the step";
    // The paper's own figure, the bubble over the bubble-free time: (1/v)(pp-1)/m.
    d["pp_bubble_theory_over_ideal"] = gpt::bubble_over_ideal(cfg_.pp, cfg_.grad_accum, v);
    // The blocks each (virtual) stage held, in virtual-stage order (chunk c of rank r is
    // c x pp + r): the split balances the ranks' sums, the head's cost counted.
    const double head = gpt::head_cost_in_blocks(shape_, cfg_.seq);
    Json blocks = Json::array();
    for (const gpt::StageBlocks& b : gpt::virtual_stage_blocks(shape_.layers, cfg_.pp, v, head))
      blocks.push_back(b.blocks());
    d["pp_stage_blocks"] = blocks;
    d["pp_head_cost_blocks"] = head;
    d["pp_bubble_method"] =
        "per stage, in one extra step: CUDA-event time inside the send/recv groups, the tied embedding's exchange "
        "and the gradient norm's sum over the stages (waiting for a neighbour, transfers included), over the time "
        "from the stage's first action to the end of that sum; mean over the stages";
    for (const char* split : {"forward_ms", "backward_ms", "optimizer_ms"}) d.erase(split);
  }

  const RunRequest& run_;
  const MpiSession& mpi_;
  const gpt::Config& cfg_;
  const gpt::Placement at_;
  const compute::TimingConfig timing_;
  const gpt::ModelShape shape_;
  const double tokens_per_step_, tokens_per_gpu_;
  std::unique_ptr<gpt::TextBatches> text_;
  std::unique_ptr<gpu::Stream> stream_;
  std::unique_ptr<Comms> comms_;
  std::unique_ptr<gpt::GptModel> model_;
};

}  // namespace

int run_gpt_workload(const RunRequest& run) {
  const Json params = with_defaults("gpt", run.spec.at("params"));  // the registry's defaults
  const gpt::Config cfg = gpt::Config::from_params(params).resolved(run.mpi->size(), run.mpi->local_size());
  check_tp_inside_nodes(*run.mpi, cfg.tp);
  compute::TimingConfig timing = compute::TimingConfig::from_params(params, run.spec.value("repetitions", 5));
  timing.iters = cfg.steps;

  GptRun gpt_run(run, cfg, timing);
  compute::ComputeWorkload w;
  w.plan = [&](const Json&) { return std::vector<Json>{cfg.to_json()}; };
  w.throughput = [&](const Json&, const Json&) { return compute::Throughput{gpt_run.tokens_per_gpu(), 1, "tokens/s"}; };
  w.measure = [&](const Json&, const Json&, const compute::DeviceInfo& gpu) { return gpt_run.measure(gpu); };
  w.versions = Json{{"cublaslt", gpu::cublaslt_version()}};
  return compute::run_compute_workload(run, w);
}

}  // namespace scalebench
