#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/conv/conv.hpp"
#include "workloads/conv/conv_reference.hpp"
#include "workloads/conv/conv_report.hpp"
#include "workloads/conv/conv_shape.hpp"
#include "workloads/conv/conv_values.hpp"

using namespace scalebench;
using namespace scalebench::conv;

namespace {
ConvShape shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride, int dil = 1, int groups = 1) {
  ConvShape x;
  x.name = "t";
  x.n = n, x.c = c, x.h = h, x.w = w, x.k = k, x.r = r, x.s = s;
  x.pad_h = x.pad_w = pad, x.stride_h = x.stride_w = stride, x.dil_h = x.dil_w = dil, x.groups = groups;
  return x;
}

// The whole result tensor of a pass through reference_element.
std::vector<double> full(const ConvShape& s, ConvPass pass) {
  const Dims d = result_dims(s, pass);
  std::vector<double> out;
  for (long long a = 0; a < d[0]; ++a)
    for (long long b = 0; b < d[1]; ++b)
      for (long long c = 0; c < d[2]; ++c)
        for (long long e = 0; e < d[3]; ++e) out.push_back(reference_element(s, pass, {a, b, c, e}));
  return out;
}

// The grid values of a whole tensor, in logical order.
std::vector<double> values(const Dims& d, TensorRole role) {
  std::vector<double> out;
  for (long long i = 0; i < element_count(d); ++i) out.push_back(grid_value(role, static_cast<std::uint64_t>(i)));
  return out;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Rounds to a binary format with `mantissa` explicit bits (fp16: 10, bf16: 7), to nearest.
double round_to(double v, int mantissa) {
  if (v == 0) return 0;
  int e = 0;
  std::frexp(v, &e);
  const double ulp = std::ldexp(1.0, e - 1 - mantissa);
  return std::nearbyint(v / ulp) * ulp;
}
}  // namespace

TEST(ConvShape, OutputSizeAndFlopsFollowTheFormula) {
  const ConvShape c1 = shape(64, 3, 224, 224, 64, 7, 7, 3, 2);  // ResNet-50's stem
  EXPECT_EQ(c1.p(), 112);
  EXPECT_EQ(c1.q(), 112);
  EXPECT_DOUBLE_EQ(conv_flops(c1), 2.0 * 64 * 64 * 3 * 7 * 7 * 112 * 112);
  const ConvShape down = shape(8, 128, 56, 56, 128, 3, 3, 1, 2);
  EXPECT_EQ(down.p(), 28);
  const ConvShape dil = shape(1, 4, 10, 12, 4, 3, 3, 0, 1, 2);  // span 5: 10 - 5 + 1
  EXPECT_EQ(dil.p(), 6);
  EXPECT_EQ(dil.q(), 8);
  const ConvShape grouped = shape(2, 8, 5, 5, 12, 3, 3, 1, 1, 1, 4);
  EXPECT_DOUBLE_EQ(conv_flops(grouped), 2.0 * 2 * 12 * 8 * 3 * 3 * 5 * 5 / 4);
  EXPECT_EQ(grouped.invalid(), "");
  EXPECT_NE(shape(1, 6, 5, 5, 8, 3, 3, 0, 1, 1, 4).invalid().find("groups"), std::string::npos);
  EXPECT_NE(shape(1, 3, 2, 2, 8, 3, 3, 0, 1).invalid().find("does not fit"), std::string::npos);
}

TEST(ConvShape, ResNet50HasItsFiftyThreeConvolutionsAndFourPointOneGigaMacs) {
  const auto layers = resnet50_shapes(1);
  EXPECT_EQ(layers.size(), 23u);
  int count = 0;
  double macs = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(layers[i].invalid(), "");
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(layers[i].same_problem(layers[j])) << layers[i].name;
    count += layers[i].count;
    macs += layers[i].count * conv_flops(layers[i]) / 2;
  }
  EXPECT_EQ(count, 53);  // 16 bottlenecks x 3 + 4 downsamples + the stem
  // Plus the classifier's 2048 x 1000 this is 4,089,184,256: the multiply-adds that FLOP counters
  // report for torchvision's resnet50 at 224 x 224.
  EXPECT_DOUBLE_EQ(macs, 4087136256.0);
  const auto b64 = resnet50_shapes(64);
  EXPECT_DOUBLE_EQ(conv_flops(b64[7]), 64 * conv_flops(layers[7]));
  EXPECT_EQ(b64[6].name, "resnet50/layer2.0.conv2");  // v1.5: the stride on the 3x3
  EXPECT_EQ(b64[6].stride_h, 2);
  EXPECT_EQ(b64[6].r, 3);
}

TEST(ConvShape, DeepBenchSetsAreItsRowsWithoutRepeats) {
  const auto train = deepbench_training_shapes();
  const auto infer = deepbench_inference_shapes();
  EXPECT_EQ(train.size(), 90u);   // 94 rows, 4 repeated
  EXPECT_EQ(infer.size(), 103u);  // 107 rows, 4 repeated
  // The first training row, W=700 H=161 C=1 N=4 K=32 S=20 R=5 stride 2: speech spectrogram.
  const ConvShape& a = train[0];
  EXPECT_EQ(a.name, "deepbench-train/1");
  EXPECT_EQ(a.n, 4);
  EXPECT_EQ(a.h, 161);
  EXPECT_EQ(a.w, 700);
  EXPECT_EQ(a.r, 5);
  EXPECT_EQ(a.s, 20);
  EXPECT_EQ(a.p(), 79);  // the next layer's 341 x 79 input
  EXPECT_EQ(a.q(), 341);
  EXPECT_DOUBLE_EQ(conv_flops(a), 2.0 * 4 * 32 * 1 * 5 * 20 * 79 * 341);
  for (const auto* set : {&train, &infer})
    for (const ConvShape& s : *set) EXPECT_EQ(s.invalid(), "") << s.name;
  EXPECT_EQ(infer[0].n, 1);
}

TEST(ConvShape, ExplicitListsParseAndBadItemsAreNamed) {
  const auto v = shapes_from_param("256x64x1x1@56x56,64x64x3x3@56x56:p1:s2,32x8x3x3@20x30:g4:d2", 16);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].k, 256);
  EXPECT_EQ(v[0].c, 64);
  EXPECT_EQ(v[0].n, 16);
  EXPECT_EQ(v[1].pad_h, 1);
  EXPECT_EQ(v[1].stride_w, 2);
  EXPECT_EQ(v[1].p(), 28);
  EXPECT_EQ(v[2].groups, 4);
  EXPECT_EQ(v[2].c, 32);  // 8 channels per group, as a framework's weight shape says
  EXPECT_EQ(v[2].dil_h, 2);
  EXPECT_EQ(v[2].name, "32x8x3x3@20x30:g4:d2");
  EXPECT_EQ(shapes_from_param("resnet50", 8).size(), 23u);
  for (const char* bad : {"64x64x3@56x56", "64x64x3x3@56", "64x64x3x3@56x56:q1", "", "64x64x9x9@4x4"}) {
    try {
      shapes_from_param(bad, 1);
      FAIL() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("shapes:", 0), 0u) << e.what();
    }
  }
}

TEST(ConvConfig, DefaultsListsAndPlanOrder) {
  const Config d = Config::from_params(Json::object());
  EXPECT_EQ(d.precisions.size(), 4u);
  EXPECT_EQ(d.layouts, std::vector<Layout>{Layout::kNhwc});
  EXPECT_EQ(d.passes.size(), 3u);
  EXPECT_EQ(d.shapes.size(), 23u);
  EXPECT_EQ(d.shapes[0].n, 64);
  EXPECT_FALSE(d.search);
  EXPECT_TRUE(d.check);
  EXPECT_TRUE(d.graph);
  EXPECT_FALSE(Config::from_params(Json{{"graph", false}}).graph);
  const Config c = Config::from_params(Json{{"precision", "fp16, bf16"},
                                            {"layout", "nchw,nhwc"},
                                            {"pass", "bwd_filter"},
                                            {"shapes", "64x64x3x3@56x56:p1,256x64x1x1@56x56"},
                                            {"batch", 2},
                                            {"algo", "search"}});
  EXPECT_TRUE(c.search);
  const auto pts = plan(c);
  ASSERT_EQ(pts.size(), 2u * 2 * 2 * 1);
  EXPECT_EQ(pts[0].precision, compute::Precision::kFp16);
  EXPECT_EQ(pts[0].layout, Layout::kNchw);
  EXPECT_EQ(pts[1].shape.k, 256);  // shapes inside layouts inside precisions
  EXPECT_EQ(pts[2].layout, Layout::kNhwc);
  EXPECT_EQ(pts[4].precision, compute::Precision::kBf16);
  // A point travels as JSON and comes back the same problem.
  const ConvPoint back = ConvPoint::from_json(pts[3].to_json());
  EXPECT_TRUE(back.shape.same_problem(pts[3].shape));
  EXPECT_EQ(back.pass, ConvPass::kBackwardFilter);
  EXPECT_EQ(back.layout, Layout::kNhwc);
  EXPECT_DOUBLE_EQ(throughput(back).work, conv_flops(back.shape));
  EXPECT_EQ(throughput(back).unit, "TFLOP/s");
  EXPECT_THROW(Config::from_params(Json{{"precision", "fp8e5m2"}}), Error);
  EXPECT_THROW(Config::from_params(Json{{"pass", "bwd"}}), Error);
  EXPECT_THROW(Config::from_params(Json{{"layout", "nc"}}), Error);
  EXPECT_THROW(Config::from_params(Json{{"precision", 16}}), Error);
}

// int8 and fp8e4m3 are inference: their points are the forward ones in NHWC, each naming its
// epilogue, beside the other precisions' full sets.
TEST(ConvConfig, QuantizedPrecisionsPlanForwardNhwcPointsWithTheirEpilogue) {
  const Config c = Config::from_params(Json{{"precision", "fp16,int8,fp8e4m3"},
                                            {"layout", "nchw,nhwc"},
                                            {"shapes", "256x64x1x1@56x56"},
                                            {"epilogue", "bias-residual-relu"}});
  const auto pts = plan(c);
  ASSERT_EQ(pts.size(), 2u * 3 + 1 + 1);
  EXPECT_EQ(pts[6].precision, compute::Precision::kInt8);
  EXPECT_EQ(pts[6].pass, ConvPass::kForward);
  EXPECT_EQ(pts[6].layout, Layout::kNhwc);
  const Json j = pts[6].to_json();
  EXPECT_EQ(j.at("epilogue"), "scale,bias,residual(int8),relu->int8");
  EXPECT_EQ(pts[7].to_json().at("epilogue"), "scale,bias,residual(fp16),relu->fp8e4m3");
  EXPECT_FALSE(pts[0].to_json().contains("epilogue"));  // fp16's records stay as they were
  const ConvPoint back = ConvPoint::from_json(j);
  EXPECT_EQ(back.epilogue, Epilogue::kBiasResidualRelu);
  EXPECT_EQ(back.precision, compute::Precision::kInt8);
  EXPECT_EQ(throughput(back).unit, "TOP/s");
  EXPECT_EQ(throughput(pts[7]).unit, "TFLOP/s");
  EXPECT_EQ(Config::from_params(Json{{"precision", "int8"}}).epilogue, Epilogue::kBiasRelu);
  EXPECT_EQ(Config::from_params(Json{{"precision", "int8"}}).plans, 4);
  EXPECT_EQ(Config::from_params(Json{{"precision", "int8"}, {"plans", 9}}).plans, 9);
  EXPECT_THROW(Config::from_params(Json{{"plans", 0}}), Error);
  EXPECT_EQ(plan(Config::from_params(Json{{"precision", "int8"}})).size(), 23u);  // ResNet-50's, forward
  Json bad = j;
  bad["epilogue"] = "scale,relu->int8";
  EXPECT_THROW(ConvPoint::from_json(bad), Error);
  EXPECT_THROW(Config::from_params(Json{{"precision", "int8"}, {"epilogue", "relu"}}), Error);
  try {
    Config::from_params(Json{{"precision", "int8"}, {"pass", "bwd_data"}});
    FAIL() << "int8 without a forward pass was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("forward pass in NHWC only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Config::from_params(Json{{"precision", "fp8e4m3"}, {"layout", "nchw"}}), Error);
}

TEST(ConvConfig, SchemaChecksListsAndShapesBeforeARun) {
  const WorkloadDef* def = find_workload("conv");
  ASSERT_NE(def, nullptr);
  Json params = Json::object();
  for (const auto& p : def->params) params[p.name] = p.default_value;
  EXPECT_EQ(check_param_set(*def, params), "");
  Json bad = params;
  bad["precision"] = "fp16,fp4";
  EXPECT_NE(check_param_set(*def, bad).find("'fp4'"), std::string::npos);
  Json quant = params;
  quant["precision"] = "int8,fp8e4m3";
  quant["epilogue"] = "bias-residual-relu";
  EXPECT_EQ(check_param_set(*def, quant), "");
  bad = params;
  bad["shapes"] = "64x64x3x3@56x56:p1,resnet";
  EXPECT_NE(check_param_set(*def, bad).find("'resnet'"), std::string::npos);
  bad = params;
  bad["pass"] = "";
  EXPECT_NE(check_param_set(*def, bad).find("pass"), std::string::npos);
  params["shapes"] = "64x64x3x3@56x56:p1:s2";
  EXPECT_EQ(check_param_set(*def, params), "");
  EXPECT_NE(parse_param(*def->find("algo"), "fastest").error, "");
}

TEST(ConvValues, OnTheQuarterGridExactInEveryPrecision) {
  std::set<double> seen;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const double v = grid_value(TensorRole::kInput, i);
    EXPECT_EQ(v * 4, std::round(v * 4));
    EXPECT_LE(std::fabs(v), 1.0);
    EXPECT_EQ(round_to(v, 7), v);  // bf16 holds it exactly (so fp16 and tf32 do too)
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 9u);
  // The tensors differ: the same index gives other values for the filter.
  int same = 0;
  for (std::uint64_t i = 0; i < 1000; ++i)
    same += grid_value(TensorRole::kInput, i) == grid_value(TensorRole::kFilter, i);
  EXPECT_LT(same, 300);
}

TEST(ConvReference, LayoutsPlaceElementsWhereCudnnReadsThem) {
  const Dims d{2, 3, 4, 5};  // N C H W
  EXPECT_EQ(storage_offset(d, Layout::kNchw, {1, 2, 3, 4}), element_count(d) - 1);
  EXPECT_EQ(storage_offset(d, Layout::kNhwc, {1, 2, 3, 4}), element_count(d) - 1);
  EXPECT_EQ(storage_offset(d, Layout::kNhwc, {0, 1, 0, 0}), 1);  // channels adjacent
  EXPECT_EQ(storage_offset(d, Layout::kNhwc, {0, 0, 0, 1}), 3);
  EXPECT_EQ(storage_offset(d, Layout::kNchw, {0, 0, 0, 1}), 1);
  EXPECT_EQ(logical_index(d, {1, 0, 0, 0}), 60);
  std::set<long long> offs;
  for (long long a = 0; a < 2; ++a)
    for (long long b = 0; b < 3; ++b)
      for (long long c = 0; c < 4; ++c)
        for (long long e = 0; e < 5; ++e) offs.insert(storage_offset(d, Layout::kNhwc, {a, b, c, e}));
  EXPECT_EQ(offs.size(), 120u);  // a permutation
  EXPECT_EQ(*offs.rbegin(), 119);
  const auto picks = sample_indices(d, 7);
  ASSERT_EQ(picks.size(), 7u);
  EXPECT_EQ(picks.front(), (Index{0, 0, 0, 0}));
  EXPECT_EQ(picks.back(), (Index{1, 2, 3, 4}));
  EXPECT_EQ(sample_indices(d, 1000).size(), 120u);
}

TEST(ConvReference, ForwardMatchesAPlainLoopOverAPaddedInput) {
  const ConvShape s = shape(2, 3, 6, 7, 4, 3, 2, 1, 2);
  const Dims xd = input_dims(s), wd = filter_dims(s);
  const int hp = s.h + 2, wp = s.w + 2;
  for (long long n = 0; n < s.n; ++n)
    for (long long k = 0; k < s.k; ++k)
      for (long long p = 0; p < s.p(); ++p)
        for (long long q = 0; q < s.q(); ++q) {
          double sum = 0;
          for (long long c = 0; c < s.c; ++c)
            for (long long r = 0; r < s.r; ++r)
              for (long long t = 0; t < s.s; ++t) {
                const long long h = p * 2 + r, w = q * 2 + t;  // in the padded image
                const bool inside = h >= 1 && h < hp - 1 && w >= 1 && w < wp - 1;
                const double x = inside ? grid_value(TensorRole::kInput, logical_index(xd, {n, c, h - 1, w - 1})) : 0;
                sum += x * grid_value(TensorRole::kFilter, logical_index(wd, {k, c, r, t}));
              }
          EXPECT_EQ(reference_element(s, ConvPass::kForward, {n, k, p, q}), sum);
        }
}

// <dy, conv(x, w)> = <dx(dy, w), x> = <dw(dy, x), w>: the backward references are the adjoints of
// the forward one, over strides, padding, dilation and groups.
TEST(ConvReference, BackwardPassesAreTheForwardsAdjoints) {
  for (const ConvShape& s : {shape(2, 3, 6, 7, 4, 3, 2, 1, 2), shape(1, 4, 9, 8, 6, 3, 3, 2, 1, 2, 2),
                             shape(3, 2, 5, 5, 2, 1, 1, 0, 2), shape(1, 6, 7, 7, 3, 5, 5, 2, 3, 1, 3)}) {
    ASSERT_EQ(s.invalid(), "");
    const double y_dy = dot(full(s, ConvPass::kForward), values(output_dims(s), TensorRole::kOutputGrad));
    const double dx_x = dot(full(s, ConvPass::kBackwardData), values(input_dims(s), TensorRole::kInput));
    const double dw_w = dot(full(s, ConvPass::kBackwardFilter), values(filter_dims(s), TensorRole::kFilter));
    EXPECT_EQ(y_dy, dx_x) << s.p() << "x" << s.q();
    EXPECT_EQ(y_dy, dw_w);
    EXPECT_NE(y_dy, 0);
  }
}

TEST(ConvTolerance, RoundedOutputsPassAndWrongOnesFail) {
  using compute::Precision;
  const ConvShape s = resnet50_shapes(64)[2];  // 3x3, 64 channels: 576 terms
  EXPECT_DOUBLE_EQ(reduction_length(s, ConvPass::kForward), 576);
  EXPECT_DOUBLE_EQ(reduction_length(s, ConvPass::kBackwardFilter), 64.0 * 56 * 56);
  const double scale = result_scale(s, ConvPass::kForward);
  EXPECT_NEAR(scale, 24 * kGridRms * kGridRms, 1e-12);
  for (long long i = 0; i < 64; ++i) {
    const Index at{i % 64, (i * 7) % 64, (i * 5) % 56, (i * 3) % 56};
    const double ref = reference_element(s, ConvPass::kForward, at);
    EXPECT_TRUE(compute::within_tolerance(Precision::kFp16, round_to(ref, 10), ref, scale));
    EXPECT_TRUE(compute::within_tolerance(Precision::kBf16, round_to(ref, 7), ref, scale));
    EXPECT_TRUE(compute::within_tolerance(Precision::kFp32, ref, ref, scale));
    // One product of the 576 missing or doubled is an error the check must see.
    EXPECT_FALSE(compute::within_tolerance(Precision::kFp16, ref + 0.25, ref, scale));
    EXPECT_FALSE(compute::within_tolerance(Precision::kFp32, ref + 1.0 / 16, ref, scale));
    EXPECT_FALSE(compute::within_tolerance(Precision::kBf16, ref + 4 * scale * compute::rel_tolerance(Precision::kBf16),
                                           ref, scale));
  }
  // FFT and Winograd are held to the worst-case bound of a sum: terms x mean|value|^2.
  const ConvShape& big = resnet50_shapes(64)[2];
  EXPECT_NEAR(result_scale(big, ConvPass::kBackwardFilter, true), 64.0 * 56 * 56 * 25.0 / 81, 1e-6);
  EXPECT_GT(result_scale(big, ConvPass::kBackwardFilter, true), 100 * result_scale(big, ConvPass::kBackwardFilter));
  // Backward-filter sums are long: fewer samples keep the host's share bounded.
  EXPECT_EQ(sample_count(resnet50_shapes(64)[0], ConvPass::kBackwardFilter), 16);
  EXPECT_EQ(sample_count(s, ConvPass::kForward), 256);
}

TEST(ConvReport, PeakAndTableLines) {
  const ConvPoint pt{shapes_from_param("64x64x3x3@56x56:p1", 64)[0], ConvPass::kForward, compute::Precision::kFp16,
                     Layout::kNhwc};
  auto rec = [&](const char* metric, Json gpu, double value, double peak) {
    Json p = pt.to_json();
    p["gpu"] = gpu;
    Json r{{"metric", metric}, {"point", p}, {"value", value}, {"status", "ok"}};
    if (peak > 0)
      r["details"] = Json{{"peak_tflops", peak}, {"algo", "IMPLICIT_PRECOMP_GEMM"}, {"workspace_bytes", 1048576}};
    r["correctness"] = Json{{"checked", true}, {"passed", true}, {"wrong", 0}, {"elements", 256}};
    return r;
  };
  PeakAnnotator a;
  Json g0 = rec("throughput", 0, 500, 1000), g1 = rec("throughput", 1, 400, 1000);
  Json total = rec("throughput_total", "all", 900, 0);
  Json time = rec("time", 0, 10, 1000);
  a.annotate(g0);
  a.annotate(time);
  a.annotate(g1);
  a.annotate(total);
  EXPECT_DOUBLE_EQ(g0["pct_of_peak"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(g0["peak"]["value"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(total["peak"]["value"].get<double>(), 2000);
  EXPECT_DOUBLE_EQ(total["pct_of_peak"].get<double>(), 45);
  EXPECT_FALSE(time.contains("pct_of_peak"));
  // An unknown peak (an architecture not in the table) adds nothing.
  Json unknown = rec("throughput", 0, 5, 0);
  PeakAnnotator b;
  b.annotate(unknown);
  EXPECT_FALSE(unknown.contains("pct_of_peak"));

  const std::string line = table_line(g0);
  EXPECT_NE(line.find("64x64x3x3@56x56:p1"), std::string::npos) << line;
  EXPECT_NE(line.find("500.00"), std::string::npos) << line;
  EXPECT_NE(line.find("IMPLICIT_PRECOMP_GEMM"), std::string::npos) << line;
  EXPECT_NE(line.find("ok (256)"), std::string::npos) << line;
  // 2 x 64 x 64 x 64 x 9 x 56 x 56 = 14.8 GFLOP at 500 TFLOP/s: 29.6 us.
  EXPECT_NE(line.find("29.6"), std::string::npos) << line;
  EXPECT_EQ(table_line(time), "");
  EXPECT_NE(table_line(total).find("all 0 GPUs: total 900.00"), std::string::npos);
  Json skipped{{"metric", "run"}, {"point", pt.to_json()}, {"status", "skipped"}, {"reason", "no algorithm"}};
  EXPECT_NE(table_line(skipped).find("skipped: no algorithm"), std::string::npos);
  EXPECT_EQ(table_line(Json{{"metric", "run"}, {"status", "failed"}, {"reason", "no GPU"}}), "# failed: no GPU");

  // An int8 point: its line names the epilogue timed with it, its peak is in TOP/s.
  ConvPoint q8 = pt;
  q8.precision = compute::Precision::kInt8;
  Json p8 = q8.to_json();
  p8["gpu"] = 0;
  Json r8{{"metric", "throughput"}, {"point", p8},    {"value", 800.0},
          {"unit", "TOP/s"},        {"status", "ok"}, {"details", Json{{"peak_tflops", 1600.0}, {"algo", "engine 7"}}}};
  PeakAnnotator c;
  c.annotate(r8);
  EXPECT_EQ(r8["peak"]["unit"], "TOP/s");
  EXPECT_DOUBLE_EQ(r8["pct_of_peak"].get<double>(), 50);
  EXPECT_NE(table_line(r8).find("epilogue scale,bias,relu->int8"), std::string::npos) << table_line(r8);
}
