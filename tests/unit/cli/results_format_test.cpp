#include "cli/results_format.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace scalebench {
namespace {

// Splits a line at runs of two or more spaces: the columns a reader (or awk) sees.
std::vector<std::string> columns(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::size_t spaces = 0;
  for (char c : line) {
    if (c == ' ') {
      ++spaces;
      continue;
    }
    if (spaces >= 2 && !cell.empty()) {
      out.push_back(cell);
      cell.clear();
    } else if (spaces == 1) {
      cell += ' ';
    }
    spaces = 0;
    cell += c;
  }
  if (!cell.empty()) out.push_back(cell);
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

VariantRatio ratio_point(std::uint64_t size, double num, double den) {
  VariantRatio v;
  v.key = Json{{"params", {{"op", "all_reduce"}, {"dtype", "float32"}}}, {"gpus", 2}, {"point", size}};
  v.metric = "busbw";
  v.unit = "GB/s";
  v.numerator = num;
  v.denominator = den;
  v.ratio = num / den;
  v.ci_low = v.ratio * 0.99;
  v.ci_high = v.ratio * 1.01;
  v.pairs = 2;
  v.paired_by = "rounds";
  return v;
}

// Variant names wider than any fixed column (own-program.md's scalebench-nvlink against
// nccl-tests-nvlink) head their own columns: the header splits into the nine names, and each row
// into nine cells under them.
TEST(RatioTable, LongVariantNamesKeepTheirColumnsApart) {
  std::ostringstream out;
  write_ratios(out, {ratio_point(64, 8.447e-03, 0.0101), ratio_point(1ull << 30, 325.44, 326.64)}, "scalebench-nvlink",
               "nccl-tests-nvlink", "table");
  const auto l = lines(out.str());
  ASSERT_EQ(l.size(), 4u) << out.str();
  EXPECT_EQ(columns(l[0]), (std::vector<std::string>{"what", "gpus", "size", "metric", "scalebench-nvlink",
                                                     "nccl-tests-nvlink", "ratio", "95% CI", "pairs"}))
      << l[0];
  const auto row = columns(l[2]);
  ASSERT_EQ(row.size(), 9u) << l[2];
  EXPECT_EQ(row[0], "all_reduce float32");
  EXPECT_EQ(row[2], "1GiB");
  EXPECT_EQ(row[4], "325.44");
  EXPECT_EQ(row[5], "326.64");
  EXPECT_EQ(row[8], "2r");
  // Numbers right-aligned under their header: a value ends where its column's name ends.
  EXPECT_EQ(l[0].find("scalebench-nvlink") + std::string("scalebench-nvlink").size(),
            l[2].find("325.44") + std::string("325.44").size());
}

// A train study's nvlink/pcie rows (no op or dtype among their parameters) are told apart by the
// workload's table columns: the network and the mode, as the results table names them.
TEST(RatioTable, TrainRowsNameTheirNetwork) {
  VariantRatio v = ratio_point(0, 7009.94, 6984.97);
  v.key = Json{{"params", {{"model", "resnet152"}, {"mode", "train"}, {"precision", "fp16"}, {"batch", 512}}},
               {"gpus", 2},
               {"point", nullptr}};
  v.workload = "train";
  v.metric = "throughput";
  std::ostringstream out;
  write_ratios(out, {v}, "nvlink", "pcie", "table");
  const auto l = lines(out.str());
  ASSERT_GE(l.size(), 2u) << out.str();
  EXPECT_EQ(columns(l[1])[0], "resnet152 train") << out.str();
}

// A stored record with a field of the wrong type is refused with the record and the field named,
// in every format, instead of printing it as it happens to dump or failing on a JSON type error.
TEST(ResultsFormats, AMalformedRecordIsNamedWithItsField) {
  const Json records = Json::array({Json{{"record_id", 5},
                                         {"run_id", 1},
                                         {"workload", "collective"},
                                         {"metric", "busbw"},
                                         {"status", "ok"},
                                         {"value", 1.5},
                                         {"placement", {{"gpus", "2"}}}}});
  for (const auto& write : {write_table, write_csv}) {
    std::ostringstream out;
    try {
      write(out, records);
      ADD_FAILURE() << "printed " << out.str();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "record 5: 'placement.gpus' must be an integer");
    }
  }
}

}  // namespace
}  // namespace scalebench
