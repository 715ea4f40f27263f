// The networks as graphs (workloads/train/model_graph.cpp), and scripts/reference-gradients.py run
// on them: its float64 gradients of every tiny model, written as a dump folder with random
// weights, must match central differences. The GPU runs compare train's gradients with that
// reference, so this is what makes the comparison worth trusting. Pure: no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/model_graph.hpp"

using namespace scalebench;
using namespace scalebench::train;
namespace fs = std::filesystem;

namespace {
// The last layer's index each layer reads, as model_graph writes it.
std::vector<int> graph_reads(const Json& l) {
  std::vector<int> r;
  if (l.contains("inputs")) r = l["inputs"].get<std::vector<int>>();
  if (l.contains("input")) r.push_back(l["input"].get<int>());
  if (l.contains("residual")) r.push_back(l["residual"].get<int>());
  return r;
}

template <typename T>
void write_values(const fs::path& p, const std::vector<T>& v) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

// A dump folder as train writes it (model.json with the graph, weights, images, labels), with
// random values: the reference needs no GPU to run it.
fs::path write_dump(const Model& m, int batch, const fs::path& dir) {
  fs::create_directories(dir);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> weights(static_cast<std::size_t>(m.param_slots));
  for (float& w : weights) w = normal(rng);
  const Dims& in = m.layers[0].out;
  std::vector<float> images(static_cast<std::size_t>(batch * in.elements()));
  for (float& x : images) x = normal(rng) * 3;
  std::vector<int> labels(static_cast<std::size_t>(batch));
  for (int& y : labels) y = static_cast<int>(rng() % static_cast<unsigned>(m.classes));
  write_values(dir / "weights.f32", weights);
  write_values(dir / "images.bin", images);
  write_values(dir / "labels.i32", labels);
  const Json meta{{"model", m.name},
                  {"classes", m.classes},
                  {"batch", batch},
                  {"image", {in.c, in.h, in.w}},
                  {"images", {{"file", "images.bin"}, {"dtype", "float32"}}},
                  {"labels", {{"file", "labels.i32"}}},
                  {"weights", {{"file", "weights.f32"}}},
                  {"label_smoothing", 0.1},
                  {"graph", model_graph(m)}};
  std::ofstream(dir / "model.json") << meta.dump();
  return dir;
}

// Runs the reference script on `dir` with `args`; returns its exit status and output.
std::pair<int, std::string> reference(const fs::path& dir, const std::string& args) {
  const std::string cmd = std::string(SCALEBENCH_NUMPY_PYTHON) + " " + std::string(SCALEBENCH_SOURCE_DIR) +
                          "/scripts/reference-gradients.py " + dir.string() + " " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class ModelGraphReference : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_ = fs::temp_directory_path() / ("scalebench-model-graph-" + std::to_string(::getpid()));
};
}  // namespace

// Every layer is in the graph, in order, reading what the model's layer reads, with the shape
// parameters of its op: a reader needs nothing else to run the network.
TEST(ModelGraph, EveryLayerWithWhatItReads) {
  for (const char* name : {"tiny", "tiny-inception", "tiny-nasnet", "inception3", "nasnet"}) {
    const Model m = build_model(name);
    const Json g = model_graph(m);
    ASSERT_EQ(g.size(), m.layers.size()) << name;
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const Layer& l = m.layers[i];
      EXPECT_EQ(g[i]["name"], l.name);
      EXPECT_EQ(g[i]["op"], train::name(l.op));
      std::vector<int> want = l.reads(), got = graph_reads(g[i]);
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << l.name;
      const Json& e = g[i];
      if (l.op == Op::kConv) {
        EXPECT_EQ(e["groups"], l.groups) << l.name;
      } else if (l.op == Op::kAvgPool) {
        EXPECT_EQ(e["count_pad"], l.count_pad) << l.name;
      } else if (l.op == Op::kSubsample) {
        EXPECT_EQ(e["offset"], l.offset) << l.name;
      } else if (l.op == Op::kSoftmaxLoss) {
        EXPECT_FLOAT_EQ(e["loss_weight"].get<float>(), l.loss_weight) << l.name;
      }
      if (l.params > 0) {
        EXPECT_EQ(e["param_offset"], l.param_offset) << l.name;
      }
    }
  }
}

// The reference's gradient of every parameter tensor against central differences of its own
// loss in float64 (the script's --self-test): a wrong backward rule for any op of these models,
// or a graph field it misreads, fails here.
TEST_P(ModelGraphReference, GradientsMatchCentralDifferences) {
  const Model m = build_model(GetParam());
  const fs::path dir = write_dump(m, 4, root_ / GetParam());
  const auto [rc, out] = reference(dir, "--self-test");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("self-test: largest error"), std::string::npos) << out;
}
INSTANTIATE_TEST_SUITE_P(TinyModels, ModelGraphReference,
                         ::testing::Values("tiny", "tiny-inception", "tiny-nasnet", "fmnist-resnet"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// A gradient file that is wrong in one tensor is reported with that tensor named and exit 1; one
// of the wrong size is exit 2.
TEST_F(ModelGraphReference, NamesTheTensorInError) {
  const Model m = build_model("tiny-nasnet");
  const fs::path dir = write_dump(m, 2, root_ / "named");
  ASSERT_EQ(reference(dir, "--file grads.f32").first, 2);  // no such file yet
  std::vector<float> zeros(static_cast<std::size_t>(m.param_slots), 0.0f);
  write_values(dir / "grads.f32", zeros);
  const auto [rc, out] = reference(dir, "--file grads.f32");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("the last in the network's order: fc.bias"), std::string::npos) << out;
  write_values(dir / "short.f32", std::vector<float>(10));
  EXPECT_EQ(reference(dir, "--file short.f32").first, 2);
}
