#include "workloads/gpu/cudnn_sdpa_graph.hpp"

#include <cuda_runtime.h>

#include <exception>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::gpu {

namespace {

using Dims = std::array<std::int64_t, 4>;
using Desc = cudnnBackendDescriptor_t;

// Ids of the tensors the caller's buffers (and the by-value scalars) are bound to; the graph's
// virtual tensors are numbered from kFirstVirtual.
enum Uid : std::int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kNegInf,
  kOne,
  kDo,
  kDq,
  kDk,
  kDv,
  kDoO,     // backward: per-row sum of dO * O, fp32 scratch
  kDqAccum  // backward: dQ accumulated in fp32, scratch
};
constexpr std::int64_t kFirstVirtual = 100;
constexpr std::int64_t kAlign = 256;
constexpr float kOneValue = 1.f;

std::int64_t aligned(std::int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The masked-out score: cuDNN before 9.10 wants the lowest float rather than -inf.
float masked_score() {
  return cudnnGetVersion() < 91000 ? std::numeric_limits<float>::lowest() : -std::numeric_limits<float>::infinity();
}

// Owns every descriptor of one operation graph while it is built and planned.
class GraphBuilder {
 public:
  Desc tensor(std::int64_t uid, Dims dims, Dims strides, cudnnDataType_t type) {
    return add(uid, dims, strides, type, false, false);
  }
  Desc scalar(std::int64_t uid) { return add(uid, {1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true); }
  Desc virt(Dims dims, Dims strides, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return add(next_++, dims, strides, type, true, false);
  }

  // y = mode(x[, b][, t]); `axis` for GEN_INDEX. Returns y.
  Desc pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc t, Desc y, cudnnDataType_t math = CUDNN_DATA_FLOAT,
                 std::int64_t axis = -1) {
    BackendDescriptor& pw = keep(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    pw.finalize();
    BackendDescriptor op = operation(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                     {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw.get()},
                                      {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
                                      {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b},
                                      {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t},
                                      {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}});
    const float one = 1.f;
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
    add_op(std::move(op));
    return y;
  }

  // c = a b, batched over the first two dimensions, fp32 accumulation. Returns c.
  Desc matmul(Desc a, Desc b, Desc c) {
    Desc m = fp32_compute(keep(CUDNN_BACKEND_MATMUL_DESCRIPTOR), CUDNN_ATTR_MATMUL_COMP_TYPE);
    add_op(operation(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, {{CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
                                                                 {CUDNN_ATTR_OPERATION_MATMUL_BDESC, b},
                                                                 {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c},
                                                                 {CUDNN_ATTR_OPERATION_MATMUL_DESC, m}}));
    return c;
  }

  // y = reduce(x) over the dimensions where y is 1. Returns y.
  Desc reduction(cudnnReduceTensorOp_t mode, Desc x, Desc y) {
    BackendDescriptor& red = keep(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    Desc r = fp32_compute(red, CUDNN_ATTR_REDUCTION_COMP_TYPE);
    add_op(operation(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, {{CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
                                                                    {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y},
                                                                    {CUDNN_ATTR_OPERATION_REDUCTION_DESC, r}}));
    return y;
  }

  // y views x with other dimensions and strides (a transpose). Returns y.
  Desc reshape(Desc x, Desc y) {
    add_op(operation(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
                     {{CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x}, {CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y}}));
    return y;
  }

  // The first plan cuDNN's heuristics propose that finalises for this graph.
  SdpaPlan plan(cudnnHandle_t handle) {
    BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<Desc> raw;
    for (const BackendDescriptor& op : ops_) raw.push_back(op.get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(raw.size()),
              raw.data());
    graph.finalize();
    const BackendDescriptor device = device_properties(handle);
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    std::vector<BackendDescriptor> configs = heuristic_configs(graph, device, CUDNN_HEUR_MODE_A, &st);
    if (configs.empty())
      throw Error("cuDNN's heuristics propose no engine (" +
                  (st == CUDNN_STATUS_SUCCESS ? std::string("none listed") : cudnn_status_text(st)) + ")");
    for (BackendDescriptor& config : configs) {
      SdpaPlan p;
      Desc cfg = config.get(), dev = device.get();
      p.plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
      p.plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dev);
      st = p.plan.try_finalize();
      if (st != CUDNN_STATUS_SUCCESS) continue;
      std::int64_t got = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(p.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &got, &p.workspace));
      p.engine = engine_info(cfg, false).index;
      return p;
    }
    throw Error("none of the " + std::to_string(configs.size()) +
                " engines cuDNN's heuristics propose finalises (last: " + cudnn_status_text(st) + ")");
  }

 private:
  Desc add(std::int64_t uid, Dims dims, Dims strides, cudnnDataType_t type, bool is_virtual, bool by_value) {
    BackendDescriptor& t = keep(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t alignment = 16;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    if (is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    t.finalize();
    return t.get();
  }
  // An operation whose attributes `descs` name other descriptors; a null one is left out.
  static BackendDescriptor operation(cudnnBackendDescriptorType_t type,
                                     std::initializer_list<std::pair<cudnnBackendAttributeName_t, Desc>> descs) {
    BackendDescriptor op(type);
    for (auto [attr, d] : descs)
      if (d) op.set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
    return op;
  }
  // `d` computing in fp32 (its attribute `attr`), finalised.
  static Desc fp32_compute(BackendDescriptor& d, cudnnBackendAttributeName_t attr) {
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    d.set(attr, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    d.finalize();
    return d.get();
  }
  BackendDescriptor& keep(cudnnBackendDescriptorType_t type) {
    descs_.emplace_back(type);
    return descs_.back();
  }
  void add_op(BackendDescriptor op) {
    op.finalize();
    ops_.push_back(std::move(op));
  }

  std::vector<BackendDescriptor> descs_, ops_;  // the raw handles stay valid when the vectors grow
  std::int64_t next_ = kFirstVirtual;
};

// bhsd: Q, O and their gradients; kv_bhsd: K and V (fewer heads with grouped-query attention).
struct Layout {
  Dims bhsd, kv_bhsd, qkv, kt_dims, kt_strides, out, scores, scores_strides, rows, rows_strides;
};

Layout layout(const SdpaShape& s) {
  const std::int64_t b = s.batch, h = s.heads, n = s.seq, d = s.head_dim, hk = s.kv();
  const Dims& q = s.qkv_strides;
  return {{b, h, n, d},
          {b, hk, n, d},
          q,
          {b, hk, d, n},
          {q[0], q[1], q[3], q[2]},
          s.out_strides,
          {b, h, n, n},
          {h * n * n, n * n, n, 1},
          {b, h, n, 1},
          {h * n, n, 1, 1}};
}

// Virtual tensors of the graph's two shapes: a score per query and key, a value per query row.
Desc scores(GraphBuilder& g, const Layout& l, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
  return g.virt(l.scores, l.scores_strides, type);
}
Desc rows(GraphBuilder& g, const Layout& l) { return g.virt(l.rows, l.rows_strides); }

// The scores viewed transposed (key-major), in bf16: the input of the dV and dK matmuls.
Desc transposed(GraphBuilder& g, const Layout& l, Desc x) {
  const Dims& sc = l.scores;
  return g.reshape(x, g.virt(sc, {sc[1] * sc[2] * sc[3], sc[2] * sc[3], 1, sc[3]}, CUDNN_DATA_BFLOAT16));
}

// What both passes bind: Q, K (read as K^T), O, the softmax statistics and the two scalars.
struct Bound {
  Desc q, kt, o, stats, scale, masked;
};
Bound bind_common(GraphBuilder& g, const Layout& l) {
  return {g.tensor(kQ, l.bhsd, l.qkv, CUDNN_DATA_BFLOAT16),
          g.tensor(kK, l.kt_dims, l.kt_strides, CUDNN_DATA_BFLOAT16),
          g.tensor(kO, l.bhsd, l.out, CUDNN_DATA_BFLOAT16),
          g.tensor(kStats, l.rows, l.rows_strides, CUDNN_DATA_FLOAT),
          g.scalar(kScale),
          g.scalar(kNegInf)};
}

// scale Q K^T: where both passes start.
Desc scaled_scores(GraphBuilder& g, const Layout& l, const Bound& t) {
  Desc qk = g.matmul(t.q, t.kt, scores(g, l));
  return g.pointwise(CUDNN_POINTWISE_MUL, qk, t.scale, nullptr, scores(g, l));
}

// Scores where the key comes after the query become the masked value (causal, top-left aligned).
Desc causal_mask(GraphBuilder& g, const Layout& l, Desc x, Desc masked) {
  Desc row =
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, nullptr, scores(g, l, CUDNN_DATA_INT32), CUDNN_DATA_FLOAT, 2);
  Desc col =
      g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, nullptr, scores(g, l, CUDNN_DATA_INT32), CUDNN_DATA_FLOAT, 3);
  Desc keep =
      g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, nullptr, scores(g, l, CUDNN_DATA_BOOLEAN), CUDNN_DATA_BOOLEAN);
  return g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, masked, keep, scores(g, l));
}

// c = a b into `out`; with grouped-query attention (dK, dV) into a virtual bf16 tensor per query
// head, then summed over each KV head's group of query heads by a reduction into `out`.
void matmul_per_kv_head(GraphBuilder& g, const Layout& l, bool grouped, Desc a, Desc b, Desc out) {
  if (!grouped) {
    g.matmul(a, b, out);
    return;
  }
  const Dims& x = l.bhsd;
  Desc full = g.matmul(a, b, g.virt(x, {x[1] * x[2] * x[3], x[2] * x[3], x[3], 1}, CUDNN_DATA_BFLOAT16));
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

SdpaPlan forward_plan(cudnnHandle_t handle, const SdpaShape& s) {
  const Layout l = layout(s);
  GraphBuilder g;
  const Bound t = bind_common(g, l);
  Desc v = g.tensor(kV, l.kv_bhsd, l.qkv, CUDNN_DATA_BFLOAT16);

  Desc x = causal_mask(g, l, scaled_scores(g, l, t), t.masked);
  // Softmax with its statistics: max, exp(x - max), sum, stats = max + log(sum), P = exp / sum.
  Desc mx = g.reduction(CUDNN_REDUCE_TENSOR_MAX, x, rows(g, l));
  Desc sub = g.pointwise(CUDNN_POINTWISE_SUB, x, mx, nullptr, scores(g, l));
  Desc ex = g.pointwise(CUDNN_POINTWISE_EXP, sub, nullptr, nullptr, scores(g, l));
  Desc sum = g.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, rows(g, l));
  Desc lg = g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, rows(g, l));
  g.pointwise(CUDNN_POINTWISE_ADD, mx, lg, nullptr, t.stats);
  // P in bf16, the second matmul's input type.
  Desc p = g.pointwise(CUDNN_POINTWISE_DIV, ex, sum, nullptr, scores(g, l, CUDNN_DATA_BFLOAT16));
  g.matmul(p, v, t.o);
  return g.plan(handle);
}

SdpaPlan backward_plan(cudnnHandle_t handle, const SdpaShape& s) {
  const Layout l = layout(s);
  const std::int64_t h = s.heads, n = s.seq, d = s.head_dim;
  const bool grouped = s.kv() != h;
  GraphBuilder g;
  const Bound t = bind_common(g, l);
  Desc vt = g.tensor(kV, l.kt_dims, l.kt_strides, CUDNN_DATA_BFLOAT16);
  Desc d_o = g.tensor(kDo, l.bhsd, l.out, CUDNN_DATA_BFLOAT16);
  Desc dq = g.tensor(kDq, l.bhsd, l.qkv, CUDNN_DATA_BFLOAT16);
  Desc dk = g.tensor(kDk, l.kv_bhsd, l.qkv, CUDNN_DATA_BFLOAT16);
  Desc dv = g.tensor(kDv, l.kv_bhsd, l.qkv, CUDNN_DATA_BFLOAT16);
  Desc do_o = g.tensor(kDoO, l.rows, l.rows_strides, CUDNN_DATA_FLOAT);
  Desc dq_accum = g.tensor(kDqAccum, l.bhsd, {h * n * d, n * d, d, 1}, CUDNN_DATA_FLOAT);
  Desc one = g.scalar(kOne);

  // Per query row: sum over the head dimension of dO * O.
  Desc prod = g.pointwise(CUDNN_POINTWISE_MUL, d_o, t.o, nullptr, g.virt(l.bhsd, {h * n * d, n * d, h * d, 1}));
  Desc rowsum = g.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, rows(g, l));
  g.pointwise(CUDNN_POINTWISE_MUL, rowsum, one, nullptr, do_o);

  // P again from the statistics: exp(scale Q K^T - stats), causal.
  Desc scaled = scaled_scores(g, l, t);
  Desc centred = g.pointwise(CUDNN_POINTWISE_SUB, scaled, t.stats, nullptr, scores(g, l));
  Desc prob = g.pointwise(CUDNN_POINTWISE_EXP, causal_mask(g, l, centred, t.masked), nullptr, nullptr, scores(g, l));

  // dV = P^T dO.
  matmul_per_kv_head(g, l, grouped, transposed(g, l, prob), d_o, dv);

  // dS = scale P (dO V^T - rowsum).
  Desc dp = g.matmul(d_o, vt, scores(g, l));
  Desc ds1 = g.pointwise(CUDNN_POINTWISE_SUB, dp, do_o, nullptr, scores(g, l));
  Desc ds2 = g.pointwise(CUDNN_POINTWISE_MUL, ds1, prob, nullptr, scores(g, l));
  Desc ds = g.pointwise(CUDNN_POINTWISE_MUL, ds2, t.scale, nullptr, scores(g, l));

  // dK = dS^T Q.
  matmul_per_kv_head(g, l, grouped, transposed(g, l, ds), t.q, dk);

  // dQ = dS K, accumulated in fp32, then converted.
  Desc k = g.reshape(t.kt, g.virt(l.kv_bhsd, l.qkv));  // the intermediate type, as cuDNN's own frontend builds it
  g.matmul(ds, k, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, nullptr, dq);
  return g.plan(handle);
}

// Builds a plan, naming the pass and the shape in any error.
template <typename Build>
SdpaPlan planned(const char* pass, const SdpaShape& s, Build build) {
  try {
    return build();
  } catch (const std::exception& e) {
    throw Error(std::string("cuDNN fused attention ") + pass + " for " + s.describe() + ": " + e.what());
  }
}

void execute(cudnnHandle_t handle, const SdpaPlan& plan, const std::vector<std::int64_t>& uids,
             const std::vector<void*>& ptrs, void* workspace) {
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(ptrs.size()),
           ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  CUDNN_CHECK(cudnnBackendExecute(handle, plan.plan.get(), pack.get()));
}

void* in(const void* p) { return const_cast<void*>(p); }

}  // namespace

std::string SdpaShape::describe() const {
  return "batch " + std::to_string(batch) + " heads " + std::to_string(heads) +
         (kv() != heads ? " kv_heads " + std::to_string(kv()) : std::string()) + " seq " + std::to_string(seq) +
         " head_dim " + std::to_string(head_dim);
}

SdpaForward::SdpaForward(cudnnHandle_t handle, const SdpaShape& shape)
    : shape_(shape), plan_(planned("forward", shape, [&] { return forward_plan(handle, shape); })) {}

void SdpaForward::run(cudnnHandle_t handle, const void* q, const void* k, const void* v, void* o, float* stats,
                      void* workspace) const {
  float scale = shape_.scale, masked = masked_score();
  execute(handle, plan_, {kQ, kK, kV, kO, kStats, kScale, kNegInf}, {in(q), in(k), in(v), o, stats, &scale, &masked},
          workspace);
}

SdpaBackward::SdpaBackward(cudnnHandle_t handle, const SdpaShape& shape)
    : shape_(shape), plan_(planned("backward", shape, [&] { return backward_plan(handle, shape); })) {}

std::int64_t SdpaBackward::workspace_bytes() const {
  const std::int64_t rows = shape_.batch * shape_.heads * shape_.seq;
  return aligned(plan_.workspace) + aligned(rows * 4) + aligned(rows * shape_.head_dim * 4);
}

void SdpaBackward::run(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* o,
                       const void* d_o, const float* stats, void* dq, void* dk, void* dv, void* workspace) const {
  const std::int64_t rows = shape_.batch * shape_.heads * shape_.seq;
  auto* base = static_cast<char*>(workspace);
  void* do_o = base + aligned(plan_.workspace);
  void* dq_accum = base + aligned(plan_.workspace) + aligned(rows * 4);
  // Before 9.6 the graph expects its fp32 dQ accumulator zeroed.
  if (cudnnGetVersion() < 90600) {
    cudaStream_t stream = nullptr;
    CUDNN_CHECK(cudnnGetStream(handle, &stream));
    CUDA_CHECK(cudaMemsetAsync(dq_accum, 0, static_cast<std::size_t>(rows * shape_.head_dim * 4), stream));
  }
  float scale = shape_.scale, masked = masked_score(), one = kOneValue;
  execute(handle, plan_, {kQ, kK, kV, kO, kDo, kStats, kDq, kDk, kDv, kDoO, kDqAccum, kScale, kNegInf, kOne},
          {in(q), in(k), in(v), in(o), in(d_o), in(stats), dq, dk, dv, do_o, dq_accum, &scale, &masked, &one},
          workspace);
}

}  // namespace scalebench::gpu
