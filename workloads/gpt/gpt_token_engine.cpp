// The infer workload's text-generation engine (workloads/infer/engine.hpp): the token loop's
// iterations on GptDecoder, one forward pass each.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpt/gpt_decoder.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/infer/engine.hpp"

namespace scalebench::infer {

namespace {

// splitmix64, for prompts that depend on the query's number and the seed only.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class GptTokenEngine : public TokenEngine {
 public:
  explicit GptTokenEngine(const TokenEngineRequest& r)
      : request_(r),
        shape_(gpt::model_shape(r.model)),
        decoder_(shape_, r.slots, r.max_sequence, stream_.get(), prefill_rows(r)) {
    decoder_.init(r.seed);
  }

  int slots() const override { return decoder_.slots(); }

  void run(const Iteration& it) override {
    std::vector<gpt::SlotPrompt> admit;
    for (const Admission& a : it.admit) admit.push_back({a.slot, prompt(a.query, a.shape.prompt_tokens)});
    decoder_.iterate(admit, it.decode);
  }

  Json describe() const override {
    return Json{{"model", shape_.name},
                {"engine", "gpt decoder: KV cache, continuous batching, one forward pass an iteration"},
                {"precision", "bf16"},
                {"weights", "random (GPT-2's initialisation)"},
                {"slots", decoder_.slots()},
                {"max_sequence", decoder_.seq()},
                {"max_prefill_tokens", request_.max_prefill_tokens},
                {"device_gib", static_cast<double>(decoder_.device_bytes()) / 1073741824.0}};
  }

 private:
  // Token rows one iteration may hold: every slot decoding, and the prompts admitted beside them.
  static int prefill_rows(const TokenEngineRequest& r) {
    const long long prompts = r.max_prefill_tokens > 0 ? std::max(r.max_prefill_tokens, r.longest_prompt)
                                                       : static_cast<long long>(r.slots) * r.longest_prompt;
    return static_cast<int>(std::min<long long>(prompts + r.slots, static_cast<long long>(r.slots) * r.max_sequence));
  }
  std::vector<int> prompt(std::uint64_t query, int tokens) const {
    std::vector<int> p(static_cast<std::size_t>(tokens));
    for (int i = 0; i < tokens; ++i)
      p[static_cast<std::size_t>(i)] =
          static_cast<int>(mix(request_.seed ^ mix(query * 0x10000ull + i)) % static_cast<std::uint64_t>(shape_.vocab));
    return p;
  }

  TokenEngineRequest request_;
  gpt::ModelShape shape_;
  gpu::Stream stream_;
  gpt::GptDecoder decoder_;
};

}  // namespace

std::unique_ptr<TokenEngine> make_gpt_engine(const TokenEngineRequest& request) {
  try {
    return std::make_unique<GptTokenEngine>(request);
  } catch (const Error& e) {
    // The decoder's own check, or an allocation CUDA refused (cudaErrorMemoryAllocation's text).
    if (std::string(e.what()).find("out of memory") != std::string::npos) throw EngineDoesNotFit(e.what());
    throw;
  }
}

}  // namespace scalebench::infer
