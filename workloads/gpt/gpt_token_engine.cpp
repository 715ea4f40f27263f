// The infer workload's text-generation engine (workloads/infer/engine.hpp): the token loop's
// iterations on GptDecoder, one forward pass each, with random weights or a checkpoint's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/splitmix64.hpp"
#include "workloads/gpt/checkpoint.hpp"
#include "workloads/gpt/gpt_decoder.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/infer/engine.hpp"

namespace scalebench::infer {

namespace {

// The checkpoint named by the request, checked against what the run asks of it; none without.
std::optional<gpt::Checkpoint> checkpoint_of(const TokenEngineRequest& r) {
  if (r.checkpoint.empty()) return std::nullopt;
  gpt::Checkpoint c = gpt::read_checkpoint(r.checkpoint);
  if (c.shape.name != gpt::model_shape(r.model).name)  // by the model's own name (gpt2-1.5b is gpt2-1558m)
    throw Error("checkpoint: " + r.checkpoint + " holds " + c.shape.name + ", the run's model is " + r.model);
  if (r.max_sequence > c.seq)
    throw Error("checkpoint: " + r.checkpoint + " was trained at seq " + std::to_string(c.seq) +
                " (its position table); prompt_tokens + output_tokens = " + std::to_string(r.max_sequence));
  return c;
}

// Tokens as text, for a model of bytes: printable ASCII as it is, the rest escaped.
std::string as_text(const std::vector<int>& tokens) {
  std::string out;
  for (const int t : tokens) {
    if (t == '\n')
      out += "\\n";
    else if (t >= 32 && t < 127 && t != '\\')
      out += static_cast<char>(t);
    else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", t & 0xff);
      out += esc;
    }
  }
  return out;
}

class GptTokenEngine : public TokenEngine {
 public:
  explicit GptTokenEngine(const TokenEngineRequest& r)
      : request_(r),
        loaded_(checkpoint_of(r)),
        shape_(loaded_ ? loaded_->shape : gpt::model_shape(r.model)),
        decoder_(shape_, r.slots, r.max_sequence, stream_.get(), prefill_rows(r)) {
    if (loaded_) {
      // Laid out for a decoder of the run's positions (the position table's first rows, where the
      // model has one): the cache and attention are sized for the run, not the training.
      decoder_.load(gpt::in_layout_order(std::move(loaded_->values), gpt::parameter_layout(shape_, loaded_->seq),
                                         gpt::parameter_layout(shape_, r.max_sequence)));
      trained_ = loaded_->trained;
      loaded_.reset();  // the host copy of the weights is not needed again
    } else {
      decoder_.init(r.seed);
    }
  }

  int slots() const override { return decoder_.slots(); }

  void run(const Iteration& it) override {
    // Every slot decoding and none admitted (a full engine's steady state): the step as one CUDA
    // graph launch, rather than a launch per kernel.
    if (it.admit.empty() && static_cast<int>(it.decode.size()) == decoder_.slots()) {
      decoder_.step_graphed();
      decoder_.synchronize();
      return;
    }
    std::vector<gpt::SlotPrompt> admit;
    for (const Admission& a : it.admit) admit.push_back({a.slot, prompt(a.query, a.shape.prompt_tokens)});
    decoder_.iterate(admit, it.decode);
  }

  Json describe() const override {
    Json d{{"model", shape_.name},
           {"engine", "gpt decoder: KV cache, continuous batching, one forward pass an iteration"},
           {"precision", "bf16"},
           {"weights", request_.checkpoint.empty() ? "random (GPT-2's initialisation)" : request_.checkpoint},
           {"vocabulary", shape_.vocab},
           {"slots", decoder_.slots()},
           {"max_sequence", decoder_.seq()},
           {"max_prefill_tokens", request_.max_prefill_tokens},
           {"device_gib", static_cast<double>(decoder_.device_bytes()) / 1073741824.0}};
    if (!trained_.empty()) d["trained"] = trained_;
    return d;
  }

  // Two sequences (one with a model of one slot), decoded with the cache as a run decodes them;
  // then every prefix run afresh in a slot of its own, whose greedy pick must be the cached
  // choice or, where two logits are that close, within a twentieth of the logits' spread of it.
  Check check(int tokens) override {
    const int n = std::min(2, decoder_.slots());
    const int half = std::max(1, decoder_.seq() / 2);  // prompts leave half the sequence to decode
    std::vector<std::vector<int>> prompts;
    if (shape_.vocab == 256) {  // bytes: a prompt of text
      const std::string text = std::string("The meaning of life is").substr(0, static_cast<std::size_t>(half));
      prompts.emplace_back(text.begin(), text.end());
    } else {
      prompts.push_back(prompt(1ull << 40, std::min(12, half)));
    }
    if (n > 1) prompts.push_back(prompt(2ull << 40, std::min(20, half)));
    std::vector<gpt::SlotPrompt> admit;
    std::vector<int> decode;
    for (int b = 0; b < n; ++b) {
      admit.push_back({b, prompts[static_cast<std::size_t>(b)]});
      decode.push_back(b);
    }
    const int room = decoder_.seq() - static_cast<int>(std::max(prompts.front().size(), prompts.back().size()));
    tokens = std::max(1, std::min(tokens, room - 1));
    decoder_.iterate(admit, {});
    for (int k = 1; k < tokens; ++k) decoder_.iterate({}, decode);
    const std::vector<std::vector<int>> cached = decoder_.sequences();
    Check c;
    double worst = 0;
    int exact = 0;
    for (int b = 0; b < n; ++b) {
      const std::vector<int>& seq = cached[static_cast<std::size_t>(b)];
      const std::size_t p = prompts[static_cast<std::size_t>(b)].size();
      for (int k = 0; k < tokens; ++k) {
        const std::vector<int> prefix(seq.begin(), seq.begin() + static_cast<long>(p) + k);
        decoder_.iterate({{b, prefix}}, {});
        const std::vector<float> logits = decoder_.last_logits().front();
        const int chosen = seq[p + static_cast<std::size_t>(k)];
        const auto best = std::max_element(logits.begin(), logits.end());
        double mean = 0, var = 0;
        for (const float v : logits) mean += v / static_cast<double>(logits.size());
        for (const float v : logits) var += (v - mean) * (v - mean) / static_cast<double>(logits.size());
        const double gap = (*best - logits[static_cast<std::size_t>(chosen)]) / std::max(std::sqrt(var), 1e-30);
        worst = std::max(worst, gap);
        exact += chosen == static_cast<int>(best - logits.begin());
        c.wrong += gap > 0.05;
        ++c.rows;
      }
    }
    c.details = Json{{"compared", "each greedy choice made with the KV cache against the same prefix run afresh"},
                     {"sequences", n},
                     {"tokens_each", tokens},
                     {"same_choice", exact},
                     {"largest_gap_x_spread", worst},
                     {"tolerance_x_spread", 0.05}};
    if (shape_.vocab == 256)
      c.details["text"] = as_text(cached.front());  // the prompt and what the model wrote after it
    return c;
  }

 private:
  // Token rows one iteration may hold: every slot decoding and the prompts admitted beside them,
  // and at least what check() admits at once (two prompts of at most 22 tokens) and runs afresh.
  static int prefill_rows(const TokenEngineRequest& r) {
    const long long prompts = r.max_prefill_tokens > 0 ? std::max(r.max_prefill_tokens, r.longest_prompt)
                                                       : static_cast<long long>(r.slots) * r.longest_prompt;
    const long long most = static_cast<long long>(r.slots) * r.max_sequence;
    return static_cast<int>(std::min<long long>(std::max<long long>(prompts + r.slots, 48), most));
  }
  std::vector<int> prompt(std::uint64_t query, int tokens) const {
    std::vector<int> p(static_cast<std::size_t>(tokens));
    for (int i = 0; i < tokens; ++i)
      p[static_cast<std::size_t>(i)] =
          static_cast<int>(splitmix64(request_.seed ^ splitmix64(query * 0x10000ull + static_cast<std::uint64_t>(i))) %
                           static_cast<std::uint64_t>(shape_.vocab));
    return p;
  }

  TokenEngineRequest request_;
  std::optional<gpt::Checkpoint> loaded_;  // until its values are on the device
  gpt::ModelShape shape_;
  Json trained_ = Json::object();
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
