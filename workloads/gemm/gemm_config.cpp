#include "workloads/gemm/gemm_config.hpp"

#include "common/error.hpp"
#include "workloads/gemm/deepbench_shapes.hpp"

namespace scalebench::gemm {

using compute::Precision;

namespace {
// A parameter that may hold one number (the YAML reader makes "8192" an integer) or a list.
std::vector<std::string> list_param(const Json& params, const char* key, const char* fallback) {
  std::string text = fallback;
  if (params.contains(key)) {
    const Json& v = params.at(key);
    text = v.is_string() ? v.get<std::string>() : v.dump();
  }
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (out.empty()) throw Error(std::string("gemm parameter '") + key + "' is empty");
  return out;
}
}  // namespace

Config Config::from_params(const Json& params) {
  Config c;
  c.precision = compute::parse_precision(params.value("precision", std::string("bf16")));
  bool ta = false, tb = false;
  const std::string op = params.value("op", std::string("nn"));
  if (!parse_op(op, &ta, &tb)) throw Error("gemm parameter 'op': '" + op + "' is not nn, nt, tn or tt");
  const std::string algo = params.value("algo", std::string("search"));
  if (algo == "heuristic")
    c.algo = Algo::kHeuristic;
  else if (algo == "search")
    c.algo = Algo::kSearch;
  else
    throw Error("gemm parameter 'algo': '" + algo + "' is not heuristic or search");
  c.candidates = params.value("candidates", c.candidates);
  if (c.candidates < 1) throw Error("gemm parameter 'candidates' must be at least 1");
  c.check = params.value("check", c.check);

  for (const std::string& item : list_param(params, "shapes", "square")) {
    if (item == "square") {
      for (const std::string& e : list_param(params, "sizes", "1024,2048,4096,8192")) {
        Shape s;
        try {
          s = parse_shape(e + "x" + e + "x" + e, ta, tb);
        } catch (const Error&) {
          throw Error("gemm parameter 'sizes': '" + e + "' is not a positive integer");
        }
        s.set = "square";
        c.shapes.push_back(s);
      }
    } else if (item == "deepbench") {
      for (const char* set : {"deepbench-train", "deepbench-inference", "deepbench-device"})
        for (const Shape& s : deepbench_shapes(set)) c.shapes.push_back(s);
    } else if (auto set = deepbench_shapes(item); !set.empty()) {
      c.shapes.insert(c.shapes.end(), set.begin(), set.end());
    } else if (!item.empty() && item[0] >= '0' && item[0] <= '9') {
      try {
        c.shapes.push_back(parse_shape(item, ta, tb));
      } catch (const Error& e) {
        throw Error(std::string("gemm parameter 'shapes': ") + e.what());
      }
    } else {
      throw Error("gemm parameter 'shapes': unknown set '" + item +
                  "' (square, deepbench-train, deepbench-inference, deepbench-device, deepbench, or MxNxK)");
    }
  }
  return c;
}

std::optional<compute::RankOutcome> unsupported_outcome(Precision p, int cc_major, int cc_minor) {
  std::string why = compute::unsupported_on(p, cc_major, cc_minor);
  if (why.empty()) return std::nullopt;
  compute::RankOutcome o;
  o.status = "skipped";
  o.reason = std::move(why);
  return o;
}

compute::Throughput throughput(Precision p, const Shape& s) {
  return compute::Throughput{flops(s), 1e-12, p == Precision::kInt8 ? "TOP/s" : "TFLOP/s"};
}

Json point_json(Precision p, const Shape& s) {
  Json j = shape_json(s);
  j["precision"] = compute::name(p);
  return j;
}

}  // namespace scalebench::gemm
