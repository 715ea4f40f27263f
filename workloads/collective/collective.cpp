#include "workloads/collective/collective.hpp"

#include <cmath>
#include <optional>

#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"
#include "common/error.hpp"

namespace scalebench::collective {

DType parse_dtype(const std::string& s) {
  const std::optional<DType> t = gpu::parse_dtype(s);
  if (!t || *t == DType::kE4M3 || *t == DType::kE5M2) throw Error("unknown dtype '" + s + "'");
  return *t;
}

RedOp parse_redop(const std::string& s) {
  if (s == "sum") return RedOp::kSum;
  if (s == "prod") return RedOp::kProd;
  if (s == "max") return RedOp::kMax;
  if (s == "min") return RedOp::kMin;
  if (s == "avg") return RedOp::kAvg;
  throw Error("unknown reduce_op '" + s + "'");
}

std::size_t Config::element_bytes() const { return static_cast<std::size_t>(gpu::dtype_bytes(dtype)); }

bool is_reducing(Op op) { return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kReduce; }

Layout layout_for(Op op, std::uint64_t bytes, DType t, int n) {
  const std::size_t elem = static_cast<std::size_t>(gpu::dtype_bytes(t));
  const std::size_t count = static_cast<std::size_t>(bytes / elem);
  Layout l;
  switch (op) {
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: {
      std::size_t per = count / static_cast<std::size_t>(n);
      per -= per % (16 / elem > 0 ? 16 / elem : 1);  // 16-byte aligned chunks, as nccl-tests
      l.chunk = per;
      if (op == Op::kAllGather) {
        l.send_count = per;
        l.recv_count = per * static_cast<std::size_t>(n);
      } else if (op == Op::kReduceScatter) {
        l.send_count = per * static_cast<std::size_t>(n);
        l.recv_count = per;
      } else {
        l.send_count = l.recv_count = per * static_cast<std::size_t>(n);
      }
      l.size_bytes = static_cast<std::uint64_t>(per) * static_cast<std::uint64_t>(n) * elem;
      break;
    }
    default:
      l.send_count = l.recv_count = count;
      l.size_bytes = static_cast<std::uint64_t>(count) * elem;
  }
  return l;
}

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                      std::size_t elem) {
  std::vector<std::uint64_t> out;
  auto round = [&](std::uint64_t b) { return std::max<std::uint64_t>(elem, b / elem * elem); };
  if (factor <= 1.0) return {round(min_bytes)};
  for (double b = static_cast<double>(min_bytes); b <= static_cast<double>(max_bytes) * (1 + 1e-12); b *= factor) {
    std::uint64_t s = round(static_cast<std::uint64_t>(std::llround(b)));
    if (out.empty() || out.back() != s) out.push_back(s);
  }
  return out;
}

Config Config::from_params(const Json& params, int repetitions) {
  const Json p = with_defaults("collective", params);
  Config c;
  c.backend = p.at("backend") == "auto" ? "mpi" : p.at("backend").get<std::string>();
  c.op = parse_op(p.at("op"));
  c.dtype = parse_dtype(p.at("dtype"));
  c.redop = parse_redop(p.at("reduce_op"));
  c.min_bytes = p.at("min_bytes").get<std::uint64_t>();
  c.max_bytes = p.at("max_bytes").get<std::uint64_t>();
  c.step_factor = p.at("step_factor").get<double>();
  const timing::Values t = timing::read(p);
  c.warmup = t.warmup;
  c.iters = t.iters;
  c.in_place = p.at("in_place").get<bool>();
  c.cuda_graph = p.at("cuda_graph").get<bool>();
  c.blocking = p.at("blocking").get<bool>();
  c.gpus_per_process = p.at("gpus_per_process").get<int>();
  c.root = p.at("root").get<int>();
  c.check = t.check;
  c.time_cap_s = t.time_cap;
  c.target_cv = p.at("target_cv").get<double>();
  c.repetitions = repetitions;
  return c;
}

}  // namespace scalebench::collective
