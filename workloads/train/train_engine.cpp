#include "workloads/train/train_engine.hpp"

#include <chrono>
#include <string>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/graph_capture.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/infer/batch_buckets.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/quant_net.hpp"
#include "workloads/train/train_kernels.cuh"

namespace scalebench::train {

namespace {
// The batch whose statistics every net normalises with: batch norm's running statistics are taken
// once, from this many synthetic images, and copied into every net (a batch of 1 has too few).
constexpr int kCalibrationBatch = 64;
}  // namespace

TrainEngine::TrainEngine(const infer::EngineRequest& cfg)
    : req_(cfg), precision_(compute::parse_precision(cfg.precision)), model_(build_model(cfg.model, cfg.image)) {
  if (cfg.batch_sizes.empty() || cfg.batch_sizes.front() < 1) throw Error("the engine needs batch sizes of 1 or more");
  for (std::size_t i = 1; i < cfg.batch_sizes.size(); ++i)
    if (cfg.batch_sizes[i] <= cfg.batch_sizes[i - 1]) throw Error("the engine's batch sizes must be ascending");
  if (cfg.streams < 1) throw Error("streams must be at least 1");
  if (cfg.pool_samples < 1) throw Error("the sample pool needs at least one sample");
  const auto t0 = std::chrono::steady_clock::now();
  CUDA_CHECK(cudaGetDevice(&device_));
  quantized_ = precision_ == compute::Precision::kInt8 || precision_ == compute::Precision::kFp8E4M3;
  fused_ = !quantized_ && cfg.conv_api == "fused";
  if (quantized_ || fused_) quant_plans_ = std::make_shared<gpu::QuantPlanCache>();
  const compute::Precision net_precision = quantized_ ? compute::Precision::kFp16 : precision_;
  const DType ct = compute_dtype(net_precision);
  const long long image_elements = model_.layers[0].out.elements();
  image_bytes_ = static_cast<std::size_t>(image_elements) * static_cast<std::size_t>(dtype_bytes(ct));
  for (int k = 0; k < cfg.streams; ++k) lanes_.push_back(std::make_unique<Lane>());
  cudaStream_t s0 = lanes_[0]->stream.get();
  pool_ = gpu::DeviceBuffer(image_bytes_ * cfg.pool_samples);
  fill_normal(pool_.get(), ct, image_elements * static_cast<long long>(cfg.pool_samples), 0.0f, 1.0f,
              cfg.seed * 7919 + 5, s0);

  NetConfig nc;
  nc.precision = net_precision;
  nc.training = false;
  nc.search = cfg.search;
  nc.conv_api = fused_ ? "best" : cfg.conv_api;  // a fused engine's nets only hold the weights
  nc.seed = cfg.seed;
  nc.data_seed = cfg.seed + 1000;
  NetConfig calibration = nc;
  calibration.batch = kCalibrationBatch;
  calibration.search = false;  // its one pass is not timed
  auto reference = std::make_unique<Net>(model_, calibration, s0);
  reference->forward(Pass::kCalibrate);
  CUDA_CHECK(cudaStreamSynchronize(s0));

  // A stream runs one batch at a time, so its nets keep their outputs in its largest one's (built
  // first): a stream needs the memory of one batch of max_batch, not of every batch size's.
  for (auto& lane : lanes_) {
    for (auto batch = cfg.batch_sizes.rbegin(); batch != cfg.batch_sizes.rend(); ++batch)
      add_bucket(*lane, *batch, *reference, nc);
    CUDA_CHECK(cudaStreamSynchronize(lane->stream.get()));
  }
  const Bucket& largest = lanes_[0]->buckets.front();
  net_description_ = largest.qnet ? largest.qnet->describe() : largest.net->describe();
  if (largest.qnet) net_description_["profile"] = largest.qnet->profile(5);  // where a batch's time goes
  device_bytes_ = pool_.bytes();
  for (const auto& lane : lanes_)
    for (const Bucket& b : lane->buckets) device_bytes_ += b.qnet ? b.qnet->device_bytes() : b.net->bytes_allocated();
  build_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void TrainEngine::add_bucket(Lane& lane, int batch, const Net& reference, const NetConfig& config) {
  cudaStream_t s = lane.stream.get();
  Bucket b;
  b.batch = batch;
  NetConfig nc = config;
  nc.batch = batch;
  const bool graphs = quantized_ || fused_;  // the QuantNet's fused graphs run, not the net's layers
  nc.outputs_of = graphs || lane.buckets.empty() ? nullptr : lane.buckets.front().net.get();
  if (graphs) nc.search = false;  // only calibrates: its convolutions are not the ones timed
  auto net = std::make_unique<Net>(model_, nc, s);
  net->copy_parameters_from(reference);
  if (graphs) {
    // The first stream's largest net calibrates on the pool (as much of it as max_batch batches
    // cover, at most 1,024 images); every other takes its scales.
    QuantOptions o;
    o.format = precision_ == compute::Precision::kInt8 ? gpu::QuantFormat::kInt8 : gpu::QuantFormat::kE4M3;
    // The first convolutions in fp16, at least the image's: cuDNN offers one int8 engine for its 4
    // channels, and an int8 ResNet-50 batch of 256 spent 11.8 ms outside its tuned convolutions
    // (7.1 ms) with it, E4M3 3.7 ms with fp16 there (an H200). By default the split is timed.
    o.trained_convolutions = fused_                       ? QuantOptions::kEvery
                             : req_.fp16_convolutions < 0 ? QuantOptions::kByTiming
                                                          : req_.fp16_convolutions;
    const auto covered = std::min<std::uint64_t>(req_.pool_samples, 1024);
    o.calibration_batches = static_cast<int>((covered + static_cast<std::uint64_t>(batch) - 1) / batch);
    // Its scales from the first stream's net of its size (so that it also takes that net's
    // algorithm for the image: QuantNet::image_conv_algo), or the first stream's largest.
    if (!lanes_[0]->buckets.empty()) o.scales_from = lanes_[0]->buckets.front().qnet.get();
    if (&lane != lanes_[0].get())
      for (const Bucket& same : lanes_[0]->buckets)
        if (same.batch == batch) o.scales_from = same.qnet.get();
    const auto* pool = static_cast<const std::byte*>(pool_.get());
    auto load = [&](int k) {
      const std::uint64_t first = static_cast<std::uint64_t>(k) * batch % req_.pool_samples;
      const std::uint64_t n = std::min<std::uint64_t>(batch, req_.pool_samples - first);
      CUDA_CHECK(
          cudaMemcpyAsync(net->images(), pool + first * image_bytes_, n * image_bytes_, cudaMemcpyDeviceToDevice, s));
    };
    o.max_plans = req_.search ? 8 : 1;
    o.plans = quant_plans_;
    b.qnet = std::make_unique<QuantNet>(*net, o, load);
    net.reset();  // the quantized net keeps what it needs
    QuantNet* q = b.qnet.get();
    q->forward();  // the first pass uncaptured
    b.graph = gpu::capture_graph(s, [q] { q->forward(); });
  } else {
    b.net = std::move(net);
    b.net->forward(Pass::kInfer);  // the first pass uncaptured (cuDNN and cuBLASLt set up on it)
    Net* n = b.net.get();
    b.graph = gpu::capture_graph(s, [n] { n->forward(Pass::kInfer); });
  }
  CUDA_CHECK(cudaGraphLaunch(b.graph.get(), s));  // its first launch uploads it: not in a query's time
  lane.buckets.push_back(std::move(b));
}

void* TrainEngine::input_of(const Bucket& b) const { return b.qnet ? b.qnet->images() : b.net->images(); }

TrainEngine::~TrainEngine() {
  for (auto& lane : lanes_) (void)cudaStreamSynchronize(lane->stream.get());
}

void TrainEngine::enqueue(int stream, std::span<const std::uint64_t> samples) {
  if (stream < 0 || stream >= streams()) throw Error("the engine has no stream " + std::to_string(stream));
  const int n = static_cast<int>(samples.size());
  if (n < 1 || n > max_batch())
    throw Error("a batch of " + std::to_string(n) + " samples; the engine takes 1 to " + std::to_string(max_batch()));
  Lane& lane = *lanes_[static_cast<std::size_t>(stream)];
  cudaStream_t s = lane.stream.get();
  const int batch = infer::bucket_for(n, req_.batch_sizes);
  const Bucket* b = nullptr;
  for (const Bucket& c : lane.buckets)
    if (c.batch == batch) b = &c;
  // The samples into the net's input, a copy per run of consecutive pool indices; rows past n keep
  // what they held (padding: each row's logits depend on its own image only).
  auto* in = static_cast<std::byte*>(input_of(*b));
  const auto* pool = static_cast<const std::byte*>(pool_.get());
  for (int i = 0; i < n;) {
    const std::uint64_t first = samples[static_cast<std::size_t>(i)] % req_.pool_samples;
    int run = 1;
    while (i + run < n &&
           samples[static_cast<std::size_t>(i + run)] % req_.pool_samples == first + static_cast<std::uint64_t>(run))
      ++run;
    CUDA_CHECK(cudaMemcpyAsync(in + static_cast<std::size_t>(i) * image_bytes_, pool + first * image_bytes_,
                               static_cast<std::size_t>(run) * image_bytes_, cudaMemcpyDeviceToDevice, s));
    i += run;
  }
  CUDA_CHECK(cudaGraphLaunch(b->graph.get(), s));
  std::lock_guard<std::mutex> l(lane.m);
  if (lane.spare.empty()) lane.spare.emplace_back();
  gpu::Event e = std::move(lane.spare.back());
  lane.spare.pop_back();
  CUDA_CHECK(cudaEventRecord(e.get(), s));
  lane.flying.push_back(std::move(e));
  lane.last = b;
}

void TrainEngine::wait_oldest(int stream) {
  if (stream < 0 || stream >= streams()) throw Error("the engine has no stream " + std::to_string(stream));
  Lane& lane = *lanes_[static_cast<std::size_t>(stream)];
  cudaEvent_t e = nullptr;
  {
    std::lock_guard<std::mutex> l(lane.m);
    if (lane.flying.empty()) throw Error("waiting on stream " + std::to_string(stream) + " with no batch in flight");
    e = lane.flying.front().get();  // stays at the front until this thread moves it: enqueue only appends
  }
  CUDA_CHECK(cudaSetDevice(device_));  // this thread may not have made it current yet
  CUDA_CHECK(cudaEventSynchronize(e));
  std::lock_guard<std::mutex> l(lane.m);
  lane.spare.push_back(std::move(lane.flying.front()));
  lane.flying.pop_front();
}

std::vector<float> TrainEngine::outputs(int stream, std::span<const std::uint64_t> samples) {
  enqueue(stream, samples);
  wait_oldest(stream);
  const Lane& lane = *lanes_[static_cast<std::size_t>(stream)];
  const std::size_t n = samples.size() * static_cast<std::size_t>(model_.classes);
  std::vector<float> out(n);
  if (const QuantNet* q = lane.last->qnet.get()) {
    CUDA_CHECK(cudaMemcpy(out.data(), q->logits(), n * 4, cudaMemcpyDeviceToHost));
    return out;
  }
  const Net& net = *lane.last->net;
  if (net.compute_type() == DType::kF32) {
    CUDA_CHECK(cudaMemcpy(out.data(), net.logits(), n * 4, cudaMemcpyDeviceToHost));
  } else {
    std::vector<std::uint16_t> raw(n);
    CUDA_CHECK(cudaMemcpy(raw.data(), net.logits(), n * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      out[i] = net.compute_type() == DType::kBf16 ? gpu::bf16_to_float(raw[i]) : gpu::half_to_float(raw[i]);
  }
  return out;
}

Json TrainEngine::describe() const {
  return Json{{"model", model_.name},
              {"image", model_.layers[0].out.h},
              {"precision", req_.precision},
              {"batch_sizes", req_.batch_sizes},
              {"streams", streams()},
              {"graphs", "one per batch size per stream, sharing the stream's largest net's layer outputs"},
              {"pool_samples", req_.pool_samples},
              {"calibration_batch", kCalibrationBatch},
              {"build_s", build_s_},
              {"device_bytes", device_bytes_},  // the nets' and the sample pool's
              {quantized_ ? "quantization"
               : fused_   ? "fused_net"
                          : "largest_net",
               net_description_}};
}

}  // namespace scalebench::train

namespace scalebench::infer {

std::unique_ptr<Engine> make_train_engine(const EngineRequest& request) {
  try {
    return std::make_unique<train::TrainEngine>(request);
  } catch (const train::OutOfMemory& e) {
    throw EngineDoesNotFit(e.what());
  }
}

}  // namespace scalebench::infer
