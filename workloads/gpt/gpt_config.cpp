#include "workloads/gpt/gpt_config.hpp"

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "workloads/gpt/pipeline_schedule.hpp"
#include "workloads/gpt/text_corpus.hpp"

namespace scalebench::gpt {

namespace {
ModelShape gpt2(const char* name, int layers, int width, int heads) {
  ModelShape m;
  m.name = name;
  m.family = Family::kGpt2;
  m.layers = layers;
  m.width = width;
  m.heads = m.kv_heads = heads;
  m.mlp = 4 * width;
  m.vocab = 50257;
  m.padded_vocab = 50304;
  m.max_seq = 1024;
  return m;
}

// Llama 3's vocabulary (128256, already a multiple of 128) and context (8192).
ModelShape llama(const char* name, int layers, int width, int heads, int kv_heads, int mlp) {
  ModelShape m;
  m.name = name;
  m.family = Family::kLlama;
  m.layers = layers;
  m.width = width;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.mlp = mlp;
  m.vocab = m.padded_vocab = 128256;
  m.max_seq = 8192;
  return m;
}
}  // namespace

std::vector<std::string> model_names() {
  return {"gpt2-124m", "gpt2-350m", "gpt2-774m", "gpt2-1558m", "gpt2-1.5b", "llama3-8b", "gpt2-tiny", "llama-tiny"};
}

ModelShape model_shape(const std::string& name, int layers) {
  ModelShape m;
  if (name == "gpt2-124m") {
    m = gpt2("gpt2-124m", 12, 768, 12);
  } else if (name == "gpt2-350m") {
    m = gpt2("gpt2-350m", 24, 1024, 16);
  } else if (name == "gpt2-774m") {
    m = gpt2("gpt2-774m", 36, 1280, 20);
  } else if (name == "gpt2-1558m" || name == "gpt2-1.5b") {
    m = gpt2("gpt2-1558m", 48, 1600, 25);
  } else if (name == "gpt2-tiny") {
    m = gpt2("gpt2-tiny", 2, 64, 4);
    m.vocab = m.padded_vocab = 512;
    m.max_seq = 1024;
  } else if (name == "llama3-8b") {
    m = llama("llama3-8b", 32, 4096, 32, 8, 14336);
  } else if (name == "llama-tiny") {
    m = llama("llama-tiny", 2, 64, 4, 2, 172);
    m.vocab = m.padded_vocab = 512;
  } else {
    std::string known;
    for (const std::string& n : model_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("model: '" + name + "' is not one gpt knows; expected one of " + known);
  }
  if (layers < 0) throw Error("layers: must be 0 (the model's) or a positive count");
  if (layers > 0) m.layers = layers;
  return m;
}

std::vector<float> in_layout_order(std::vector<float> flat, const std::vector<Tensor>& held,
                                   const std::vector<Tensor>& layout) {
  std::map<std::string, const Tensor*> where;
  for (const Tensor& t : held) where[t.name] = &t;
  auto held_at = [&](const Tensor& t) {
    const auto it = where.find(t.name);
    if (it == where.end()) throw Error("tensor " + t.name + " is not among the model's");
    return it->second->offset;
  };
  const auto count = static_cast<std::size_t>(layout.back().offset + layout.back().numel());
  if (std::all_of(layout.begin(), layout.end(), [&](const Tensor& t) { return held_at(t) == t.offset; })) {
    flat.resize(count);
    return flat;
  }
  std::vector<float> out(count);
  for (const Tensor& t : layout) std::copy_n(flat.begin() + held_at(t), t.numel(), out.begin() + t.offset);
  return out;
}

std::vector<Tensor> parameter_layout(const ModelShape& m, int seq) {
  std::vector<Tensor> out;
  const long long c = m.width, hd = m.head_dim();
  auto add = [&](std::string name, TensorKind kind, int layer, long long rows, long long cols = 1) {
    Tensor t{std::move(name), kind, layer, rows, cols, 0};
    t.offset = out.empty() ? 0 : out.back().offset + out.back().numel();
    out.push_back(std::move(t));
  };
  add("wte", TensorKind::kEmbedding, -1, m.padded_vocab, c);
  const bool g = m.family == Family::kGpt2;
  if (g) add("wpe", TensorKind::kPosition, -1, seq, c);
  for (int l = 0; l < m.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    const long long qkv = (m.heads + 2LL * m.kv_heads) * hd;
    add(p + "ln1.weight", TensorKind::kNormWeight, l, c);
    if (g) add(p + "ln1.bias", TensorKind::kNormBias, l, c);
    add(p + "qkv.weight", TensorKind::kQkv, l, qkv, c);
    if (g) add(p + "qkv.bias", TensorKind::kQkvBias, l, qkv);
    add(p + "proj.weight", TensorKind::kAttnOut, l, c, c);
    if (g) add(p + "proj.bias", TensorKind::kAttnOutBias, l, c);
    add(p + "ln2.weight", TensorKind::kNormWeight, l, c);
    if (g) add(p + "ln2.bias", TensorKind::kNormBias, l, c);
    if (!g) add(p + "gate.weight", TensorKind::kMlpGate, l, m.mlp, c);
    add(p + "up.weight", TensorKind::kMlpUp, l, m.mlp, c);
    if (g) add(p + "up.bias", TensorKind::kMlpUpBias, l, m.mlp);
    add(p + "down.weight", TensorKind::kMlpDown, l, c, m.mlp);
    if (g) add(p + "down.bias", TensorKind::kMlpDownBias, l, c);
  }
  add("ln_f.weight", TensorKind::kNormWeight, -1, c);
  if (g) add("ln_f.bias", TensorKind::kNormBias, -1, c);
  if (!m.tied()) add("head.weight", TensorKind::kHead, -1, m.padded_vocab, c);
  return out;
}

long long parameter_count(const ModelShape& m, int seq) {
  const std::vector<Tensor> t = parameter_layout(m, seq);
  return t.back().offset + t.back().numel();
}

long long parameter_count_without_positions(const ModelShape& m, int seq) {
  long long n = 0;
  for (const Tensor& t : parameter_layout(m, seq))
    if (t.kind != TensorKind::kPosition) n += t.numel();
  return n;
}

long long matmul_parameter_count(const ModelShape& m, int seq) {
  long long n = parameter_count_without_positions(m, seq);
  if (!m.tied()) n -= static_cast<long long>(m.padded_vocab) * m.width;  // the input embedding: a lookup
  return n;
}

double flops_per_token(const ModelShape& m, int seq) {
  return 6.0 * static_cast<double>(matmul_parameter_count(m, seq)) +
         12.0 * m.layers * static_cast<double>(m.width) * seq;
}

double dense_bf16_peak(int cc_major, int cc_minor) {
  if (cc_major == 9 && cc_minor == 0) return 989.4e12;
  if (cc_major == 8 && cc_minor == 0) return 312e12;
  return 0;
}

double mfu_percent(double tokens_per_second, double flops, double peak) {
  return peak > 0 ? 100.0 * tokens_per_second * flops / peak : 0.0;
}

void check_tp(const ModelShape& m, int tp) {
  if (tp < 1) throw Error("tp: must be a positive count, got " + std::to_string(tp));
  auto need = [&](long long n, const char* what) {
    if (n % tp != 0)
      throw Error("tp: " + std::to_string(tp) + " does not divide the " + what + " (" + std::to_string(n) + ") of " +
                  m.name);
  };
  need(m.heads, "heads");
  need(m.kv_heads, "KV heads");
  need(m.mlp, "MLP width");
}

std::vector<TensorShard> tp_plan(const ModelShape& m, int seq, int tp, int rank) {
  check_tp(m, tp);
  if (rank < 0 || rank >= tp)
    throw Error("tp rank " + std::to_string(rank) + " is outside 0.." + std::to_string(tp - 1));
  const long long hd = m.head_dim();
  std::vector<TensorShard> out;
  for (const Tensor& t : parameter_layout(m, seq)) {
    TensorShard s;
    s.tensor = t.name;
    auto rows_slice = [&](long long n, long long base) {
      const long long per = n / tp;
      s.ranges.push_back({base + rank * per, base + (rank + 1) * per});
    };
    switch (t.kind) {
      case TensorKind::kQkv:
      case TensorKind::kQkvBias:
        // Head-wise: this rank's query heads, then its key heads, then its value heads.
        s.split = Split::kRows;
        rows_slice(m.heads * hd, 0);
        rows_slice(m.kv_heads * hd, m.heads * hd);
        rows_slice(m.kv_heads * hd, (m.heads + m.kv_heads) * hd);
        break;
      case TensorKind::kMlpUp:
      case TensorKind::kMlpUpBias:
      case TensorKind::kMlpGate:
        s.split = Split::kRows;
        rows_slice(t.rows, 0);
        break;
      case TensorKind::kAttnOut:
      case TensorKind::kMlpDown:
        s.split = Split::kCols;
        rows_slice(t.cols, 0);
        break;
      default:  // norms, embeddings, the head and the row-parallel layers' biases (added once)
        s.split = Split::kReplicated;
        break;
    }
    long long n = 0;
    for (const Range& r : s.ranges) n += r.end - r.begin;
    s.numel = s.split == Split::kReplicated ? t.numel() : s.split == Split::kRows ? n * t.cols : n * t.rows;
    out.push_back(std::move(s));
  }
  return out;
}

Range sequence_rows(long long rows, int tp, int tp_rank) {
  if (tp < 1 || tp_rank < 0 || tp_rank >= tp)
    throw Error("tp rank " + std::to_string(tp_rank) + " is outside 0.." + std::to_string(tp - 1));
  if (rows % tp != 0)
    throw Error("sequence_parallel: micro_batch x seq = " + std::to_string(rows) +
                " token rows do not split into tp = " + std::to_string(tp) + " equal shards");
  const long long per = rows / tp;
  return Range{tp_rank * per, (tp_rank + 1) * per};
}

long long zero_padded_size(long long elements, int dp, long long align) {
  const long long unit = static_cast<long long>(dp) * align;
  return (elements + unit - 1) / unit * unit;
}

namespace {
// 0 (the run decides) or a positive count.
int counted(const Json& params, const char* key, int fallback) {
  const Json v = params.value(key, Json(fallback));
  if (!v.is_number_integer() || v.get<long long>() < 0)
    throw Error(std::string(key) + ": must be 0 (from the run's ranks) or a positive integer, got " + v.dump());
  return v.get<int>();
}

int positive(const Json& params, const char* key, int fallback) {
  const Json v = params.value(key, Json(fallback));
  if (!v.is_number_integer() || v.get<long long>() < 1)
    throw Error(std::string(key) + ": must be a positive integer, got " + v.dump());
  return v.get<int>();
}

// Sequence parallelism splits a tensor-parallel group's token rows: it needs tp > 1 and tp
// dividing them (tp 0 is checked once the run's ranks resolve it).
void check_sequence_parallel(const Config& c) {
  if (!c.sequence_parallel || c.tp == 0) return;
  if (c.tp == 1)
    throw Error("sequence_parallel: splits the token rows of a tensor-parallel group; needs tp > 1, tp is 1");
  sequence_rows(static_cast<long long>(c.micro_batch) * c.seq, c.tp, 0);
}

// What the pipeline is built with: GPT-2, bf16, dp, tp (with or without sequence parallelism) and
// recompute. Everything else is refused by name rather than run as a different model.
void check_pipeline(const Config& c, const ModelShape& m) {
  if (c.virtual_stages > 1 && c.pp == 1)
    throw Error("virtual_stages: " + std::to_string(c.virtual_stages) +
                " model chunks a rank interleave a pipeline's stages; needs pp > 1, pp is 1");
  if (c.pp == 1) return;
  rank_chunks(m.layers, c.pp, c.virtual_stages, 0);  // at least one block a (virtual) stage
  // Every stage's schedule (grad_accum a multiple of pp with virtual stages), run against the
  // others as NCCL pairs transfers: a deadlock or a mispairing is an Error before a GPU sees it.
  std::vector<std::vector<PipeAction>> stages;
  for (int r = 0; r < c.pp; ++r) stages.push_back(interleaved_1f1b(c.pp, c.virtual_stages, r, c.grad_accum));
  simulate(stages);
  const std::string pp = "pp: " + std::to_string(c.pp) + " ";
  if (m.family != Family::kGpt2)
    throw Error(pp + "pipeline stages are built for GPT-2 only; " + m.name + " runs with pp 1");
  if (c.zero != 0) throw Error(pp + "with zero 1 is not built; pp runs with zero 0");
  if (c.fp8()) throw Error(pp + "with precision fp8 is not built; pp runs in bf16");
  if (c.cuda_graph) throw Error(pp + "with cuda_graph is not built; the stages' steps are not captured");
  if (c.text()) throw Error(pp + "with data (" + c.data + ") is not built; pp trains on the synthetic token stream");
}
}  // namespace

Config Config::from_params(const Json& params) {
  Config c;
  c.model = params.value("model", c.model);
  const Json layers = params.value("layers", Json(0));
  if (!layers.is_number_integer() || layers.get<long long>() < 0)
    throw Error("layers: must be 0 (the model's) or a positive integer, got " + layers.dump());
  c.layers = layers.get<int>();
  const ModelShape m = model_shape(c.model, c.layers);  // throws naming model / layers
  c.seq = positive(params, "seq", c.seq);
  if (c.seq > m.max_seq)
    throw Error("seq: " + std::to_string(c.seq) + " is longer than " + m.name + "'s " + std::to_string(m.max_seq));
  c.micro_batch = positive(params, "micro_batch", c.micro_batch);
  c.grad_accum = positive(params, "grad_accum", c.grad_accum);
  c.precision = params.value("precision", c.precision);
  if (c.precision != "bf16" && c.precision != "fp8")
    throw Error("precision: '" + c.precision + "'; expected bf16 or fp8");
  if (c.fp8() && (m.width % 16 != 0 || m.mlp % 16 != 0 || (static_cast<long long>(c.micro_batch) * c.seq) % 16 != 0))
    throw Error(
        "precision: fp8 needs the width, the MLP width and micro_batch x seq to be multiples of 16 "
        "(cuBLASLt's FP8 alignment)");
  c.fp8_history = positive(params, "fp8_history", c.fp8_history);
  const Json margin = params.value("fp8_margin", Json(c.fp8_margin));
  if (!margin.is_number_integer() || margin.get<long long>() < 0 || margin.get<long long>() > 30)
    throw Error("fp8_margin: must be an integer from 0 to 30 (powers of two of headroom), got " + margin.dump());
  c.fp8_margin = margin.get<int>();
  const Json recompute = params.value("recompute", Json(c.recompute));
  if (!recompute.is_boolean()) throw Error("recompute: expected true or false, got " + recompute.dump());
  c.recompute = recompute.get<bool>();
  const Json graph = params.value("cuda_graph", Json(c.cuda_graph));
  if (!graph.is_boolean()) throw Error("cuda_graph: expected true or false, got " + graph.dump());
  c.cuda_graph = graph.get<bool>();
  c.dp = counted(params, "dp", c.dp);
  c.tp = counted(params, "tp", c.tp);
  if (c.tp > 0) check_tp(m, c.tp);
  c.pp = positive(params, "pp", c.pp);
  c.virtual_stages = positive(params, "virtual_stages", c.virtual_stages);
  c.zero = params.value("zero", c.zero);
  if (c.zero != 0 && c.zero != 1) throw Error("zero: " + std::to_string(c.zero) + "; expected 0 or 1");
  const Json seq_par = params.value("sequence_parallel", Json(c.sequence_parallel));
  if (!seq_par.is_boolean()) throw Error("sequence_parallel: expected true or false, got " + seq_par.dump());
  c.sequence_parallel = seq_par.get<bool>();
  check_sequence_parallel(c);
  c.overlap = params.value("overlap", c.overlap);
  c.bucket_mb = params.value("bucket_mb", c.bucket_mb);
  if (!(c.bucket_mb > 0)) throw Error("bucket_mb: must be positive");
  c.steps = positive(params, "steps", c.steps);
  c.lr = params.value("lr", c.lr);
  c.weight_decay = params.value("weight_decay", c.weight_decay);
  c.clip = params.value("clip", c.clip);
  if (!(c.lr > 0)) throw Error("lr: must be positive");
  if (c.weight_decay < 0) throw Error("weight_decay: must be 0 or positive");
  if (c.clip < 0) throw Error("clip: must be 0 (off) or positive");
  c.attention = params.value("attention", c.attention);
  if (c.attention != "naive" && c.attention != "cudnn")
    throw Error("attention: '" + c.attention + "'; expected naive or cudnn");
  if (m.family == Family::kLlama && c.attention != "cudnn")
    throw Error("attention: naive does not do grouped-query attention; " + m.name + " runs with cudnn");
  c.check = params.value("check", c.check);
  c.seed = params.value("seed", c.seed);
  const Json data = params.value("data", Json(""));
  if (!data.is_string()) throw Error("data: expected fortunes or a path, got " + data.dump());
  c.data = data.get<std::string>();
  c.train_steps = positive(params, "train_steps", c.train_steps);
  const Json every = params.value("eval_every", Json(c.eval_every));
  if (!every.is_number_integer() || every.get<long long>() < 0)
    throw Error("eval_every: must be 0 (at the end only) or a positive integer, got " + every.dump());
  c.eval_every = every.get<int>();
  c.eval_batches = positive(params, "eval_batches", c.eval_batches);
  const Json warm = params.value("lr_warmup", Json(c.lr_warmup));
  if (!warm.is_number_integer() || warm.get<long long>() < 0)
    throw Error("lr_warmup: must be 0 (none) or a positive number of steps, got " + warm.dump());
  c.lr_warmup = warm.get<int>();
  const Json save = params.value("save", Json(""));
  if (!save.is_string()) throw Error("save: expected a file path, got " + save.dump());
  c.save = save.get<std::string>();
  if (!c.save.empty() && !c.text())
    throw Error("save: " + c.save + "; only a run on text (data) trains weights worth keeping");
  if (!c.save.empty() && (c.tp != 1 || c.pp != 1 || c.zero != 0))
    throw Error("save: " + c.save + " needs every rank to hold the whole model (tp 1, pp 1, zero 0)");
  // A captured step replays the same tokens and learning rate: text training changes both.
  if (c.cuda_graph && c.text())
    throw Error("cuda_graph: applies to synthetic tokens; a run on text (data: " + c.data +
                ") sets each step's tokens and learning rate from the host");
  check_pipeline(c, m);
  return c;
}

ModelShape Config::shape() const {
  ModelShape m = model_shape(model, layers);
  if (text()) m.vocab = m.padded_vocab = kByteVocab;  // the byte-level tokenizer
  return m;
}

Config Config::resolved(int ranks, int ranks_per_node) const {
  Config c = *this;
  if (c.tp == 0) c.tp = ranks_per_node;
  if (c.dp == 0) {
    if (ranks % (c.tp * c.pp) != 0)
      throw Error((c.pp > 1 ? "pp: tp x pp = " + std::to_string(c.tp * c.pp) : "tp: " + std::to_string(c.tp)) +
                  " does not divide the run's " + std::to_string(ranks) + " ranks");
    c.dp = ranks / (c.tp * c.pp);
  }
  if (c.dp * c.tp * c.pp != ranks) {
    const std::string pp = c.pp > 1 ? " x " + std::to_string(c.pp) : "";
    throw Error("dp: dp x tp" + std::string(c.pp > 1 ? " x pp" : "") + " = " + std::to_string(c.dp) + " x " +
                std::to_string(c.tp) + pp + " = " + std::to_string(c.dp * c.tp * c.pp) +
                " must equal the run's ranks (" + std::to_string(ranks) + "); dp 0 takes ranks / " +
                (c.pp > 1 ? "(tp x pp)" : "tp"));
  }
  check_tp(shape(), c.tp);
  check_sequence_parallel(c);
  check_pipeline(c, shape());
  return c;
}

Json Config::to_json() const {
  Json j{{"model", model},
         {"layers", shape().layers},
         {"seq", seq},
         {"micro_batch", micro_batch},
         {"grad_accum", grad_accum},
         {"precision", precision},
         {"recompute", recompute},
         {"dp", dp},
         {"tp", tp},
         {"pp", pp},
         {"zero", zero},
         {"overlap", overlap},
         {"bucket_mb", bucket_mb},
         {"steps", steps},
         {"attention", attention}};
  if (cuda_graph) j["cuda_graph"] = true;                // absent when off: points stay those measured before it
  if (sequence_parallel) j["sequence_parallel"] = true;  // likewise
  if (virtual_stages > 1) j["virtual_stages"] = virtual_stages;  // likewise
  if (fp8()) {
    j["fp8_history"] = fp8_history;
    j["fp8_margin"] = fp8_margin;
  }
  if (text()) {
    j["data"] = data;
    j["train_steps"] = train_steps;
    j["eval_every"] = eval_every;
    j["lr_warmup"] = lr_warmup;
  }
  return j;
}

}  // namespace scalebench::gpt
