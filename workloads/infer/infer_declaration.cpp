// The infer workload's declaration in the registry (catalog/registry.hpp): MLPerf's scenarios on
// the train workload's models, forward pass only, and text generation on the gpt workload's GPT-2
// models. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

namespace scalebench {

WorkloadDef train_declaration();
WorkloadDef gpt_declaration();

WorkloadDef infer_declaration() {
  WorkloadDef d;
  d.name = "infer";
  d.help =
      "inference under MLPerf's scenarios as LoadGen runs them (offline, server, single_stream, multi_stream) on "
      "the train workload's models: queries issued on a steady clock, dynamic batching over CUDA streams, latency "
      "percentiles, queries and samples per second, and a VALID/INVALID verdict against MLPerf's rules with the "
      "reason; and text generation on the gpt workload's models (offline, server: tokens/s, TTFT and TPOT "
      "against MLPerf's LLM bounds) (docs/infer.md)";
  // The models are train's and the gpt workload's, declared there once.
  ParamDef model = *train_declaration().find("model");
  const WorkloadDef gpt = gpt_declaration();
  for (const std::string& name : gpt.find("model")->choices) model.choices.push_back(name);
  model.help =
      "the network: the train workload's (its forward pass, batch norm from running statistics), or one of the "
      "gpt workload's (GPT-2, Llama-shaped), which generate text (greedy decoding with a KV cache, continuous "
      "batching; offline and server; tokens/s, TTFT and TPOT)";
  d.params = {
      model,
      {"image", ParamType::kInt, 0, {}, 0, "image height and width; 0: the model's own (224, 299 for the Inceptions)"},
      {"precision",
       ParamType::kEnum,
       "auto",
       {"auto", "fp16", "bf16", "fp32", "int8", "fp8e4m3"},
       {},
       "activations and weights (fp32: no TF32); auto: fp16, and bf16 for text generation (its only one); int8 "
       "and fp8e4m3 (CNNs): cuDNN's quantized convolutions, each batch norm folded in, per-channel weight scales, "
       "activation scales calibrated on the sample pool, the first convolutions in fp16 (fp16_convolutions)"},
      {"fp16_convolutions",
       ParamType::kIntOrAuto,
       "auto",
       {},
       0,
       "int8 and fp8e4m3: the first this many convolutions (the image's first) run in fp16, the rest in 8 bits, "
       "as TensorRT keeps a layer in fp16 where its 8-bit kernel is slower; auto: each convolution after the "
       "image's timed both ways and the count whose sum is least (the image's always in fp16)"},
      {"scenario",
       ParamType::kEnum,
       "offline",
       {"offline", "server", "single_stream", "multi_stream"},
       {},
       "offline: every sample in one query, samples/s; server: Poisson arrivals at target_qps, valid while the "
       "p99 latency is within the bound; single_stream: one sample at a time, the next when it completes, p90 "
       "latency; multi_stream: 8 samples a query, one at a time, p99 latency"},
      {"max_batch",
       ParamType::kInt,
       128,
       {},
       1,
       "most samples in one batch; offline runs full batches of it, server batches of 1, 2, 4, ... up to it; "
       "text generation: the sequences decoded at once (the decoder's slots)",
       4096},
      {"batch_timeout_ms",
       ParamType::kNumber,
       2.0,
       {},
       0,
       "dynamic batching: a batch waits at most this long (from its oldest query) for more queries before it "
       "goes (server; single_stream and multi_stream send at once)"},
      {"dispatch",
       ParamType::kEnum,
       "when_idle",
       {"when_idle", "on_timeout"},
       {},
       "server: where a batch goes once its timeout ends (a full one goes at once, queueing behind one in flight); "
       "when_idle: only to a stream with nothing in flight, gathering more queries on the host meanwhile, as "
       "Triton's dynamic batcher waits for a free instance; on_timeout: to any stream, queueing on the device"},
      {"streams",
       ParamType::kInt,
       2,
       {},
       1,
       "CUDA streams batches run on at once, each with its own nets (activations) and copy of the weights",
       16},
      {"target_qps",
       ParamType::kNumber,
       0.0,
       {},
       0,
       "server: the arrival rate (queries/s); 0: search for the highest rate whose run is valid"},
      {"latency_bound_ms",
       ParamType::kNumber,
       0.0,
       {},
       0,
       "server: the bound the p99 latency must meet; 0: the rule's (resnet50: 15 ms, others 10 ms); another "
       "bound makes the verdict INVALID (not MLPerf's)"},
      {"min_duration_s",
       ParamType::kNumber,
       600.0,
       {},
       0,
       "the run lasts at least this long (MLPerf's rule: 600 s); a shorter run is measured but INVALID"},
      {"min_queries",
       ParamType::kIntOrAuto,
       "auto",
       {},
       1,
       "the run completes at least this many queries; auto: the rule's (multi_stream 662, others 100; offline: "
       "one query of at least 24,576 samples for resnet50); fewer than the rule's is INVALID"},
      {"seed", ParamType::kInt, 1, {}, 0, "weights, the sample pool and the server's arrival schedule"},
      {"prompt_tokens", ParamType::kInt, 128, {}, 1, "text generation: tokens in every query's prompt", 8192},
      {"output_tokens", ParamType::kInt, 256, {}, 1, "text generation: tokens every query asks for", 8192},
      {"max_prefill_tokens",
       ParamType::kInt,
       2048,
       {},
       0,
       "text generation: prompt tokens admitted in one iteration beside the decoding sequences (one prompt "
       "always); 0: every free slot's at once"},
      {"checkpoint",
       ParamType::kText,
       "",
       {},
       {},
       "text generation: the weights, a file the gpt workload's save wrote after training on text (the model "
       "must be the file's); empty: random weights with the gpt workload's initialisation"},
      {"latency_class",
       ParamType::kEnum,
       "server",
       {"server", "interactive"},
       {},
       "text generation, server: the p99 bounds MLPerf sets for Llama 2 70B: server (TTFT 2000 ms, TPOT 200 ms) "
       "or interactive (450 ms, 40 ms)"},
      {"search_trials",
       ParamType::kInt,
       10,
       {},
       1,
       "server with target_qps 0: most runs the search makes (each min_duration_s long)"},
      {"search_tolerance",
       ParamType::kNumber,
       0.05,
       {},
       0.001,
       "server with target_qps 0: the search stops once the highest valid and lowest invalid rates are within "
       "this share of each other"},
      {"algo",
       ParamType::kEnum,
       "search",
       {"search", "heuristic"},
       {},
       "each net's convolution algorithms: search (cuDNN's Find, timed) or heuristic (its first pick, fast to "
       "build)"},
      {"conv_api",
       ParamType::kEnum,
       "best",
       {"best", "legacy", "graph", "fused"},
       {},
       "convolution algorithms from cuDNN's legacy API, its graph API's plans, or the better of both; or fused "
       "(fp16, the ResNets): each convolution with its folded batch norm, residual add and ReLU one cuDNN graph, as "
       "the 8-bit engines always run"},
      timing::warmup(20, "batches of max_batch run before the scenario, timed to size offline's query"),
      timing::check("a few samples run one by one against the same samples run in one batch, within a stated "
                    "tolerance (batching, padding and graphs do not change answers)"),
  };
  d.needs_gpus = true;
  d.measurement_params = {"warmup",           "check", "min_duration_s", "min_queries", "search_trials",
                          "search_tolerance", "algo"};
  d.table_columns = {"model", "precision", "scenario"};
  return d;
}

}  // namespace scalebench
