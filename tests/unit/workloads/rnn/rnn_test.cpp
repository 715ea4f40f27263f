#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "workloads/rnn/rnn_config.hpp"
#include "workloads/rnn/rnn_reference.hpp"

using namespace scalebench;
using namespace scalebench::rnn;
using compute::Precision;

namespace {
// The workload's defaults as the schema writes them.
Json default_params() {
  const WorkloadDef* def = find_workload("rnn");
  Json p = Json::object();
  if (def)
    for (const auto& d : def->params) p[d.name] = d.default_value;
  return p;
}

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

// One layer, one direction, hidden 1: gate k has W = w[k], R = r[k], biases bw[k], br[k].
Network scalar_net(Cell cell, std::vector<double> w, std::vector<double> r, std::vector<double> bw,
                   std::vector<double> br) {
  Network n;
  n.cell = cell;
  n.input = 1;
  n.hidden = 1;
  LayerWeights lw;
  for (std::size_t k = 0; k < w.size(); ++k) {
    lw.w.push_back({w[k]});
    lw.r.push_back({r[k]});
    lw.bw.push_back({bw[k]});
    lw.br.push_back({br[k]});
  }
  n.lw.push_back(lw);
  return n;
}

// Weights uniform in +-1/sqrt(hidden), as the workload initialises them.
Network random_net(Cell cell, int layers, int dirs, int input, int hidden, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1 / std::sqrt(hidden), 1 / std::sqrt(hidden));
  auto vec = [&](int n) {
    std::vector<double> v(n);
    for (double& e : v) e = u(gen);
    return v;
  };
  Network n{cell, layers, dirs, input, hidden, {}};
  for (int l = 0; l < layers; ++l)
    for (int d = 0; d < dirs; ++d) {
      const int in = l == 0 ? input : dirs * hidden;
      LayerWeights lw;
      for (int g = 0; g < gates(cell); ++g) {
        lw.w.push_back(vec(hidden * in));
        lw.r.push_back(vec(hidden * hidden));
        lw.bw.push_back(vec(hidden));
        lw.br.push_back(vec(hidden));
      }
      n.lw.push_back(lw);
    }
  return n;
}

std::vector<double> random_input(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = u(gen);
  return v;
}
}  // namespace

TEST(RnnConfig, DefaultsAreTheXceleritSweep) {
  const Config c = Config::from_params(default_params());
  EXPECT_EQ(c.cell, Cell::kLstm);
  EXPECT_EQ(c.seq, 32);
  EXPECT_EQ(c.batch, 128);
  EXPECT_EQ(c.hidden, (std::vector<int>{128, 256, 512, 1024}));
  EXPECT_EQ(c.input_size(512), 512) << "input defaults to the hidden size";
  EXPECT_EQ(c.mode, Mode::kTraining);
  EXPECT_EQ(c.algo, Algo::kAuto);
  const std::vector<Json> points = plan(c);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[2]["hidden"], 512);
  EXPECT_EQ(points[2]["input"], 512);
  EXPECT_EQ(points[2]["cell"], "lstm");
  EXPECT_EQ(points[2]["directions"], 1);
}

TEST(RnnConfig, ParamsAreReadAndBadOnesNamed) {
  Json p = default_params();
  p["cell"] = "gru";
  p["layers"] = 3;
  p["bidirectional"] = true;
  p["hidden"] = 300;
  p["input"] = 40;
  p["mode"] = "inference";
  p["precision"] = "fp16";
  p["algo"] = "persist_static";
  p["cuda_graph"] = true;
  const Config c = Config::from_params(p);
  EXPECT_EQ(c.cell, Cell::kGru);
  EXPECT_EQ(c.directions(), 2);
  EXPECT_EQ(c.hidden, std::vector<int>{300});
  EXPECT_EQ(c.input_size(300), 40);
  EXPECT_EQ(c.mode, Mode::kInference);
  EXPECT_EQ(c.precision, Precision::kFp16);
  EXPECT_EQ(c.algo, Algo::kPersistStatic);
  EXPECT_TRUE(c.cuda_graph);
  EXPECT_EQ(plan(c)[0]["input"], 40);

  EXPECT_EQ(parse_hidden_list(Json(" 64, 128 ,2048")), (std::vector<int>{64, 128, 2048}));
  try {
    parse_hidden_list(Json("128,abc"));
    FAIL() << "abc accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'abc'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_hidden_list(Json("128,")), Error);
  EXPECT_THROW(parse_hidden_list(Json(0)), Error);
  p["precision"] = "bf16";
  EXPECT_THROW(Config::from_params(p), Error) << "cuDNN RNNs here run fp32, tf32 or fp16";
  EXPECT_THROW(parse_cell("lstmx"), Error);
  EXPECT_STREQ(name(parse_algo("persist_static")), "persist_static");
}

TEST(RnnConfig, SchemaChecksTheHiddenList) {
  const WorkloadDef* def = find_workload("rnn");
  ASSERT_NE(def, nullptr);
  Json p = default_params();
  EXPECT_EQ(check_param_set(*def, p), "");
  p["hidden"] = 512;
  EXPECT_EQ(check_param_set(*def, p), "");
  p["hidden"] = "256,x";
  EXPECT_NE(check_param_set(*def, p).find("'x'"), std::string::npos) << check_param_set(*def, p);
  // A YAML scalar such as "1024" reaches the schema as an integer, a list as text.
  EXPECT_EQ(parse_param(*def->find("hidden"), "1024").value, 1024);
  EXPECT_EQ(parse_param(*def->find("hidden"), "128,256").value, "128,256");
  EXPECT_NE(parse_param(*def->find("cell"), "lstm2").error, "");
}

TEST(RnnFlops, ForwardCountsTwoPerMultiplyAddOfEveryGateMatrix) {
  EXPECT_EQ(gates(Cell::kRnnTanh), 1);
  EXPECT_EQ(gates(Cell::kRnnRelu), 1);
  EXPECT_EQ(gates(Cell::kGru), 3);
  EXPECT_EQ(gates(Cell::kLstm), 4);
  // LSTM h256, seq 32, batch 128: 2 x 4 x 256 x (256 + 256) x 32 x 128 = 2^32.
  EXPECT_DOUBLE_EQ(forward_flops(Cell::kLstm, 1, 1, 32, 128, 256, 256), 4294967296.0);
  // Vanilla cells have one gate: a quarter of the LSTM's work.
  EXPECT_DOUBLE_EQ(forward_flops(Cell::kRnnRelu, 1, 1, 32, 128, 256, 256), 4294967296.0 / 4);
  // Input size differs from hidden: 2 x 1 x 1000 x (10 + 1000) per entry and step.
  EXPECT_DOUBLE_EQ(forward_flops(Cell::kRnnTanh, 1, 1, 1, 1, 10, 1000), 2020000.0);
  // Bidirectional GRU, 2 layers, input 50, hidden 100: layer 0 = 2 directions x 2 x 3 x 100 x
  // (50 + 100); layer 1 reads both directions: 2 x 2 x 3 x 100 x (200 + 100); x 10 steps x 2 entries.
  EXPECT_DOUBLE_EQ(forward_flops(Cell::kGru, 2, 2, 10, 2, 50, 100), (180000.0 + 360000.0) * 20);
}

TEST(RnnFlops, TrainingStepIsThreeForwardPasses) {
  Config c;
  c.hidden = {1024};
  c.mode = Mode::kInference;
  const double inference = step_flops(c, 1024);
  EXPECT_DOUBLE_EQ(inference, 2.0 * 4 * 1024 * 2048 * 32 * 128);
  c.mode = Mode::kTraining;
  EXPECT_DOUBLE_EQ(step_flops(c, 1024), 3 * inference);
  c.layers = 2;
  c.bidirectional = true;
  c.input = 64;
  EXPECT_DOUBLE_EQ(step_flops(c, 1024), 3 * forward_flops(Cell::kLstm, 2, 2, 32, 128, 64, 1024));
  const compute::Throughput tp = throughput(c);
  EXPECT_EQ(tp.unit, "samples/s");
  EXPECT_DOUBLE_EQ(tp.work, 128) << "samples/s = batch / time per step";
}

TEST(RnnReference, VanillaCellsFollowTheirEquation) {
  const Network tanh_net = scalar_net(Cell::kRnnTanh, {0.5}, {-0.25}, {0.1}, {0.2});
  const auto y = forward(tanh_net, {1, -2}, 2);
  ASSERT_EQ(y.size(), 2u);
  const double h1 = std::tanh(0.5 + 0.3);
  EXPECT_DOUBLE_EQ(y[0], h1);
  EXPECT_DOUBLE_EQ(y[1], std::tanh(-1.0 + 0.3 - 0.25 * h1));
  Network relu_net = tanh_net;
  relu_net.cell = Cell::kRnnRelu;
  const auto r = forward(relu_net, {1, -2}, 2);
  EXPECT_DOUBLE_EQ(r[0], 0.8);
  EXPECT_DOUBLE_EQ(r[1], 0.0) << "-1 + 0.3 - 0.2 is clipped";
}

TEST(RnnReference, LstmGatesInCudnnOrder) {
  // Gates input, forget, cell, output: distinct weights so a swapped gate changes the result.
  const std::vector<double> w{0.3, -0.2, 0.7, 0.4}, r{0.1, 0.5, -0.3, 0.2}, bw{0.05, 0.1, -0.1, 0}, br{0, 0.2, 0, 0.1};
  const Network net = scalar_net(Cell::kLstm, w, r, bw, br);
  const std::vector<double> x{0.9, -0.6};
  double h = 0, c = 0;
  std::vector<double> want;
  for (double xt : x) {
    auto pre = [&](int k) { return w[k] * xt + bw[k] + r[k] * h + br[k]; };
    const double i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = std::tanh(pre(2)), o = sigmoid(pre(3));
    c = f * c + i * g;
    h = o * std::tanh(c);
    want.push_back(h);
  }
  const auto y = forward(net, x, 2);
  EXPECT_NEAR(y[0], want[0], 1e-15);
  EXPECT_NEAR(y[1], want[1], 1e-15);
}

TEST(RnnReference, GruResetGateScalesTheRecurrentProductWithItsBias) {
  const std::vector<double> w{0.3, -0.2, 0.7}, r{0.1, 0.5, -0.8}, bw{0.05, 0.1, -0.1}, br{0.2, -0.1, 0.3};
  const Network net = scalar_net(Cell::kGru, w, r, bw, br);
  const std::vector<double> x{0.9, -0.6, 0.4};
  double h = 0;
  std::vector<double> want;
  for (double xt : x) {
    const double rg = sigmoid(w[0] * xt + bw[0] + r[0] * h + br[0]);
    const double z = sigmoid(w[1] * xt + bw[1] + r[1] * h + br[1]);
    const double n = std::tanh(w[2] * xt + bw[2] + rg * (r[2] * h + br[2]));
    h = (1 - z) * n + z * h;
    want.push_back(h);
  }
  const auto y = forward(net, x, 3);
  for (int t = 0; t < 3; ++t) EXPECT_NEAR(y[t], want[t], 1e-15) << t;
}

TEST(RnnReference, BackwardDirectionRunsFromTheLastStepAndLayersStack) {
  // Bidirectional, hidden 1: at step t the output is [forward h_t, backward h_t].
  Network bi = scalar_net(Cell::kRnnTanh, {0.5}, {0.25}, {0}, {0});
  bi.directions = 2;
  bi.lw.push_back(scalar_net(Cell::kRnnTanh, {-0.4}, {0.6}, {0}, {0}).lw[0]);
  const std::vector<double> x{1, 2};
  const auto y = forward(bi, x, 2);
  ASSERT_EQ(y.size(), 4u);
  const double f0 = std::tanh(0.5), f1 = std::tanh(1.0 + 0.25 * f0);
  const double b1 = std::tanh(-0.8), b0 = std::tanh(-0.4 + 0.6 * b1);
  EXPECT_DOUBLE_EQ(y[0], f0);
  EXPECT_DOUBLE_EQ(y[1], b0);
  EXPECT_DOUBLE_EQ(y[2], f1);
  EXPECT_DOUBLE_EQ(y[3], b1);

  // Two unidirectional layers: the second reads the first's outputs.
  Network two = scalar_net(Cell::kRnnTanh, {0.5}, {0}, {0}, {0});
  two.layers = 2;
  two.lw.push_back(scalar_net(Cell::kRnnTanh, {2}, {0}, {0}, {0}).lw[0]);
  const auto z = forward(two, {1}, 1);
  EXPECT_DOUBLE_EQ(z[0], std::tanh(2 * std::tanh(0.5)));

  // Weights that do not match the shape are refused.
  Network broken = two;
  broken.lw.pop_back();
  EXPECT_THROW(forward(broken, {1}, 1), Error);
  EXPECT_THROW(forward(two, {1, 2}, 1), Error);
}

TEST(RnnCheck, ToleranceFollowsPrecisionAndCatchesAWrongNetwork) {
  const int seq = 32, hidden = 64;
  const Network net = random_net(Cell::kLstm, 2, 2, hidden, hidden, 7);
  const std::vector<double> x = random_input(seq * hidden, 8);
  const std::vector<double> ref = forward(net, x, seq);
  const double scale = check_scale(2, ref);
  double rms = 0;
  for (double v : ref) rms += v * v;
  rms = std::sqrt(rms / ref.size());
  EXPECT_NEAR(scale, 5.0 * rms, 1e-12) << "2.5 x layers x the outputs' rms";
  EXPECT_DOUBLE_EQ(check_scale(1, {3, -4}), 2.5 * std::sqrt(12.5));
  EXPECT_EQ(count_wrong(Precision::kFp32, ref, ref, scale), 0);

  // An error of a tenth of the tolerance everywhere: within fp16's and tf32's, far outside fp32's.
  std::vector<double> off = ref;
  for (double& v : off) v += 0.1 * 5e-3 * scale;
  EXPECT_EQ(count_wrong(Precision::kFp16, off, ref, scale), 0);
  EXPECT_EQ(count_wrong(Precision::kTf32, off, ref, scale), 0);
  EXPECT_EQ(count_wrong(Precision::kFp32, off, ref, scale), static_cast<long long>(ref.size()));

  // Outputs stored in fp16 (11 significant bits) pass the fp16 check, not the fp32 one.
  std::vector<double> stored = ref;
  for (double& v : stored) {
    int e = 0;
    const double m = std::frexp(v, &e);
    v = std::ldexp(std::round(m * 2048) / 2048, e);
  }
  EXPECT_EQ(count_wrong(Precision::kFp16, stored, ref, scale), 0);
  EXPECT_GT(count_wrong(Precision::kFp32, stored, ref, scale), 0);

  // A GPU that swapped the LSTM's input and forget gates fails even the loosest check.
  Network swapped = net;
  for (LayerWeights& lw : swapped.lw) {
    std::swap(lw.w[0], lw.w[1]);
    std::swap(lw.r[0], lw.r[1]);
  }
  const std::vector<double> wrong = forward(swapped, x, seq);
  EXPECT_GT(count_wrong(Precision::kFp16, wrong, ref, scale), static_cast<long long>(ref.size()) / 2);

  // One NaN is one wrong element; sizes must match.
  off = ref;
  off[5] = std::nan("");
  EXPECT_EQ(count_wrong(Precision::kFp16, off, ref, scale), 1);
  off.pop_back();
  EXPECT_THROW(count_wrong(Precision::kFp16, off, ref, scale), Error);
}

TEST(RnnCheck, RoundingErrorsDieOutAlongTheSequence) {
  // What check_scale relies on: an error in the state at step 0 (here the input at step 0 moved
  // by 1e-2) has shrunk by far more than 2.5x after a few steps, with the workload's weights.
  const int seq = 32, hidden = 256;
  for (Cell cell : {Cell::kRnnTanh, Cell::kLstm, Cell::kGru}) {
    const Network net = random_net(cell, 1, 1, hidden, hidden, 11);
    std::vector<double> x = random_input(seq * hidden, 12);
    const std::vector<double> a = forward(net, x, seq);
    for (int i = 0; i < hidden; ++i) x[i] += 1e-2;
    const std::vector<double> b = forward(net, x, seq);
    auto max_diff = [&](int t) {
      double m = 0;
      for (int j = 0; j < hidden; ++j) m = std::max(m, std::fabs(a[t * hidden + j] - b[t * hidden + j]));
      return m;
    };
    EXPECT_GT(max_diff(0), 0) << name(cell);
    EXPECT_LT(max_diff(8), max_diff(0) / 10) << name(cell);
    EXPECT_LT(max_diff(31), max_diff(0) / 1000) << name(cell);
  }
}
