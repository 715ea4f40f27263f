#include "workloads/collective/report.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace scalebench::collective {
namespace {

// What the table functions print, as people running scalebench-run by hand see it.
template <typename Print>
std::string printed(Print print) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  print(f);
  std::fclose(f);
  std::string s(buf, len);
  std::free(buf);
  return s;
}

// nccl-tests' columns and widths, a checked point and an unchecked one.
TEST(CollectiveTable, GoldenHeaderAndRows) {
  Config c;
  c.backend = "nccl";
  c.op = Op::kAllReduce;
  PointResult p;
  p.layout.size_bytes = 1048576;
  p.layout.send_count = 262144;
  p.iters = 20;
  p.seconds = {1e-4, 1e-4, 1e-4};
  p.wrong = 0;
  EXPECT_EQ(printed([&](std::FILE* f) { print_table_header(f, c, 2); }),
            "# collective NCCL on 2 ranks, backend nccl, out-of-place\n"
            "#      size(B)        count  iters  time(us)     algbw     busbw   cv(%) #wrong\n");
  EXPECT_EQ(printed([&](std::FILE* f) { print_table_row(f, c, 2, p); }),
            "       1048576       262144     20    100.00     10.49     10.49    0.00      0\n");
  p.wrong = -1;
  EXPECT_EQ(printed([&](std::FILE* f) { print_table_row(f, c, 2, p); }),
            "       1048576       262144     20    100.00     10.49     10.49    0.00    N/A\n");
}

}  // namespace
}  // namespace scalebench::collective
