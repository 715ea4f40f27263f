#include "workloads/train/tta_bench.hpp"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include "common/error.hpp"
#include "workloads/dataset/epoch_sharder.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/dtype_nccl.hpp"
#include "workloads/gpu/nccl_check.hpp"
#include "workloads/mllog/mllog.hpp"
#include "workloads/train/image_batches.cuh"
#include "workloads/train/model.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/quant_net.hpp"
#include "workloads/train/train_step.hpp"

namespace scalebench::train {

namespace {
double wall_ms() {
  using namespace std::chrono;
  return static_cast<double>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

double seconds_between(const gpu::Event& a, const gpu::Event& b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms / 1000.0;
}

// Mean and standard deviation of the train split's pixels in [0, 1]: the normalisation.
ImageShape shape_of(const dataset::LabelledImages& s) {
  double sum = 0, sq = 0;
  for (std::uint8_t p : s.images) {
    sum += p;
    sq += static_cast<double>(p) * p;
  }
  const double n = static_cast<double>(s.images.size()), mean = sum / n / 255;
  const double var = std::max(1e-12, sq / n / (255.0 * 255) - mean * mean);
  return ImageShape{s.rows, s.cols, kFmnistChannels, static_cast<float>(mean), static_cast<float>(1 / std::sqrt(var))};
}
}  // namespace

TtaBench::Split TtaBench::upload(const dataset::LabelledImages& s) {
  Split d;
  d.count = s.count;
  d.images = gpu::DeviceBuffer(s.images.size());
  d.labels = gpu::DeviceBuffer(s.labels.size());
  CUDA_CHECK(cudaMemcpy(d.images.get(), s.images.data(), s.images.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.labels.get(), s.labels.data(), s.labels.size(), cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before its DMA lands, and the nets' non-blocking streams
  // do not wait for the legacy stream it ran on.
  CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}

TtaBench::TtaBench(const MpiSession& mpi, const TtaConfig& cfg, const TtaRecipe& recipe, const dataset::Splits& data)
    : mpi_(mpi), cfg_(cfg), recipe_(recipe) {
  const Model m = build_model("fmnist-resnet");
  if (data.train.rows != m.layers[0].out.h || data.train.cols != m.layers[0].out.w)
    throw Error("data: images of " + std::to_string(data.train.rows) + "x" + std::to_string(data.train.cols) +
                "; fmnist-resnet takes 28x28");
  if (data.train.classes > m.classes)
    throw Error("data: " + std::to_string(data.train.classes) + " classes; fmnist-resnet has " +
                std::to_string(m.classes));
  shape_ = shape_of(data.train);
  train_ = upload(data.train);
  test_ = upload(data.test);
  classes_ = m.classes;
  if (mpi_.size() > 1) {
    ncclUniqueId id{};
    if (mpi_.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    const std::string root = mpi_.all_gather(std::string(id.internal, sizeof id.internal))[0];
    std::memcpy(id.internal, root.data(), sizeof id.internal);
    comm_.emplace(mpi_.size(), id, mpi_.rank());
  }
}

double TtaBench::evaluate(Net& net, unsigned long long* correct) {
  return evaluate(
      net.images(), net.labels(), [&] { net.forward(Pass::kInfer); }, net.logits(), net.compute_type(), correct);
}

double TtaBench::evaluate(void* images, int* labels, const std::function<void()>& forward, const void* logits,
                          DType logits_type, unsigned long long* correct) {
  const cudaStream_t s = stream_.get();
  const int ranks = mpi_.size(), n = recipe_.batch;
  const DType t = compute_dtype(recipe_.precision);
  // Each rank scores its slice of the test split; the counts are summed.
  const long long per = (test_.count + ranks - 1) / ranks, first = per * mpi_.rank();
  const long long mine = std::max(0LL, std::min<long long>(per, test_.count - first));
  CUDA_CHECK(cudaMemsetAsync(correct, 0, sizeof *correct, s));
  for (long long b = 0; b < mine; b += n) {
    const int valid = static_cast<int>(std::min<long long>(n, mine - b));
    plain_batch(reinterpret_cast<const std::uint8_t*>(test_.images.get()),
                reinterpret_cast<const std::uint8_t*>(test_.labels.get()), first + b, valid, n, shape_, images, t,
                labels, s);
    forward();
    count_correct(logits, logits_type, labels, n, classes_, correct, s);
  }
  unsigned long long hits = 0;
  CUDA_CHECK(cudaMemcpyAsync(&hits, correct, sizeof hits, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return static_cast<double>(mpi_.allreduce_sum(static_cast<long long>(hits))) / test_.count;
}

std::vector<QuantizedAccuracy> TtaBench::quantize(Net& net, unsigned long long* correct) {
  std::vector<QuantizedAccuracy> out;
  const int n = recipe_.batch;
  for (const std::string& name : cfg_.quantize) {
    // Calibration on the first training images, as they are (no crops or flips).
    auto load = [&](int k) {
      const long long first = static_cast<long long>(k) * n % train_.count;
      plain_batch(reinterpret_cast<const std::uint8_t*>(train_.images.get()),
                  reinterpret_cast<const std::uint8_t*>(train_.labels.get()), first,
                  static_cast<int>(std::min<long long>(n, train_.count - first)), n, shape_, net.images(),
                  net.compute_type(), net.labels(), stream_.get());
    };
    std::unique_ptr<QuantNet> q;
    try {
      QuantOptions o;
      o.format = name == "int8" ? gpu::QuantFormat::kInt8 : gpu::QuantFormat::kE4M3;
      o.calibration_batches = cfg_.calibration_batches;
      o.trained_convolutions = cfg_.quantize_first_conv == "auto"
                                   ? QuantOptions::trained_convolutions_by_default(o.format)
                               : cfg_.quantize_first_conv == "trained" ? 1
                                                                       : 0;
      q = std::make_unique<QuantNet>(net, o, load);
    } catch (const Error& e) {  // the trained seed's records stand; this format's says why it has none
      out.push_back(QuantizedAccuracy{name, 0, Json(), e.what()});
      continue;
    }
    const double accuracy = evaluate(
        q->images(), net.labels(), [&] { q->forward(); }, q->logits(), DType::kF32, correct);
    out.push_back(QuantizedAccuracy{name, accuracy, q->describe(), ""});
  }
  return out;
}

SeedResult TtaBench::run_seed(std::uint64_t seed) {
  const cudaStream_t s = stream_.get();
  const int ranks = mpi_.size(), n = recipe_.batch;
  const dataset::EpochSharder sharder(train_.count, ranks, seed);
  const long long steps = sharder.steps(n);
  if (steps < 1)
    throw Error("batch: " + std::to_string(n) + " per GPU is more than a GPU's shard of " +
                std::to_string(sharder.per_rank()) + " images");
  const long long total = steps * cfg_.max_epochs;
  const auto warmup = static_cast<long long>(std::llround(static_cast<double>(total) * cfg_.warmup_fraction));
  const auto peak = static_cast<float>(peak_lr());

  gpu::DeviceBuffer lr(sizeof(float)), cursor(sizeof(BatchCursor)), order(sizeof(std::int32_t) * sharder.per_rank()),
      correct(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemsetAsync(cursor.get(), 0, sizeof(BatchCursor), s));
  NetConfig nc;
  nc.precision = recipe_.precision;
  nc.batch = n;
  nc.search = recipe_.search;
  nc.lr = peak, nc.momentum = recipe_.momentum, nc.weight_decay = recipe_.weight_decay;
  nc.seed = seed;
  nc.lr_device = reinterpret_cast<const float*>(lr.get());
  nc.nesterov = true;
  nc.label_smoothing = static_cast<float>(cfg_.label_smoothing);
  Net net(build_model("fmnist-resnet"), nc, s);
  auto* cur = reinterpret_cast<BatchCursor*>(cursor.get());
  const Augment aug{cfg_.crop_pad, cfg_.flip, seed};

  // The epoch's shard and the cursor's batch and epoch (its step runs on).
  auto start_epoch = [&](int epoch) {
    const std::vector<std::int32_t> shard = sharder.shard(epoch, mpi_.rank());
    CUDA_CHECK(
        cudaMemcpyAsync(order.get(), shard.data(), shard.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, s));
    const int head[2] = {0, epoch};
    // From pageable memory the copies are staged before they return: the host arrays may go.
    CUDA_CHECK(cudaMemcpyAsync(cursor.get(), head, sizeof head, cudaMemcpyHostToDevice, s));
  };
  auto load = [&] {
    augmented_batch(reinterpret_cast<const std::uint8_t*>(train_.images.get()),
                    reinterpret_cast<const std::uint8_t*>(train_.labels.get()),
                    reinterpret_cast<const std::int32_t*>(order.get()), cur, n, shape_, aug, net.images(),
                    net.compute_type(), net.labels(), s);
  };
  auto allreduce = [&] {
    if (comm_)
      NCCL_CHECK(ncclAllReduce(net.grads(), net.grads(), static_cast<std::size_t>(net.model().param_slots),
                               gpu::nccl_type(net.compute_type()), ncclSum, comm_->get(), s));
  };
  // cuDNN's and NCCL's first calls cannot be captured: one eager forward, backward and all-reduce
  // on the first batch, without a step (only the batch norms' running statistics see it).
  start_epoch(0);
  load();
  net.forward(Pass::kTrain);
  net.backward([](int) {});
  allreduce();
  gpu::GraphExec step = capture(s, [&] {
    load();
    net.forward(Pass::kTrain);
    net.backward([](int) {});
    allreduce();
    schedule_step(cur, reinterpret_cast<float*>(lr.get()), total, warmup, peak, s);
    net.optimizer_step(static_cast<float>(ranks));
  });
  CUDA_CHECK(cudaStreamSynchronize(s));
  mpi_.barrier();

  SeedResult r;
  r.seed = seed;
  mllog::Writer log;
  log.add("seed", static_cast<long long>(seed), wall_ms());
  log.add("global_batch_size", global_batch(), wall_ms());
  log.add("opt_base_learning_rate", peak, wall_ms());
  log.add("run_start", Json(), wall_ms());
  gpu::Event run_start, last_eval;
  std::vector<gpu::Event> epoch_start(static_cast<std::size_t>(cfg_.max_epochs)),
      epoch_end(static_cast<std::size_t>(cfg_.max_epochs));
  CUDA_CHECK(cudaEventRecord(run_start.get(), s));
  for (int epoch = 1; epoch <= cfg_.max_epochs && !r.reached; ++epoch) {
    const auto e = static_cast<std::size_t>(epoch - 1);
    if (epoch > 1) start_epoch(epoch - 1);
    log.add("epoch_start", Json(), wall_ms(), {{"epoch_num", epoch}});
    CUDA_CHECK(cudaEventRecord(epoch_start[e].get(), s));
    for (long long k = 0; k < steps; ++k) CUDA_CHECK(cudaGraphLaunch(step.get(), s));
    CUDA_CHECK(cudaEventRecord(epoch_end[e].get(), s));
    r.epochs = epoch;
    if (epoch % cfg_.eval_every != 0 && epoch != cfg_.max_epochs) continue;
    r.final_accuracy = evaluate(net, reinterpret_cast<unsigned long long*>(correct.get()));
    CUDA_CHECK(cudaEventRecord(last_eval.get(), s));
    log.add("eval_accuracy", r.final_accuracy, wall_ms(), {{"epoch_num", epoch}});
    r.eval_epochs.push_back(epoch);
    r.accuracies.push_back(r.final_accuracy);
    r.reached = r.final_accuracy >= cfg_.target_accuracy;
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  log.add("run_stop", Json(), wall_ms(), {{"status", r.reached ? "success" : "aborted"}});
  for (int e = 0; e < r.epochs; ++e)
    r.train_s += seconds_between(epoch_start[static_cast<std::size_t>(e)], epoch_end[static_cast<std::size_t>(e)]);
  r.total_s = seconds_between(run_start, last_eval);
  r.quantized = quantize(net, reinterpret_cast<unsigned long long*>(correct.get()));
  r.images_per_s = static_cast<double>(steps) * r.epochs * global_batch() / r.train_s;
  r.mllog = log.lines();
  return r;
}

}  // namespace scalebench::train
