#pragma once
// What the harness drives: an inference engine that runs a batch of samples on one of its streams
// and says when that batch is done. The harness (scenario_runner.hpp) decides which samples go
// together and on which stream; the engine owns the device, the model and the samples' data (the
// sample pool, loaded before the run as LoadGen's performance samples are).
//
// The engines are the workloads' own: each is defined in its workload's folder, beside the model
// it runs, and declared here by its maker, which the infer workload (infer_main.cpp) links and
// calls by model. A workload folder does not include another's, so this folder, below them all,
// names the makers: the first is the train workload's forward pass (workloads/train/train_engine.hpp).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json.hpp"
#include "workloads/infer/token_loop.hpp"

namespace scalebench::infer {

class Engine {
 public:
  virtual ~Engine() = default;

  // How many batches may run at once (one per stream) and the most samples in one.
  virtual int streams() const = 0;
  virtual int max_batch() const = 0;
  // Samples in the pool; a sample index below is taken modulo this.
  virtual std::uint64_t pool_samples() const = 0;

  // Starts a batch of `samples` (1 to max_batch() indices into the pool) on `stream` and returns
  // without waiting for it. Called from one thread (the issuing one).
  virtual void enqueue(int stream, std::span<const std::uint64_t> samples) = 0;
  // Waits until the oldest batch enqueued on `stream` and not yet waited for is done: a stream's
  // batches finish in the order they were enqueued. Called from one thread per stream (that
  // stream's completion thread), concurrently with enqueue.
  virtual void wait_oldest(int stream) = 0;

  // Runs `samples` as one batch on `stream`, waits, and returns each sample's output
  // (output_size() floats a sample): what the check compares. Not while a run uses the engine.
  virtual std::vector<float> outputs(int stream, std::span<const std::uint64_t> samples) = 0;
  virtual int output_size() const = 0;

  // What the engine is, for the records: its model, precision, batch sizes and graphs.
  virtual Json describe() const = 0;
};

// The engine does not fit on the device (its batch sizes and streams): the run is skipped with
// this reason, not failed, as a point the GPU cannot run is in every workload.
class EngineDoesNotFit : public Error {
 public:
  using Error::Error;
};

// What an engine is built for: the model, its precision and the batch sizes it prepares
// (ascending; batch_buckets.hpp), on the current device.
struct EngineRequest {
  std::string model;
  int image = 0;  // 0: the model's own
  std::string precision = "fp16";
  std::vector<int> batch_sizes = {1};
  int streams = 1;
  std::uint64_t pool_samples = 1024;
  std::uint64_t seed = 1;  // weights and the sample pool
  bool search = true;      // time the candidate kernels (cuDNN's algorithm search) rather than take the first
  std::string conv_api = "best";
  // int8 and fp8e4m3: the first this many convolutions in fp16; -1: the count timing finds fastest.
  int fp16_convolutions = -1;
};

// The train workload's CNNs, forward pass only (workloads/train/train_engine.cpp); throws
// EngineDoesNotFit when out of device memory. Built only with SCALEBENCH_HAVE_CUDA.
std::unique_ptr<Engine> make_train_engine(const EngineRequest& request);

// Text generation: an engine that runs the token loop's iterations (token_loop.hpp) in its slots,
// one at a time, with its own prompts (a query's prompt is made from its number, so every run
// asks the same).
class TokenEngine {
 public:
  virtual ~TokenEngine() = default;
  virtual int slots() const = 0;
  // Runs `it` and returns when its tokens are out: each admission's prompt of its shape's length
  // run in its slot and its first token chosen, one more token in each decode slot.
  virtual void run(const Iteration& it) = 0;
  // What the engine is, for the records.
  virtual Json describe() const = 0;
  // The check, before a run (it uses the slots; a run starts them afresh): a few sequences decoded
  // `tokens` tokens with the cache, each choice compared with the same prefix run afresh without
  // one (the step-by-step reference). `wrong` of `rows` choices differ beyond rounding.
  struct Check {
    Json details;
    long long wrong = 0, rows = 0;
  };
  virtual Check check(int tokens) = 0;
};

// What a token engine is built for: the model, its slots, the longest prompt and the most tokens
// a sequence holds (prompt and output), and the prompt tokens one iteration takes.
struct TokenEngineRequest {
  std::string model;
  std::string checkpoint;  // the weights (the gpt workload's `save`); empty: random
  int slots = 1;
  int longest_prompt = 1;
  int max_sequence = 2;
  int max_prefill_tokens = 0;  // 0: every slot's prompt at once
  std::uint64_t seed = 1;      // weights and prompts
};

// The gpt workload's decoder (workloads/gpt/gpt_token_engine.cpp): GPT-2 family, bf16, random
// weights or a checkpoint's; throws EngineDoesNotFit when out of device memory, Error for a model
// it does not run or a checkpoint that is not the model's (naming the file).
// Built only with SCALEBENCH_HAVE_CUDA.
std::unique_ptr<TokenEngine> make_gpt_engine(const TokenEngineRequest& request);

}  // namespace scalebench::infer
