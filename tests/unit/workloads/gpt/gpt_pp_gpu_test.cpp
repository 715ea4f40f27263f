// Pipeline parallelism proven on one GPU: the k stages of the GPT-2 step run on one GPU (a thread
// and a stream each), each through the step the multi-GPU run takes (GptModel::step: the stage's
// 1F1B schedule, or with virtual stages its chunks under the interleaved one, the tied
// embedding's exchange, the norm's sum over the stages), with the
// activations and gradients handed over by device copies where NCCL's send/recv would carry
// them. The loss, every gradient, the gradient norm and the weights after the optimizer must match
// the unsplit model's, within the tolerance of the tp check (gpt_tp_gpu_test.cpp). Skipped where no
// GPU is visible.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/gpu_available.hpp"
#include "tests/unit/workloads/gpt/one_gpu_collectives.hpp"
#include "workloads/gpt/gpt_model.hpp"
#include "workloads/gpt/gpt_parallel.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using scalebench::test_support::have_gpu;
using scalebench::test_support::Hub;
using scalebench::test_support::OneGpuTpReduce;
using scalebench::test_support::shard_of;

// Where the stages' transfers meet. A send is posted to its channel (from, to) and waits until the
// receiver has copied it; a receive takes the channel's oldest send, as NCCL pairs them in order,
// so that a schedule NCCL would hang on hangs here too (and one that pairs the wrong tensors
// fails on the sizes or the values).
struct PipeHub {
  explicit PipeHub(int k) : stages(k), bar(k), bufs(static_cast<std::size_t>(k)) {}
  struct Posted {
    const bf16* data = nullptr;
    long long n = 0;
    bool taken = false;
  };
  int stages;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<int, int>, std::deque<std::shared_ptr<Posted>>> channels;
  std::barrier<> bar;
  std::vector<float*> bufs;
};

class OneGpuPipeLink final : public PipeLink {
 public:
  OneGpuPipeLink(PipeHub& hub, int stage) : hub_(hub), stage_(stage) {}
  void exchange(const std::vector<PipeBuffer>& group, cudaStream_t s) override {
    CUDA_CHECK(cudaStreamSynchronize(s));  // what is sent is written
    std::vector<std::shared_ptr<PipeHub::Posted>> sent;
    {
      std::lock_guard<std::mutex> lock(hub_.mu);
      for (const PipeBuffer& b : group)
        if (b.send) {
          sent.push_back(std::make_shared<PipeHub::Posted>(PipeHub::Posted{b.data, b.n, false}));
          hub_.channels[{stage_, b.peer}].push_back(sent.back());
        }
    }
    hub_.cv.notify_all();
    for (const PipeBuffer& b : group) {
      if (b.send) continue;
      std::shared_ptr<PipeHub::Posted> p;
      {
        std::unique_lock<std::mutex> lock(hub_.mu);
        auto& q = hub_.channels[{b.peer, stage_}];
        hub_.cv.wait(lock, [&] { return !q.empty(); });
        p = q.front();
        q.pop_front();
      }
      if (p->n != b.n)
        throw Error("stage " + std::to_string(stage_) + " received " + std::to_string(p->n) + " elements, expected " +
                    std::to_string(b.n));
      CUDA_CHECK(cudaMemcpyAsync(b.data, p->data, sizeof(bf16) * b.n, cudaMemcpyDeviceToDevice, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      {
        std::lock_guard<std::mutex> lock(hub_.mu);
        p->taken = true;
      }
      hub_.cv.notify_all();
    }
    std::unique_lock<std::mutex> lock(hub_.mu);
    hub_.cv.wait(lock, [&] { return std::all_of(sent.begin(), sent.end(), [](const auto& p) { return p->taken; }); });
  }
  // Stage 0 adds the others' values, then every stage copies the sum, as an all-reduce leaves it.
  void sum(float* x, long long n, cudaStream_t s) override {
    CUDA_CHECK(cudaStreamSynchronize(s));
    hub_.bufs[static_cast<std::size_t>(stage_)] = x;
    hub_.bar.arrive_and_wait();
    const std::size_t count = static_cast<std::size_t>(n);
    if (stage_ == 0) {
      std::vector<float> total(count), part(count);
      CUDA_CHECK(cudaMemcpy(total.data(), x, sizeof(float) * count, cudaMemcpyDeviceToHost));
      for (int r = 1; r < hub_.stages; ++r) {
        CUDA_CHECK(cudaMemcpy(part.data(), hub_.bufs[static_cast<std::size_t>(r)], sizeof(float) * count,
                              cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < count; ++i) total[i] += part[i];
      }
      CUDA_CHECK(cudaMemcpy(x, total.data(), sizeof(float) * count, cudaMemcpyHostToDevice));
    }
    hub_.bar.arrive_and_wait();
    if (stage_ != 0) CUDA_CHECK(cudaMemcpy(x, hub_.bufs[0], sizeof(float) * count, cudaMemcpyDeviceToDevice));
    hub_.bar.arrive_and_wait();
  }

 private:
  PipeHub& hub_;
  int stage_;
};

struct StageResult {
  bool head = false;
  float loss = 0, grad_norm = 0;
  std::vector<float> grads, params;
  std::vector<Tensor> layout;
};

double relative_error(const std::vector<float>& got, long long at, const std::vector<float>& want, long long from,
                      long long n) {
  double diff = 0, norm = 0;
  for (long long j = 0; j < n; ++j) {
    const double d = got[static_cast<std::size_t>(at + j)] - want[static_cast<std::size_t>(from + j)];
    diff += d * d;
    norm += static_cast<double>(want[static_cast<std::size_t>(from + j)]) * want[static_cast<std::size_t>(from + j)];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// The unsplit model and its k stages (each of `tp` tensor-parallel ranks, with or without sequence
// parallelism; each of v chunks, the interleaved schedule, with v > 1) each take one step of m
// micro-batches from the same seed; the gradients after the step (the tied embedding's summed;
// with tp each rank's shard of them), the norm and, with tp 1, the new weights agree.
void expect_pp_matches(int layers, int k, int m, Attention attention, bool recompute = false, int tp = 1,
                       bool sequence_parallel = false, int v = 1) {
  const ModelShape shape = model_shape("gpt2-tiny", layers);
  const int B = 2, T = 64;
  const unsigned long long seed = 29;
  const Hyper h{1e-3f};
  gpu::Stream s;
  GptModel whole(shape, B, T, seed, s.get(), attention, {}, recompute);
  whole.step(m, h);
  const float loss = whole.loss(), norm = whole.grad_norm();
  const std::vector<float> g = whole.grads(), w = whole.params();
  const std::vector<Tensor> whole_layout = whole.layout();
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < whole_layout.size(); ++i) by_name[whole_layout[i].name] = i;

  // A tp group per stage, a pipeline per tp rank.
  std::vector<std::unique_ptr<Hub>> tp_hubs;
  std::vector<std::unique_ptr<PipeHub>> pipe_hubs;
  for (int i = 0; i < k; ++i) tp_hubs.push_back(std::make_unique<Hub>(tp));
  for (int i = 0; i < tp; ++i) pipe_hubs.push_back(std::make_unique<PipeHub>(k));
  const int ranks = k * tp;
  std::vector<StageResult> out(static_cast<std::size_t>(ranks));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        CUDA_CHECK(cudaSetDevice(0));
        gpu::Stream rs;
        Parallel par;
        par.at = Placement::of(r, 1, tp, k);
        OneGpuTpReduce reduce(*tp_hubs[static_cast<std::size_t>(par.at.pp_rank)], par.at.tp_rank);
        OneGpuPipeLink link(*pipe_hubs[static_cast<std::size_t>(par.at.tp_rank)], par.at.pp_rank);
        if (tp > 1) par.tp_reduce = &reduce;
        par.sequence_parallel = sequence_parallel;
        par.pipe = &link;
        par.virtual_stages = v;
        par.micro_batches = m;
        GptModel stage(shape, B, T, seed, rs.get(), attention, par, recompute);
        stage.step(m, h);
        StageResult& x = out[static_cast<std::size_t>(r)];
        x.head = stage.holds_loss();
        if (x.head) x.loss = stage.loss();
        x.grad_norm = stage.grad_norm();
        x.grads = stage.grads();
        x.params = stage.params();
        x.layout = stage.layout();
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  const std::string what = "gpt2-tiny " + std::to_string(layers) + " layers pp " + std::to_string(k) + " v " +
                           std::to_string(v) + " m " + std::to_string(m) + " tp " + std::to_string(tp) +
                           (sequence_parallel ? " sp" : "") + (recompute ? " recompute" : "");
  std::map<std::string, int> seen;
  double weight_diff = 0, weight_norm = 0;
  for (int r = 0; r < ranks; ++r) {
    const StageResult& x = out[static_cast<std::size_t>(r)];
    const Placement at = Placement::of(r, 1, tp, k);
    EXPECT_EQ(x.head, at.pp_rank == k - 1) << what;
    if (x.head) {
      EXPECT_NEAR(x.loss, loss, 2e-3 * std::abs(loss)) << what;
    }
    // Every stage clips with the whole model's norm.
    EXPECT_NEAR(x.grad_norm, norm, 2e-2 * norm) << what << " rank " << r;
    const std::vector<TensorShard> plan = tp_plan(shape, T, tp, at.tp_rank);
    for (const Tensor& t : x.layout) {
      const std::size_t j = by_name.at(whole_tensor_name(t.name));
      const Tensor& u = whole_layout[j];
      if (at.tp_rank == 0) ++seen[u.name];
      // This rank's shard of the unsplit model's gradient (all of it with tp 1).
      const std::vector<float> full(g.begin() + u.offset, g.begin() + u.offset + u.numel());
      const std::vector<float> want = tp > 1 ? shard_of(full, u, plan[j]) : full;
      ASSERT_EQ(t.numel(), static_cast<long long>(want.size())) << what << " " << t.name;
      EXPECT_LT(relative_error(x.grads, t.offset, want, 0, t.numel()), 5e-2)
          << what << " rank " << r << " gradient of " << t.name;
      if (tp > 1) continue;
      for (long long i = 0; i < t.numel(); ++i) {
        const double d = x.params[static_cast<std::size_t>(t.offset + i)] - w[static_cast<std::size_t>(u.offset + i)];
        weight_diff += d * d;
        weight_norm +=
            static_cast<double>(w[static_cast<std::size_t>(u.offset + i)]) * w[static_cast<std::size_t>(u.offset + i)];
      }
    }
  }
  // The weights after AdamW, over the whole model: its first steps amplify the last bits of
  // near-zero gradients (as GptGpuTp.ZeroLayoutOnOneRankMatchesPlainAdamW compares them).
  if (tp == 1) {
    EXPECT_LT(std::sqrt(weight_diff / weight_norm), 1e-2) << what;
  }
  // Every tensor on one stage; the tied embedding on the first and (its copy) the last.
  for (const Tensor& t : whole_layout) EXPECT_EQ(seen[t.name], t.name == "wte" && k > 1 ? 2 : 1) << what << t.name;
}
}  // namespace

// pp 2 on the two blocks of gpt2-tiny: one micro-batch (no steady phase) and four (stage 0 keeps
// two in flight, in two activation slots).
TEST(GptGpuPp, StagesMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_pp_matches(2, 2, 1, Attention::kCudnn);
  expect_pp_matches(2, 2, 4, Attention::kCudnn);
  expect_pp_matches(2, 2, 4, Attention::kNaive);
  // Four stages of one block, fewer micro-batches than stages (a short warm-up), and more.
  expect_pp_matches(4, 4, 3, Attention::kCudnn);
  expect_pp_matches(4, 4, 6, Attention::kCudnn);
  // Uneven stages: 2, 1 and 1 blocks.
  expect_pp_matches(4, 3, 5, Attention::kCudnn);
}

// Tensor parallelism inside each stage (Megatron's layout: tp inside a node, stages across): tp 2
// x pp 2 of gpt2-tiny, with and without sequence parallelism (each tp rank then sends its rows of
// the residual stream to its peer of the next stage).
TEST(GptGpuPp, TensorParallelStagesMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_pp_matches(2, 2, 4, Attention::kCudnn, false, 2);
  expect_pp_matches(2, 2, 4, Attention::kCudnn, false, 2, true);
  expect_pp_matches(4, 2, 3, Attention::kNaive, true, 2);
}

// With recompute a stage keeps only each block's input per slot and recomputes every block it
// goes back through (another micro-batch's forward may have run since).
TEST(GptGpuPp, RecomputeStagesMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_pp_matches(2, 2, 4, Attention::kCudnn, true);
  expect_pp_matches(4, 3, 5, Attention::kCudnn, true);
}

// Interleaved: pp 2 x 2 virtual stages, each rank two chunks (rank 0 blocks 0 and 2 with the
// embedding, rank 1 blocks 1 and 3 with the head; activations wrap from rank 1's chunk 0 to rank
// 0's chunk 1). m = pp runs every forward first; 4 and 6 micro-batches have a steady phase, whose
// groups send a gradient and receive the next; 6 blocks split 2/2/1/1 (the head beside the last).
TEST(GptGpuPp, InterleavedChunksMatchTheUnsplitModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  expect_pp_matches(4, 2, 2, Attention::kCudnn, false, 1, false, 2);
  expect_pp_matches(4, 2, 4, Attention::kCudnn, false, 1, false, 2);
  expect_pp_matches(4, 2, 6, Attention::kNaive, false, 1, false, 2);
  expect_pp_matches(6, 2, 4, Attention::kCudnn, false, 1, false, 2);
  // With recompute (other chunks' forwards run between a block's forward and its backward), and
  // with tp 2 inside each stage, with and without sequence parallelism.
  expect_pp_matches(4, 2, 4, Attention::kCudnn, true, 1, false, 2);
  expect_pp_matches(4, 2, 4, Attention::kCudnn, false, 2, false, 2);
  expect_pp_matches(4, 2, 4, Attention::kCudnn, false, 2, true, 2);
  // pp 3 x 2 virtual stages and pp 2 x 3.
  expect_pp_matches(6, 3, 6, Attention::kCudnn, false, 1, false, 2);
  expect_pp_matches(6, 2, 4, Attention::kCudnn, false, 1, false, 3);
}

// A stage holds its blocks only (and pp - stage activation slots): less than the whole model.
TEST(GptGpuPp, StagesTakeLessMemoryThanTheModel) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const ModelShape m = model_shape("gpt2-124m");
  const std::size_t whole = model_bytes(m, 4, 1024, Attention::kCudnn);
  for (int stage = 0; stage < 2; ++stage) {
    Parallel par;
    par.at = Placement::of(stage, 1, 1, 2);
    EXPECT_LT(model_bytes(m, 4, 1024, Attention::kCudnn, par), whole) << "stage " << stage;
  }
}

// What a stage cannot do names pp.
TEST(GptGpuPp, StageRefusesTheWholeModelsCalls) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  gpu::Stream s;
  Parallel par;
  par.at = Placement::of(0, 1, 1, 2);
  const ModelShape m = model_shape("gpt2-tiny");
  EXPECT_THROW(GptModel(m, 2, 64, 1, s.get(), Attention::kCudnn, par), Error);  // no link
  PipeHub hub(2);
  OneGpuPipeLink link(hub, 0);
  par.pipe = &link;
  GptModel first(m, 2, 64, 1, s.get(), Attention::kCudnn, par);
  EXPECT_THROW(first.forward(0, 1), Error);
  EXPECT_THROW(first.loss(), Error);
  EXPECT_FALSE(first.holds_loss());
  EXPECT_EQ(first.pipeline_stages(), 2);
  // Virtual stages size the chunks' activation slots for the step's micro-batches: another count
  // is refused before anything is sent.
  par.virtual_stages = 2;
  par.micro_batches = 4;
  GptModel chunked(model_shape("gpt2-tiny", 4), 2, 64, 1, s.get(), Attention::kCudnn, par);
  try {
    chunked.step(2, Hyper{1e-3f});
    FAIL() << "a step of 2 micro-batches on slots for 4";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("grad_accum"), std::string::npos) << e.what();
  }
  par.micro_batches = 3;  // not a multiple of pp
  EXPECT_THROW(GptModel(model_shape("gpt2-tiny", 4), 2, 64, 1, s.get(), Attention::kCudnn, par), Error);
}
#endif
