#include "workloads/copy/copy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "record/record.hpp"
#include "workloads/copy/copy_pattern.hpp"
#include "workloads/copy/copy_report.hpp"

namespace scalebench::copy {
namespace {

using TestKind = copy::Test;  // inside a TEST body, plain Test names gtest's class

Config d2d(Direction d = Direction::kWrite, bool bidirectional = false) {
  Config c;
  c.direction = d;
  c.bidirectional = bidirectional;
  return c;
}

Config host(TestKind t, bool bidirectional = false) {
  Config c;
  c.test = t;
  c.bidirectional = bidirectional;
  return c;
}

// The workload's defaults as the schema writes them, resolved into a Config.
Json default_params() {
  const WorkloadDef* def = find_workload("copy");
  Json p = Json::object();
  if (def)
    for (const auto& d : def->params) p[d.name] = d.default_value;
  return p;
}

TEST(CopyPlan, UnidirectionalD2DIsEveryOrderedPairSourceMajor) {
  const auto cases = plan_cases(d2d(), 3);
  const std::vector<std::pair<int, int>> want{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};
  ASSERT_EQ(cases.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(cases[i].transfers.size(), 1u);
    const Transfer& t = cases[i].transfers[0];
    EXPECT_EQ(t.src, want[i].first) << i;
    EXPECT_EQ(t.dst, want[i].second) << i;
    EXPECT_EQ(t.issuer, t.src) << "write: the source issues";
  }
  for (const auto& c : plan_cases(d2d(Direction::kRead), 3))
    EXPECT_EQ(c.transfers[0].issuer, c.transfers[0].dst) << "read: the destination issues";
}

TEST(CopyPlan, BidirectionalD2DMeasuresEveryUnorderedPairOnceBothWays) {
  for (Direction d : {Direction::kWrite, Direction::kRead}) {
    const auto cases = plan_cases(d2d(d, true), 4);
    ASSERT_EQ(cases.size(), 6u);
    std::set<std::pair<int, int>> pairs;
    for (const auto& c : cases) {
      ASSERT_EQ(c.transfers.size(), 2u);
      const Transfer &a = c.transfers[0], &b = c.transfers[1];
      EXPECT_LT(a.src, a.dst);
      EXPECT_EQ(b.src, a.dst);
      EXPECT_EQ(b.dst, a.src);
      EXPECT_EQ(a.issuer, d == Direction::kWrite ? a.src : a.dst);
      EXPECT_EQ(b.issuer, d == Direction::kWrite ? b.src : b.dst);
      EXPECT_NE(a.issuer, b.issuer) << "each direction from its own GPU";
      pairs.insert({a.src, a.dst});
    }
    EXPECT_EQ(pairs.size(), 6u);
  }
}

TEST(CopyPlan, CaseCountsForEightGpus) {
  EXPECT_EQ(plan_cases(d2d(), 8).size(), 56u);
  EXPECT_EQ(plan_cases(d2d(Direction::kWrite, true), 8).size(), 28u);
  EXPECT_EQ(plan_cases(host(TestKind::kH2D), 8).size(), 8u);
  EXPECT_EQ(plan_cases(host(TestKind::kD2H, true), 8).size(), 8u);
  EXPECT_TRUE(plan_cases(d2d(), 1).empty());
}

TEST(CopyPlan, HostCopiesArePerGpuAndIssuedByTheGpu) {
  const auto h2d = plan_cases(host(TestKind::kH2D), 2);
  ASSERT_EQ(h2d.size(), 2u);
  EXPECT_EQ(h2d[1].transfers, (std::vector<Transfer>{{kHost, 1, 1}}));
  const auto d2h = plan_cases(host(TestKind::kD2H), 2);
  EXPECT_EQ(d2h[0].transfers, (std::vector<Transfer>{{0, kHost, 0}}));
  // Bidirectional: the named direction first, then the opposite one, both on the GPU.
  EXPECT_EQ(plan_cases(host(TestKind::kH2D, true), 2)[1].transfers,
            (std::vector<Transfer>{{kHost, 1, 1}, {1, kHost, 1}}));
  EXPECT_EQ(plan_cases(host(TestKind::kD2H, true), 2)[0].transfers,
            (std::vector<Transfer>{{0, kHost, 0}, {kHost, 0, 0}}));
}

TEST(CopyPlan, OwnerDeviceOfHostMemoryIsTheTransfersGpu) {
  EXPECT_EQ(owner_device(kHost, {kHost, 3, 3}), 3);
  EXPECT_EQ(owner_device(kHost, {5, kHost, 5}), 5);
  EXPECT_EQ(owner_device(2, {2, 7, 7}), 2);
  EXPECT_EQ(owner_device(7, {2, 7, 2}), 7);
}

TEST(CopyUnsupported, SaysWhyARunMeasuresNothing) {
  EXPECT_NE(unsupported(d2d(), 0).find("no GPU"), std::string::npos);
  EXPECT_NE(unsupported(d2d(), 1).find("at least 2 GPUs"), std::string::npos);
  EXPECT_EQ(unsupported(d2d(), 2), "");
  Config sm = d2d();
  sm.engine = Engine::kSM;
  EXPECT_EQ(unsupported(sm, 2), "");
  sm.peer_access = false;
  EXPECT_NE(unsupported(sm, 2).find("peer access"), std::string::npos);
  Config ce = d2d();
  ce.peer_access = false;
  EXPECT_EQ(unsupported(ce, 2), "") << "CE without peer access is measured (staged through the host)";
  Config h = host(TestKind::kH2D);
  h.engine = Engine::kSM;
  h.peer_access = false;
  EXPECT_EQ(unsupported(h, 1), "") << "host copies need no peer access and one GPU";
}

TEST(CopyBandwidth, GbPerSecondIsDecimalBytesOverSeconds) {
  EXPECT_DOUBLE_EQ(gb_per_s(1'000'000'000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(gb_per_s(512ull << 20, 1e-3), 536.870912);
  const std::vector<double> seconds{1e-3, 2e-3};
  EXPECT_EQ(bandwidth_samples(1'000'000, seconds), (std::vector<double>{1.0, 0.5}));
}

TEST(CopyBandwidth, BidirectionalSumIsPerSample) {
  const std::vector<double> a{100, 200, 300}, b{10, 20, 30};
  EXPECT_EQ(sum_samples(a, b), (std::vector<double>{110, 220, 330}));
  EXPECT_THROW(sum_samples(a, std::vector<double>{1}), Error);
}

TEST(CopyAutoIters, AimsAtTenMillisecondsWithinTheCaps) {
  EXPECT_EQ(auto_iters(1.2e-3, Engine::kCE), 9);  // 512 MiB over NVLink at ~450 GB/s
  EXPECT_EQ(auto_iters(10e-3, Engine::kSM), 1);
  EXPECT_EQ(auto_iters(1.0, Engine::kCE), 1);
  EXPECT_EQ(auto_iters(1e-6, Engine::kCE), kMaxAutoQueuedCopies);
  EXPECT_EQ(auto_iters(1e-6, Engine::kSM), kMaxAutoIters);
  EXPECT_EQ(auto_iters(0.0, Engine::kSM), kMaxAutoIters);
}

TEST(CopyStopRule, RepetitionsMinimumSamplesTimeCapAndNoise) {
  Config c;
  c.repetitions = 5;
  c.time_cap_s = 1.0;
  const std::vector<double> one{1}, two{1, 1}, three{1, 1.1, 0.9}, five{1, 1, 1, 1, 1};
  EXPECT_EQ(stop_reason(c, one, 10.0), "") << "fewer than 3 samples never stop on time";
  EXPECT_EQ(stop_reason(c, two, 10.0), "");
  EXPECT_EQ(stop_reason(c, three, 10.0), "time_cap");
  EXPECT_EQ(stop_reason(c, three, 0.5), "");
  EXPECT_EQ(stop_reason(c, five, 0.5), "repetitions");
  c.target_cv = 0.2;
  EXPECT_EQ(stop_reason(c, three, 0.5), "noise");
  c.target_cv = 0.01;
  EXPECT_EQ(stop_reason(c, three, 0.5), "");
  c.repetitions = 2;
  EXPECT_EQ(stop_reason(c, one, 10.0), "");
  EXPECT_EQ(stop_reason(c, two, 10.0), "repetitions");
  c.repetitions = 1;
  EXPECT_EQ(stop_reason(c, one, 0.0), "repetitions");
}

TEST(CopySmGrid, FillsEverySmUnlessTheBufferIsSmall) {
  const SmGrid big = sm_grid(512ull << 20, 132, 2, false);
  EXPECT_EQ(big.blocks, 264);
  EXPECT_EQ(big.threads, kSmThreads);
  EXPECT_EQ(sm_grid(512ull << 20, 132, 2, true).blocks, 132) << "two directions share one GPU";
  EXPECT_EQ(sm_grid(16 * 512 * 3, 132, 2, false).blocks, 3);
  EXPECT_EQ(sm_grid(16 * 512 * 3 + 16, 132, 2, false).blocks, 4);
  EXPECT_EQ(sm_grid(5, 132, 2, false).blocks, 1);
  EXPECT_EQ(sm_grid(512ull << 20, 1, 1, true).blocks, 1);
}

TEST(CopyPattern, SourceAndPoisonDifferEverywhereAndBytesFollowWords) {
  long long same = 0, repeats = 0;
  for (std::uint64_t i = 0; i < 1'000'000; ++i) {
    same += pattern_word(i, kSourceSeed) == pattern_word(i, kPoisonSeed);
    repeats += pattern_word(i, kSourceSeed) == pattern_word(i + 1, kSourceSeed);
  }
  EXPECT_EQ(same, 0) << "an unwritten destination word must read as wrong";
  EXPECT_EQ(repeats, 0) << "a word copied one place off must read as wrong";
  EXPECT_NE(pattern_word(0, 1), pattern_word(0, 2));
  const std::uint32_t w = pattern_word(41, 7);
  for (int b = 0; b < 4; ++b) EXPECT_EQ(pattern_byte(41 * 4 + b, 7), static_cast<std::uint8_t>(w >> (8 * b))) << b;
}

TEST(CopyNvbandwidth, TestcaseNamesMatchItsList) {
  Config c = d2d();
  EXPECT_EQ(nvbandwidth_testcase(c), "device_to_device_memcpy_write_ce");
  c.direction = Direction::kRead;
  EXPECT_EQ(nvbandwidth_testcase(c), "device_to_device_memcpy_read_ce");
  c.bidirectional = true;
  c.engine = Engine::kSM;
  EXPECT_EQ(nvbandwidth_testcase(c), "device_to_device_bidirectional_memcpy_read_sm");
  c.peer_access = false;
  EXPECT_EQ(nvbandwidth_testcase(c), "") << "nvbandwidth skips pairs without peer access";
  EXPECT_EQ(nvbandwidth_testcase(host(TestKind::kH2D)), "host_to_device_memcpy_ce");
  EXPECT_EQ(nvbandwidth_testcase(host(TestKind::kD2H, true)), "device_to_host_bidirectional_memcpy_ce");
  Config sm = host(TestKind::kD2H);
  sm.engine = Engine::kSM;
  EXPECT_EQ(nvbandwidth_testcase(sm), "device_to_host_memcpy_sm");
}

TEST(CopyParams, SchemaDefaultsAreNvbandwidthDefaults) {
  const Json p = default_params();
  ASSERT_FALSE(p.empty()) << "no copy workload in workload_defs()";
  const Config c = Config::from_params(p, 20);
  EXPECT_EQ(c.test, TestKind::kD2D);
  EXPECT_EQ(c.engine, Engine::kCE);
  EXPECT_EQ(c.direction, Direction::kWrite);
  EXPECT_FALSE(c.bidirectional);
  EXPECT_TRUE(c.peer_access);
  EXPECT_EQ(c.bytes, 512ull << 20);
  EXPECT_EQ(c.bytes, kDefaultBytes);
  EXPECT_EQ(c.iters, 0) << "auto";
  EXPECT_EQ(c.warmup, kDefaultWarmup);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.repetitions, 20);
  EXPECT_EQ(nvbandwidth_testcase(c), "device_to_device_memcpy_write_ce");
  Json q = p;
  q["iters"] = 16;
  q["test"] = "h2d";
  q["engine"] = "sm";
  EXPECT_EQ(Config::from_params(q, 3).iters, 16);
  EXPECT_EQ(Config::from_params(q, 3).test, TestKind::kH2D);
  q["engine"] = "dma";
  EXPECT_THROW(Config::from_params(q, 3), Error);
}

TEST(CopyParams, HostCopiesRecordWhatTheirGpuDoes) {
  Json p = default_params();
  EXPECT_EQ(resolved_params(p)["direction"], "write");
  p["direction"] = "read";
  EXPECT_EQ(resolved_params(p)["direction"], "read");
  p["test"] = "h2d";
  p["direction"] = "write";
  EXPECT_EQ(resolved_params(p)["direction"], "read") << "the GPU pulls from host memory";
  p["test"] = "d2h";
  p["direction"] = "read";
  EXPECT_EQ(resolved_params(p)["direction"], "write") << "the GPU pushes to host memory";
}

TEST(CopyParams, SchemaChecksAndProcessLayout) {
  const WorkloadDef* def = find_workload("copy");
  ASSERT_NE(def, nullptr);
  std::string why;
  EXPECT_EQ(processes_per_node("copy", default_params(), 8, &why), 1);
  EXPECT_EQ(why, "");
  Json p = default_params();
  EXPECT_EQ(check_param_set(*def, p), "");
  p["engine"] = "sm";
  p["peer_access"] = false;
  EXPECT_NE(check_param_set(*def, p).find("peer_access"), std::string::npos);
  p["test"] = "h2d";
  EXPECT_EQ(check_param_set(*def, p), "") << "host copies need no peer access";
  p["test"] = "d2d";
  p["engine"] = "ce";
  EXPECT_EQ(check_param_set(*def, p), "");
  const ParamDef* bytes = def->find("bytes");
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(parse_param(*bytes, "512MiB").value, 512ull << 20);
  EXPECT_FALSE(parse_param(*bytes, "0").error.empty());
  EXPECT_FALSE(parse_param(*def->find("direction"), "sideways").error.empty());
}

// A case as the bench would return it: 2 GPUs, 1 MB per copy, fixed seconds per sample.
CaseResult fake_case(std::vector<DirectionResult> dirs) {
  CaseResult r;
  r.directions = std::move(dirs);
  r.bytes = 1'000'000;
  r.iters = 16;
  r.stop = "repetitions";
  return r;
}

Json fake_context(const Config& c) {
  Json spec{{"experiment", "unit"}, {"workload", "copy"}, {"variant", ""}, {"params", default_params()}};
  spec["params"]["test"] = name(c.test);
  spec["params"]["bidirectional"] = c.bidirectional;
  Json ctx = record_context(7, spec, Json{{"nodes", 1}, {"ranks", 1}, {"gpus", 2}});
  ctx["params"] = resolved_params(spec["params"]);
  return ctx;
}

TEST(CopyRecords, UnidirectionalPairIsOneBandwidthRecord) {
  const Config c = d2d();
  const CaseResult r = fake_case({{{0, 1, 0}, {1e-5, 2e-5, 4e-6}, 0}});  // 100, 50, 250 GB/s
  const auto recs = case_records(fake_context(c), c, r);
  ASSERT_EQ(recs.size(), 1u);
  const Json& j = recs[0];
  EXPECT_EQ(validate_record(j), "");
  EXPECT_EQ(j["workload"], "copy");
  EXPECT_EQ(j["run_id"], 7);
  EXPECT_EQ(j["params"]["src"], 0);
  EXPECT_EQ(j["params"]["dst"], 1);
  EXPECT_EQ(j["params"]["test"], "d2d");
  EXPECT_EQ(j["metric"], "bandwidth");
  EXPECT_EQ(j["unit"], "GB/s");
  EXPECT_EQ(j["better"], "higher");
  EXPECT_DOUBLE_EQ(j["value"].get<double>(), 100.0);
  EXPECT_EQ(j["stats"]["n"], 3);
  EXPECT_DOUBLE_EQ(j["stats"]["min"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["stats"]["max"].get<double>(), 250.0);
  EXPECT_EQ(j["stats"]["stop"], "repetitions");
  EXPECT_EQ(j["point"]["size"], 1'000'000);
  EXPECT_EQ(j["point"]["iters"], 16);
  EXPECT_EQ(j["point"]["issued_by"], 0);
  EXPECT_EQ(j["point"]["bidirectional"], false);
  EXPECT_EQ(j["point"]["nvbandwidth"], "device_to_device_memcpy_write_ce");
  EXPECT_EQ(j["correctness"], (Json{{"checked", true}, {"passed", true}, {"wrong", 0}}));
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["reason"], "");
  EXPECT_FALSE(case_failed(r));
}

TEST(CopyRecords, BidirectionalPairHasEachDirectionAndTheirSum) {
  const Config c = d2d(Direction::kWrite, true);
  // 0->1 at 100, 10, 50 GB/s and 1->0 at 10, 100, 50: the per-sample sums are 110, 110, 100,
  // median 110, while the medians of the directions add up to 100.
  const CaseResult r = fake_case({{{0, 1, 0}, {1e-5, 1e-4, 2e-5}, 0}, {{1, 0, 1}, {1e-4, 1e-5, 2e-5}, -1}});
  const auto recs = case_records(fake_context(c), c, r);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["metric"], "bandwidth");
  EXPECT_EQ(recs[0]["params"]["src"], 0);
  EXPECT_EQ(recs[0]["params"]["dst"], 1);
  EXPECT_DOUBLE_EQ(recs[0]["value"].get<double>(), 50.0);
  EXPECT_EQ(recs[1]["metric"], "bandwidth");
  EXPECT_EQ(recs[1]["params"]["src"], 1);
  EXPECT_EQ(recs[1]["params"]["dst"], 0);
  EXPECT_EQ(recs[1]["point"]["issued_by"], 1);
  EXPECT_EQ(recs[1]["correctness"]["checked"], false);
  EXPECT_EQ(recs[2]["metric"], "bandwidth_sum");
  EXPECT_EQ(recs[2]["params"]["src"], 0);
  EXPECT_EQ(recs[2]["params"]["dst"], 1);
  EXPECT_DOUBLE_EQ(recs[2]["value"].get<double>(), 110.0);
  EXPECT_EQ(recs[2]["point"]["directions"], (Json{"0->1", "1->0"}));
  EXPECT_EQ(recs[2]["correctness"]["checked"], false) << "only one direction was checked";
  for (const auto& j : recs) {
    EXPECT_EQ(validate_record(j), "");
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["point"]["bidirectional"], true);
  }
}

TEST(CopyRecords, WrongDataFailsTheDirectionAndTheSum) {
  const Config c = d2d(Direction::kWrite, true);
  const CaseResult r = fake_case({{{0, 1, 0}, {1e-5, 1e-5, 1e-5}, 0}, {{1, 0, 1}, {1e-5, 1e-5, 1e-5}, 12}});
  const auto recs = case_records(fake_context(c), c, r);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["status"], "ok");
  EXPECT_EQ(recs[1]["status"], "failed");
  EXPECT_NE(recs[1]["reason"].get<std::string>().find("12 wrong"), std::string::npos);
  EXPECT_NE(recs[1]["reason"].get<std::string>().find("1->0"), std::string::npos);
  EXPECT_EQ(recs[1]["correctness"], (Json{{"checked", true}, {"passed", false}, {"wrong", 12}}));
  EXPECT_EQ(recs[2]["status"], "failed");
  EXPECT_EQ(recs[2]["correctness"]["wrong"], 12);
  EXPECT_TRUE(recs[1]["value"].is_number()) << "the measurement stands; the data was wrong";
  EXPECT_TRUE(case_failed(r));
}

TEST(CopyRecords, SkippedAndFailedCasesKeepTheirPlaceInTheMatrix) {
  const Config c = d2d();
  CaseResult r = fake_case({{{1, 0, 1}, {}, -1}});
  r.status = "skipped";
  r.reason = "GPUs 1 and 0 cannot access each other as peers";
  auto recs = case_records(fake_context(c), c, r);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(validate_record(recs[0]), "");
  EXPECT_EQ(recs[0]["status"], "skipped");
  EXPECT_EQ(recs[0]["reason"], r.reason);
  EXPECT_EQ(recs[0]["metric"], "bandwidth");
  EXPECT_TRUE(recs[0]["value"].is_null());
  EXPECT_FALSE(recs[0].contains("stats"));
  EXPECT_EQ(recs[0]["params"]["src"], 1);
  EXPECT_FALSE(case_failed(r));
  r.status = "failed";
  r.reason = "out of memory";
  recs = case_records(fake_context(c), c, r);
  EXPECT_EQ(recs[0]["status"], "failed");
  EXPECT_EQ(validate_record(recs[0]), "");
  EXPECT_TRUE(case_failed(r));
}

TEST(CopyRecords, HostEndsAreNamedHost) {
  const Config c = host(TestKind::kH2D, true);
  CaseResult r = fake_case({{{kHost, 1, 1}, {1e-4, 1e-4, 1e-4}, 0}, {{1, kHost, 1}, {2e-4, 2e-4, 2e-4}, 0}});
  r.host_cpus = "0-7";
  const auto recs = case_records(fake_context(c), c, r);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["params"]["src"], "host");
  EXPECT_EQ(recs[0]["params"]["dst"], 1);
  EXPECT_EQ(recs[0]["params"]["direction"], "read");
  EXPECT_EQ(recs[1]["params"]["src"], 1);
  EXPECT_EQ(recs[1]["params"]["dst"], "host");
  EXPECT_EQ(recs[0]["details"]["host_cpus"], "0-7");
  EXPECT_FALSE(recs[0]["point"].contains("host_cpus"));  // a fact of the machine: not the point's identity
  EXPECT_EQ(recs[0]["point"]["nvbandwidth"], "host_to_device_bidirectional_memcpy_ce");
  EXPECT_DOUBLE_EQ(recs[2]["value"].get<double>(), 15.0);
}

std::string table(const Config& c, int gpus, const std::vector<CaseResult>& results) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  print_table(f, c, gpus, results);
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

TEST(CopyTable, GoldenUnidirectionalMatrix) {
  Config c = d2d();
  c.bytes = 1'000'000;
  CaseResult skipped = fake_case({{{1, 0, 1}, {}, -1}});
  skipped.status = "skipped";
  skipped.reason = "no peer access";
  const std::vector<CaseResult> results{fake_case({{{0, 1, 0}, {1e-5, 2e-5, 1e-5}, 0}}), skipped};
  EXPECT_EQ(table(c, 2, results),
            "# copy d2d, engine ce (cudaMemcpyPeerAsync), write: the source GPU issues, peer access on, "
            "unidirectional\n"
            "# 1000000 bytes per copy, 16 copies per sample; nvbandwidth testcase: device_to_device_memcpy_write_ce\n"
            "# GB/s (median), row = source GPU, column = destination GPU\n"
            "                   0         1\n"
            "         0       N/A    100.00\n"
            "         1       N/A       N/A\n"
            "# largest cv of a direction: 34.64% (0->1)\n"
            "# 1->0: skipped: no peer access\n");
}

TEST(CopyTable, BidirectionalHostRowsAndFailedChecks) {
  Config c = host(TestKind::kD2H, true);
  c.bytes = 1'000'000;
  const std::vector<CaseResult> results{
      fake_case({{{0, kHost, 0}, {1e-4, 1e-4, 1e-4}, 0}, {{kHost, 0, 0}, {2e-4, 2e-4, 2e-4}, 3}})};
  const std::string t = table(c, 1, results);
  EXPECT_NE(t.find("host->GPU      5.00\n"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU->host     10.00\n"), std::string::npos) << t;
  EXPECT_NE(t.find("      sum     15.00\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# host->0: check failed: 3 wrong 4-byte words"), std::string::npos) << t;
  EXPECT_NE(t.find("device_to_host_bidirectional_memcpy_ce"), std::string::npos) << t;
}

}  // namespace
}  // namespace scalebench::copy
