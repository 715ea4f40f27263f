#include "workloads/gemm/shape.hpp"

#include <charconv>

#include "common/error.hpp"

namespace scalebench::gemm {

std::string op_name(bool trans_a, bool trans_b) { return std::string(trans_a ? "t" : "n") + (trans_b ? "t" : "n"); }

bool parse_op(std::string_view text, bool* trans_a, bool* trans_b) {
  if (text.size() != 2) return false;
  for (char c : text)
    if (c != 'n' && c != 't') return false;
  *trans_a = text[0] == 't';
  *trans_b = text[1] == 't';
  return true;
}

Shape parse_shape(std::string_view text, bool trans_a, bool trans_b) {
  const std::string original(text);
  auto bad = [&](const std::string& why) {
    return Error("shape '" + original + "': " + why + " (expected MxNxK such as 8192x8192x8192, or MxNxK:tn)");
  };
  Shape s;
  s.set = "custom";
  s.trans_a = trans_a;
  s.trans_b = trans_b;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    if (!parse_op(text.substr(colon + 1), &s.trans_a, &s.trans_b))
      throw bad("the op after ':' is not nn, nt, tn or tt");
    text = text.substr(0, colon);
  }
  long long* dims[] = {&s.m, &s.n, &s.k};
  for (int d = 0; d < 3; ++d) {
    const auto x = d < 2 ? text.find('x') : std::string_view::npos;
    if (d < 2 && x == std::string_view::npos) throw bad("three dimensions needed");
    const std::string_view part = text.substr(0, x);
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), *dims[d]);
    if (ec != std::errc() || ptr != part.data() + part.size() || part.empty())
      throw bad("'" + std::string(part) + "' is not an integer");
    if (*dims[d] < 1) throw bad("dimensions must be at least 1");
    if (d < 2) text = text.substr(x + 1);
  }
  return s;
}

double flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

Json shape_json(const Shape& s) {
  return Json{{"m", s.m}, {"n", s.n}, {"k", s.k}, {"op", op_name(s.trans_a, s.trans_b)}, {"set", s.set}};
}

Shape shape_from_json(const Json& point) {
  Shape s;
  s.m = point.at("m").get<long long>();
  s.n = point.at("n").get<long long>();
  s.k = point.at("k").get<long long>();
  if (!parse_op(point.at("op").get<std::string>(), &s.trans_a, &s.trans_b)) throw Error("bad op in gemm point");
  s.set = point.value("set", std::string("custom"));
  return s;
}

}  // namespace scalebench::gemm
