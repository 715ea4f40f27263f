#include "workloads/gpt/gpt_model.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "common/error.hpp"
#include "workloads/gpt/step_core.hpp"
#include "workloads/gpu/graph_capture.hpp"

namespace scalebench::gpt {

Attention attention_from_name(const std::string& name) {
  if (name == "naive") return Attention::kNaive;
  if (name == "cudnn") return Attention::kCudnn;
  throw Error("attention: '" + name + "'; expected naive or cudnn");
}

namespace {
std::unique_ptr<StepCore> make_step(const ModelShape& m, int B, int T, cudaStream_t s, Attention attention,
                                    const Parallel& par, bool recompute, const Precision& precision) {
  std::unique_ptr<StepCore> step = m.family == Family::kLlama ? make_llama_step(m, B, T, s, attention, par)
                                                              : make_gpt2_step(m, B, T, s, attention, par);
  step->recompute = recompute;
  step->use_fp8 = precision.fp8;
  step->fp8_scaling = precision.scaling;
  return step;
}
}  // namespace

std::size_t model_bytes(const ModelShape& m, int B, int T, Attention attention, const Parallel& par, bool recompute,
                        const Precision& precision) {
  return make_step(m, B, T, nullptr, attention, par, recompute, precision)->plan(nullptr);
}

GptModel::GptModel(const ModelShape& m, int B, int T, unsigned long long seed, cudaStream_t stream, Attention attention,
                   const Parallel& par, bool recompute, const Precision& precision)
    : impl_(make_step(m, B, T, stream, attention, par, recompute, precision)) {  // its layout checks tp (check_tp)
  if (par.at.tp > 1 && !par.tp_reduce) throw Error("tp: a tensor-parallel step needs its reduction");
  if (par.at.pp > 1 && !par.pipe) throw Error("pp: a pipeline stage needs its link to the other stages");
  if (par.at.pp > 1 && precision.fp8) throw Error("pp: with precision fp8 is not built");
  if (m.head_dim() % 8 != 0) throw Error("model: head width must be a multiple of 8");
  const std::size_t bytes = impl_->plan(nullptr);
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "out of memory: needs %.1f GiB, has %.1f GiB", bytes / 1073741824.0,
                  free_b / 1073741824.0);
    throw Error(msg);
  }
  if (attention == Attention::kCudnn) impl_->plan_fused_attention();
  impl_->mem = gpu::DeviceBuffer(bytes);
  impl_->plan(impl_->mem.get());
  impl_->init(seed);
  if (par.at.dp > 1) impl_->sync = std::make_unique<GradSync>(impl_->buckets, par, impl_->grads);
  synthetic_tokens(seed ^ 0x5eedull);
}

GptModel::~GptModel() = default;

void GptModel::set_tokens(const std::vector<int>& inputs, const std::vector<int>& targets) {
  if (static_cast<long long>(inputs.size()) != impl_->BT || static_cast<long long>(targets.size()) != impl_->BT)
    throw Error("set_tokens: expected " + std::to_string(impl_->BT) + " inputs and targets");
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->tokens, inputs.data(), sizeof(int) * inputs.size(), cudaMemcpyHostToDevice, impl_->s));
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->targets, targets.data(), sizeof(int) * targets.size(), cudaMemcpyHostToDevice, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
}

void GptModel::synthetic_tokens(unsigned long long seed, long long first_row) {
  random_tokens(impl_->tokens, impl_->targets, impl_->B, impl_->T, impl_->m.vocab, seed, first_row, impl_->s);
}

namespace {
void whole_model_only(const StepCore& x, const char* what) {
  if (x.par.at.pp > 1)
    throw Error(std::string(what) + ": a pipeline stage (pp " + std::to_string(x.par.at.pp) +
                ") runs its micro-batches in step()'s schedule");
}
}  // namespace

void GptModel::forward(int micro, int count) {
  whole_model_only(*impl_, "forward");
  impl_->forward(micro, count);
}
void GptModel::backward(int micro) {
  whole_model_only(*impl_, "backward");
  impl_->backward(micro);
  impl_->backward_done(micro);
}
void GptModel::optimizer_step(const Hyper& h) { impl_->optimizer_step(h); }

void GptModel::step(int grad_accum, const Hyper& h) {
  if (impl_->par.at.pp > 1) {
    impl_->run_pipeline(grad_accum);
  } else {
    for (int i = 0; i < grad_accum; ++i) {
      forward(i, grad_accum);
      backward(i);
    }
  }
  impl_->optimizer_step(h);
}

int GptModel::pipeline_stages() const { return impl_->par.at.pp; }
void GptModel::time_pipeline(bool on) { impl_->timing_pipe = on; }
GptModel::PipelineBubble GptModel::pipeline_bubble() const {
  const auto [idle, window] = impl_->pipe_idle_ms();
  return PipelineBubble{idle, window};
}

void GptModel::capture_step(int grad_accum, const Hyper& h) {
  whole_model_only(*impl_, "cuda_graph");
  impl_->step_graph = gpu::capture_graph(impl_->s, [&] { step(grad_accum, h); });
}

void GptModel::replay_step() {
  if (!impl_->step_graph.get()) throw Error("replay_step: no step was captured");
  CUDA_CHECK(cudaGraphLaunch(impl_->step_graph.get(), impl_->s));
}

bool GptModel::holds_loss() const { return impl_->holds_head(); }

float GptModel::loss() const {
  if (!holds_loss())
    throw Error("loss: pp stage " + std::to_string(impl_->par.at.pp_rank) + " holds no head; the last stage has it");
  float v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, impl_->loss_sum, sizeof v, cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return v / static_cast<float>(impl_->micro_count);
}

float GptModel::grad_norm() const {
  float v = 0;
  CUDA_CHECK(cudaMemcpyAsync(&v, impl_->norm_sq, sizeof v, cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return std::sqrt(v);
}

namespace {
std::vector<float> bf16_to_host(const bf16* d, long long n, cudaStream_t s) {
  std::vector<bf16> raw(static_cast<std::size_t>(n));
  CUDA_CHECK(cudaMemcpyAsync(raw.data(), d, sizeof(bf16) * n, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = __bfloat162float(raw[i]);
  return out;
}
}  // namespace

std::vector<float> GptModel::master() const {
  std::vector<float> out(static_cast<std::size_t>(impl_->n_state));
  CUDA_CHECK(cudaMemcpyAsync(out.data(), impl_->master, sizeof(float) * out.size(), cudaMemcpyDeviceToHost, impl_->s));
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
  return out;
}

std::vector<float> GptModel::params() const { return bf16_to_host(impl_->params, impl_->n_params, impl_->s); }
std::vector<float> GptModel::grads() const { return bf16_to_host(impl_->grads, impl_->n_params, impl_->s); }

void GptModel::load_master(const std::vector<float>& values) {
  if (impl_->n_state != impl_->n_params || impl_->par.at.tp > 1)
    throw Error("load_master: one rank's whole model only (not with zero 1 or tp)");
  if (static_cast<long long>(values.size()) != impl_->n_params)
    throw Error("load_master: expected " + std::to_string(impl_->n_params) + " values");
  CUDA_CHECK(
      cudaMemcpyAsync(impl_->master, values.data(), sizeof(float) * values.size(), cudaMemcpyHostToDevice, impl_->s));
  to_bf16(impl_->params, impl_->master, impl_->n_params, impl_->s);
  if (impl_->fp8) impl_->fp8->weights_changed();
  CUDA_CHECK(cudaStreamSynchronize(impl_->s));
}

Json GptModel::profile(int grad_accum, const Hyper& h) {
  StepCore& x = *impl_;
  x.profiling = true;
  x.marks.clear();
  x.mark("start");
  step(grad_accum, h);
  x.profiling = false;
  CUDA_CHECK(cudaEventSynchronize(x.marks.back().second.get()));
  std::map<std::string, double> ms;
  double total = 0;
  for (std::size_t i = 1; i < x.marks.size(); ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, x.marks[i - 1].second.get(), x.marks[i].second.get()));
    ms[x.marks[i].first] += t;
    total += t;
  }
  x.marks.clear();
  Json out = Json::object();
  for (const auto& [name, t] : ms) out[name] = Json{{"ms", t}, {"pct", 100.0 * t / total}};
  out["total_ms"] = total;
  return out;
}

const std::vector<Tensor>& GptModel::layout() const { return impl_->tensors; }
std::vector<float> GptModel::fp8_scales(int site) const {
  return impl_->fp8 ? impl_->fp8->scales(site, impl_->s) : std::vector<float>{};
}
double GptModel::exposed_communication_ms() const { return impl_->sync ? impl_->sync->exposed_ms() : 0.0; }
std::size_t GptModel::device_bytes() const { return impl_->mem.bytes(); }
std::size_t GptModel::optimizer_state_bytes() const { return 12 * static_cast<std::size_t>(impl_->n_state); }

}  // namespace scalebench::gpt
