#include "workloads/train/train_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "analysis/stats.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/gpu/nccl_check.hpp"
#include "workloads/train/copy_engine_allreduce.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/step_timeline.hpp"
#include "workloads/train/symmetric_gradients.hpp"
#include "workloads/train/train_checks.hpp"
#include "workloads/train/train_dump.hpp"
#include "workloads/train/train_step.hpp"

namespace scalebench::train {

namespace {
using compute::Precision;

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// The rank that could not build its net decides for all: no rank may start an all-reduce that
// another will never join.
std::optional<compute::RankOutcome> agree(const MpiSession& mpi, const compute::RankOutcome& mine) {
  const std::vector<std::string> all = mpi.all_gather(Json{{"status", mine.status}, {"reason", mine.reason}}.dump());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const Json j = Json::parse(all[r]);
    if (j.at("status").get<std::string>() == "ok") continue;
    compute::RankOutcome o;
    o.status = j.at("status").get<std::string>();
    o.reason =
        (all.size() > 1 ? "rank " + std::to_string(r) + ": " : std::string()) + j.at("reason").get<std::string>();
    return o;
  }
  return std::nullopt;
}

// Builds the net on this rank: a batch that does not fit is a skipped point, any other error a
// failed one (what the ranks then agree on).
compute::RankOutcome build_net(const Model& model, const NetConfig& nc, cudaStream_t s, std::unique_ptr<Net>& net) {
  compute::RankOutcome out;
  try {
    net = std::make_unique<Net>(model, nc, s);
  } catch (const OutOfMemory& e) {
    out.status = "skipped";
    out.reason = std::string("the batch does not fit: ") + e.what();
  } catch (const TooLarge& e) {
    out.status = "skipped";
    out.reason = std::string("the batch is too large: ") + e.what();
  } catch (const std::exception& e) {
    out.status = "failed";
    out.reason = e.what();
  }
  return out;
}

std::size_t memory_in_use() {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return total_b - free_b;
}
}  // namespace

namespace {
int highest_priority() {
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}
}  // namespace

TrainBench::TrainBench(const MpiSession& mpi, CommConfig comm, Json env, std::string transport)
    : mpi_(mpi),
      comm_stream_(highest_priority()),
      env_(std::move(env)),
      transport_(std::move(transport)),
      comm_config_(comm) {
  if (mpi_.size() > 1) nccl_log_.emplace();
}

ncclComm_t TrainBench::comm() {
  if (!comm_) {
    ncclUniqueId id{};
    if (mpi_.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    // all_gather moves bytes as they are: rank 0's id reaches every rank unchanged.
    const std::string root = mpi_.all_gather(std::string(id.internal, sizeof id.internal))[0];
    std::memcpy(id.internal, root.data(), sizeof id.internal);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    if (comm_config_.ctas > 0) config.maxCTAs = comm_config_.ctas;
    if (comm_config_.cga > 0) config.cgaClusterSize = comm_config_.cga;
    config.CTAPolicy = comm_config_.cta_efficiency ? NCCL_CTA_POLICY_EFFICIENCY : NCCL_CTA_POLICY_DEFAULT;
    comm_.emplace(mpi_.size(), id, mpi_.rank(), config);
  }
  return comm_->get();
}

compute::RankOutcome TrainBench::measure(const TrainPoint& point, const Config& cfg,
                                         const compute::TimingConfig& timing, const compute::DeviceInfo& gpu) {
  compute::RankOutcome out;
  if (std::string why = compute::unsupported_on(point.precision, gpu.cc_major, gpu.cc_minor); !why.empty()) {
    out.status = "skipped";
    out.reason = why;
    return out;
  }
  return cfg.training ? train(point, cfg, timing) : infer(point, cfg, timing);
}

namespace {
// The net of a train point on this rank.
NetConfig net_config(const TrainPoint& point, const Config& cfg, int rank) {
  NetConfig nc;
  nc.precision = point.precision;
  nc.batch = point.batch;
  nc.search = cfg.search;
  nc.fuse = cfg.fuse;
  nc.conv_api = cfg.conv_api;
  nc.depthwise = cfg.depthwise;
  nc.pointwise = cfg.pointwise;
  nc.lr = cfg.lr, nc.momentum = cfg.momentum, nc.weight_decay = cfg.weight_decay;
  nc.data_seed = 1000 + static_cast<std::uint64_t>(rank);
  return nc;
}

// The persistent batch norms that would start while an all-reduce holds SMs, in our kernels.
Json unfuse_beside_allreduce(Net& net, const Model& model, const std::vector<int>& launch_at, const Config& cfg,
                             bool multi, const std::function<bool(int)>& persistent_bn) {
  Json unfused = Json::array();
  if (multi && cfg.overlap)
    for (int layer : batch_norms_beside(model, launch_at, cfg.unfuse_after_launch, persistent_bn)) {
      net.unfuse(layer, "beside an all-reduce (unfuse_after_launch)");
      unfused.push_back(model.layers[static_cast<std::size_t>(layer)].name);
    }
  return unfused;
}

// How the step was set up: buckets, graph, overlap, communicator and all-reduce choices.
void describe_setup(Json& details, const Config& cfg, const CommConfig& comm_config, const Model& model,
                    const std::vector<Bucket>& buckets, std::size_t eb, const Json& unfused,
                    const SymmetricGradients& symmetric, const CopyEngineAllReduce& copy_engine, bool multi) {
  details["buckets"] = buckets.size();
  details["bucket_mb"] = cfg.bucket_bytes / (1024.0 * 1024.0);
  details["bucket_policy"] = name(cfg.bucket_policy);
  details["gradient_bytes"] = static_cast<double>(model.param_slots) * static_cast<double>(eb);
  details["graph"] = cfg.graph;
  details["overlap"] = cfg.overlap;
  details["bucket_launch"] = name(cfg.launch);
  details["unfuse_after_launch"] = cfg.unfuse_after_launch;
  details["unfused_beside_allreduce"] = unfused;
  details["comm_ctas"] = comm_config.ctas;
  details["cta_policy"] = comm_config.cta_efficiency ? "efficiency" : "default";
  details["comm_cga"] = comm_config.cga;
  details["symmetric"] = symmetric.buffer() != nullptr;
  if (!symmetric.buffer()) details["symmetric_off"] = symmetric.off();
  if (multi) details["allreduce"] = copy_engine.on() ? "copy_engine" : "nccl";
  if (multi && cfg.copy_engine && !copy_engine.on()) details["allreduce_off"] = copy_engine.off();
}

}  // namespace

compute::RankOutcome TrainBench::train(const TrainPoint& point, const Config& cfg,
                                       const compute::TimingConfig& timing) {
  const bool multi = mpi_.size() > 1;
  if (multi && !cfg.dump.empty()) {  // every rank sees it: none waits for another
    compute::RankOutcome refused;
    refused.status = "failed";
    refused.reason = "dump: one GPU only (each rank trains its own synthetic batch)";
    return refused;
  }
  if (multi) comm();  // every rank, before any can fail alone
  // Which transports NCCL connected this rank with (it connects at init): a pcie variant that
  // really ran over NVLink fails its points instead of standing as a PCIe figure.
  std::map<std::string, int> transports;
  std::string transport_problem;
  if (multi && nccl_log_) {
    transports = nccl_log_->transports();
    transport_problem = transport_mismatch(transports, env_, transport_);
  }
  cudaStream_t s = stream_.get(), cs = comm_stream_.get();
  const Model model = build_model(cfg.model, cfg.image);
  NetConfig nc = net_config(point, cfg, mpi_.rank());

  const std::size_t eb = static_cast<std::size_t>(dtype_bytes(compute_dtype(nc.precision)));  // the net's compute type
  const std::vector<Bucket> buckets = make_buckets(model, cfg.bucket_bytes, static_cast<int>(eb), cfg.bucket_policy);
  // Declared before the net, which uses the buffer of one of them.
  CopyEngineAllReduce copy_engine(mpi_, cfg.copy_engine && multi ? comm() : nullptr, model.param_slots,
                                  static_cast<int>(eb), buckets,
                                  !cfg.copy_engine ? "allreduce: nccl"
                                  : !multi         ? "one rank"
                                                   : "");
  const SymmetricGradients symmetric(mpi_, cfg.symmetric && multi && !copy_engine.on() ? comm() : nullptr,
                                     static_cast<std::size_t>(model.param_slots) * eb,
                                     !cfg.symmetric     ? "symmetric: false"
                                     : !multi           ? "one rank"
                                     : copy_engine.on() ? "allreduce: copy_engine"
                                                        : "");
  nc.grad_buffer = copy_engine.on() ? copy_engine.buffer() : symmetric.buffer();
  std::unique_ptr<Net> net;
  compute::RankOutcome out = build_net(model, nc, s, net);
  if (auto problem = agree(mpi_, out)) return *problem;

  const auto persistent_bn = [&](int layer) { return net->needs_every_sm(layer); };
  const std::vector<int> launch_at = launch_layers(model, buckets, cfg.launch, persistent_bn);
  const Json unfused = unfuse_beside_allreduce(*net, model, launch_at, cfg, multi, persistent_bn);
  StepRunner run(
      mpi_, *net, cfg, buckets, launch_at, copy_engine, [this] { return comm(); }, s, cs, eb);
  StepMarks marks(multi && cfg.timeline ? buckets.size() : 0);

  Json details = net->describe();
  // The first step runs eagerly: its loss is the start of the convergence check, and NCCL
  // connects before any capture.
  std::optional<DumpStart> dump_from;
  std::vector<float> grads0;
  if (!cfg.dump.empty()) {
    dump_from = dump_start(*net);
    grads0 = dump_gradients(*net, true);
  }
  run.step(multi);
  const double loss_first = net->read_loss();
  if (dump_from) {  // more eager steps on the same batch, each loss read (the timed steps read none)
    const std::vector<float> grads1 = dump_gradients(*net, false);
    std::vector<double> losses{loss_first};
    for (int k = 1; k < cfg.dump_steps; ++k) {
      run.step(false);
      losses.push_back(net->read_loss());
    }
    // A folder per point: a list of precisions or batches writes each.
    const std::string folder = cfg.dump + "/" + compute::name(point.precision) + "-b" + std::to_string(point.batch);
    write_dump(folder, *net, *dump_from, losses, grads0, grads1);
    details["dump"] = Json{{"folder", folder}, {"losses", losses}};
  }
  StepGraphs graphs = capture_steps(run, s, cfg.graph, multi);
  const auto step_with = [&] { run.step(true); };
  const auto step_without = [&] { run.step(false); };
  std::optional<Json> allreduce_check;
  if (multi && cfg.check) allreduce_check = check_allreduce(mpi_, *net, model, run, graphs, s);
  // The step as the run measures it (with all-reduce on several GPUs), then the same step without
  // communication: the difference is the all-reduce time the backward pass did not hide.
  out.seconds = multi ? timed_steps(mpi_, s, timing, graphs.comm, step_with)
                      : timed_steps(mpi_, s, timing, graphs.local, step_without);
  // Every rank's weights must be bit for bit the same after the all-reduced steps (before the
  // steps without all-reduce below, which train each rank on its own gradients).
  std::optional<bool> ranks_agree;
  if (multi && cfg.check) ranks_agree = weights_agree(mpi_, *net, model, s);
  const double step_s = median_of(out.seconds);
  details["step_ms"] = step_s * 1e3;
  describe_setup(details, cfg, comm_config_, model, buckets, eb, unfused, symmetric, copy_engine, multi);
  if (multi) {
    const double local_s = median_of(timed_steps(mpi_, s, timing, graphs.local, step_without));
    const double reduce_s = median_of(timed_steps(mpi_, s, timing, graphs.reduce, [&] { run.allreduce_only(); }));
    details["step_ms_without_allreduce"] = local_s * 1e3;
    details["exposed_allreduce_ms"] = (step_s - local_s) * 1e3;
    details["allreduce_alone_ms"] = reduce_s * 1e3;
    if (reduce_s > 0)
      details["allreduce_hidden_pct"] = 100.0 * std::clamp(1.0 - (step_s - local_s) / reduce_s, 0.0, 1.0);
    if (cfg.timeline) add_timeline(details, mpi_, run, *net, model, buckets, eb, marks, cfg.graph, s);
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  details["memory_used_bytes"] = memory_in_use();
  details["flops_per_image"] = 3 * forward_flops(model);
  details["profile"] = net->time_by_op();

  if (cfg.check) record_checks(out, details, *net, loss_first, allreduce_check, ranks_agree, s);
  if (multi && nccl_log_) details["nccl_transports"] = describe_transports(transports);
  out.details = details;
  if (!transport_problem.empty()) {
    out.status = "failed";
    out.reason = transport_problem;
  }
  return out;
}

compute::RankOutcome TrainBench::infer(const TrainPoint& point, const Config& cfg,
                                       const compute::TimingConfig& timing) {
  cudaStream_t s = stream_.get();
  const Model model = build_model(cfg.model, cfg.image);
  NetConfig nc;
  nc.precision = point.precision;
  nc.batch = point.batch;
  nc.training = false;
  nc.search = cfg.search;
  nc.conv_api = cfg.conv_api;
  nc.depthwise = cfg.depthwise;
  nc.pointwise = cfg.pointwise;
  nc.data_seed = 1000 + static_cast<std::uint64_t>(mpi_.rank());
  std::unique_ptr<Net> net;
  compute::RankOutcome out = build_net(model, nc, s, net);
  if (auto problem = agree(mpi_, out)) return *problem;
  Json details = net->describe();
  // Batch statistics of the synthetic batch become the running ones inference normalises with.
  net->forward(Pass::kCalibrate);
  std::optional<gpu::GraphExec> g;
  if (cfg.graph) g.emplace(capture(s, [&] { net->forward(Pass::kInfer); }));
  auto once = [&](cudaStream_t st) {
    if (g)
      CUDA_CHECK(cudaGraphLaunch(g->get(), st));
    else
      net->forward(Pass::kInfer);
  };
  for (int i = 0; i < timing.warmup; ++i) once(s);
  // Each forward pass bracketed by its own events: the latency distribution of single batches.
  const int count = std::clamp(timing.repetitions * std::max(timing.iters, 1), 3, 2000);
  std::vector<gpu::Event> marks(static_cast<std::size_t>(count) + 1);
  CUDA_CHECK(cudaEventRecord(marks[0].get(), s));
  for (int i = 0; i < count; ++i) {
    once(s);
    CUDA_CHECK(cudaEventRecord(marks[static_cast<std::size_t>(i) + 1].get(), s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < count; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, marks[static_cast<std::size_t>(i)].get(),
                                    marks[static_cast<std::size_t>(i) + 1].get()));
    out.seconds.push_back(ms * 1e-3);
  }
  details["latency_ms"] = Json{{"p50", percentile(out.seconds, 0.5) * 1e3},
                               {"p90", percentile(out.seconds, 0.9) * 1e3},
                               {"p99", percentile(out.seconds, 0.99) * 1e3}};
  details["memory_used_bytes"] = memory_in_use();
  details["flops_per_image"] = forward_flops(model, false);  // without an auxiliary head
  details["graph"] = cfg.graph;

  // Reduced precisions against the same net in fp32 (no TF32): same weights, same images, same
  // calibration. Errors compound over the layers, so the bound is on the network's logits:
  // |got - ref| <= tol x rms(ref logits).
  if (cfg.check && point.precision != Precision::kFp32) {
    const long long n = static_cast<long long>(point.batch) * model.classes;
    std::vector<float> got(static_cast<std::size_t>(n)), ref(static_cast<std::size_t>(n));
    {
      gpu::DeviceBuffer f(static_cast<std::size_t>(n) * 4);
      std::vector<unsigned short> raw;
      if (net->compute_type() == DType::kF32) {
        CUDA_CHECK(cudaMemcpy(got.data(), net->logits(), f.bytes(), cudaMemcpyDeviceToHost));
      } else {
        raw.resize(static_cast<std::size_t>(n));
        CUDA_CHECK(cudaMemcpy(raw.data(), net->logits(), raw.size() * 2, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < raw.size(); ++i)
          got[i] = net->compute_type() == DType::kBf16 ? gpu::bf16_to_float(raw[i]) : gpu::half_to_float(raw[i]);
      }
    }
    try {
      NetConfig rc = nc;
      rc.precision = Precision::kFp32;
      rc.search = false;
      Net refnet(model, rc, s);
      refnet.forward(Pass::kCalibrate);
      refnet.forward(Pass::kInfer);
      CUDA_CHECK(cudaMemcpyAsync(ref.data(), refnet.logits(), ref.size() * 4, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      double rms = 0;
      for (float r : ref) rms += static_cast<double>(r) * r;
      rms = std::sqrt(rms / static_cast<double>(ref.size()));
      // A random-weight ResNet amplifies rounding from layer to layer: on the GPU machine fp16
      // logits were within 0.12 x rms of fp32's and bf16's within 0.53 x rms (docs/train.md); a
      // broken layer is off by the whole rms or more.
      const double tol = point.precision == Precision::kBf16 ? 1.0 : 0.25;
      long long wrong = 0;
      double worst = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
        worst = std::isfinite(err) ? std::max(worst, err / std::max(rms, 1e-30)) : INFINITY;
        if (!(err <= tol * rms)) ++wrong;
      }
      out.wrong = wrong;
      out.checked = static_cast<long long>(ref.size());
      details["check"] = Json{{"reference", "fp32 net, same weights and images"},
                              {"tolerance_x_rms", tol},
                              {"max_error_x_rms", std::isfinite(worst) ? Json(worst) : Json("inf")},
                              {"rms_logit", rms}};
    } catch (const OutOfMemory& e) {
      details["check"] = std::string("not checked: the fp32 reference does not fit beside the net: ") + e.what();
    }
  }
  out.details = details;
  return out;
}

}  // namespace scalebench::train
