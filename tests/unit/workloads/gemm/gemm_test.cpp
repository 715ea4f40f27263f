#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"
#include "record/record.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/peak_annotator.hpp"
#include "workloads/gemm/deepbench_shapes.hpp"
#include "workloads/gemm/gemm_check.hpp"
#include "workloads/gemm/gemm_config.hpp"
#include "workloads/gemm/gemm_pattern.hpp"
#include "workloads/gemm/gemm_report.hpp"
#include "workloads/gemm/gemm_types.hpp"
#include "workloads/gemm/shape.hpp"

using namespace scalebench;
using namespace scalebench::gemm;
using compute::Precision;

namespace {
// The workload's parameters as scalebench-run resolves them: defaults, then `overrides` (text, as
// -p and YAML give them), through the schema's own parser.
Json params_with(const std::vector<std::pair<std::string, std::string>>& overrides) {
  const WorkloadDef* def = find_workload("gemm");
  EXPECT_NE(def, nullptr);
  Json p = Json::object();
  for (const auto& d : def->params) p[d.name] = d.default_value;
  for (const auto& [k, v] : overrides) {
    const ParamValue pv = parse_param(*def->find(k), v);
    EXPECT_EQ(pv.error, "") << k;
    p[k] = pv.value;
  }
  EXPECT_EQ(check_param_set(*def, p), "");
  return p;
}

const std::vector<Precision> kAll = {Precision::kFp64, Precision::kFp32,    Precision::kTf32,    Precision::kFp16,
                                     Precision::kBf16, Precision::kFp8E4M3, Precision::kFp8E5M2, Precision::kInt8};
}  // namespace

TEST(GemmShape, ParsesMxNxKWithOptionalOpAndNamesWhatIsWrong) {
  const Shape s = parse_shape("35x8457x4096", false, false);
  EXPECT_EQ(s.m, 35);
  EXPECT_EQ(s.n, 8457);
  EXPECT_EQ(s.k, 4096);
  EXPECT_EQ(op_name(s.trans_a, s.trans_b), "nn");
  const Shape t = parse_shape("512x16x512:nt", true, false);
  EXPECT_FALSE(t.trans_a);
  EXPECT_TRUE(t.trans_b);
  for (const char* bad : {"8192x8192", "8192x0x8192", "8192xax1", "1x2x3:xy", "1x2x3x4", "-1x2x3"}) {
    try {
      parse_shape(bad, false, false);
      FAIL() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(GemmShape, FlopsAreTwoMnkForEveryShapeOfEverySet) {
  EXPECT_DOUBLE_EQ(flops(parse_shape("8192x8192x8192", false, false)), 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(flops(parse_shape("35x8457x4096", false, false)), 2.0 * 35 * 8457 * 4096);
  // Large enough that 32-bit arithmetic would overflow: 2 x 1024 x 48000 x 2816.
  EXPECT_DOUBLE_EQ(flops(parse_shape("1024x48000x2816", false, false)), 276824064000.0);
  for (const char* set : {"deepbench-train", "deepbench-inference", "deepbench-device"})
    for (const Shape& s : deepbench_shapes(set)) {
      EXPECT_DOUBLE_EQ(flops(s), 2.0 * static_cast<double>(s.m) * s.n * s.k);
      EXPECT_GT(flops(s), 0);
    }
  const compute::Throughput fp = throughput(Precision::kBf16, parse_shape("8x8x8", false, false));
  EXPECT_EQ(fp.unit, "TFLOP/s");
  EXPECT_DOUBLE_EQ(fp.work, 1024);
  EXPECT_DOUBLE_EQ(fp.scale, 1e-12);
  EXPECT_EQ(throughput(Precision::kInt8, parse_shape("8x8x8", false, false)).unit, "TOP/s");
}

TEST(GemmShape, DeepBenchSetsHaveTheirPublishedSizesAndTransposes) {
  const auto train = deepbench_shapes("deepbench-train");
  const auto inference = deepbench_shapes("deepbench-inference");
  const auto device = deepbench_shapes("deepbench-device");
  EXPECT_EQ(train.size(), 160u);
  EXPECT_EQ(inference.size(), 75u);
  EXPECT_EQ(device.size(), 13u);
  EXPECT_TRUE(deepbench_shapes("deepbench-nope").empty());
  // The first training problem, and one of the few with B transposed.
  EXPECT_EQ(train.front().m, 1760);
  EXPECT_EQ(train.front().n, 16);
  EXPECT_EQ(train.front().k, 1760);
  int nt = 0, tn = 0;
  for (const Shape& s : train) {
    nt += !s.trans_a && s.trans_b;
    tn += s.trans_a && !s.trans_b;
    EXPECT_EQ(s.set, "deepbench-train");
  }
  EXPECT_EQ(nt, 10);
  EXPECT_EQ(tn, 73);
  for (const Shape& s : inference) EXPECT_FALSE(s.trans_a || s.trans_b);
  EXPECT_EQ(device.back().m, 4224);
  EXPECT_EQ(device.back().k, 128);
}

TEST(GemmConfig, FromParamsResolvesSetsSizesOpAndLists) {
  Config c = Config::from_params(params_with({}));
  EXPECT_EQ(c.precision, Precision::kBf16);
  ASSERT_EQ(c.shapes.size(), 4u);
  EXPECT_EQ(c.shapes.back().m, 8192);
  EXPECT_EQ(c.shapes.back().set, "square");
  EXPECT_EQ(c.algo, Algo::kSearch);

  c = Config::from_params(params_with({{"sizes", "8192"}, {"op", "tn"}, {"precision", "fp8e4m3"}}));
  ASSERT_EQ(c.shapes.size(), 1u);  // "8192" arrives as an integer
  EXPECT_TRUE(c.shapes[0].trans_a);
  EXPECT_FALSE(c.shapes[0].trans_b);
  EXPECT_EQ(c.precision, Precision::kFp8E4M3);

  c = Config::from_params(params_with(
      {{"shapes", "square, deepbench-device,35x700x2048:nt"}, {"sizes", "512,1024"}, {"algo", "heuristic"}}));
  ASSERT_EQ(c.shapes.size(), 2u + 13u + 1u);
  EXPECT_EQ(c.shapes[2].set, "deepbench-device");
  EXPECT_EQ(c.shapes.back().set, "custom");
  EXPECT_TRUE(c.shapes.back().trans_b);
  EXPECT_EQ(c.algo, Algo::kHeuristic);
  EXPECT_EQ(Config::from_params(params_with({{"shapes", "deepbench"}})).shapes.size(), 160u + 75u + 13u);
}

TEST(GemmConfig, BadShapesAndSizesAreRefusedAtValidationAndAtRun) {
  const WorkloadDef* def = find_workload("gemm");
  ASSERT_NE(def, nullptr);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"shapes", "squares"}, {"shapes", "8192x8192"}, {"sizes", "1024,abc"}, {"sizes", "0"}}) {
    Json p = Json::object();
    for (const auto& d : def->params) p[d.name] = d.default_value;
    p[key] = parse_param(*def->find(key), value).value;
    const std::string why = check_param_set(*def, p);
    EXPECT_NE(why.find(key), std::string::npos) << key << "=" << value << ": " << why;
    EXPECT_THROW(Config::from_params(p), Error) << key << "=" << value;
  }
  EXPECT_NE(parse_param(*def->find("precision"), "fp4").error, "");
}

TEST(GemmConfig, PointsCarryShapeOpAndPrecisionAndRoundTrip) {
  const Shape s = parse_shape("35x8457x4096:tn", false, false);
  const Json p = point_json(Precision::kTf32, s);
  EXPECT_EQ(p["m"], 35);
  EXPECT_EQ(p["n"], 8457);
  EXPECT_EQ(p["k"], 4096);
  EXPECT_EQ(p["op"], "tn");
  EXPECT_EQ(p["precision"], "tf32");
  const Shape back = shape_from_json(p);
  EXPECT_EQ(back.m, 35);
  EXPECT_TRUE(back.trans_a);
  EXPECT_FALSE(back.trans_b);
}

TEST(GemmTypes, MatchPyTorchMatmulPerPrecision) {
  EXPECT_EQ(type_choice(Precision::kFp32).compute, ComputeType::k32F);  // no TF32: CUDA cores
  EXPECT_EQ(type_choice(Precision::kTf32).compute, ComputeType::k32FFastTf32);
  EXPECT_EQ(type_choice(Precision::kTf32).a, gpu::DType::kF32);
  for (Precision p : {Precision::kFp16, Precision::kBf16}) {
    const TypeChoice t = type_choice(p);
    EXPECT_EQ(t.a, t.c);  // 16-bit output, as torch.matmul's
    EXPECT_EQ(t.compute, ComputeType::k32F);
    EXPECT_EQ(t.scale, gpu::DType::kF32);
  }
  const TypeChoice e5 = type_choice(Precision::kFp8E5M2);
  EXPECT_EQ(e5.a, gpu::DType::kE5M2);
  EXPECT_EQ(e5.b, gpu::DType::kE4M3);  // cuBLASLt has no e5m2 x e5m2
  const TypeChoice i8 = type_choice(Precision::kInt8);
  EXPECT_EQ(i8.c, gpu::DType::kI32);
  EXPECT_EQ(i8.compute, ComputeType::k32I);
  for (Precision p : kAll)
    EXPECT_EQ(type_choice(p).a == gpu::DType::kE4M3 || type_choice(p).a == gpu::DType::kE5M2 ||
                  type_choice(p).a == gpu::DType::kI8,
              type_choice(p).needs_tn)
        << compute::name(p);
}

TEST(GemmTypes, Fp8AndInt8RunAsTnWithSixteenByteLeadingDimensions) {
  const Shape nn = parse_shape("35x8457x1760", false, false);
  const Layout l = layout_for(Precision::kFp8E4M3, nn);
  EXPECT_TRUE(l.trans_a);
  EXPECT_FALSE(l.trans_b);
  EXPECT_NE(l.note.find("asked nn"), std::string::npos) << l.note;
  EXPECT_EQ(l.a_rows, 1760);  // A stored k x m
  EXPECT_EQ(l.a_cols, 35);
  EXPECT_EQ(l.lda % 16, 0);
  EXPECT_EQ(l.ldb % 16, 0);
  EXPECT_EQ(l.ldc, 40);                                 // bf16 output: 35 rounded up to 8 elements (16 bytes)
  EXPECT_EQ(layout_for(Precision::kInt8, nn).ldc, 36);  // int32 output: 4 elements
  EXPECT_EQ(layout_for(Precision::kInt8, parse_shape("64x64x64:tn", false, false)).note, "");

  const Layout b = layout_for(Precision::kBf16, parse_shape("35x8457x1760:nt", false, false));
  EXPECT_FALSE(b.trans_a);
  EXPECT_TRUE(b.trans_b);
  EXPECT_EQ(b.lda, 35);  // as the shape says: torch does not pad either
  EXPECT_EQ(b.b_rows, 8457);
  EXPECT_EQ(b.ldb, 8457);
  EXPECT_EQ(b.note, "");
  EXPECT_DOUBLE_EQ(b.bytes(type_choice(Precision::kBf16), 8457), 2.0 * (35 * 1760 + 8457 * 1760 + 35 * 8457));
}

TEST(GemmCheck, InputsLieOnEveryPrecisionsGrid) {
  std::set<int> seen;
  for (long long r = 0; r < 64; ++r)
    for (long long c = 0; c < 64; ++c) {
      const int v = pattern_int(0, r, c);
      ASSERT_GE(v, -8);
      ASSERT_LE(v, 8);
      seen.insert(v);
      // At most 3 significant bits: exact in fp8 e5m2 (2 mantissa bits + the implicit one).
      const int a = std::abs(v);
      if (a) {
        int shift = 0;
        while ((a >> shift) % 2 == 0) ++shift;
        EXPECT_LT(a >> shift, 8);
      }
      EXPECT_EQ(input_value(Precision::kInt8, 0, r, c), v);
      EXPECT_EQ(input_value(Precision::kFp8E5M2, 0, r, c), v / 8.0);
    }
  EXPECT_EQ(seen.size(), 17u);  // every value of [-8, 8] occurs
}

TEST(GemmCheck, ReferenceIsTheDotProductOfThePattern) {
  const Shape s = parse_shape("4x3x5", false, false);
  double expect = 0;
  for (int l = 0; l < 5; ++l) expect += (pattern_int(0, 2, l) / 8.0) * (pattern_int(1, l, 1) / 8.0);
  EXPECT_DOUBLE_EQ(reference(Precision::kBf16, s, 2, 1), expect);
  double iexpect = 0;
  for (int l = 0; l < 5; ++l) iexpect += pattern_int(0, 2, l) * pattern_int(1, l, 1);
  EXPECT_DOUBLE_EQ(reference(Precision::kInt8, s, 2, 1), iexpect);
  EXPECT_DOUBLE_EQ(output_scale(Precision::kInt8, parse_shape("4x4x100", false, false)), 240);
  EXPECT_DOUBLE_EQ(output_scale(Precision::kFp16, parse_shape("4x4x100", false, false)), 3.75);
}

TEST(GemmCheck, SamplesIncludeCornersStayInsideAndDoNotRepeat) {
  const Shape s = parse_shape("35x8457x64", false, false);
  const auto at = sample_indices(s, 128);
  ASSERT_EQ(at.size(), 128u);
  EXPECT_EQ(at[0], std::make_pair(0LL, 0LL));
  EXPECT_EQ(at[1], std::make_pair(34LL, 8456LL));
  std::set<std::pair<long long, long long>> unique(at.begin(), at.end());
  EXPECT_EQ(unique.size(), at.size());
  for (const auto& [i, j] : at) {
    EXPECT_LT(i, s.m);
    EXPECT_LT(j, s.n);
  }
  EXPECT_EQ(sample_indices(parse_shape("1x1x8", false, false), 128).size(), 1u);
  EXPECT_EQ(sample_indices(parse_shape("2x3x8", false, false), 128).size(), 6u);
}

TEST(GemmCheck, ToleranceCatchesAWrongElementPerPrecision) {
  const Shape s = parse_shape("64x64x4096", false, false);
  const auto at = sample_indices(s, 16);
  for (Precision p : kAll) {
    std::vector<double> got;
    for (const auto& [i, j] : at) got.push_back(reference(p, s, i, j));
    EXPECT_EQ(count_wrong(p, s, at, got), 0) << compute::name(p);
    // A result rounded to the output format stays within: bf16 keeps 8 significant bits.
    if (p == Precision::kBf16 || p == Precision::kFp8E4M3) {
      std::vector<double> rounded = got;
      for (double& v : rounded) {
        int e = 0;
        const double m = std::frexp(v, &e);
        v = std::ldexp(std::round(m * 256) / 256, e);
      }
      EXPECT_EQ(count_wrong(p, s, at, rounded), 0) << compute::name(p);
    }
    // One element off by a whole unit of the typical output (a lost product of a k-long sum would
    // be about 1/sqrt(k) of it; a wrong layout gives another sum altogether).
    std::vector<double> bad = got;
    bad[5] += output_scale(p, s);
    EXPECT_EQ(count_wrong(p, s, at, bad), 1) << compute::name(p);
    std::vector<double> nan = got;
    nan[0] = std::nan("");
    EXPECT_EQ(count_wrong(p, s, at, nan), 1) << compute::name(p);
    // A missing element counts as wrong.
    EXPECT_EQ(count_wrong(p, s, at, std::vector<double>(got.begin(), got.end() - 1)), 1);
  }
  // int8 is exact: one off by one is wrong.
  std::vector<double> got;
  for (const auto& [i, j] : at) got.push_back(reference(Precision::kInt8, s, i, j) + 1);
  EXPECT_EQ(count_wrong(Precision::kInt8, s, at, got), static_cast<long long>(at.size()));
}

TEST(GemmRecords, UnsupportedPrecisionIsASkippedRecordWithTheReason) {
  EXPECT_FALSE(unsupported_outcome(Precision::kFp8E4M3, 9, 0).has_value());
  const auto skip = unsupported_outcome(Precision::kFp8E4M3, 8, 0);
  ASSERT_TRUE(skip.has_value());
  EXPECT_EQ(skip->status, "skipped");
  EXPECT_NE(skip->reason.find("8.9"), std::string::npos);
  const Shape s = parse_shape("8192x8192x8192", false, false);
  const Json context = Json{{"run_id", 1}, {"workload", "gemm"}};
  const auto rs =
      compute::point_records(context, point_json(Precision::kFp8E4M3, s), throughput(Precision::kFp8E4M3, s), {*skip});
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0]["status"], "skipped");
  EXPECT_EQ(rs[0]["reason"], skip->reason);
  EXPECT_EQ(rs[0]["point"]["precision"], "fp8e4m3");
}

TEST(GemmRecords, PeakAndPercentOfPeakPerGpuAndForTheTotal) {
  const Shape s = parse_shape("8192x8192x8192", false, false);
  const compute::Throughput tp = throughput(Precision::kBf16, s);
  std::vector<compute::RankOutcome> ranks(2);
  for (int g = 0; g < 2; ++g) {
    ranks[g].seconds = {flops(s) / 800e12, flops(s) / 800e12, flops(s) / 800e12};  // 800 TFLOP/s
    ranks[g].wrong = 0;
    ranks[g].checked = 128;
    ranks[g].details =
        Json{{"algorithm", {{"id", 66}}}, {"peak", {{"value", 1000.0}, {"unit", "TFLOP/s"}, {"basis", "x"}}}};
  }
  auto rs = compute::point_records(Json{{"run_id", 1}}, point_json(Precision::kBf16, s), tp, ranks);
  compute::PeakAnnotator peaks;
  TableFormatter table;
  int with_pct = 0;
  std::string lines;
  for (Json& r : rs) {
    peaks.finish(r);
    if (r.contains("details")) {
      EXPECT_FALSE(r["details"].contains("peak"));  // moved out of details
    }
    if (r["metric"] == "throughput") {
      EXPECT_NEAR(r["pct_of_peak"].get<double>(), 80.0, 1e-9);
      EXPECT_EQ(r["peak"]["unit"], "TFLOP/s");
      EXPECT_EQ(r["details"]["algorithm"]["id"], 66);
      ++with_pct;
    }
    if (r["metric"] == "throughput_total") {
      EXPECT_DOUBLE_EQ(r["peak"]["value"].get<double>(), 2000.0);
      EXPECT_NEAR(r["pct_of_peak"].get<double>(), 80.0, 1e-9);
      ++with_pct;
    }
    if (r["metric"] == "time") {
      EXPECT_FALSE(r.contains("pct_of_peak"));
    }
    lines += table.format_row(r) + "\n";
  }
  EXPECT_EQ(with_pct, 3);
  EXPECT_NE(lines.find("800.00 TFLOP/s"), std::string::npos) << lines;
  EXPECT_NE(lines.find(" 80 "), std::string::npos) << lines;
  EXPECT_NE(lines.find("1600.00"), std::string::npos) << lines;
  EXPECT_NE(lines.find("spread"), std::string::npos) << lines;
}

TEST(GemmStudy, SweepsPrecisionAcrossRunsOneRankPerGpuAndNeedsGpus) {
  const std::string body =
      "name: g\nworkload: gemm\nparams: {sizes: \"4096,8192\", shapes: \"square,deepbench-device\"}\n"
      "matrix:\n  precision: [fp16, fp8e4m3, int8]\nplacement:\n  gpus_per_node: [1, all]\n";
  ClusterShape gpus;
  gpus.gpu = true;
  gpus.gpus_per_node = gpus.max_gpus_per_node = 4;
  gpus.ranks_per_node = 16;
  const auto runs = expand(parse_experiment(body, "g.yaml"), gpus);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].params["precision"], "fp16");
  EXPECT_EQ(runs[0].params["sizes"], "4096,8192");
  for (const auto& r : runs) {
    EXPECT_EQ(r.ranks_per_node, r.gpus_per_node);  // one rank per GPU
    EXPECT_TRUE(r.skip_reason.empty()) << r.skip_reason;
    EXPECT_EQ(Config::from_params(r.params).shapes.size(), 2u + 13u);
  }
  ClusterShape host;
  host.ranks_per_node = 8;
  const auto none = expand(parse_experiment(body, "g.yaml"), host);
  ASSERT_FALSE(none.empty());
  EXPECT_EQ(none[0].skip_reason, "the gemm workload needs GPUs; no agent has any");
  // A bad shape is an error of the file, naming the field.
  try {
    parse_experiment("name: g\nworkload: gemm\nparams: {shapes: 12x12}\n", "g.yaml");
    FAIL() << "12x12 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shapes"), std::string::npos) << e.what();
  }
}

TEST(GemmRecords, TableShowsSkippedPointsAndWholeRunFailures) {
  TableFormatter table;
  const Json skipped = Json{{"metric", "run"},
                            {"status", "skipped"},
                            {"reason", "fp8e4m3 needs compute capability 8.9"},
                            {"point", point_json(Precision::kFp8E4M3, parse_shape("64x64x64", false, false))}};
  const std::string line = table.format_row(skipped);
  EXPECT_NE(line.find("fp8e4m3"), std::string::npos) << line;
  EXPECT_NE(line.find("64x64x64"), std::string::npos) << line;
  EXPECT_NE(line.find("skipped: fp8e4m3 needs compute capability 8.9"), std::string::npos) << line;
  const Json failed = Json{{"metric", "run"}, {"status", "failed"}, {"reason", "no GPU visible to rank 0"}};
  EXPECT_EQ(table.format_row(failed), "# failed: no GPU visible to rank 0");
}
