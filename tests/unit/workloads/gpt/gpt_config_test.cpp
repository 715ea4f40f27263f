// The gpt workload's run configuration (gpt_config.hpp): its parameters and their errors, the
// tensor-parallel plan, ZeRO's shards, pipeline stages and the registry's declaration. The model
// shapes and layouts are gpt_model_shape_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"
#include "tests/unit/error_text.hpp"
#include "workloads/gpt/gpt_config.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
using test_support::error_of;
}  // namespace

TEST(GptConfig, TpPlanSplitsByHead) {
  const ModelShape s = model_shape("gpt2-124m");
  const std::vector<TensorShard> p = tp_plan(s, 1024, 4, 1);
  auto find = [&](const std::string& n) {
    for (const TensorShard& x : p)
      if (x.tensor == n) return x;
    throw Error("no " + n);
  };
  const TensorShard qkv = find("h.0.qkv.weight");
  EXPECT_EQ(qkv.split, Split::kRows);
  // Heads 3..5 (of 12, 64 wide) of Q, of K and of V.
  ASSERT_EQ(qkv.ranges.size(), 3u);
  EXPECT_EQ(qkv.ranges[0], (Range{192, 384}));
  EXPECT_EQ(qkv.ranges[1], (Range{768 + 192, 768 + 384}));
  EXPECT_EQ(qkv.ranges[2], (Range{1536 + 192, 1536 + 384}));
  EXPECT_EQ(qkv.numel, 3 * 192 * 768);
  EXPECT_EQ(find("h.0.qkv.bias").numel, 3 * 192);
  const TensorShard proj = find("h.0.proj.weight");
  EXPECT_EQ(proj.split, Split::kCols);
  EXPECT_EQ(proj.ranges[0], (Range{192, 384}));
  EXPECT_EQ(proj.numel, 768 * 192);
  EXPECT_EQ(find("h.0.proj.bias").split, Split::kReplicated);
  EXPECT_EQ(find("h.0.up.weight").ranges[0], (Range{768, 1536}));
  EXPECT_EQ(find("h.0.down.weight").split, Split::kCols);
  EXPECT_EQ(find("h.0.ln1.weight").split, Split::kReplicated);
  // The embedding (GPT-2's head too) is replicated: every tp rank computes the whole logits.
  EXPECT_EQ(find("wte").split, Split::kReplicated);
  EXPECT_EQ(find("wte").numel, 50304LL * 768);
  EXPECT_EQ(find("wpe").split, Split::kReplicated);
}

TEST(GptConfig, TpShardsCoverEveryElementOnce) {
  for (const char* name : {"gpt2-124m", "llama3-8b"}) {
    const ModelShape s = model_shape(name, 2);
    for (int tp : {1, 2, 4}) {
      const std::vector<Tensor> layout = parameter_layout(s, 1024);
      std::vector<long long> sharded(layout.size(), 0), replicated(layout.size(), 0);
      for (int r = 0; r < tp; ++r) {
        const std::vector<TensorShard> p = tp_plan(s, 1024, tp, r);
        ASSERT_EQ(p.size(), layout.size());
        for (std::size_t i = 0; i < p.size(); ++i)
          (p[i].split == Split::kReplicated ? replicated : sharded)[i] += p[i].numel;
      }
      for (std::size_t i = 0; i < layout.size(); ++i) {
        if (replicated[i]) {
          EXPECT_EQ(replicated[i], tp * layout[i].numel()) << name << " " << layout[i].name;
        } else {
          EXPECT_EQ(sharded[i], layout[i].numel()) << name << " tp " << tp << " " << layout[i].name;
        }
      }
    }
  }
}

TEST(GptConfig, LlamaTpSplitsKvHeads) {
  const ModelShape s = model_shape("llama3-8b", 1);
  const std::vector<TensorShard> p = tp_plan(s, 8192, 8, 7);
  const TensorShard& qkv = p[2];  // wte, ln1, qkv
  ASSERT_EQ(qkv.tensor, "h.0.qkv.weight");
  EXPECT_EQ(qkv.ranges[0], (Range{28 * 128, 32 * 128}));           // query heads 28..31
  EXPECT_EQ(qkv.ranges[1], (Range{4096 + 7 * 128, 4096 + 1024}));  // key head 7
  EXPECT_EQ(qkv.ranges[2], (Range{5120 + 7 * 128, 5120 + 1024}));  // value head 7
}

TEST(GptConfig, TpMustDivideHeads) {
  const std::string e = error_of([] { tp_plan(model_shape("gpt2-124m"), 1024, 5, 0); });
  EXPECT_EQ(e.rfind("tp: 5 does not divide the heads (12)", 0), 0u) << e;
  EXPECT_NE(error_of([] { check_tp(model_shape("gpt2-1558m"), 2); }).find("tp: 2 does not divide the heads (25)"),
            std::string::npos);
  EXPECT_NE(error_of([] { check_tp(model_shape("llama3-8b"), 16); }).find("KV heads"), std::string::npos);
  EXPECT_EQ(error_of([] { check_tp(model_shape("gpt2-124m"), 4); }), "");
}

TEST(GptConfig, ZeroPaddingCutsIntoEqualAlignedShards) {
  const std::vector<Tensor> t = parameter_layout(model_shape("gpt2-tiny"), 32);
  long long total = 0;
  for (const Tensor& x : t) total += x.numel();
  const long long padded = zero_padded_size(total, 4, 64);
  EXPECT_EQ(padded % 256, 0);
  EXPECT_GE(padded, total);
  EXPECT_LT(padded, total + 256);
}

TEST(GptConfig, ParamsAndErrorsNameTheField) {
  const Config c = Config::from_params(Json::object());
  EXPECT_EQ(c.model, "gpt2-124m");
  EXPECT_EQ(c.seq, 1024);
  EXPECT_EQ(c.micro_batch, 16);
  EXPECT_EQ(c.dp, 0);  // the run's ranks / tp
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.zero, 0);
  const Config d = Config::from_params(Json{{"model", "gpt2-tiny"}, {"seq", 64}, {"micro_batch", 4}});
  EXPECT_EQ(d.shape().width, 64);
  auto err = [](const Json& p) { return error_of([&] { Config::from_params(p); }); };
  EXPECT_EQ(err(Json{{"model", "gpt5"}}).rfind("model:", 0), 0u);
  EXPECT_EQ(err(Json{{"seq", 2048}}).rfind("seq:", 0), 0u);
  EXPECT_EQ(err(Json{{"seq", 0}}).rfind("seq:", 0), 0u);
  EXPECT_EQ(err(Json{{"micro_batch", "x"}}).rfind("micro_batch:", 0), 0u);
  EXPECT_EQ(err(Json{{"grad_accum", -1}}).rfind("grad_accum:", 0), 0u);
  EXPECT_EQ(err(Json{{"precision", "fp16"}}).rfind("precision:", 0), 0u);
  EXPECT_EQ(err(Json{{"tp", 5}}).rfind("tp: 5 does not divide the heads", 0), 0u);
  EXPECT_EQ(err(Json{{"zero", 3}}).rfind("zero:", 0), 0u);
  EXPECT_EQ(err(Json{{"zero", 2}}).rfind("zero: 2; expected 0 or 1", 0), 0u);
  // Sequence parallelism splits a tp group's token rows: tp > 1 (tp 0 waits for the run's ranks),
  // and tp must divide micro_batch x seq.
  EXPECT_EQ(err(Json{{"sequence_parallel", true}}).rfind("sequence_parallel: splits the token rows", 0), 0u);
  EXPECT_EQ(err(Json{{"sequence_parallel", true}, {"tp", 1}}).rfind("sequence_parallel:", 0), 0u);
  EXPECT_EQ(err(Json{{"sequence_parallel", "yes"}, {"tp", 2}}).rfind("sequence_parallel: expected true or false", 0),
            0u);
  EXPECT_EQ(err(Json{{"sequence_parallel", true}, {"tp", 3}})
                .rfind("sequence_parallel: micro_batch x seq = 16384 token rows do not split into tp = 3", 0),
            0u);
  const Config sp = Config::from_params(Json{{"sequence_parallel", true}, {"tp", 2}});
  EXPECT_TRUE(sp.sequence_parallel);
  EXPECT_EQ(sp.to_json().at("sequence_parallel"), true);
  EXPECT_FALSE(c.sequence_parallel);
  EXPECT_FALSE(c.to_json().contains("sequence_parallel"));  // absent when off, as cuda_graph
  EXPECT_TRUE(Config::from_params(Json{{"sequence_parallel", true}, {"tp", 3}, {"micro_batch", 3}}).sequence_parallel);
  EXPECT_EQ(err(Json{{"bucket_mb", 0}}).rfind("bucket_mb:", 0), 0u);
  // save: the weights of a run on text, held whole by every rank.
  EXPECT_EQ(err(Json{{"save", "/tmp/x.ckpt"}}).rfind("save: /tmp/x.ckpt; only a run on text", 0), 0u);
  EXPECT_EQ(err(Json{{"save", "/tmp/x.ckpt"}, {"data", "fortunes"}, {"tp", 2}}).rfind("save:", 0), 0u);
  EXPECT_EQ(err(Json{{"save", 3}, {"data", "fortunes"}}).rfind("save: expected a file path", 0), 0u);
  EXPECT_EQ(Config::from_params(Json{{"save", "/tmp/x.ckpt"}, {"data", "fortunes"}}).save, "/tmp/x.ckpt");
  EXPECT_EQ(Config::from_params(Json{{"model", "llama-tiny"}, {"tp", 2}, {"seq", 64}}).tp, 2);
  EXPECT_EQ(
      err(Json{{"model", "llama-tiny"}, {"tp", 4}, {"seq", 64}}).rfind("tp: 4 does not divide the KV heads (2)", 0),
      0u);
  const Config par = Config::from_params(Json{{"dp", 2}, {"tp", 4}, {"zero", 1}, {"overlap", false}});
  EXPECT_EQ(par.dp, 2);
  EXPECT_EQ(par.tp, 4);
  EXPECT_EQ(par.zero, 1);
  EXPECT_FALSE(par.overlap);
  EXPECT_TRUE(c.overlap);
  EXPECT_EQ(c.bucket_mb, 25);
  EXPECT_EQ(err(Json{{"dp", -1}}).rfind("dp:", 0), 0u);
  EXPECT_EQ(err(Json{{"tp", "2"}}).rfind("tp:", 0), 0u);
  EXPECT_EQ(err(Json{{"layers", -2}}).rfind("layers:", 0), 0u);
  EXPECT_TRUE(Config::from_params(Json{{"recompute", true}}).recompute);
  EXPECT_EQ(err(Json{{"recompute", "yes"}}).rfind("recompute:", 0), 0u);
  // CUDA graphs: off by default and then absent from the point (points measured before it stay the
  // same points); a captured step replays its tokens and learning rate, so not with text.
  EXPECT_FALSE(c.cuda_graph);
  EXPECT_FALSE(c.to_json().contains("cuda_graph"));
  const Config graphed = Config::from_params(Json{{"cuda_graph", true}});
  EXPECT_TRUE(graphed.cuda_graph);
  EXPECT_EQ(graphed.to_json().at("cuda_graph"), true);
  EXPECT_EQ(err(Json{{"cuda_graph", 1}}).rfind("cuda_graph: expected true or false", 0), 0u);
  EXPECT_EQ(err(Json{{"cuda_graph", true}, {"data", "fortunes"}}).rfind("cuda_graph: applies to synthetic tokens", 0),
            0u);
  EXPECT_EQ(c.attention, "cudnn");
  EXPECT_EQ(Config::from_params(Json{{"attention", "naive"}}).attention, "naive");
  EXPECT_EQ(err(Json{{"attention", "flash"}}).rfind("attention: 'flash'", 0), 0u);
  // 8B-shaped layers on one GPU; grouped-query attention runs through cuDNN only.
  const Config l = Config::from_params(Json{{"model", "llama3-8b"}, {"layers", 4}, {"seq", 4096}, {"micro_batch", 2}});
  EXPECT_EQ(l.shape().layers, 4);
  EXPECT_EQ(l.shape().kv_heads, 8);
  EXPECT_EQ(err(Json{{"model", "llama3-8b"}, {"attention", "naive"}}).rfind("attention: naive", 0), 0u);
  EXPECT_EQ(err(Json{{"model", "llama3-8b"}, {"seq", 16384}}).rfind("seq:", 0), 0u);
}

// dp and tp against the run's ranks: 0s filled in, a mismatch names the field.
TEST(GptConfig, LayoutResolvedAgainstTheRanks) {
  const Config c = Config::from_params(Json::object()).resolved(4, 4);
  EXPECT_EQ(c.dp, 4);
  EXPECT_EQ(c.tp, 1);
  const Config t = Config::from_params(Json{{"tp", 0}, {"model", "gpt2-350m"}}).resolved(8, 4);
  EXPECT_EQ(t.tp, 4);
  EXPECT_EQ(t.dp, 2);
  const Config both = Config::from_params(Json{{"dp", 2}, {"tp", 2}}).resolved(4, 4);
  EXPECT_EQ(both.dp * both.tp, 4);
  auto err = [](const Json& p, int ranks, int per_node) {
    return error_of([&] { Config::from_params(p).resolved(ranks, per_node); });
  };
  EXPECT_EQ(err(Json{{"dp", 2}}, 4, 4).rfind("dp: dp x tp = 2 x 1 = 2 must equal the run's ranks (4)", 0), 0u);
  EXPECT_EQ(err(Json{{"tp", 4}}, 6, 6).rfind("tp: 4 does not divide the run's 6 ranks", 0), 0u);
  // tp 0 on 8 GPUs of a node: 8 does not divide GPT-2 124M's 12 heads.
  EXPECT_EQ(err(Json{{"tp", 0}}, 8, 8).rfind("tp: 8 does not divide the heads (12)", 0), 0u);
  // sequence_parallel with tp 0: checked once tp is known.
  const Json sp{{"tp", 0}, {"sequence_parallel", true}};
  EXPECT_TRUE(Config::from_params(sp).resolved(4, 4).sequence_parallel);
  EXPECT_EQ(err(sp, 1, 1).rfind("sequence_parallel: splits the token rows of a tensor-parallel group; needs tp > 1", 0),
            0u);
  EXPECT_EQ(
      err(Json{{"tp", 0}, {"sequence_parallel", true}, {"micro_batch", 1}, {"seq", 6}, {"model", "gpt2-tiny"}}, 4, 4)
          .rfind("sequence_parallel: micro_batch x seq = 6 token rows do not split into tp = 4", 0),
      0u);
}

// pp: stages against the ranks (dp 0 takes ranks / (tp x pp)) and the model's blocks; what the
// pipeline is not built with is an Error naming pp and the other field, not a different model.
TEST(GptConfig, PipelineStagesAndWhatTheyAreBuiltWith) {
  const Config two = Config::from_params(Json{{"pp", 2}}).resolved(2, 2);
  EXPECT_EQ(two.pp, 2);
  EXPECT_EQ(two.dp, 1);
  EXPECT_EQ(two.to_json().at("pp"), 2);
  EXPECT_EQ(Config::from_params(Json::object()).to_json().at("pp"), 1);
  EXPECT_EQ(Config::from_params(Json{{"pp", 2}}).resolved(8, 8).dp, 4);
  EXPECT_TRUE(Config::from_params(Json{{"pp", 2}, {"recompute", true}, {"attention", "naive"}}).recompute);
  auto err = [](const Json& p) { return error_of([&] { Config::from_params(p); }); };
  auto err_at = [](const Json& p, int ranks) {
    return error_of([&] { Config::from_params(p).resolved(ranks, ranks); });
  };
  EXPECT_EQ(err(Json{{"pp", 0}}).rfind("pp: must be a positive integer", 0), 0u);
  EXPECT_EQ(err(Json{{"pp", 3}, {"model", "gpt2-tiny"}}).rfind("pp: 3 stages need at least one block each", 0), 0u);
  EXPECT_EQ(err(Json{{"pp", 2}, {"model", "llama-tiny"}, {"seq", 64}})
                .rfind("pp: 2 pipeline stages are built for "
                       "GPT-2 only",
                       0),
            0u);
  const Config both = Config::from_params(Json{{"pp", 2}, {"tp", 2}, {"sequence_parallel", true}}).resolved(8, 4);
  EXPECT_EQ(both.dp, 2);
  EXPECT_EQ(both.tp * both.pp, 4);
  EXPECT_EQ(err(Json{{"pp", 2}, {"zero", 1}}).rfind("pp: 2 with zero 1 is not built", 0), 0u);
  EXPECT_EQ(err(Json{{"pp", 2}, {"precision", "fp8"}}).rfind("pp: 2 with precision fp8 is not built", 0), 0u);
  EXPECT_EQ(err(Json{{"pp", 2}, {"cuda_graph", true}}).rfind("pp: 2 with cuda_graph is not built", 0), 0u);
  EXPECT_EQ(err(Json{{"pp", 2}, {"data", "fortunes"}}).rfind("pp: 2 with data (fortunes) is not built", 0), 0u);
  // tp 0 resolves to the node's ranks: 4 x pp 2 does not divide 4 ranks.
  EXPECT_EQ(err_at(Json{{"pp", 2}, {"tp", 0}}, 4).rfind("pp: tp x pp = 8 does not divide the run's 4 ranks", 0), 0u);
  EXPECT_EQ(err_at(Json{{"pp", 2}}, 3).rfind("pp: tp x pp = 2 does not divide the run's 3 ranks", 0), 0u);
  EXPECT_EQ(
      err_at(Json{{"pp", 2}, {"dp", 2}}, 2).rfind("dp: dp x tp x pp = 2 x 1 x 2 = 4 must equal the run's ranks (2)", 0),
      0u);
}

// virtual_stages: the interleaved schedule's chunks, on a pipeline only, a block each at least,
// over a grad_accum that is a multiple of pp; in the params only when above 1.
TEST(GptConfig, VirtualStages) {
  const Config c = Config::from_params(Json{{"pp", 2}, {"virtual_stages", 2}, {"grad_accum", 8}}).resolved(2, 2);
  EXPECT_EQ(c.virtual_stages, 2);
  EXPECT_EQ(c.to_json().at("virtual_stages"), 2);
  EXPECT_FALSE(Config::from_params(Json{{"pp", 2}}).to_json().contains("virtual_stages"));
  EXPECT_EQ(Config::from_params(Json::object()).virtual_stages, 1);
  auto err = [](const Json& p) { return error_of([&] { Config::from_params(p); }); };
  EXPECT_EQ(err(Json{{"virtual_stages", 0}}).rfind("virtual_stages: must be a positive integer", 0), 0u);
  EXPECT_EQ(err(Json{{"virtual_stages", 2}}).rfind("virtual_stages: 2 model chunks a rank interleave", 0), 0u);
  const std::string odd = err(Json{{"pp", 4}, {"virtual_stages", 2}, {"grad_accum", 6}});
  EXPECT_EQ(odd.rfind("grad_accum: 6 micro-batches; with virtual_stages 2", 0), 0u) << odd;
  EXPECT_NE(odd.find("multiple of pp (4)"), std::string::npos) << odd;
  // gpt2-tiny's 2 blocks: pp 2 x 2 chunks would leave virtual stages without one.
  EXPECT_EQ(err(Json{{"pp", 2}, {"virtual_stages", 2}, {"grad_accum", 2}, {"model", "gpt2-tiny"}})
                .rfind("pp x virtual_stages: 2 x 2 virtual stages need at least one block each", 0),
            0u);
  EXPECT_NO_THROW(Config::from_params(Json{{"pp", 4}, {"virtual_stages", 3}, {"grad_accum", 4}}));
}

// The registry's declaration: its defaults are the configuration's, and its checks are
// gpt::Config's, naming the field.
TEST(GptConfig, RegistryDeclaration) {
  const WorkloadDef* d = find_workload("gpt");
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->needs_gpus);
  const Json defaults = with_defaults("gpt", Json::object());
  const Config c = Config::from_params(defaults), plain = Config::from_params(Json::object());
  EXPECT_EQ(c.to_json(), plain.to_json());
  EXPECT_EQ(defaults.at("micro_batch"), 16);
  EXPECT_EQ(defaults.at("tp"), 1);
  EXPECT_EQ(check_param_set(*d, Json::object()), "");
  EXPECT_EQ(check_param_set(*d, Json{{"tp", 5}}).rfind("tp: 5 does not divide the heads (12)", 0), 0u);
  EXPECT_EQ(check_param_set(*d, Json{{"model", "gpt2-1558m"}, {"tp", 2}}).rfind("tp: 2", 0), 0u);
  EXPECT_EQ(check_param_set(*d, Json{{"seq", 4096}}).rfind("seq:", 0), 0u);
  EXPECT_EQ(check_param_set(*d, Json{{"recompute", true}}), "");
  EXPECT_EQ(defaults.at("pp"), 1);
  EXPECT_EQ(check_param_set(*d, Json{{"pp", 2}}), "");
  EXPECT_EQ(check_param_set(*d, Json{{"pp", 2}, {"zero", 1}}).rfind("pp: 2 with zero 1", 0), 0u);
  EXPECT_EQ(check_param_set(*d, Json{{"cuda_graph", true}}), "");
  EXPECT_EQ(check_param_set(*d, Json{{"sequence_parallel", true}}).rfind("sequence_parallel:", 0), 0u);
  EXPECT_EQ(check_param_set(*d, Json{{"sequence_parallel", true}, {"tp", 2}}), "");
  EXPECT_NE(check_param_set(*d, Json{{"zero", 2}}).find("zero"), std::string::npos);
  EXPECT_EQ(defaults.at("overlap"), true);
  EXPECT_EQ(defaults.at("bucket_mb"), 25);
  EXPECT_EQ(check_param_set(*d, Json{{"model", "gpt2-tiny"}, {"seq", 64}}), "");
  EXPECT_EQ(defaults.at("attention"), "cudnn");
  EXPECT_EQ(check_param_set(*d, Json{{"attention", "naive"}}), "");
  EXPECT_EQ(check_param_set(*d, Json{{"attention", "flash"}}).rfind("attention:", 0), 0u);
}

// examples/gpt-scaling.yaml on a node of 8 GPUs: every run's dp x tp resolves against its GPUs, the
// dp variants run tp 1 and the tp variants one tp group of all the run's GPUs.
TEST(GptConfig, ScalingExampleResolvesAtEveryGpuCount) {
  const Experiment ex = load_experiment_file(std::string(SCALEBENCH_TEST_DATA) + "/../../examples/gpt-scaling.yaml");
  ClusterShape shape;
  shape.gpu = true;
  shape.gpus_per_node = shape.max_gpus_per_node = 8;
  const std::vector<RunSpec> runs = expand(ex, shape);
  int dp_runs = 0, tp_runs = 0;
  for (const RunSpec& r : runs) {
    if (!r.skip_reason.empty()) continue;  // pcie at one GPU
    const int gpus = r.gpus_per_node * r.nodes;
    const Config c = Config::from_params(r.params).resolved(gpus, r.gpus_per_node);
    EXPECT_EQ(c.dp * c.tp, gpus) << r.variant;
    if (r.variant.rfind("dp-", 0) == 0) {
      EXPECT_EQ(c.tp, 1);
      ++dp_runs;
    } else {
      EXPECT_EQ(c.tp, gpus) << r.variant;
      ++tp_runs;
    }
  }
  EXPECT_GE(dp_runs, 7);  // 1, 2, 4, 8 GPUs over NVLink; 2, 4, 8 over PCIe
  EXPECT_GE(tp_runs, 7);
}

TEST(GptConfig, Fp8PrecisionAndItsScalingParameters) {
  auto err = [](const Json& p) { return error_of([&] { Config::from_params(p); }); };
  const Config bf = Config::from_params(Json::object());
  EXPECT_FALSE(bf.fp8());
  EXPECT_FALSE(bf.to_json().contains("fp8_history"));  // absent with bf16: points stay those measured before
  const Config f8 = Config::from_params(Json{{"precision", "fp8"}});
  EXPECT_TRUE(f8.fp8());
  EXPECT_EQ(f8.fp8_history, 16);
  EXPECT_EQ(f8.fp8_margin, 0);
  EXPECT_EQ(f8.to_json().at("precision"), "fp8");
  EXPECT_EQ(f8.to_json().at("fp8_history"), 16);
  const Config tuned = Config::from_params(Json{{"precision", "fp8"}, {"fp8_history", 1024}, {"fp8_margin", 2}});
  EXPECT_EQ(tuned.fp8_history, 1024);
  EXPECT_EQ(tuned.fp8_margin, 2);
  EXPECT_EQ(err(Json{{"precision", "fp8"}, {"fp8_history", 0}}).rfind("fp8_history:", 0), 0u);
  EXPECT_EQ(err(Json{{"precision", "fp8"}, {"fp8_margin", -1}}).rfind("fp8_margin:", 0), 0u);
  EXPECT_EQ(err(Json{{"precision", "fp8"}, {"fp8_margin", 31}}).rfind("fp8_margin:", 0), 0u);
  // cuBLASLt's FP8 GEMMs want multiples of 16: llama-tiny's MLP is 172 wide; Llama 8B's shapes pass.
  EXPECT_EQ(err(Json{{"precision", "fp8"}, {"model", "llama-tiny"}, {"seq", 64}}).rfind("precision: fp8 needs", 0), 0u);
  EXPECT_TRUE(Config::from_params(Json{{"precision", "fp8"}, {"model", "llama3-8b"}, {"layers", 4}}).fp8());
  EXPECT_EQ(err(Json{{"precision", "fp8"}, {"micro_batch", 1}, {"seq", 100}}).rfind("precision: fp8 needs", 0), 0u);
}
