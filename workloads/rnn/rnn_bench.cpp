#include "workloads/rnn/rnn_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>

#include "analysis/stats.hpp"
#include "common/error.hpp"
#include "workloads/compute/candidate_trial.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_handles.hpp"
#include "workloads/gpu/graph_capture.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/rnn/rnn_kernels.cuh"
#include "workloads/rnn/rnn_reference.hpp"

namespace scalebench::rnn {

namespace {
using compute::Precision;

constexpr float kLearningRate = 1e-5f;  // small: weights keep their scale over thousands of steps
constexpr double kCheckMacs = 4e8;      // host multiply-adds the check may spend per point

cudnnRNNMode_t cudnn_cell(Cell c) {
  switch (c) {
    case Cell::kRnnTanh:
      return CUDNN_RNN_TANH;
    case Cell::kRnnRelu:
      return CUDNN_RNN_RELU;
    case Cell::kGru:
      return CUDNN_GRU;
    case Cell::kLstm:
      return CUDNN_LSTM;
  }
  return CUDNN_LSTM;
}

// fp32: FMA math, no Tensor Cores (torch with cudnn.allow_tf32 = False); tf32: cuDNN's default
// math, which lets fp32 data through the TF32 Tensor Cores (torch's default, allow_tf32 = True);
// fp16: fp16 data with fp32 arithmetic inside the cell and Tensor Core GEMMs (as torch does).
cudnnMathType_t math_type(Precision p) {
  if (p == Precision::kFp16) return CUDNN_TENSOR_OP_MATH;
  if (p == Precision::kTf32) return CUDNN_DEFAULT_MATH;
  return CUDNN_FMA_MATH;
}
const char* math_name(Precision p) {
  if (p == Precision::kFp16) return "fp16 data, fp32 math, Tensor Cores (CUDNN_TENSOR_OP_MATH)";
  if (p == Precision::kTf32) return "fp32 data, TF32 Tensor Cores allowed (CUDNN_DEFAULT_MATH)";
  return "fp32 data, FMA only (CUDNN_FMA_MATH)";
}

// Device memory read back as doubles.
std::vector<double> read_back(const void* p, std::size_t n, bool half) {
  std::vector<double> out(n);
  if (half) {
    std::vector<std::uint16_t> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) out[i] = gpu::half_to_float(h[i]);
  } else {
    std::vector<float> f(n);
    CUDA_CHECK(cudaMemcpy(f.data(), p, n * 4, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) out[i] = f[i];
  }
  return out;
}

// Everything one (cell, sizes, precision, algorithm) needs on the GPU, ready to step.
class Problem {
 public:
  Problem(const Config& cfg, int hidden, cudnnRNNAlgo_t algo, cudaStream_t stream)
      : cfg_(cfg), hidden_(hidden), input_(cfg.input_size(hidden)), stream_(stream) {
    half_ = cfg.precision == Precision::kFp16;
    const cudnnDataType_t dtype = half_ ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const int esize = half_ ? 2 : 4;
    const int dirs = cfg.directions();
    CUDNN_CHECK(cudnnSetStream(handle_.get(), stream));
    CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout_.get(), handle_.get(), 0.0f, nullptr, 0, 0));
    CUDNN_CHECK(cudnnSetRNNDescriptor_v8(rnn_.get(), algo, cudnn_cell(cfg.cell), CUDNN_RNN_DOUBLE_BIAS,
                                         cfg.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                         CUDNN_LINEAR_INPUT, dtype, CUDNN_DATA_FLOAT, math_type(cfg.precision), input_,
                                         hidden, hidden, cfg.layers, dropout_.get(), CUDNN_RNN_PADDED_IO_DISABLED));
    const std::vector<int> lengths(cfg.batch, cfg.seq);
    CUDNN_CHECK(cudnnSetRNNDataDescriptor(x_desc_.get(), dtype, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, cfg.seq,
                                          cfg.batch, input_, lengths.data(), nullptr));
    CUDNN_CHECK(cudnnSetRNNDataDescriptor(y_desc_.get(), dtype, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, cfg.seq,
                                          cfg.batch, dirs * hidden, lengths.data(), nullptr));
    const int dims[3] = {cfg.layers * dirs, cfg.batch, hidden};
    const int strides[3] = {cfg.batch * hidden, hidden, 1};
    CUDNN_CHECK(cudnnSetTensorNdDescriptor(h_desc_.get(), dtype, 3, dims, strides));

    training_ = cfg.mode == Mode::kTraining;
    fwd_mode_ = training_ ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
    CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle_.get(), rnn_.get(), &weight_bytes_));
    CUDNN_CHECK(
        cudnnGetRNNTempSpaceSizes(handle_.get(), rnn_.get(), fwd_mode_, x_desc_.get(), &work_bytes_, &reserve_bytes_));
    x_elems_ = std::size_t(cfg.seq) * cfg.batch * input_;
    y_elems_ = std::size_t(cfg.seq) * cfg.batch * dirs * hidden;
    const std::size_t h_elems = std::size_t(dims[0]) * dims[1] * dims[2];
    w_ = gpu::DeviceBuffer(weight_bytes_);
    x_ = gpu::DeviceBuffer(x_elems_ * esize);
    y_ = gpu::DeviceBuffer(y_elems_ * esize);
    hx_ = gpu::DeviceBuffer(h_elems * esize);
    hy_ = gpu::DeviceBuffer(h_elems * esize);
    work_ = gpu::DeviceBuffer(work_bytes_);
    reserve_ = gpu::DeviceBuffer(reserve_bytes_);
    seq_lengths_ = gpu::DeviceBuffer(lengths.size() * sizeof(int));
    lstm_ = cfg.cell == Cell::kLstm;
    if (lstm_) {
      cx_ = gpu::DeviceBuffer(h_elems * esize);
      cy_ = gpu::DeviceBuffer(h_elems * esize);
    }
    if (training_) {
      dw_ = gpu::DeviceBuffer(weight_bytes_);
      dx_ = gpu::DeviceBuffer(x_elems_ * esize);
      dy_ = gpu::DeviceBuffer(y_elems_ * esize);
      dhx_ = gpu::DeviceBuffer(h_elems * esize);
      if (lstm_) dcx_ = gpu::DeviceBuffer(h_elems * esize);
    }
    CUDA_CHECK(cudaMemcpyAsync(seq_lengths_.get(), lengths.data(), lengths.size() * sizeof(int), cudaMemcpyHostToDevice,
                               stream));
    // PyTorch's initialisation: every weight and bias uniform in +-1/sqrt(hidden); inputs in +-1;
    // zero initial states (as torch passes when no state is given); dy = 1 (d sum(y) / dy).
    init_weights();
    launch_fill_uniform(x_.get(), x_elems_, half_, 1.0f, 2, stream);
    CUDA_CHECK(cudaMemsetAsync(hx_.get(), 0, hx_.bytes(), stream));
    if (lstm_) CUDA_CHECK(cudaMemsetAsync(cx_.get(), 0, cx_.bytes(), stream));
    if (training_) launch_fill_constant(dy_.get(), y_elems_, half_, 1.0f, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // PyTorch's initialisation: uniform in +-1/sqrt(hidden), biases too.
  void init_weights() {
    launch_fill_uniform(w_.get(), weight_bytes_ / (half_ ? 2 : 4), half_, 1.0f / std::sqrt(float(hidden_)), 1, stream_);
  }

  // One step captured into a CUDA graph, launched as one (cuda_graph=true): the host's launch
  // cost of cuDNN's many small per-time-step kernels leaves the measurement.
  void capture() {
    graph_ = gpu::capture_graph(stream_, [&] { step(stream_); });
  }
  void launch_graph(cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(graph_.get(), s)); }

  void forward(cudaStream_t s) {
    (void)s;  // the handle is bound to the stream
    CUDNN_CHECK(cudnnRNNForward(handle_.get(), rnn_.get(), fwd_mode_, seq_lengths(), x_desc_.get(), x_.get(),
                                y_desc_.get(), y_.get(), h_desc_.get(), hx_.get(), hy_.get(), h_desc_.get(),
                                lstm_ ? cx_.get() : nullptr, lstm_ ? cy_.get() : nullptr, weight_bytes_, w_.get(),
                                work_bytes_, work_.get(), reserve_bytes_, training_ ? reserve_.get() : nullptr));
  }

  void step(cudaStream_t s) {
    forward(s);
    if (!training_) return;
    CUDNN_CHECK(cudnnRNNBackwardData_v8(handle_.get(), rnn_.get(), seq_lengths(), y_desc_.get(), y_.get(), dy_.get(),
                                        x_desc_.get(), dx_.get(), h_desc_.get(), hx_.get(), nullptr, dhx_.get(),
                                        h_desc_.get(), lstm_ ? cx_.get() : nullptr, nullptr,
                                        lstm_ ? dcx_.get() : nullptr, weight_bytes_, w_.get(), work_bytes_, work_.get(),
                                        reserve_bytes_, reserve_.get()));
    // cuDNN 9 only adds into the gradient buffer: zero it first, as torch does.
    CUDA_CHECK(cudaMemsetAsync(dw_.get(), 0, weight_bytes_, s));
    CUDNN_CHECK(cudnnRNNBackwardWeights_v8(handle_.get(), rnn_.get(), CUDNN_WGRAD_MODE_ADD, seq_lengths(),
                                           x_desc_.get(), x_.get(), h_desc_.get(), hx_.get(), y_desc_.get(), y_.get(),
                                           weight_bytes_, dw_.get(), work_bytes_, work_.get(), reserve_bytes_,
                                           reserve_.get()));
    launch_sgd(w_.get(), dw_.get(), weight_bytes_ / (half_ ? 2 : 4), half_, kLearningRate, s);
  }

  // The weights one layer and direction used, from the weight space as it is now.
  Network read_network() {
    const std::vector<double> wspace = read_back(w_.get(), weight_bytes_ / (half_ ? 2 : 4), half_);
    Network net;
    net.cell = cfg_.cell;
    net.layers = cfg_.layers;
    net.directions = cfg_.directions();
    net.input = input_;
    net.hidden = hidden_;
    const int g = gates(cfg_.cell);
    gpu::TensorDescriptor m_desc, b_desc;
    auto slice = [&](void* addr, cudnnTensorDescriptor_t desc, std::size_t expect) {
      if (!addr) throw Error("cudnnGetRNNWeightParams returned no address for a matrix or bias");
      cudnnDataType_t dt;
      int nb = 0, dims[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
      CUDNN_CHECK(cudnnGetTensorNdDescriptor(desc, 3, &dt, &nb, dims, strides));
      std::size_t n = 1;
      for (int i = 0; i < nb; ++i) n *= dims[i];
      if (n != expect)
        throw Error("cuDNN weight block of " + std::to_string(n) + " elements, expected " + std::to_string(expect));
      const std::size_t off = (static_cast<std::byte*>(addr) - w_.get()) / (half_ ? 2 : 4);
      return std::vector<double>(wspace.begin() + off, wspace.begin() + off + n);
    };
    for (int l = 0; l < cfg_.layers; ++l)
      for (int d = 0; d < net.directions; ++d) {
        const int in = l == 0 ? input_ : net.directions * hidden_;
        LayerWeights lw;
        for (int id = 0; id < 2 * g; ++id) {
          void *m = nullptr, *b = nullptr;
          CUDNN_CHECK(cudnnGetRNNWeightParams(handle_.get(), rnn_.get(), l * net.directions + d, weight_bytes_,
                                              w_.get(), id, m_desc.get(), &m, b_desc.get(), &b));
          const bool recurrent = id >= g;
          (recurrent ? lw.r : lw.w)
              .push_back(slice(m, m_desc.get(), std::size_t(hidden_) * (recurrent ? hidden_ : in)));
          (recurrent ? lw.br : lw.bw).push_back(slice(b, b_desc.get(), hidden_));
        }
        net.lw.push_back(std::move(lw));
      }
    return net;
  }

  // Runs the forward pass once more and compares a few batch entries' outputs, every step of the
  // last layer, with the fp64 reference from the same inputs and weights.
  // The weights are set back to their initial values first: thousands of SGD steps that lower
  // sum(y) drive the outputs to -1, where tanh and sigmoid are flat and would hide errors.
  void check(compute::RankOutcome& out) {
    init_weights();
    forward(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::vector<double> x = read_back(x_.get(), x_elems_, half_);
    const std::vector<double> y = read_back(y_.get(), y_elems_, half_);
    const Network net = read_network();
    const int width = net.directions * hidden_;
    const double per_entry = forward_flops(cfg_.cell, cfg_.layers, net.directions, cfg_.seq, 1, input_, hidden_) / 2;
    const int entries = std::clamp(static_cast<int>(kCheckMacs / per_entry), 1, std::min(cfg_.batch, 4));
    std::vector<int> picked;
    for (int k = 0; k < entries; ++k) picked.push_back(entries == 1 ? 0 : k * (cfg_.batch - 1) / (entries - 1));
    out.wrong = 0;
    out.checked = 0;
    double worst = 0, scale = 0;
    for (int b : picked) {
      std::vector<double> xb(std::size_t(cfg_.seq) * input_), got(std::size_t(cfg_.seq) * width);
      for (int t = 0; t < cfg_.seq; ++t) {
        std::copy_n(x.begin() + (std::size_t(t) * cfg_.batch + b) * input_, input_,
                    xb.begin() + std::size_t(t) * input_);
        std::copy_n(y.begin() + (std::size_t(t) * cfg_.batch + b) * width, width, got.begin() + std::size_t(t) * width);
      }
      const std::vector<double> ref = rnn::forward(net, xb, cfg_.seq);
      scale = check_scale(cfg_.layers, ref);
      out.wrong += count_wrong(cfg_.precision, got, ref, scale);
      out.checked += static_cast<long long>(got.size());
      for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref[i]));
    }
    out.details["check"] = Json{{"batch_entries", picked},
                                {"max_abs_error", worst},
                                {"scale", scale},
                                {"rel_tolerance", compute::rel_tolerance(cfg_.precision)}};
  }

  Json memory() const {
    return Json{{"weight_bytes", weight_bytes_}, {"workspace_bytes", work_bytes_}, {"reserve_bytes", reserve_bytes_}};
  }

 private:
  const int* seq_lengths() const { return reinterpret_cast<const int*>(seq_lengths_.get()); }

  Config cfg_;
  int hidden_, input_;
  cudaStream_t stream_;
  bool half_ = false, training_ = false, lstm_ = false;
  cudnnForwardMode_t fwd_mode_ = CUDNN_FWD_MODE_INFERENCE;
  gpu::CudnnHandle handle_;
  gpu::DropoutDescriptor dropout_;
  gpu::RnnDescriptor rnn_;
  gpu::RnnDataDescriptor x_desc_, y_desc_;
  gpu::TensorDescriptor h_desc_;
  std::size_t weight_bytes_ = 0, work_bytes_ = 0, reserve_bytes_ = 0, x_elems_ = 0, y_elems_ = 0;
  gpu::GraphExec graph_;
  gpu::DeviceBuffer w_, dw_, x_, dx_, y_, dy_, hx_, hy_, cx_, cy_, dhx_, dcx_, work_, reserve_, seq_lengths_;
};

cudnnRNNAlgo_t cudnn_algo(Algo a) {
  return a == Algo::kPersistStatic ? CUDNN_RNN_ALGO_PERSIST_STATIC : CUDNN_RNN_ALGO_STANDARD;
}

// A set-up that cuDNN refuses (persistent kernels have limits on sizes and types) gives the reason.
std::unique_ptr<Problem> try_problem(const Config& cfg, int hidden, Algo a, cudaStream_t s, std::string* why) {
  try {
    auto p = std::make_unique<Problem>(cfg, hidden, cudnn_algo(a), s);
    p->step(s);  // some refusals only come with the first call
    CUDA_CHECK(cudaStreamSynchronize(s));
    return p;
  } catch (const std::exception& e) {
    *why = e.what();
    cudaGetLastError();  // a failed launch must not fail the next set-up
    return nullptr;
  }
}

// Both algorithms timed against each other (compute::time_candidates), the faster kept; the
// trial figures go into `details`.
std::pair<std::unique_ptr<Problem>, Algo> pick_faster(const Config& cfg, int hidden, cudaStream_t s, Json& details) {
  Json trials = Json::object();
  std::vector<Algo> algos;
  std::vector<std::unique_ptr<Problem>> problems;
  for (Algo a : {Algo::kStandard, Algo::kPersistStatic}) {
    std::string why;
    if (auto p = try_problem(cfg, hidden, a, s, &why)) {
      algos.push_back(a);
      problems.push_back(std::move(p));
    } else {
      trials[name(a)] = "refused: " + why;
    }
  }
  if (problems.empty()) throw Error("cuDNN refused every RNN algorithm: " + trials.dump());
  const compute::CandidateTrial trial =
      compute::time_candidates(s, problems.size(), [&](std::size_t i, cudaStream_t st) { problems[i]->step(st); });
  for (std::size_t i = 0; i < algos.size(); ++i)
    trials[name(algos[i])] = trial.median_s[i] ? Json(*trial.median_s[i] * 1e6) : Json("failed in the trial");
  details["algo_trial_us"] = trials;
  return {std::move(problems[trial.best]), algos[trial.best]};
}
}  // namespace

compute::RankOutcome measure_point(const Config& cfg, int hidden, const compute::TimingConfig& timing,
                                   const compute::DeviceInfo& gpu) {
  compute::RankOutcome out;
  const std::string unsupported = compute::unsupported_on(cfg.precision, gpu.cc_major, gpu.cc_minor);
  if (!unsupported.empty()) {
    out.status = "skipped";
    out.reason = unsupported;
    return out;
  }
  gpu::Stream stream;
  const cudaStream_t s = stream.get();
  std::unique_ptr<Problem> problem;
  Algo chosen = cfg.algo;
  if (cfg.algo == Algo::kAuto) {
    std::tie(problem, chosen) = pick_faster(cfg, hidden, s, out.details);
  } else {
    std::string why;
    problem = try_problem(cfg, hidden, cfg.algo, s, &why);
    if (!problem) {
      if (cfg.algo == Algo::kStandard) throw Error(why);
      out.status = "skipped";
      out.reason = std::string("cuDNN refuses ") + name(cfg.algo) + " here: " + why;
      return out;
    }
  }
  if (cfg.cuda_graph) {
    problem->capture();
    out.seconds = compute::time_on_stream(s, timing, [&](cudaStream_t st) { problem->launch_graph(st); });
  } else {
    out.seconds = compute::time_on_stream(s, timing, [&](cudaStream_t st) { problem->step(st); });
  }
  out.details["algo"] = name(chosen);
  out.details["cuda_graph"] = cfg.cuda_graph;
  out.details["math"] = math_name(cfg.precision);
  out.details["memory"] = problem->memory();
  const double flops = step_flops(cfg, hidden);
  out.details["flops_per_step"] = flops;
  out.details["tflops"] = flops / median(out.seconds) * 1e-12;
  if (cfg.check) problem->check(out);
  return out;
}

}  // namespace scalebench::rnn
