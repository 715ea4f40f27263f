// The rule file: what it accepts, and a bad one refused with file:line:column and the field.
#include "accept/rules.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace scalebench::accept {
namespace {

const SourceIssue* issue_for(const SpecError& e, const std::string& field) {
  for (const auto& i : e.issues())
    if (i.field == field) return &i;
  return nullptr;
}

TEST(Rules, ParseSelectBandAndAgree) {
  const RuleSet set = parse_rules(R"(rules:
  - name: gemm
    select: {workload: gemm, metric: throughput, point: {precision: bf16, m: 8192}}
    severity: warn
    band: {from: peak, efficiency: {H100: 0.7, default: 0.5}}
  - name: sums
    select: {workload: checksum, metric: checksum}
    agree: details.checksum
    group_by: [model, point.kind]
)",
                                  "r.yaml");
  ASSERT_EQ(set.rules.size(), 2u);
  const Rule& g = set.rules[0];
  EXPECT_EQ(g.where, "r.yaml:2");
  EXPECT_EQ(g.workload, "gemm");
  EXPECT_EQ(g.point["precision"], "bf16");
  EXPECT_EQ(g.point["m"], 8192);
  EXPECT_EQ(g.severity, "warn");
  ASSERT_TRUE(g.band);
  EXPECT_EQ(g.band->from, "peak");
  EXPECT_DOUBLE_EQ(g.band->efficiency.at("H100"), 0.7);
  EXPECT_EQ(set.rules[1].agree, "details.checksum");
  EXPECT_EQ(set.rules[1].group_by, (std::vector<std::string>{"model", "point.kind"}));
}

TEST(Rules, ABadFileNamesLineColumnAndField) {
  try {
    parse_rules(R"(rules:
  - name: gemm
    select: {workload: gemm}
    band: {from: peak, efficiency: {H100: 1.7}}
  - name: fixed
    select: {workload: nodecheck}
    band: {from: fixed, mni: 1}
    severity: fatal
)",
                "site.yaml");
    FAIL() << "a bad rule file was accepted";
  } catch (const SpecError& e) {
    const SourceIssue* eff = issue_for(e, "rules[0].band.efficiency.H100");
    ASSERT_TRUE(eff) << e.what();
    EXPECT_EQ(eff->line, 4);
    EXPECT_EQ(eff->column, 43);
    EXPECT_NE(eff->message.find("expected a number in [1e-06, 1]"), std::string::npos);
    const SourceIssue* key = issue_for(e, "rules[1].band.mni");
    ASSERT_TRUE(key);
    EXPECT_EQ(key->line, 7);
    EXPECT_EQ(key->column, 25);
    const SourceIssue* sev = issue_for(e, "rules[1].severity");
    ASSERT_TRUE(sev);
    EXPECT_EQ(sev->line, 8);
    EXPECT_NE(std::string(e.what()).find("site.yaml:8:15: field 'rules[1].severity'"), std::string::npos) << e.what();
  }
}

TEST(Rules, EveryRuleNeedsAWorkloadAndABandOrAgreement) {
  EXPECT_THROW(parse_rules("rules:\n  - name: x\n    band: {from: fixed, min: 1}\n", "a.yaml"), SpecError);
  EXPECT_THROW(parse_rules("rules:\n  - name: x\n    select: {workload: gemm}\n", "a.yaml"), SpecError);
  EXPECT_THROW(parse_rules("rules:\n  - name: x\n    select: {workload: gemm}\n    band: {from: fixed}\n", "a.yaml"),
               SpecError);
  EXPECT_THROW(parse_rules("rules: [\n", "a.yaml"), SpecError) << "malformed YAML";
  EXPECT_THROW(parse_rules("rules:\n  - name: x\n    select: {workload: a}\n    agree: value\n  - name: x\n"
                           "    select: {workload: b}\n    agree: value\n",
                           "a.yaml"),
               SpecError)
      << "two rules of one name";
}

TEST(Rules, ASiteFileReplacesAddsAndDisables) {
  const RuleSet base = parse_rules(R"(rules:
  - name: a
    select: {workload: gemm}
    band: {from: fixed, min: 1}
  - name: b
    select: {workload: hbm}
    band: {from: fixed, min: 1}
)",
                                   "base.yaml");
  const RuleSet site = parse_rules(R"(rules:
  - name: a
    select: {workload: gemm}
    band: {from: fixed, min: 2}
  - name: b
    disabled: true
  - name: c
    select: {workload: copy}
    band: {from: fixed, min: 3}
)",
                                   "site.yaml");
  const RuleSet all = override_rules(base, site);
  ASSERT_EQ(all.rules.size(), 2u);
  EXPECT_EQ(all.rules[0].name, "a");
  EXPECT_DOUBLE_EQ(*all.rules[0].band->min, 2);
  EXPECT_EQ(all.rules[1].name, "c");
}

TEST(Rules, TheShippedDefaultsParse) {
  const RuleSet set = load_rules(std::string(SCALEBENCH_TEST_DATA) + "/../../deploy/accept/rules.yaml");
  EXPECT_GE(set.rules.size(), 20u);
  for (const char* model : {"A100", "H100", "H200"}) {
    bool found = false;
    for (const Rule& r : set.rules)
      if (r.name == "gemm-throughput") found = r.band->efficiency.count(model) > 0;
    EXPECT_TRUE(found) << model;
  }
}

}  // namespace
}  // namespace scalebench::accept
