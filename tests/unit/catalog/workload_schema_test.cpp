#include "catalog/workload_schema.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "experiment/spec.hpp"

namespace scalebench {
namespace {

ParamDef int_param(std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
  return ParamDef{"n", ParamType::kInt, 0, {}, min, "", max};
}

TEST(ParseParam, IntegersInsideTheIntRangeAreKept) {
  EXPECT_EQ(parse_param(int_param(), "2147483647").value, 2147483647);
  EXPECT_EQ(parse_param(int_param(), "-2147483648").value, -2147483648LL);
  EXPECT_EQ(parse_param(int_param(), "0").error, "");
}

TEST(ParseParam, IntegersOutsideTheIntRangeAreRefusedNotWrapped) {
  // iters: 2147483648 was accepted, then read as an int (wrapped) and ignored.
  EXPECT_EQ(parse_param(int_param(), "2147483648").error, "must be at most 2147483647, got 2147483648");
  EXPECT_EQ(parse_param(int_param(), "-2147483649").error, "must be at least -2147483648, got -2147483649");
  EXPECT_EQ(parse_param(int_param(), "99999999999999999999999").error,
            "must be at most 2147483647, got 99999999999999999999999")
      << "past int64 too";
  EXPECT_EQ(parse_param(int_param(), "-99999999999999999999999").error,
            "must be at least -2147483648, got -99999999999999999999999");
  EXPECT_EQ(parse_param(int_param(), "4294967297").error, "must be at most 2147483647, got 4294967297");
}

TEST(ParseParam, DeclaredBoundsStillApplyAndComeFirstWhenTighter) {
  EXPECT_EQ(parse_param(int_param(1), "0").error, "must be at least 1, got 0");
  EXPECT_EQ(parse_param(int_param(1, 8), "9").error, "must be at most 8, got 9");
  EXPECT_EQ(parse_param(int_param(1), "-99999999999999999999999").error,
            "must be at least 1, got -99999999999999999999999");
  EXPECT_EQ(parse_param(int_param(), "12x").error, "expected an integer, got '12x'");
  EXPECT_EQ(parse_param(int_param(), "1.5").error, "expected an integer, got '1.5'");
}

TEST(ParseParam, IntOrAutoHasTheSameRange) {
  const ParamDef iters{"iters", ParamType::kIntOrAuto, "auto", {}, 1, ""};
  EXPECT_EQ(parse_param(iters, "auto").value, "auto");
  EXPECT_EQ(parse_param(iters, "2147483648").error, "must be at most 2147483647, got 2147483648");
}

TEST(ParseParam, EveryDeclaredIntegerParameterRefusesAValuePastInt) {
  for (const auto& d : workload_defs())
    for (const auto& p : d.params) {
      if (p.type == ParamType::kInt || p.type == ParamType::kIntOrAuto) {
        EXPECT_NE(parse_param(p, "2147483648").error, "") << d.name << "." << p.name;
      }
    }
}

TEST(ParseParam, AnExperimentFilesOutOfRangeIntegerNamesItsField) {
  try {
    parse_experiment("name: x\nworkload: collective\nparams:\n  iters: 2147483648\n", "x.yaml");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].field, "params.iters");
    EXPECT_EQ(e.issues()[0].line, 4);
    EXPECT_NE(e.issues()[0].message.find("at most 2147483647"), std::string::npos) << e.what();
  }
  try {
    parse_experiment("name: x\nworkload: collective\nmatrix:\n  warmup: [1, 4294967297]\n", "x.yaml");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].field, "matrix.warmup[1]");
  }
}

}  // namespace
}  // namespace scalebench
