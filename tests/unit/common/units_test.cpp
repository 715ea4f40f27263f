#include "common/units.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace scalebench {
namespace {

TEST(ParseSize, PlainNumbersAreBytes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("8B"), 8u);
}

TEST(ParseSize, BinaryPrefixes) {
  EXPECT_EQ(parse_size("1KiB"), 1024u);
  EXPECT_EQ(parse_size("64MiB"), 64ull << 20);
  EXPECT_EQ(parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_size("1TiB"), 1ull << 40);
}

TEST(ParseSize, SingleLettersAreBinaryLikeNcclTests) {
  EXPECT_EQ(parse_size("1K"), 1024u);
  EXPECT_EQ(parse_size("64M"), 64ull << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
}

TEST(ParseSize, DecimalPrefixes) {
  EXPECT_EQ(parse_size("1KB"), 1000u);
  EXPECT_EQ(parse_size("1MB"), 1000000u);
  EXPECT_EQ(parse_size("1GB"), 1000000000u);
  EXPECT_EQ(parse_size("2TB"), 2000000000000u);
}

TEST(ParseSize, CaseAndSpacesDoNotMatter) {
  EXPECT_EQ(parse_size("1 KiB"), 1024u);
  EXPECT_EQ(parse_size(" 64mib "), 64ull << 20);
  EXPECT_EQ(parse_size("1kb"), 1000u);
}

TEST(ParseSize, FractionsThatComeOutWhole) {
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_size("0.5MiB"), 512u * 1024);
}

TEST(ParseSize, RejectsInvalidText) {
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("abc"));
  EXPECT_FALSE(parse_size("KiB"));
  EXPECT_FALSE(parse_size("12XB"));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("-1KiB"));
  EXPECT_FALSE(parse_size("0.5")) << "half a byte";
  EXPECT_FALSE(parse_size("nan"));
  EXPECT_FALSE(parse_size("inf"));
  EXPECT_FALSE(parse_size("100000000TB")) << "beyond 64-bit byte counts";
}

TEST(FormatSize, UsesTheLargestExactBinaryUnit) {
  EXPECT_EQ(format_size(0), "0B");
  EXPECT_EQ(format_size(8), "8B");
  EXPECT_EQ(format_size(1000), "1000B");
  EXPECT_EQ(format_size(1024), "1KiB");
  EXPECT_EQ(format_size(1536), "1536B");
  EXPECT_EQ(format_size(64ull << 20), "64MiB");
  EXPECT_EQ(format_size(3ull << 30), "3GiB");
  EXPECT_EQ(format_size(1ull << 40), "1TiB");
  EXPECT_EQ(format_size(1ull << 50), "1024TiB");
}

TEST(FormatSize, RoundTripsThroughParseSize) {
  for (std::uint64_t b : {1ull, 8ull, 1000ull, 4096ull, 1536ull, 64ull << 20, 5ull << 30, 7ull << 40}) {
    auto parsed = parse_size(format_size(b));
    ASSERT_TRUE(parsed) << format_size(b);
    EXPECT_EQ(*parsed, b);
  }
}

TEST(ParseDuration, Units) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("5m"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("5min"), 300);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1h"), 3600);
  EXPECT_DOUBLE_EQ(*parse_duration_s("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_duration_s("20us"), 20e-6);
  EXPECT_DOUBLE_EQ(*parse_duration_s("12"), 12);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*parse_duration_s("0"), 0);
}

TEST(ParseDuration, RejectsInvalidText) {
  EXPECT_FALSE(parse_duration_s(""));
  EXPECT_FALSE(parse_duration_s("soon"));
  EXPECT_FALSE(parse_duration_s("-5s"));
  EXPECT_FALSE(parse_duration_s("5d"));
  EXPECT_FALSE(parse_duration_s("5MiB"));
}

TEST(BaseUnit, BandwidthsBecomeBytesPerSecond) {
  auto gb = base_unit("GB/s");
  ASSERT_TRUE(gb);
  EXPECT_EQ(gb->name, "bytes_per_second");
  EXPECT_DOUBLE_EQ(gb->factor, 1e9);
  EXPECT_DOUBLE_EQ(base_unit("MB/s")->factor, 1e6);
  EXPECT_DOUBLE_EQ(base_unit("B/s")->factor, 1);
}

TEST(BaseUnit, TimesBecomeSeconds) {
  auto us = base_unit("us");
  ASSERT_TRUE(us);
  EXPECT_EQ(us->name, "seconds");
  EXPECT_DOUBLE_EQ(us->factor, 1e-6);
  EXPECT_DOUBLE_EQ(base_unit("ms")->factor, 1e-3);
  EXPECT_DOUBLE_EQ(base_unit("s")->factor, 1);
}

TEST(BaseUnit, OtherKnownUnits) {
  EXPECT_EQ(base_unit("TFLOP/s")->name, "flops_per_second");
  EXPECT_DOUBLE_EQ(base_unit("TFLOP/s")->factor, 1e12);
  EXPECT_EQ(base_unit("samples/s")->name, "samples_per_second");
  EXPECT_EQ(base_unit("images/s")->name, "images_per_second");
  EXPECT_EQ(base_unit("ratio")->name, "ratio");
  EXPECT_EQ(base_unit("")->name, "ratio");
}

TEST(BaseUnit, UnknownUnitIsNullopt) {
  EXPECT_FALSE(base_unit("furlongs/fortnight"));
  EXPECT_FALSE(base_unit("gb/s")) << "units are case-sensitive";
}

}  // namespace
}  // namespace scalebench
