// The shipped clock rules over burn records (deploy/accept/rules.yaml): a GPU whose SM clock
// settles lower, or falls further, than its peers' fails, peers that all fall together pass, and
// a GPU without peers is held to its own maximum clock and to where its clock started, with what
// held its clocks in the reason.
#include <gtest/gtest.h>

#include <map>

#include "accept/default_rules.hpp"
#include "accept/verdict.hpp"
#include "common/error.hpp"

namespace scalebench::accept {
namespace {

const RuleSet& shipped() {
  static const RuleSet r = parse_rules(kDefaultRules, kDefaultRulesSource);
  return r;
}

// A GPU's two clock records of a 30 s GEMM burn, as the burn workload writes them.
std::vector<Json> clocks(const std::string& host, int gpu, double start_mhz, double sustained_mhz,
                         Json clock_limits = Json::object()) {
  Json details{{"max_sm_clock_mhz", 1980}, {"start_sm_clock_mhz", start_mhz}};
  if (!clock_limits.empty()) details["clock_limits"] = clock_limits;
  Json base{
      {"workload", "burn"},
      {"status", "ok"},
      {"better", "higher"},
      {"point",
       Json{{"target", "gemm"}, {"duration_s", 30}, {"host", host}, {"gpu", gpu}, {"model", "NVIDIA H100 80GB HBM3"}}},
      {"details", details}};
  Json clock = base, hold = base;
  clock["metric"] = "sm_clock";
  clock["unit"] = "MHz";
  clock["value"] = sustained_mhz;
  hold["metric"] = "clock_hold";
  hold["unit"] = "ratio";
  hold["value"] = sustained_mhz / start_mhz;
  return {clock, hold};
}

// Outcome per (gpu, rule).
std::map<std::pair<int, std::string>, Verdict> judge(const std::vector<std::vector<Json>>& gpus) {
  std::vector<Json> records;
  for (const auto& g : gpus) records.insert(records.end(), g.begin(), g.end());
  std::map<std::pair<int, std::string>, Verdict> out;
  for (const Verdict& v : evaluate(shipped(), records)) out[{v.gpu, v.rule}] = v;
  return out;
}

TEST(ClockRules, AGpuWhoseClockFallsWhileItsPeersHoldFails) {
  // The power limit holds each GPU's clock from the burn's first seconds; GPU 3 overheats.
  const auto v = judge({clocks("n1", 0, 1760, 1755), clocks("n1", 1, 1760, 1755), clocks("n1", 2, 1750, 1740),
                        clocks("n1", 3, 1760, 1200, Json{{"window_ms", 30000}, {"thermal_capped_ms", 18000}})});
  ASSERT_EQ(v.size(), 8u);
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(v.at({g, "burn-clock-peers"}).outcome, "pass") << g;
    EXPECT_EQ(v.at({g, "burn-clock-holds"}).outcome, "pass") << g;
  }
  const Verdict& settled = v.at({3, "burn-clock-peers"});
  EXPECT_EQ(settled.outcome, "fail");
  EXPECT_NE(settled.band.basis.find("fleet median"), std::string::npos) << settled.band.basis;
  EXPECT_NE(settled.reason.find("1200 MHz is below"), std::string::npos) << settled.reason;
  EXPECT_NE(settled.reason.find("thermal limit 60%"), std::string::npos) << settled.reason;
  EXPECT_EQ(v.at({3, "burn-clock-holds"}).outcome, "fail");
}

TEST(ClockRules, PeersThatAllSlowTogetherPass) {
  // A warm room: every GPU settles 15% below where it started, none apart from the others.
  const auto v = judge({clocks("n1", 0, 1760, 1496), clocks("n1", 1, 1760, 1500), clocks("n2", 0, 1755, 1490),
                        clocks("n2", 1, 1760, 1497)});
  for (const auto& [key, verdict] : v) EXPECT_EQ(verdict.outcome, "pass") << key.first << " " << key.second;
}

TEST(ClockRules, AGpuAloneIsHeldToItsOwnClocks) {
  // Held by the power limit below its 1980 MHz from the first seconds, and there it stays.
  auto v = judge({clocks("n1", 0, 1760, 1755, Json{{"window_ms", 30000}, {"power_capped_ms", 27000}})});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.at({0, "burn-clock-peers"}).outcome, "pass");
  EXPECT_NE(v.at({0, "burn-clock-peers"}).band.basis.find("no peers (1 of the same model and point)"),
            std::string::npos)
      << v.at({0, "burn-clock-peers"}).band.basis;
  EXPECT_DOUBLE_EQ(*v.at({0, "burn-clock-peers"}).band.lo, 0.70 * 1980);
  EXPECT_EQ(v.at({0, "burn-clock-holds"}).outcome, "pass");

  // Fell from 1980 to 1500 MHz (24%) with no power or thermal limit counted: fails the hold,
  // stays above the floor of its maximum clock.
  v = judge({clocks("n1", 0, 1980, 1500, Json{{"window_ms", 30000}, {"power_capped_ms", 0}})});
  EXPECT_EQ(v.at({0, "burn-clock-peers"}).outcome, "pass");
  const Verdict& hold = v.at({0, "burn-clock-holds"});
  EXPECT_EQ(hold.outcome, "fail");
  EXPECT_DOUBLE_EQ(*hold.band.lo, 0.90);
  EXPECT_NE(hold.reason.find("no power or thermal limit held the clocks"), std::string::npos) << hold.reason;

  // Held at 1100 MHz from the start: below 70% of its maximum though it never fell.
  v = judge({clocks("n1", 0, 1100, 1100)});
  EXPECT_EQ(v.at({0, "burn-clock-peers"}).outcome, "fail");
  EXPECT_EQ(v.at({0, "burn-clock-holds"}).outcome, "pass");
}

TEST(ClockRules, TwoGpusAreEachJudgedAlone) {
  // Two are too few to tell which one is off: each is held to itself.
  const auto v = judge({clocks("n1", 0, 1760, 1755), clocks("n1", 1, 1760, 1450)});
  EXPECT_EQ(v.at({0, "burn-clock-holds"}).outcome, "pass");
  EXPECT_EQ(v.at({1, "burn-clock-holds"}).outcome, "fail");
}

TEST(ClockRules, AnAloneBandOnlyUnderAFleetBand) {
  EXPECT_THROW(parse_rules("rules:\n  - name: c\n    select: {workload: burn, metric: sm_clock}\n"
                           "    band: {from: fixed, min: 1, alone: {from: fixed, min: 2}}\n",
                           "t.yaml"),
               SpecError);
  try {
    parse_rules(
        "rules:\n  - name: c\n    select: {workload: burn, metric: sm_clock}\n"
        "    band: {from: fleet, alone: {from: relative}}\n",
        "t.yaml");
    FAIL() << "an incomplete alone band was taken";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("rules[0].band.alone"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalebench::accept
