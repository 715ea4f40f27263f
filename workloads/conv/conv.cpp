#include "workloads/conv/conv.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace scalebench::conv {

const char* name(ConvPass p) {
  switch (p) {
    case ConvPass::kForward:
      return "fwd";
    case ConvPass::kBackwardData:
      return "bwd_data";
    case ConvPass::kBackwardFilter:
      return "bwd_filter";
  }
  return "?";
}

ConvPass parse_pass(std::string_view text) {
  for (ConvPass p : {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardFilter})
    if (text == name(p)) return p;
  throw Error("pass: unknown value '" + std::string(text) + "'; expected fwd, bwd_data or bwd_filter");
}

const char* name(Layout l) { return l == Layout::kNchw ? "nchw" : "nhwc"; }

Layout parse_layout(std::string_view text) {
  if (text == "nchw") return Layout::kNchw;
  if (text == "nhwc") return Layout::kNhwc;
  throw Error("layout: unknown value '" + std::string(text) + "'; expected nchw or nhwc");
}

compute::Precision parse_conv_precision(std::string_view text) {
  using compute::Precision;
  for (Precision p :
       {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16, Precision::kInt8, Precision::kFp8E4M3})
    if (text == compute::name(p)) return p;
  throw Error("precision: '" + std::string(text) +
              "' is not one conv runs; expected fp32, tf32, fp16, bf16, int8 or fp8e4m3");
}

bool quantized(compute::Precision p) { return p == compute::Precision::kInt8 || p == compute::Precision::kFp8E4M3; }

const char* name(Epilogue e) {
  switch (e) {
    case Epilogue::kBias:
      return "bias";
    case Epilogue::kBiasRelu:
      return "bias-relu";
    case Epilogue::kBiasResidualRelu:
      return "bias-residual-relu";
  }
  return "?";
}

Epilogue parse_epilogue(std::string_view text) {
  for (Epilogue e : {Epilogue::kBias, Epilogue::kBiasRelu, Epilogue::kBiasResidualRelu})
    if (text == name(e)) return e;
  throw Error("epilogue: unknown value '" + std::string(text) + "'; expected bias, bias-relu or bias-residual-relu");
}

std::string epilogue_text(Epilogue e, compute::Precision p) {
  const std::string out = compute::name(p);
  switch (e) {
    case Epilogue::kBias:
      return "scale,bias->" + out;
    case Epilogue::kBiasRelu:
      return "scale,bias,relu->" + out;
    case Epilogue::kBiasResidualRelu:
      break;
  }
  // An int8 residual for int8 (a block's requantized input); fp16 for E4M3, which the graph takes.
  return std::string("scale,bias,residual(") + (p == compute::Precision::kInt8 ? "int8" : "fp16") + "),relu->" + out;
}

Json ConvPoint::to_json() const {
  const ConvShape& s = shape;
  Json j{{"shape", s.name},
         {"pass", name(pass)},
         {"precision", compute::name(precision)},
         {"layout", name(layout)},
         {"n", s.n},
         {"c", s.c},
         {"h", s.h},
         {"w", s.w},
         {"k", s.k},
         {"r", s.r},
         {"s", s.s},
         {"pad_h", s.pad_h},
         {"pad_w", s.pad_w},
         {"stride_h", s.stride_h},
         {"stride_w", s.stride_w},
         {"dil_h", s.dil_h},
         {"dil_w", s.dil_w},
         {"groups", s.groups}};
  if (quantized(precision)) j["epilogue"] = epilogue_text(epilogue, precision);
  return j;
}

ConvPoint ConvPoint::from_json(const Json& j) {
  ConvPoint p;
  ConvShape& s = p.shape;
  s.name = j.at("shape").get<std::string>();
  p.pass = parse_pass(j.at("pass").get<std::string>());
  p.precision = parse_conv_precision(j.at("precision").get<std::string>());
  p.layout = parse_layout(j.at("layout").get<std::string>());
  s.n = j.at("n"), s.c = j.at("c"), s.h = j.at("h"), s.w = j.at("w"), s.k = j.at("k"), s.r = j.at("r");
  s.s = j.at("s"), s.pad_h = j.at("pad_h"), s.pad_w = j.at("pad_w"), s.stride_h = j.at("stride_h");
  s.stride_w = j.at("stride_w"), s.dil_h = j.at("dil_h"), s.dil_w = j.at("dil_w"), s.groups = j.at("groups");
  if (j.contains("epilogue")) {
    const std::string text = j.at("epilogue").get<std::string>();
    bool known = false;
    for (Epilogue e : {Epilogue::kBias, Epilogue::kBiasRelu, Epilogue::kBiasResidualRelu})
      if (text == epilogue_text(e, p.precision)) p.epilogue = e, known = true;
    if (!known) throw Error("point: epilogue '" + text + "' is not one conv runs in " + compute::name(p.precision));
  }
  return p;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view item = text.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

namespace {
// A list parameter's items; a parameter given as a number (YAML `1`) is not a list of words.
std::vector<std::string> words(const Json& params, const char* key, const char* fallback) {
  const Json v = params.value(key, Json(fallback));
  if (!v.is_string()) throw Error(std::string(key) + ": expected a word or a comma-separated list, got " + v.dump());
  std::vector<std::string> out = split_list(v.get<std::string>());
  if (out.empty()) throw Error(std::string(key) + ": empty");
  return out;
}
}  // namespace

Config Config::from_params(const Json& params) {
  Config c;
  for (const std::string& w : words(params, "precision", "fp32,tf32,fp16,bf16"))
    c.precisions.push_back(parse_conv_precision(w));
  for (const std::string& w : words(params, "layout", "nhwc")) c.layouts.push_back(parse_layout(w));
  for (const std::string& w : words(params, "pass", "fwd,bwd_data,bwd_filter")) c.passes.push_back(parse_pass(w));
  const Json shapes = params.value("shapes", Json("resnet50"));
  if (!shapes.is_string()) throw Error("shapes: expected a set name or a list of KxCxRxS@HxW, got " + shapes.dump());
  const int batch = params.value("batch", 64);
  if (batch < 1) throw Error("batch: must be at least 1, got " + std::to_string(batch));
  c.shapes = shapes_from_param(shapes.get<std::string>(), batch);
  const std::string algo = params.value("algo", "heuristic");
  if (algo != "heuristic" && algo != "search")
    throw Error("algo: unknown value '" + algo + "'; expected heuristic or search");
  c.search = algo == "search";
  c.check = params.value("check", true);
  c.graph = params.value("graph", true);
  c.epilogue = parse_epilogue(params.value("epilogue", std::string("bias-relu")));
  c.plans = params.value("plans", 4);
  if (c.plans < 1) throw Error("plans: must be at least 1, got " + std::to_string(c.plans));
  for (compute::Precision p : c.precisions)
    if (quantized(p) && (std::find(c.passes.begin(), c.passes.end(), ConvPass::kForward) == c.passes.end() ||
                         std::find(c.layouts.begin(), c.layouts.end(), Layout::kNhwc) == c.layouts.end()))
      throw Error(std::string("precision: ") + compute::name(p) +
                  " runs the forward pass in NHWC only (inference); add fwd to pass and nhwc to layout");
  return c;
}

std::vector<ConvPoint> plan(const Config& cfg) {
  std::vector<ConvPoint> out;
  for (compute::Precision prec : cfg.precisions)
    for (Layout layout : cfg.layouts)
      for (const ConvShape& shape : cfg.shapes)
        for (ConvPass pass : cfg.passes)
          if (!quantized(prec) || (pass == ConvPass::kForward && layout == Layout::kNhwc))
            out.push_back(ConvPoint{shape, pass, prec, layout, cfg.epilogue});
  return out;
}

compute::Throughput throughput(const ConvPoint& p) {
  return compute::Throughput{conv_flops(p.shape), 1e-12,
                             p.precision == compute::Precision::kInt8 ? "TOP/s" : "TFLOP/s"};
}

}  // namespace scalebench::conv
