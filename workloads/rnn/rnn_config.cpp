#include "workloads/rnn/rnn_config.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "common/error.hpp"

namespace scalebench::rnn {

namespace {
constexpr std::array<std::pair<Cell, const char*>, 4> kCells{
    {{Cell::kRnnTanh, "rnn_tanh"}, {Cell::kRnnRelu, "rnn_relu"}, {Cell::kLstm, "lstm"}, {Cell::kGru, "gru"}}};
constexpr std::array<std::pair<Algo, const char*>, 3> kAlgos{
    {{Algo::kStandard, "standard"}, {Algo::kPersistStatic, "persist_static"}, {Algo::kAuto, "auto"}}};

template <typename T, std::size_t N>
T parse_named(const std::array<std::pair<T, const char*>, N>& table, std::string_view text, const char* what) {
  std::string all;
  for (const auto& [v, n] : table) {
    if (text == n) return v;
    all += (all.empty() ? "" : ", ") + std::string(n);
  }
  throw Error(std::string("unknown ") + what + " '" + std::string(text) + "' (one of " + all + ")");
}

int positive(const Json& params, const char* key, int fallback) {
  const int v = params.value(key, fallback);
  if (v < 1) throw Error(std::string("rnn: ") + key + " must be at least 1, got " + std::to_string(v));
  return v;
}
}  // namespace

Cell parse_cell(std::string_view text) { return parse_named(kCells, text, "cell"); }
const char* name(Cell c) {
  for (const auto& [v, n] : kCells)
    if (v == c) return n;
  return "?";
}
int gates(Cell c) {
  switch (c) {
    case Cell::kRnnTanh:
    case Cell::kRnnRelu:
      return 1;
    case Cell::kGru:
      return 3;
    case Cell::kLstm:
      return 4;
  }
  return 0;
}

Algo parse_algo(std::string_view text) { return parse_named(kAlgos, text, "algo"); }
const char* name(Algo a) {
  for (const auto& [v, n] : kAlgos)
    if (v == a) return n;
  return "?";
}

std::vector<int> parse_hidden_list(const Json& value) {
  if (value.is_number_integer()) {
    const long long v = value.get<long long>();
    if (v < 1 || v > (1 << 20)) throw Error("rnn: hidden must be between 1 and 1048576, got " + std::to_string(v));
    return {static_cast<int>(v)};
  }
  if (!value.is_string()) throw Error("rnn: hidden must be a size or a comma-separated list of sizes");
  const std::string text = value.get<std::string>();
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string_view item(text.data() + pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 1 || v > (1 << 20))
      throw Error("rnn: hidden: '" + std::string(item) + "' in '" + text +
                  "' is not a size from 1 to 1048576 (write one size or a comma-separated list such as 128,256)");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

Config Config::from_params(const Json& params) {
  Config c;
  c.cell = parse_cell(params.value("cell", std::string(name(c.cell))));
  c.layers = positive(params, "layers", c.layers);
  c.bidirectional = params.value("bidirectional", c.bidirectional);
  c.seq = positive(params, "seq", c.seq);
  c.batch = positive(params, "batch", c.batch);
  if (params.contains("hidden")) c.hidden = parse_hidden_list(params.at("hidden"));
  if (params.contains("input") && params.at("input").is_number_integer()) c.input = positive(params, "input", 1);
  const std::string mode = params.value("mode", std::string("training"));
  if (mode != "training" && mode != "inference")
    throw Error("rnn: unknown mode '" + mode + "' (one of inference, training)");
  c.mode = mode == "training" ? Mode::kTraining : Mode::kInference;
  c.precision = compute::parse_precision(params.value("precision", std::string("fp32")));
  if (c.precision != compute::Precision::kFp32 && c.precision != compute::Precision::kTf32 &&
      c.precision != compute::Precision::kFp16)
    throw Error(std::string("rnn: precision ") + compute::name(c.precision) + " is not offered (fp32, tf32, fp16)");
  c.algo = parse_algo(params.value("algo", std::string("auto")));
  c.check = params.value("check", c.check);
  c.cuda_graph = params.value("cuda_graph", c.cuda_graph);
  return c;
}

std::vector<Json> plan(const Config& cfg) {
  std::vector<Json> points;
  for (int h : cfg.hidden)
    points.push_back(Json{{"cell", name(cfg.cell)},
                          {"mode", cfg.mode == Mode::kTraining ? "training" : "inference"},
                          {"precision", compute::name(cfg.precision)},
                          {"layers", cfg.layers},
                          {"directions", cfg.directions()},
                          {"seq", cfg.seq},
                          {"batch", cfg.batch},
                          {"input", cfg.input_size(h)},
                          {"hidden", h}});
  return points;
}

double forward_flops(Cell cell, int layers, int directions, int seq, int batch, int input, int hidden) {
  double per_entry_step = 0;
  for (int l = 0; l < layers; ++l) {
    const double in = l == 0 ? input : static_cast<double>(directions) * hidden;
    per_entry_step += directions * 2.0 * gates(cell) * hidden * (in + hidden);
  }
  return per_entry_step * seq * batch;
}

double step_flops(const Config& cfg, int hidden) {
  const double f =
      forward_flops(cfg.cell, cfg.layers, cfg.directions(), cfg.seq, cfg.batch, cfg.input_size(hidden), hidden);
  return cfg.mode == Mode::kTraining ? 3 * f : f;
}

compute::Throughput throughput(const Config& cfg) { return compute::Throughput{double(cfg.batch), 1, "samples/s"}; }

}  // namespace scalebench::rnn
