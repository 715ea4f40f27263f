#include "workloads/train/train_dump.hpp"

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "common/json.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/model_graph.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/net_layer_state.hpp"

namespace scalebench::train {

namespace {
void write_file(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw Error("dump: cannot write " + path.string());
}

// How the flat buffer holds each layer's parameters, for a reader in another framework.
Json layer_table(const Model& m) {
  Json layers = Json::array();
  for (const Layer& l : m.layers) {
    if (l.params == 0) continue;
    Json j{{"name", l.name},
           {"op", name(l.op)},
           {"offset", l.param_offset},
           {"params", l.params},
           {"weight_params", l.weight_params()},
           {"bias", l.bias},
           {"out", {l.out.c, l.out.h, l.out.w}}};
    if (l.op == Op::kConv || l.op == Op::kFc) {
      j["channels"] = l.channels;
      j["in_channels"] = m.layers[static_cast<std::size_t>(l.input)].out.c;
    }
    if (l.op == Op::kConv) {
      j["kernel"] = {l.kernel_h, l.kernel_w};
      j["stride"] = l.stride;
      j["padding"] = {l.pad_h, l.pad_w};
      j["groups"] = l.groups;
    }
    if (l.op == Op::kBatchNorm) j["eps"] = l.eps;
    layers.push_back(j);
  }
  return layers;
}
}  // namespace

DumpStart dump_start(const Net& net) {
  const Model& m = net.model();
  const int n = net.config().batch;
  DumpStart d;
  d.weights.resize(static_cast<std::size_t>(m.param_slots));
  d.images.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(m.layers[0].out.elements()) *
                  static_cast<std::size_t>(dtype_bytes(net.compute_type())));
  d.labels.resize(static_cast<std::size_t>(n));
  const cudaStream_t s = net.stream();
  CUDA_CHECK(cudaMemcpyAsync(d.weights.data(), net.master(), d.weights.size() * 4, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(d.images.data(), net.images(), d.images.size(), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(d.labels.data(), net.labels(), d.labels.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return d;
}

std::vector<float> dump_gradients(Net& net, bool pass_first) {
  if (net.compute_type() != DType::kF32) return {};
  if (pass_first) {
    net.forward(Pass::kTrain);
    net.backward([](int) {});
  }
  std::vector<float> g(static_cast<std::size_t>(net.model().param_slots));
  CUDA_CHECK(cudaMemcpyAsync(g.data(), net.grads(), g.size() * 4, cudaMemcpyDeviceToHost, net.stream()));
  CUDA_CHECK(cudaStreamSynchronize(net.stream()));
  return g;
}

void write_dump(const std::string& dir, const Net& net, const DumpStart& start, const std::vector<double>& losses,
                const std::vector<float>& grads0, const std::vector<float>& grads1) {
  const std::filesystem::path root(dir);
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) throw Error("dump: cannot make the folder " + dir + ": " + ec.message());
  const Model& m = net.model();
  const NetConfig& c = net.config();
  write_file(root / "weights.f32", start.weights.data(), start.weights.size() * 4);
  write_file(root / "images.bin", start.images.data(), start.images.size());
  write_file(root / "labels.i32", start.labels.data(), start.labels.size() * sizeof(int));
  if (!grads0.empty()) write_file(root / "grads0.f32", grads0.data(), grads0.size() * 4);
  if (!grads1.empty()) write_file(root / "grads1.f32", grads1.data(), grads1.size() * 4);
  Json meta{{"model", m.name},
            {"classes", m.classes},
            {"batch", c.batch},
            {"image", {m.layers[0].out.c, m.layers[0].out.h, m.layers[0].out.w}},
            {"precision", compute::name(c.precision)},
            {"images", {{"file", "images.bin"}, {"dtype", dtype_name(net.compute_type())}, {"layout", "NHWC"}}},
            {"labels", {{"file", "labels.i32"}, {"dtype", "int32"}}},
            {"weights",
             {{"file", "weights.f32"},
              {"dtype", "float32"},
              {"count", m.param_slots},
              {"parameters", m.param_count},
              {"layout",
               "per layer from its offset: convolutions out x kernel_h x kernel_w x in/groups (KRSC), then the bias; "
               "batch norms scale then shift; fully connected out x in (in in NHWC order), then the bias"}}},
            {"optimizer",
             {{"kind", "SGD, weight decay added to the gradient, then momentum (PyTorch's torch.optim.SGD)"},
              {"lr", c.lr},
              {"momentum", c.momentum},
              {"weight_decay", c.weight_decay},
              {"nesterov", c.nesterov}}},
            {"batch_norm", {{"momentum", kBnMomentum}, {"statistics", "the batch's, in training"}}},
            {"loss", "softmax cross-entropy, mean over the batch"},
            {"label_smoothing", c.label_smoothing},
            {"losses", losses},
            {"layers", layer_table(m)},
            {"graph", model_graph(m)}};
  if (!grads0.empty() && !grads1.empty())
    meta["gradients"] = {{"files", {"grads0.f32", "grads1.f32"}},
                         {"dtype", "float32"},
                         {"layout",
                          "as the weights: the loss's gradient (before weight decay and momentum) at the "
                          "starting weights, from a forward and backward pass alone (grads0) and from "
                          "the first step (grads1)"}};
  const std::string text = meta.dump(1);
  write_file(root / "model.json", text.data(), text.size());
}

}  // namespace scalebench::train
