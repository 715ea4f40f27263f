#include "workloads/collective/collective.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/error.hpp"

namespace scalebench::collective {
namespace {

const std::vector<DType> kAllDTypes{DType::kF32, DType::kF64, DType::kF16, DType::kBf16,
                                    DType::kI32, DType::kI64, DType::kI8,  DType::kU8};

// nccl-tests' bus bandwidth factors (doc/PERFORMANCE.md there).
TEST(BusbwFactor, AllReduceIsTwoNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::kAllReduce, 8), 1.75);
}

TEST(BusbwFactor, GatherScatterAndAllToAllAreNMinusOneOverN) {
  for (Op op : {Op::kAllGather, Op::kReduceScatter, Op::kAllToAll}) {
    EXPECT_DOUBLE_EQ(busbw_factor(op, 1), 0.0);
    EXPECT_DOUBLE_EQ(busbw_factor(op, 2), 0.5);
    EXPECT_DOUBLE_EQ(busbw_factor(op, 4), 0.75);
    EXPECT_DOUBLE_EQ(busbw_factor(op, 8), 0.875);
  }
}

TEST(BusbwFactor, RootedAndPointToPointOpsAreOne) {
  for (Op op : {Op::kBroadcast, Op::kReduce, Op::kSendRecv})
    for (int n : {1, 2, 4, 8}) EXPECT_DOUBLE_EQ(busbw_factor(op, n), 1.0) << n;
}

TEST(Parse, NamesMatchTheWorkloadSchema) {
  EXPECT_EQ(parse_op("all_reduce"), Op::kAllReduce);
  EXPECT_EQ(parse_op("all_gather"), Op::kAllGather);
  EXPECT_EQ(parse_op("reduce_scatter"), Op::kReduceScatter);
  EXPECT_EQ(parse_op("broadcast"), Op::kBroadcast);
  EXPECT_EQ(parse_op("reduce"), Op::kReduce);
  EXPECT_EQ(parse_op("alltoall"), Op::kAllToAll);
  EXPECT_EQ(parse_op("sendrecv"), Op::kSendRecv);
  EXPECT_EQ(parse_dtype("float32"), DType::kF32);
  EXPECT_EQ(parse_dtype("float64"), DType::kF64);
  EXPECT_EQ(parse_dtype("float16"), DType::kF16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBf16);
  EXPECT_EQ(parse_dtype("int32"), DType::kI32);
  EXPECT_EQ(parse_dtype("int64"), DType::kI64);
  EXPECT_EQ(parse_dtype("int8"), DType::kI8);
  EXPECT_EQ(parse_dtype("uint8"), DType::kU8);
  EXPECT_EQ(parse_redop("sum"), RedOp::kSum);
  EXPECT_EQ(parse_redop("prod"), RedOp::kProd);
  EXPECT_EQ(parse_redop("max"), RedOp::kMax);
  EXPECT_EQ(parse_redop("min"), RedOp::kMin);
  EXPECT_EQ(parse_redop("avg"), RedOp::kAvg);
}

TEST(Parse, UnknownNamesThrow) {
  EXPECT_THROW(parse_op("allreduce"), Error);
  EXPECT_THROW(parse_dtype("float8"), Error);
  EXPECT_THROW(parse_redop("mean"), Error);
}

TEST(DTypeSize, Bytes) {
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kF64)), 8u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kI64)), 8u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kF32)), 4u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kI32)), 4u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kF16)), 2u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kBf16)), 2u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kI8)), 1u);
  EXPECT_EQ(static_cast<std::size_t>(gpu::dtype_bytes(DType::kU8)), 1u);
}

TEST(IsReducing, OnlyTheReductions) {
  EXPECT_TRUE(is_reducing(Op::kAllReduce));
  EXPECT_TRUE(is_reducing(Op::kReduceScatter));
  EXPECT_TRUE(is_reducing(Op::kReduce));
  EXPECT_FALSE(is_reducing(Op::kAllGather));
  EXPECT_FALSE(is_reducing(Op::kBroadcast));
  EXPECT_FALSE(is_reducing(Op::kAllToAll));
  EXPECT_FALSE(is_reducing(Op::kSendRecv));
}

TEST(Layout, WholeBufferOpsSendAndReceiveTheFullCount) {
  for (Op op : {Op::kAllReduce, Op::kBroadcast, Op::kReduce, Op::kSendRecv}) {
    Layout l = layout_for(op, 1 << 20, DType::kF32, 8);
    EXPECT_EQ(l.size_bytes, 1u << 20);
    EXPECT_EQ(l.send_count, 262144u);
    EXPECT_EQ(l.recv_count, 262144u);
    EXPECT_EQ(l.chunk, 0u);
  }
}

TEST(Layout, WholeBufferSizeRoundsDownToWholeElements) {
  Layout l = layout_for(Op::kAllReduce, 10, DType::kF32, 2);
  EXPECT_EQ(l.send_count, 2u);
  EXPECT_EQ(l.size_bytes, 8u);
  Layout d = layout_for(Op::kBroadcast, 15, DType::kF64, 2);
  EXPECT_EQ(d.send_count, 1u);
  EXPECT_EQ(d.size_bytes, 8u);
}

TEST(Layout, AllGatherSendsAChunkAndReceivesNChunks) {
  // 1000 B of float32 on 4 ranks: 250 elements, 62 per rank, rounded down to 60 (16 bytes = 4 floats).
  Layout l = layout_for(Op::kAllGather, 1000, DType::kF32, 4);
  EXPECT_EQ(l.chunk, 60u);
  EXPECT_EQ(l.send_count, 60u);
  EXPECT_EQ(l.recv_count, 240u);
  EXPECT_EQ(l.size_bytes, 960u);
}

TEST(Layout, ReduceScatterSendsNChunksAndReceivesAChunk) {
  Layout l = layout_for(Op::kReduceScatter, 1000, DType::kF32, 4);
  EXPECT_EQ(l.chunk, 60u);
  EXPECT_EQ(l.send_count, 240u);
  EXPECT_EQ(l.recv_count, 60u);
  EXPECT_EQ(l.size_bytes, 960u);
}

TEST(Layout, AllToAllSendsAndReceivesNChunks) {
  Layout l = layout_for(Op::kAllToAll, 1000, DType::kF32, 4);
  EXPECT_EQ(l.chunk, 60u);
  EXPECT_EQ(l.send_count, 240u);
  EXPECT_EQ(l.recv_count, 240u);
  EXPECT_EQ(l.size_bytes, 960u);
}

TEST(Layout, ChunkRoundingDependsOnTheElementSize) {
  // float64, 3 ranks: 125 elements, 41 per rank -> 40 (16 bytes = 2 doubles).
  Layout d = layout_for(Op::kAllGather, 1000, DType::kF64, 3);
  EXPECT_EQ(d.chunk, 40u);
  EXPECT_EQ(d.size_bytes, 960u);
  // int8, 2 ranks: 100 elements, 50 per rank -> 48 (16 bytes = 16 int8).
  Layout b = layout_for(Op::kAllToAll, 100, DType::kI8, 2);
  EXPECT_EQ(b.chunk, 48u);
  EXPECT_EQ(b.size_bytes, 96u);
  // float16, 8 ranks: 512 elements, 64 per rank, already a multiple of 8.
  Layout h = layout_for(Op::kReduceScatter, 1024, DType::kF16, 8);
  EXPECT_EQ(h.chunk, 64u);
  EXPECT_EQ(h.size_bytes, 1024u);
}

TEST(Layout, TooSmallForOneAlignedChunkIsEmpty) {
  Layout l = layout_for(Op::kAllGather, 8, DType::kF32, 8);
  EXPECT_EQ(l.chunk, 0u);
  EXPECT_EQ(l.size_bytes, 0u);
}

TEST(Layout, ChunkedOpsKeepSixteenByteChunksAndNeverGrow) {
  for (Op op : {Op::kAllGather, Op::kReduceScatter, Op::kAllToAll})
    for (DType t : kAllDTypes)
      for (int n : {1, 2, 3, 4, 8})
        for (std::uint64_t bytes : {1000ull, 4096ull, 12345ull, 1ull << 20}) {
          Layout l = layout_for(op, bytes, t, n);
          EXPECT_EQ(l.chunk * static_cast<std::size_t>(gpu::dtype_bytes(t)) % 16, 0u);
          EXPECT_LE(l.size_bytes, bytes);
          EXPECT_EQ(l.size_bytes,
                    l.chunk * static_cast<std::uint64_t>(n) * static_cast<std::size_t>(gpu::dtype_bytes(t)));
          EXPECT_GT(l.size_bytes + 16ull * n + static_cast<std::size_t>(gpu::dtype_bytes(t)) * n, bytes)
              << "rounds down by less than one chunk";
        }
}

TEST(SizeSweep, DoublesFromMinToMaxInclusive) {
  EXPECT_EQ(size_sweep(8, 64, 2, 4), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  auto s = size_sweep(1024, 64 << 20, 2, 4);
  ASSERT_EQ(s.size(), 17u);
  EXPECT_EQ(s.front(), 1024u);
  EXPECT_EQ(s.back(), 64u << 20);
  EXPECT_EQ(size_sweep(1000, 1000000, 10, 1), (std::vector<std::uint64_t>{1000, 10000, 100000, 1000000}));
}

TEST(SizeSweep, StopsAtMaxWhenTheFactorOvershoots) {
  EXPECT_EQ(size_sweep(8, 100, 2, 4), (std::vector<std::uint64_t>{8, 16, 32, 64}));
}

TEST(SizeSweep, NonIntegerFactorsRound) {
  EXPECT_EQ(size_sweep(100, 400, 1.5, 1), (std::vector<std::uint64_t>{100, 150, 225, 338}));
}

TEST(SizeSweep, SizesAreWholeElementsAndAtLeastOne) {
  EXPECT_EQ(size_sweep(10, 100, 2, 8), (std::vector<std::uint64_t>{8, 16, 40, 80}));
  EXPECT_EQ(size_sweep(1, 8, 2, 4), (std::vector<std::uint64_t>{4, 8})) << "1 and 2 both round up to one element";
}

TEST(SizeSweep, FactorOneIsASingleSize) {
  EXPECT_EQ(size_sweep(4096, 1 << 20, 1, 4), (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(size_sweep(4097, 1 << 20, 1, 4), (std::vector<std::uint64_t>{4096}));
}

TEST(Config, FromWorkloadDefaults) {
  Json p{{"backend", "mpi"}, {"op", "all_reduce"},    {"dtype", "float32"}, {"reduce_op", "sum"},
         {"min_bytes", 8},   {"max_bytes", 64 << 20}, {"step_factor", 2.0}, {"warmup", 5},
         {"iters", "auto"},  {"in_place", false},     {"root", 0},          {"check", true},
         {"time_cap", 2.0},  {"target_cv", 0.0}};
  Config c = Config::from_params(p, 20);
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.op, Op::kAllReduce);
  EXPECT_EQ(c.dtype, DType::kF32);
  EXPECT_EQ(c.redop, RedOp::kSum);
  EXPECT_EQ(c.min_bytes, 8u);
  EXPECT_EQ(c.max_bytes, 64u << 20);
  EXPECT_EQ(c.iters, 0) << "auto";
  EXPECT_FALSE(c.in_place);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.repetitions, 20);
}

TEST(Config, ExplicitValues) {
  Json p{{"backend", "nccl"}, {"op", "alltoall"},   {"dtype", "bfloat16"}, {"reduce_op", "max"}, {"min_bytes", 1024},
         {"max_bytes", 4096}, {"step_factor", 4.0}, {"warmup", 1},         {"iters", 50},        {"in_place", true},
         {"root", 3},         {"check", false},     {"time_cap", 0.5},     {"target_cv", 0.01}};
  Config c = Config::from_params(p, 3);
  EXPECT_EQ(c.backend, "nccl");
  EXPECT_EQ(c.op, Op::kAllToAll);
  EXPECT_EQ(c.dtype, DType::kBf16);
  EXPECT_EQ(c.redop, RedOp::kMax);
  EXPECT_EQ(c.min_bytes, 1024u);
  EXPECT_EQ(c.max_bytes, 4096u);
  EXPECT_DOUBLE_EQ(c.step_factor, 4);
  EXPECT_EQ(c.warmup, 1);
  EXPECT_EQ(c.iters, 50);
  EXPECT_TRUE(c.in_place);
  EXPECT_EQ(c.root, 3);
  EXPECT_FALSE(c.check);
  EXPECT_DOUBLE_EQ(c.time_cap_s, 0.5);
  EXPECT_DOUBLE_EQ(c.target_cv, 0.01);
  EXPECT_EQ(c.repetitions, 3);
}

TEST(Config, UnknownOpThrows) { EXPECT_THROW(Config::from_params(Json{{"op", "gather"}}, 1), Error); }

}  // namespace
}  // namespace scalebench::collective
