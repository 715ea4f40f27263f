// The gpt workload's check and timing program, for development on a GPU machine:
//   scalebench-gpt-check gradcheck [ATTENTION] [MODEL]   fp64 gradient check of a tiny model
//                                                        (gpt2-tiny, the default, or llama-tiny)
//   scalebench-gpt-check time MODEL BATCH SEQ [ACCUM] [SAMPLES] [STEPS] [ATTENTION] [LAYERS] [PRECISION]
//                                                        tokens/s, MFU, step split, peak memory
//                                                        (LAYERS: that many of the model's blocks;
//                                                        PRECISION: bf16, the default, or fp8)
// ATTENTION is cudnn (the default, as in the workload) or naive (GPT-2 only).
//   scalebench-gpt-check dump DIR [MODEL] [BATCH] [SEQ]  initial weights, tokens and our first 10
//                                                        losses for tests/gpt/compare_torch.py
//   scalebench-gpt-check decode MODEL BATCH PROMPT NEW [SAMPLES]
//                                                        greedy decoding with the KV cache (GPT-2
//                                                        family, random weights): BATCH prompts of
//                                                        PROMPT random tokens, then NEW tokens each,
//                                                        every step one CUDA graph; prefill ms,
//                                                        ms per step and tokens/s
// Prints one JSON object per line; exits 1 when a check fails.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "workloads/gpt/gpt_bench.hpp"
#include "workloads/gpt/gpt_decoder.hpp"
#include "workloads/gpu/cuda_handles.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {

int arg_int(int argc, char** argv, int i, int fallback) { return i < argc ? std::stoi(argv[i]) : fallback; }

int time_model(const std::string& name, int B, int T, int accum, int samples, int steps, Attention attention,
               int layers, const std::string& precision) {
  if (precision != "bf16" && precision != "fp8") throw Error("PRECISION: bf16 or fp8, not " + precision);
  const ModelShape m = model_shape(name, layers);
  gpu::Stream stream;
  Precision p;
  p.fp8 = precision == "fp8";
  GptModel model(m, B, T, 1234, stream.get(), attention, Parallel{}, false, p);
  const StepTiming t = time_steps(model, stream.get(), accum, Hyper{}, 3, samples, steps);
  std::vector<double> s = t.step_seconds;
  std::sort(s.begin(), s.end());
  const double median = s[s.size() / 2];
  const double tokens = static_cast<double>(B) * T * accum;
  cudaDeviceProp prop{};
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  const double peak = dense_bf16_peak(prop.major, prop.minor);
  const double fpt = flops_per_token(m, T);
  Json out{{"model", m.name},
           {"layers", m.layers},
           {"batch", B},
           {"seq", T},
           {"grad_accum", accum},
           {"attention", attention == Attention::kCudnn ? "cudnn" : "naive"},
           {"precision", precision},
           {"gpu", prop.name},
           {"tokens_per_s", tokens / median},
           {"tokens_per_s_best", tokens / s.front()},
           {"mfu_pct", mfu_percent(tokens / median, fpt, peak)},
           {"step_ms_median", median * 1e3},
           {"step_ms_min", s.front() * 1e3},
           {"step_ms_max", s.back() * 1e3},
           {"samples", s.size()},
           {"steps_per_sample", steps},
           {"forward_ms", t.forward_ms},
           {"backward_ms", t.backward_ms},
           {"optimizer_ms", t.optimizer_ms},
           {"model_gib", static_cast<double>(model.device_bytes()) / 1073741824.0},
           {"device_used_gib", static_cast<double>(t.peak_bytes) / 1073741824.0},
           {"loss_first", t.loss_first},
           {"loss_last", t.loss_last},
           {"flops_per_token", fpt},
           {"peak_tflops", peak / 1e12},
           {"profile", model.profile(accum, Hyper{})}};
  std::cout << out.dump() << std::endl;
  return 0;
}

// CUDA-event milliseconds of `work` on `s`.
template <class F>
double event_ms(cudaStream_t s, F&& work) {
  gpu::Event start, stop;
  CUDA_CHECK(cudaEventRecord(start.get(), s));
  work();
  CUDA_CHECK(cudaEventRecord(stop.get(), s));
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

Json spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Json{{"median", v[v.size() / 2]}, {"min", v.front()}, {"max", v.back()}};
}

// Sample 0 is the warm-up (the step's graph is captured in it) and is not reported.
int time_decode(const std::string& name, int B, int prompt, int new_tokens, int samples) {
  const ModelShape m = model_shape(name);
  const int seq = m.max_seq;
  if (prompt < 1 || new_tokens < 1 || prompt + new_tokens >= seq)
    throw Error("decode: PROMPT + NEW must stay below the model's " + std::to_string(seq) + " positions");
  gpu::Stream stream;
  GptDecoder d(m, B, seq, stream.get(), B * prompt);
  d.init(1234);
  std::mt19937_64 rng(7);
  std::vector<std::vector<int>> prompts(static_cast<std::size_t>(B));
  for (auto& p : prompts)
    for (int i = 0; i < prompt; ++i) p.push_back(static_cast<int>(rng() % static_cast<unsigned long long>(m.vocab)));
  std::vector<double> prefill_ms, step_ms, tokens_per_s;
  for (int i = 0; i <= samples; ++i) {
    const double pre = event_ms(stream.get(), [&] { d.prefill(prompts); });
    const double all = event_ms(stream.get(), [&] {
      for (int k = 0; k < new_tokens; ++k) d.step_graphed();
    });
    if (i == 0) continue;
    prefill_ms.push_back(pre);
    step_ms.push_back(all / new_tokens);
    tokens_per_s.push_back(static_cast<double>(B) * new_tokens / (all / 1e3));
  }
  cudaDeviceProp prop{};
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  d.prefill(prompts);
  const Json profile = d.profile_step();
  const std::vector<int> first = d.sequences().front();
  Json out{{"decode", m.name},
           {"batch", B},
           {"prompt", prompt},
           {"new_tokens", new_tokens},
           {"gpu", prop.name},
           {"samples", samples},
           {"tokens_per_s", spread(tokens_per_s)},
           {"step_ms", spread(step_ms)},
           {"prefill_ms", spread(prefill_ms)},
           {"decoder_gib", static_cast<double>(d.device_bytes()) / 1073741824.0},
           {"profile_ms", profile},
           {"first_sequence_tail",
            std::vector<int>(first.end() - std::min<long long>(8, static_cast<long long>(first.size())), first.end())}};
  std::cout << out.dump() << std::endl;
  return 0;
}

template <typename T>
void write_raw(std::ofstream& f, const T& v) {
  f.write(reinterpret_cast<const char*>(&v), sizeof v);
}

// Weights file (little-endian): 8 bytes "SBGPT001", int32 layers, width, heads, padded_vocab, seq,
// int64 count, then count fp32 values in parameter_layout order, each matrix [out, in] row-major
// (PyTorch's nn.Linear / nn.Embedding layout). Tokens file: int32 B, T, then B x T inputs and
// B x T targets.
// A file of the dump, or an error naming it (a dump that silently wrote nothing cost a GPU run).
std::ofstream open_for_writing(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot be written");
  return f;
}

int dump(const std::string& dir, const std::string& name, int B, int T) {
  const ModelShape m = model_shape(name);
  if (m.family != Family::kGpt2) throw Error("dump: the PyTorch peer (torch_gpt.py) is GPT-2 only; got " + name);
  gpu::Stream stream;
  GptModel model(m, B, T, 4321, stream.get());
  std::mt19937_64 rng(99);
  std::vector<int> tokens(static_cast<std::size_t>(B) * T), targets(tokens.size());
  for (int& t : tokens) t = static_cast<int>(rng() % static_cast<unsigned long long>(m.vocab));
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      targets[static_cast<std::size_t>(b) * T + t] = tokens[static_cast<std::size_t>(b) * T + (t + 1) % T];
  model.set_tokens(tokens, targets);
  const std::vector<float> w = model.master();
  std::filesystem::create_directories(dir);
  {
    std::ofstream f = open_for_writing(dir + "/gpt_weights.bin");
    f.write("SBGPT001", 8);
    for (int v : {m.layers, m.width, m.heads, m.padded_vocab, T}) write_raw(f, static_cast<std::int32_t>(v));
    write_raw(f, static_cast<std::int64_t>(w.size()));
    f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
  }
  {
    std::ofstream f = open_for_writing(dir + "/gpt_tokens.bin");
    write_raw(f, static_cast<std::int32_t>(B));
    write_raw(f, static_cast<std::int32_t>(T));
    f.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 4));
    f.write(reinterpret_cast<const char*>(targets.data()), static_cast<std::streamsize>(targets.size() * 4));
  }
  Json losses = Json::array();
  for (int i = 0; i < 10; ++i) {
    model.step(1, Hyper{});
    losses.push_back(model.loss());
  }
  open_for_writing(dir + "/gpt_losses.json") << losses.dump() << "\n";
  std::cout << Json{{"dump", dir}, {"model", m.name}, {"batch", B}, {"seq", T}, {"losses", losses}}.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "gradcheck";
    if (mode == "gradcheck") {
      const std::string att = argc > 2 ? argv[2] : "cudnn", name = argc > 3 ? argv[3] : "gpt2-tiny";
      const Attention attention = attention_from_name(att);
      const GradCheck g = gradient_check(name, 2, 32, 24, 0.1, 7, attention);
      std::cout << Json{{"gradient_check", g.to_json()}, {"attention", att}, {"model", name}}.dump() << std::endl;
      // A fixed batch: the loss must fall over 10 steps.
      gpu::Stream stream;
      GptModel model(model_shape(name), 4, 64, 11, stream.get(), attention);
      model.step(1, Hyper{});
      const float first = model.loss();
      for (int i = 0; i < 9; ++i) model.step(1, Hyper{1e-3f});
      const float last = model.loss();
      std::cout << Json{{"train_check", {{"loss_first", first}, {"loss_last", last}, {"ok", last < first}}}}.dump()
                << std::endl;
      return g.ok && last < first ? 0 : 1;
    }
    if (mode == "time" && argc >= 5)
      return time_model(argv[2], std::stoi(argv[3]), std::stoi(argv[4]), arg_int(argc, argv, 5, 1),
                        arg_int(argc, argv, 6, 5), arg_int(argc, argv, 7, 10),
                        attention_from_name(argc > 8 ? argv[8] : "cudnn"), arg_int(argc, argv, 9, 0),
                        argc > 10 ? argv[10] : "bf16");
    if (mode == "dump" && argc >= 3)
      return dump(argv[2], argc > 3 ? argv[3] : "gpt2-tiny", arg_int(argc, argv, 4, 4), arg_int(argc, argv, 5, 64));
    if (mode == "decode" && argc >= 6)
      return time_decode(argv[2], std::stoi(argv[3]), std::stoi(argv[4]), std::stoi(argv[5]),
                         arg_int(argc, argv, 6, 5));
    std::cerr << "usage: scalebench-gpt-check gradcheck [cudnn|naive] [gpt2-tiny|llama-tiny] | time MODEL BATCH SEQ "
                 "[ACCUM] [SAMPLES] [STEPS] [cudnn|naive] [LAYERS] [bf16|fp8] | dump DIR [MODEL] [BATCH] [SEQ] | "
                 "decode MODEL BATCH PROMPT NEW [SAMPLES]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
