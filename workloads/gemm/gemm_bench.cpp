#include "workloads/gemm/gemm_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workloads/compute/candidate_trial.hpp"
#include "workloads/compute/gpu_timer.hpp"
#include "workloads/compute/peak.hpp"
#include "workloads/gemm/gemm_check.hpp"
#include "workloads/gemm/gemm_config.hpp"
#include "workloads/gemm/gemm_kernels.cuh"
#include "workloads/gemm/gemm_types.hpp"
#include "workloads/gpu/cublaslt_handles.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/dtype_cuda.hpp"

namespace scalebench::gemm {

using compute::Precision;

namespace {
using gpu::cuda_type;

cublasComputeType_t cuda_compute(ComputeType t) {
  switch (t) {
    case ComputeType::k64F:
      return CUBLAS_COMPUTE_64F;
    case ComputeType::k32F:
      return CUBLAS_COMPUTE_32F;
    case ComputeType::k32FFastTf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ComputeType::k32I:
      return CUBLAS_COMPUTE_32I;
  }
  return CUBLAS_COMPUTE_32F;
}

// alpha = 1 and beta = 0 in the scale type's own representation.
struct Scalars {
  double d[2] = {1, 0};
  float f[2] = {1, 0};
  std::int32_t i[2] = {1, 0};
  const void* alpha(gpu::DType t) const {
    return t == gpu::DType::kF64 ? (const void*)&d[0] : t == gpu::DType::kI32 ? (const void*)&i[0] : (const void*)&f[0];
  }
  const void* beta(gpu::DType t) const {
    return t == gpu::DType::kF64 ? (const void*)&d[1] : t == gpu::DType::kI32 ? (const void*)&i[1] : (const void*)&f[1];
  }
};

template <typename V>
V algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  V v{};
  std::size_t written = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written));
  return v;
}

// What identifies a cuBLASLt algorithm, for the record (the same numbers cublasLt's own logging
// and the cuBLASLt autotuning samples print).
Json describe(const cublasLtMatmulHeuristicResult_t& h) {
  const cublasLtMatmulAlgo_t& a = h.algo;
  return Json{{"id", algo_attr<int>(a, CUBLASLT_ALGO_CONFIG_ID)},
              {"tile", algo_attr<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID)},
              {"stages", algo_attr<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID)},
              {"split_k", algo_attr<int>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
              {"reduction", algo_attr<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)},
              {"swizzle", algo_attr<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
              {"custom", algo_attr<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)},
              {"cluster", algo_attr<std::uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)},
              {"workspace_bytes", h.workspaceSize},
              {"waves", h.wavesCount}};
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1u << 30));
  return buf;
}
}  // namespace

compute::RankOutcome measure_gemm(const Json& params, const Json& point, const compute::DeviceInfo& gpu,
                                  int repetitions) {
  const Config cfg = Config::from_params(params);
  const Precision p = cfg.precision;
  const Shape s = shape_from_json(point);
  if (auto skip = unsupported_outcome(p, gpu.cc_major, gpu.cc_minor)) return *skip;
  compute::RankOutcome out;
  const TypeChoice t = type_choice(p);
  const Layout l = layout_for(p, s);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double need = l.bytes(t, s.n) + kWorkspaceBytes;
  if (need > 0.95 * static_cast<double>(free_bytes)) {
    out.status = "skipped";
    out.reason = "needs " + gib(need) + " of GPU memory, " + gib(static_cast<double>(free_bytes)) + " free";
    return out;
  }

  gpu::Stream stream;
  gpu::DeviceBuffer a(static_cast<std::size_t>(l.lda * l.a_cols * gpu::dtype_bytes(t.a)));
  gpu::DeviceBuffer b(static_cast<std::size_t>(l.ldb * l.b_cols * gpu::dtype_bytes(t.b)));
  gpu::DeviceBuffer c(static_cast<std::size_t>(l.ldc * s.n * gpu::dtype_bytes(t.c)));
  gpu::DeviceBuffer workspace(kWorkspaceBytes);
  // Padding of the leading dimensions is never read, but zeroed so that nothing uninitialised is.
  CUDA_CHECK(cudaMemsetAsync(a.get(), 0, a.bytes(), stream.get()));
  CUDA_CHECK(cudaMemsetAsync(b.get(), 0, b.bytes(), stream.get()));
  fill_pattern(a.get(), t.a, l.a_rows, l.a_cols, l.lda, 0, l.trans_a, stream.get());
  fill_pattern(b.get(), t.b, l.b_rows, l.b_cols, l.ldb, 1, l.trans_b, stream.get());
  CUDA_CHECK(cudaMemsetAsync(c.get(), 0, c.bytes(), stream.get()));

  LtHandle lt;
  MatmulDesc desc(cuda_compute(t.compute), cuda_type(t.scale));
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, l.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, l.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  MatrixLayout la(cuda_type(t.a), l.a_rows, l.a_cols, l.lda);
  MatrixLayout lb(cuda_type(t.b), l.b_rows, l.b_cols, l.ldb);
  MatrixLayout lc(cuda_type(t.c), s.m, s.n, l.ldc);
  MatmulPreference pref(kWorkspaceBytes);
  const int wanted = cfg.algo == Algo::kSearch ? cfg.candidates : 1;
  std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<std::size_t>(wanted));
  int returned = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt.get(), desc.get(), la.get(), lb.get(), lc.get(), lc.get(),
                                                           pref.get(), wanted, found.data(), &returned);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    out.status = "skipped";
    out.reason = std::string("cuBLASLt has no algorithm for ") + compute::name(p) + " " +
                 op_name(l.trans_a, l.trans_b) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                 std::to_string(s.k) + " on this GPU";
    return out;
  }
  CUBLAS_CHECK(hs);
  found.resize(static_cast<std::size_t>(returned));

  const Scalars sc;
  auto run = [&](const cublasLtMatmulAlgo_t& algo, cudaStream_t st) {
    CUBLAS_CHECK(cublasLtMatmul(lt.get(), desc.get(), sc.alpha(t.scale), a.get(), la.get(), b.get(), lb.get(),
                                sc.beta(t.scale), c.get(), lc.get(), c.get(), lc.get(), &algo, workspace.get(),
                                kWorkspaceBytes, st));
  };

  // Search: the candidates timed against each other (compute::time_candidates), the fastest kept.
  // Candidates cuBLASLt offers but then refuses at launch are passed over.
  std::size_t best = 0;
  Json tried = Json::array();
  if (found.size() > 1) {
    const compute::CandidateTrial trial = compute::time_candidates(
        stream.get(), found.size(), [&](std::size_t i, cudaStream_t st) { run(found[i].algo, st); });
    for (const auto& m : trial.median_s) tried.push_back(m ? Json(*m * 1e6) : Json(nullptr));
    best = trial.best;
  }

  const compute::TimingConfig timing = compute::TimingConfig::from_params(params, repetitions);
  out.seconds = compute::time_on_stream(stream.get(), timing, [&](cudaStream_t st) { run(found[best].algo, st); });

  if (cfg.check) {
    const auto at = sample_indices(s, kCheckedElements);
    std::vector<long long> index;
    for (const auto& [i, j] : at) index.push_back(i + j * l.ldc);
    gpu::DeviceBuffer d_index(index.size() * sizeof(long long));
    gpu::DeviceBuffer d_got(index.size() * sizeof(double));
    CUDA_CHECK(cudaMemcpyAsync(d_index.get(), index.data(), d_index.bytes(), cudaMemcpyHostToDevice, stream.get()));
    gather_as_double(c.get(), t.c, reinterpret_cast<const long long*>(d_index.get()), static_cast<int>(index.size()),
                     reinterpret_cast<double*>(d_got.get()), stream.get());
    std::vector<double> got(index.size());
    CUDA_CHECK(cudaMemcpyAsync(got.data(), d_got.get(), d_got.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    out.wrong = count_wrong(p, s, at, got);
    out.checked = static_cast<long long>(at.size());
  }
  CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  Json algo = describe(found[best]);
  algo["selection"] = cfg.algo == Algo::kSearch ? "search" : "heuristic";
  algo["heuristic_rank"] = static_cast<int>(best);  // 0: cuBLASLt's own first choice
  algo["candidates"] = static_cast<int>(found.size());
  if (!tried.empty()) algo["candidate_us"] = tried;
  out.details =
      Json{{"algorithm", algo},
           {"types",
            {{"a", gpu::cuda_type_name(t.a)},
             {"b", gpu::cuda_type_name(t.b)},
             {"c", gpu::cuda_type_name(t.c)},
             {"scale", gpu::cuda_type_name(t.scale)},
             {"compute", name(t.compute)}}},
           {"layout", {{"op", op_name(l.trans_a, l.trans_b)}, {"lda", l.lda}, {"ldb", l.ldb}, {"ldc", l.ldc}}},
           {"workspace_bytes", kWorkspaceBytes}};
  if (!l.note.empty()) out.details["layout"]["note"] = l.note;
  const double peak = compute::peak_ops_per_second(p, gpu.cc_major, gpu.cc_minor, gpu.sm_count, gpu.max_clock_mhz);
  if (peak > 0)
    out.details["peak"] =
        Json{{"value", peak * 1e-12},
             {"unit", throughput(p, s).unit},
             {"basis", "SMs x max SM clock x dense ops per SM per clock (" + std::to_string(gpu.sm_count) + " SMs, " +
                           std::to_string(gpu.max_clock_mhz) + " MHz)"}};
  return out;
}

}  // namespace scalebench::gemm
