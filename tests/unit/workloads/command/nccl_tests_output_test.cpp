#include "workloads/command/nccl_tests_output.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "record/record.hpp"

namespace scalebench {
namespace {

// all_reduce_perf -b 8 -e 64K -f 2 -w 20 -n 100 -G 1, 4 ranks on 4 x H200, nccl-tests 2.19.6
// (docs/results/2026-11-21-nvlink-vs-pcie-4xh200/latency-and-modes.txt), verbatim.
const std::string kAllReduceGraph = R"(# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 65536 step: 2(factor) warmup iters: 20 iters: 100 agg iters: 1 validation: 1 graph: 1 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  19052 on         vm device  0 [0000:00:06] NVIDIA H200
#  Rank  1 Group  0 Pid  19053 on         vm device  1 [0000:00:07] NVIDIA H200
#  Rank  2 Group  0 Pid  19054 on         vm device  2 [0000:00:08] NVIDIA H200
#  Rank  3 Group  0 Pid  19056 on         vm device  3 [0000:00:09] NVIDIA H200
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
           8             2     float     sum      -1     8.08    0.00    0.00       0     7.95    0.00    0.00       0
          16             4     float     sum      -1     8.02    0.00    0.00       0     7.96    0.00    0.00       0
          32             8     float     sum      -1     8.42    0.00    0.01       0     9.26    0.00    0.01       0
          64            16     float     sum      -1     8.85    0.01    0.01       0     8.88    0.01    0.01       0
         128            32     float     sum      -1     8.89    0.01    0.02       0     8.93    0.01    0.02       0
         256            64     float     sum      -1     8.99    0.03    0.04       0     8.98    0.03    0.04       0
         512           128     float     sum      -1     9.24    0.06    0.08       0     9.08    0.06    0.08       0
        1024           256     float     sum      -1    10.78    0.10    0.14       0     9.20    0.11    0.17       0
        2048           512     float     sum      -1     9.25    0.22    0.33       0     9.63    0.21    0.32       0
        4096          1024     float     sum      -1     9.43    0.43    0.65       0     9.36    0.44    0.66       0
        8192          2048     float     sum      -1    12.14    0.68    1.01       0     9.67    0.85    1.27       0
       16384          4096     float     sum      -1    10.34    1.59    2.38       0    10.30    1.59    2.38       0
       32768          8192     float     sum      -1    10.49    3.12    4.69       0    10.48    3.13    4.69       0
       65536         16384     float     sum      -1    10.82    6.06    9.09       0    10.70    6.12    9.19       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 1.33212 
#
# Collective test concluded: all_reduce_perf
#
)";

// sendrecv_perf -b 8 -e 1G -f 8, same machine (nccl-tests-np4.txt): in-place #wrong is N/A.
const std::string kSendRecv = R"(# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809
# Collective test starting: sendrecv_perf
# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  10979 on         vm device  0 [0000:00:06] NVIDIA H200
#  Rank  1 Group  0 Pid  10980 on         vm device  1 [0000:00:07] NVIDIA H200
#  Rank  2 Group  0 Pid  10981 on         vm device  2 [0000:00:08] NVIDIA H200
#  Rank  3 Group  0 Pid  10984 on         vm device  3 [0000:00:09] NVIDIA H200
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
           8             2     float     sum      -1     9.17    0.00    0.00       0     9.76    0.00    0.00    N/A
          64            16     float     sum      -1     8.78    0.01    0.01       0     8.66    0.01    0.01    N/A
         512           128     float     sum      -1     9.72    0.05    0.05       0     9.58    0.05    0.05    N/A
        4096          1024     float     sum      -1     9.72    0.42    0.42       0     9.03    0.45    0.45    N/A
       32768          8192     float     sum      -1     9.13    3.59    3.59       0     9.34    3.51    3.51    N/A
      262144         65536     float     sum      -1    13.65   19.21   19.21       0    13.45   19.50   19.50    N/A
     2097152        524288     float     sum      -1    26.26   79.87   79.87       0    24.74   84.78   84.78    N/A
    16777216       4194304     float     sum      -1   123.77  135.55  135.55       0   121.84  137.69  137.69    N/A
   134217728      33554432     float     sum      -1   826.21  162.45  162.45       0   833.48  161.03  161.03    N/A
  1073741824     268435456     float     sum      -1  2977.43  360.63  360.63       0  2985.73  359.62  359.62    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 76.4212 
#
# Collective test concluded: sendrecv_perf
#
)";

TEST(NcclTestsText, ReadsHeaderRowsAndSummary) {
  NcclTestsOutput o = parse_nccl_tests_text(kAllReduceGraph);
  EXPECT_EQ(o.version, "2.19.6");
  EXPECT_EQ(o.test, "all_reduce_perf");
  EXPECT_EQ(o.threads, 1);
  EXPECT_EQ(o.gpus_per_thread, 1);
  EXPECT_EQ(o.warmup_iters, 20);
  EXPECT_EQ(o.iters, 100);
  EXPECT_TRUE(o.cuda_graph);
  ASSERT_EQ(o.rows.size(), 14u);
  EXPECT_EQ(o.rows[0].size, 8u);
  EXPECT_EQ(o.rows[0].count, 2u);
  EXPECT_EQ(o.rows[0].type, "float");
  EXPECT_EQ(o.rows[0].redop, "sum");
  EXPECT_EQ(o.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(o.rows[0].out_of_place.time_us, 8.08);
  EXPECT_DOUBLE_EQ(o.rows[0].in_place.time_us, 7.95);
  EXPECT_EQ(o.rows.back().size, 65536u);
  EXPECT_DOUBLE_EQ(o.rows.back().out_of_place.busbw, 9.09);
  EXPECT_DOUBLE_EQ(o.rows.back().in_place.algbw, 6.12);
  EXPECT_EQ(o.rows.back().out_of_place.wrong, 0);
  ASSERT_TRUE(o.avg_busbw.has_value());
  EXPECT_DOUBLE_EQ(*o.avg_busbw, 1.33212);
  EXPECT_EQ(o.out_of_bounds, 0);
}

TEST(NcclTestsText, NotApplicableWrongCountsStayUnknown) {
  NcclTestsOutput o = parse_nccl_tests_text(kSendRecv);
  EXPECT_EQ(o.test, "sendrecv_perf");
  ASSERT_EQ(o.rows.size(), 10u);
  EXPECT_EQ(o.rows.back().size, 1073741824u);
  EXPECT_DOUBLE_EQ(o.rows.back().out_of_place.busbw, 360.63);
  EXPECT_EQ(o.rows.back().out_of_place.wrong, 0);
  EXPECT_FALSE(o.rows.back().in_place.wrong.has_value());
}

TEST(NcclTestsText, PassesOverForeignLinesButNotBrokenRows) {
  const std::string noisy = "vm:1:1 [0] NCCL INFO Bootstrap : Using eth0\n" + kAllReduceGraph + "mpirun noise\n";
  EXPECT_EQ(parse_nccl_tests_text(noisy).rows.size(), 14u);
  try {
    parse_nccl_tests_text("           8             2     float     sum      -1     8.08    0.00\n");
    FAIL() << "a short row must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: a table row has 13 fields, this one 7"), std::string::npos);
  }
  EXPECT_THROW(parse_nccl_tests_text("  8  2  float  sum  -1  x.1  0.00  0.00  0  8  0  0  0\n"), Error);
  EXPECT_THROW(parse_nccl_tests_text("# nccl-tests version 2.19.6\nNCCL failure common.cu:1\n"), Error);
}

TEST(NcclTestsText, RecordsLikeTheCollectiveWorkloads) {
  NcclTestsOutput o = parse_nccl_tests_text(kAllReduceGraph);
  Json context{{"run_id", 7}, {"experiment", "e"}, {"workload", "command"}, {"variant", "nvlink"}};
  auto recs = nccl_tests_records(context, o);
  ASSERT_EQ(recs.size(), 14u * 3);
  EXPECT_EQ(recs[2]["metric"], "busbw");
  EXPECT_EQ(recs[2]["point"]["size"], 8);
  EXPECT_EQ(recs.back()["value"], 9.09);
  EXPECT_EQ(recs.back()["status"], "ok");
  for (const auto& r : recs) EXPECT_EQ(validate_record(r), "") << r.dump();
  auto in_place = nccl_tests_records(context, o, true);
  EXPECT_EQ(in_place.back()["value"], 9.19);

  o.rows[0].out_of_place.wrong = 3;
  auto bad = nccl_tests_records(context, o);
  EXPECT_EQ(bad[0]["status"], "failed");
  EXPECT_EQ(bad[0]["reason"], "3 wrong elements (nccl-tests' check)");
}

}  // namespace
}  // namespace scalebench
