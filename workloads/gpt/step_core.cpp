#include "workloads/gpt/step_core.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "common/error.hpp"
#include "workloads/gpu/nccl_check.hpp"

// Why the step is shaped this way. GPT-2 and Llama differ in their activations and passes only, so
// everything else is written once, here, and a change of parallelism or precision reaches both:
// - One allocation, laid out by Planner twice (counting, then placing): the parameters and the
//   gradients are each one contiguous buffer, which the gradient buckets, ZeRO-1's slices and the
//   optimizer address by offset, and the model's bytes are known before anything is allocated.
// - GEMMs through cuBLASLt, bias, GELU (with its saved input) and bias gradient in its epilogues
//   rather than kernels of their own; an algorithm is asked for once per GEMM shape and kept.
// - AdamW's step count and bias corrections live on the device, so that a captured CUDA graph
//   replays steps that go on training.
// - With tp > 1 a split tensor is initialised whole and this rank's shard cut from it, so that a
//   tensor-parallel run starts from the model a one-GPU run starts from.
namespace scalebench::gpt {

StepCore::StepCore(const ModelShape& shape, int b, int t, cudaStream_t stream, Attention att, const Parallel& p)
    : m(shape),
      B(b),
      T(t),
      attention(att),
      BT(static_cast<long long>(b) * t),
      s(stream),
      par(p),
      chunks(rank_chunks(shape.layers, p.at.pp, p.at.pp > 1 ? p.virtual_stages : 1, p.at.pp_rank,
                         head_cost_in_blocks(shape, t))),
      stage(chunks.front()),
      slots(p.at.pp > 1 && p.virtual_stages > 1
                ? chunk_slots(interleaved_1f1b(p.at.pp, p.virtual_stages, p.at.pp_rank, p.micro_batches),
                              p.virtual_stages)
                : std::vector<int>{pipeline_slots(p.at.pp, p.at.pp_rank, p.micro_batches)}),
      heads_l(shape.heads / p.at.tp),
      kv_l(shape.kv_heads / p.at.tp),
      mlp_l(shape.mlp / p.at.tp),
      sp(p.sequence_parallel && p.at.tp > 1),
      buckets(plan_buckets(stage_layout(shape, t, p.at.tp, p.at.tp_rank, chunks),
                           static_cast<long long>(p.bucket_mb * 1e6), 2,
                           p.zero == 1 ? zero_padded_size(1, p.at.dp) : 1)),
      tensors(buckets.tensors) {
  n_params = buckets.total;
  block_position.assign(static_cast<std::size_t>(m.layers), -1);
  for (const StageBlocks& c : chunks)
    for (int l = c.first; l < c.last; ++l) block_position[static_cast<std::size_t>(l)] = held_blocks++;
  const Range rows = sp ? sequence_rows(BT, par.at.tp, par.at.tp_rank) : Range{0, BT};
  first_row = rows.begin;
  rows_l = rows.end - rows.begin;
  if (sp) sp_sums = sequence_parallel_sums(buckets);
  if (par.zero == 1) pieces = zero_pieces(buckets, par.at.dp, par.at.dp_rank);
  n_state = par.zero == 1 ? n_params / par.at.dp : n_params;
  norm_parts = norm_ranges(m, t, par.at.tp, buckets, pieces);
  if (par.at.pp > 1) {
    // What the pipeline is built with (gpt_config.cpp's check_pipeline says it to a user).
    if (m.family != Family::kGpt2 || par.zero != 0) throw Error("pp: a pipeline stage is built for GPT-2 with zero 0");
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].kind == TensorKind::kEmbedding) tied_index = static_cast<long long>(i);
  }
}

// Called twice with the same state: with `at` null it only counts the bytes (the allocation's
// size), then with the allocation it places every buffer at the same offsets.
std::size_t StepCore::plan(std::byte* at) {
  Planner a{at};
  const long long C = m.width, Vp = m.padded_vocab;
  params = a.bf(n_params);
  grads = a.bf(n_params);
  master = a.f32(n_state);
  adam_m = a.f32(n_state);
  adam_v = a.f32(n_state);
  // int32 in 4-byte slots: the planner hands out bf16 and fp32 elements only.
  tokens = reinterpret_cast<int*>(a.f32(BT));
  targets = reinterpret_cast<int*>(a.f32(BT));
  // The head's: on the last pipeline stage only.
  logits = holds_head() ? a.bf(rows_l * Vp) : nullptr;
  losses = holds_head() ? a.f32(rows_l) : nullptr;
  loss_sum = a.f32(1);
  norm_sq = a.f32(1);
  adam_step = reinterpret_cast<int*>(a.f32(1));
  bias_correction = a.f32(2);
  bias_scratch = m.family == Family::kGpt2 ? a.bf(std::max<long long>(Vp, m.mlp)) : nullptr;
  norm_partials = a.f32(gpt::layernorm_backward_partials(static_cast<int>(BT), static_cast<int>(C)));
  tied_scratch = tied_index >= 0 ? a.bf(Vp * C) : nullptr;
  if (sp) {
    gathered = a.bf(BT * C);
    partial = a.bf(BT * C);
  }
  const std::size_t ws = a.take(kWorkspaceBytes);
  workspace = at ? at + ws : nullptr;
  if (use_fp8) {
    if (!fp8) fp8 = std::make_unique<Fp8Linear>(fp8_sites(), BT, fp8_scaling);
    fp8->plan(a);
    fp8->lt = gemms_.lt();
    fp8->stream = s;
    fp8->workspace = workspace;
    fp8->workspace_bytes = kWorkspaceBytes;
  }
  plan_activations(a);
  return a.size;
}

void StepCore::mark(const char* name) {
  if (!profiling) return;
  marks.emplace_back(name, gpu::Event());
  CUDA_CHECK(cudaEventRecord(marks.back().second.get(), s));
}

void StepCore::linear(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, const bf16* residual,
                      cublasLtEpilogue_t epi, bf16* aux) {
  Gemm gm = linear_gemm(y, x, w, in, out, BT);
  gm.c = residual;
  gm.beta = residual ? 1.f : 0.f;
  gm.epilogue = epi != CUBLASLT_EPILOGUE_DEFAULT ? epi : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  gm.bias = bias;
  gm.aux = aux;
  gm.aux_ld = out;
  run(gm);
}

void StepCore::linear_weight_grad(bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, int in, int out,
                                  bool accumulate) {
  Gemm gm = weight_grad_gemm(dw, dy, x, in, out, BT, accumulate);
  if (dbias) {
    gm.epilogue = CUBLASLT_EPILOGUE_BGRADB;
    gm.bias = accumulate ? bias_scratch : dbias;
  }
  run(gm);
  if (dbias && accumulate) add_inplace(dbias, bias_scratch, out, s);
}

void StepCore::linear_input_grad(bf16* dx, const bf16* dy, const bf16* w, int in, int out, bf16* gelu_input) {
  Gemm gm = input_grad_gemm(dx, dy, w, in, out, BT);
  if (gelu_input) {
    gm.epilogue = CUBLASLT_EPILOGUE_DGELU;
    gm.aux = gelu_input;
    gm.aux_ld = in;
  }
  run(gm);
}

void StepCore::block_linear(int site, bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out,
                            const bf16* residual, bf16* gelu_out, int gelu_site) {
  if (!fp8) {
    if (gelu_out)
      linear(gelu_out, x, w, bias, in, out, residual, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, y);
    else
      linear(y, x, w, bias, in, out, residual);
    return;
  }
  fp8->forward(site, y, x, w, bias, residual, gelu_out, gelu_site);
}

void StepCore::block_weight_grad(int site, bf16* dw, bf16* dbias, const bf16* dy, const bf16* x, int in, int out,
                                 bool accumulate) {
  if (fp8)
    fp8->weight_grad(site, dw, dbias, dy, x, accumulate);
  else
    linear_weight_grad(dw, dbias, dy, x, in, out, accumulate);
}

void StepCore::block_input_grad(int site, bf16* dx, const bf16* dy, const bf16* w, int in, int out, bf16* gelu_input,
                                int gelu_site) {
  if (!fp8) {
    linear_input_grad(dx, dy, w, in, out, gelu_input);
    return;
  }
  fp8->input_grad(site, dx, dy, w, gelu_input, gelu_site);
}

void StepCore::head_forward(const bf16* x, const bf16* w) {
  run(linear_gemm(logits, x, w, m.width, m.padded_vocab, rows_l));
}

void StepCore::head_backward(bf16* dx, bf16* dw, const bf16* x, const bf16* w, bool accumulate) {
  run(weight_grad_gemm(dw, logits, x, m.width, m.padded_vocab, rows_l, accumulate));
  run(input_grad_gemm(dx, logits, w, m.width, m.padded_vocab, rows_l));
}

void StepCore::loss_gradient() {
  cross_entropy_fused(logits, losses, targets + first_row, static_cast<int>(rows_l), m.vocab, m.padded_vocab,
                      1.f / (static_cast<float>(BT) * micro_count), s);
}

void StepCore::loss_forward(int micro, int count) {
  loss_gradient();
  mean_into(loss_sum, losses, static_cast<int>(rows_l), BT, micro > 0, s);
  // Each rank holds its rows' share of the micro-batches' means.
  if (sp && micro == count - 1) par.tp_reduce->sum(loss_sum, 1, s);
}

void StepCore::sum_partials(bf16* y) {
  if (par.at.tp == 1) return;
  if (sp) {
    par.tp_reduce->reduce_scatter(y, partial, rows_l * m.width, s);
  } else {
    par.tp_reduce->sum(y, BT * m.width, s);
  }
}

void StepCore::add_once(bf16* y, const bf16* residual, const bf16* bias) {
  if (sp) add_residual(y, residual, bias, rows_l, m.width, s);
}

const bf16* StepCore::all_rows(const bf16* shard) {
  if (!sp) return shard;
  par.tp_reduce->all_gather(gathered, shard, rows_l * m.width, s);
  return gathered;
}

void StepCore::layer_done(int layer, int micro) {
  if (micro != micro_count - 1) return;
  if (sp) {
    par.tp_reduce->sum(grads, sp_sums[static_cast<std::size_t>(layer + 1)], s);
    mark("bwd.tp_grad_allreduce");
  }
  if (sync) sync->layer_done(layer, s);
}

void StepCore::backward_done(int micro) {
  if (sync && micro == micro_count - 1) sync->backward_done(s);
}

void StepCore::optimizer_step(const Hyper& h) {
  advance_adam_step(adam_step, bias_correction, h.beta1, h.beta2, s);
  // The step's amax into the FP8 scales' windows: the next step casts with the new scales.
  if (fp8) fp8->update_scales(s);
  if (sync) sync->wait(s);
  // The first and the last stage hold the tied embedding (wte and its copy): each adds the other's
  // gradient, so that both take the unsplit model's gradient and the same AdamW update.
  if (tied_index >= 0) {
    const Tensor& t = tensors[static_cast<std::size_t>(tied_index)];
    const int peer = holds_embedding() ? par.at.pp - 1 : 0;
    bf16* mine = grads + t.offset;
    pipe_wait([&] { par.pipe->exchange({{true, peer, mine, t.numel()}, {false, peer, tied_scratch, t.numel()}}, s); });
    add_inplace(mine, tied_scratch, t.numel(), s);
    mark("opt.pp_tied_embedding");
  }
  if (norm_parts.size() == 1 && norm_parts[0].weight == 1.f && norm_parts[0].begin == 0) {
    sum_of_squares(norm_sq, grads, norm_parts[0].end, s);
  } else {
    CUDA_CHECK(cudaMemsetAsync(norm_sq, 0, sizeof(float), s));
    for (const NormRange& r : norm_parts) add_sum_of_squares(norm_sq, grads + r.begin, r.end - r.begin, r.weight, s);
  }
  // The square's parts: the tp shards, and with ZeRO-1 the dp shards too.
  if (par.zero == 1 && par.at.dp > 1)
    NCCL_CHECK(ncclAllReduce(norm_sq, norm_sq, 1, ncclFloat32, ncclSum, par.dp_comm, s));
  if (par.at.tp > 1) par.tp_reduce->sum(norm_sq, 1, s);
  // Every stage's part: each clips with the whole model's norm.
  if (par.at.pp > 1) {
    pipe_wait([&] { par.pipe->sum(norm_sq, 1, s); });
    if (timing_pipe) CUDA_CHECK(cudaEventRecord(pipe_end.get(), s));
  }
  mark("opt.grad_norm");
  if (pieces.empty()) {
    adamw(master, params, grads, adam_m, adam_v, n_params, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay,
          bias_correction, norm_sq, h.clip, s);
  } else {
    for (const ShardPiece& x : pieces)
      adamw(master + x.state, params + x.begin, grads + x.begin, adam_m + x.state, adam_v + x.state, x.end - x.begin,
            h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, bias_correction, norm_sq, h.clip, s);
  }
  mark("opt.adamw");
  if (sync && par.zero == 1) sync->all_gather(params, s);
  mark("opt.all_gather");
}

void StepCore::run_pipeline(int count) {
  const int v = static_cast<int>(chunks.size());
  if (v > 1 && count != par.micro_batches)
    throw Error("grad_accum: the chunks' activation slots were planned for " + std::to_string(par.micro_batches) +
                " micro-batches a step (virtual_stages " + std::to_string(v) + "), the step runs " +
                std::to_string(count));
  if (timing_pipe) {
    pipe_waits_used = 0;
    CUDA_CHECK(cudaEventRecord(pipe_start.get(), s));
  }
  std::vector<PipeBuffer> group;
  for (const PipeAction& a : interleaved_1f1b(par.at.pp, v, par.at.pp_rank, count)) {
    switch (a.op) {
      case PipeOp::kForward:
        use_chunk(a.chunk);
        forward(a.micro, count);
        break;
      case PipeOp::kBackward:
        use_chunk(a.chunk);
        backward(a.micro);
        // Chunk 0's backward of the last micro-batch is the stage's last (the chunks' last
        // backwards run from the last chunk down): then the buckets are complete.
        if (a.chunk == 0) backward_done(a.micro);
        break;
      case PipeOp::kComm:
        group.clear();
        for (const PipeTransfer& t : a.group)
          group.push_back(PipeBuffer{t.send, t.peer, pipe_buffer(t.what, t.send, t.chunk, t.micro), pipe_elements()});
        pipe_wait([&] { par.pipe->exchange(group, s); });
        mark("pipe.send_recv");
        break;
    }
  }
}

std::pair<double, double> StepCore::pipe_idle_ms() const {
  if (pipe_waits_used == 0) throw Error("pp: no pipeline step was timed");
  CUDA_CHECK(cudaEventSynchronize(pipe_end.get()));
  double idle = 0;
  for (std::size_t i = 0; i < pipe_waits_used; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, pipe_waits[i].first.get(), pipe_waits[i].second.get()));
    idle += ms;
  }
  float window = 0;
  CUDA_CHECK(cudaEventElapsedTime(&window, pipe_start.get(), pipe_end.get()));
  return {idle, window};
}

void StepCore::plan_fused_attention() {
  // This tp rank's heads only.
  const long long hd = m.head_dim(), C = heads_l * hd, row = (heads_l + 2LL * kv_l) * hd;
  gpu::SdpaShape sh;
  sh.batch = B;
  sh.heads = heads_l;
  sh.kv_heads = kv_l;
  sh.seq = T;
  sh.head_dim = hd;
  sh.qkv_strides = {T * row, hd, row, 1};
  sh.out_strides = {T * C, hd, C, 1};
  sh.scale = 1.f / std::sqrt(static_cast<float>(hd));
  cudnn = std::make_unique<gpu::CudnnHandle>();
  CUDNN_CHECK(cudnnSetStream(cudnn->get(), s));
  sdpa_fwd = std::make_unique<gpu::SdpaForward>(cudnn->get(), sh);
  sdpa_bwd = std::make_unique<gpu::SdpaBackward>(cudnn->get(), sh);
  const std::int64_t ws = std::max(sdpa_fwd->workspace_bytes(), sdpa_bwd->workspace_bytes());
  sdpa_workspace = gpu::DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(ws, 256)));
}

void StepCore::init(unsigned long long seed) {
  const std::vector<Tensor> whole = parameter_layout(m, T);
  const std::vector<TensorShard> shards = tp_plan(m, T, par.at.tp, par.at.tp_rank);
  long long largest = 0;
  for (const Tensor& t : whole) largest = std::max(largest, t.numel());
  // A stage's tensor is the unsplit model's tensor of that name (the tied head's copy: wte), and
  // takes its seed: every pp gives the same model.
  std::map<std::string, std::size_t> whole_index;
  for (std::size_t j = 0; j < whole.size(); ++j) whole_index[whole[j].name] = j;
  // fp32 values of this rank's whole buffer (ZeRO-1 keeps only its slices), and of one whole
  // tensor a split one is cut from.
  gpu::DeviceBuffer local(pieces.empty() ? 0 : sizeof(float) * n_params);
  float* values = pieces.empty() ? master : reinterpret_cast<float*>(local.get());
  gpu::DeviceBuffer full(par.at.tp > 1 ? 6 * static_cast<std::size_t>(largest) : 0);
  CUDA_CHECK(cudaMemsetAsync(values, 0, sizeof(float) * n_params, s));  // padding too: to_bf16 copies it all
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::size_t j = whole_index.at(whole_tensor_name(tensors[i].name));
    const Tensor& t = whole[j];
    const bool cut = par.at.tp > 1 && shards[j].split != Split::kReplicated;
    float* mp = cut ? reinterpret_cast<float*>(full.get()) : values + tensors[i].offset;
    bf16* pp = cut ? reinterpret_cast<bf16*>(full.get() + 4 * largest) : params + tensors[i].offset;
    init_tensor(mp, pp, t, j, m.layers, seed, s);
    if (cut) copy_shard(values + tensors[i].offset, mp, t, shards[j], 4, s);
  }
  to_bf16(params, values, n_params, s);
  for (const ShardPiece& x : pieces)
    CUDA_CHECK(cudaMemcpyAsync(master + x.state, values + x.begin, sizeof(float) * (x.end - x.begin),
                               cudaMemcpyDeviceToDevice, s));
  CUDA_CHECK(cudaMemsetAsync(adam_m, 0, sizeof(float) * n_state, s));
  CUDA_CHECK(cudaMemsetAsync(adam_v, 0, sizeof(float) * n_state, s));
  CUDA_CHECK(cudaMemsetAsync(grads, 0, sizeof(bf16) * n_params, s));
  CUDA_CHECK(cudaMemsetAsync(adam_step, 0, sizeof(int), s));
  if (fp8) fp8->init(s);
  init_tables();
  CUDA_CHECK(cudaStreamSynchronize(s));  // the temporary buffers go now
}

}  // namespace scalebench::gpt
