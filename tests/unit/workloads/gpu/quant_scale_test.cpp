#include "workloads/gpu/quant_scale.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"

namespace scalebench::gpu {
namespace {

// Calibration puts the largest magnitude on the format's largest value.
TEST(QuantScale, AmaxMapsOntoTheFormatsLargestValue) {
  EXPECT_DOUBLE_EQ(scale_from_amax(12.7, QuantFormat::kInt8), 0.1);
  EXPECT_DOUBLE_EQ(scale_from_amax(4.48, QuantFormat::kE4M3), 0.01);
  EXPECT_DOUBLE_EQ(scale_from_amax(0.0, QuantFormat::kInt8), 1.0);
  EXPECT_EQ(format_max(QuantFormat::kInt8), 127.0);
  EXPECT_EQ(format_max(QuantFormat::kE4M3), 448.0);
  EXPECT_THROW(scale_from_amax(-1.0, QuantFormat::kInt8), Error);
  EXPECT_THROW(scale_from_amax(INFINITY, QuantFormat::kE4M3), Error);
  EXPECT_THROW(scale_from_amax(NAN, QuantFormat::kE4M3), Error);
}

TEST(QuantScale, AmaxPerChannelTakesEachFiltersLargestMagnitude) {
  const std::vector<double> a = amax_per_channel({1, -3, 2, 0.5f, -0.25f, 0}, 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0], 3.0);
  EXPECT_EQ(a[1], 0.5);
  EXPECT_THROW(amax_per_channel({1, 2, 3}, 2), Error);
}

// acc * x_scale * w_scale[k] is the real value; divided by y_scale, the output's.
TEST(QuantScale, ChannelScaleIsXTimesWOverY) {
  EXPECT_DOUBLE_EQ(channel_scale(0.5, 0.25, 2.0), 0.0625);
  const std::vector<float> s = channel_scales(0.1, {0.01, 0.02, 0.04}, 0.05);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_FLOAT_EQ(s[0], 0.02f);
  EXPECT_FLOAT_EQ(s[1], 0.04f);
  EXPECT_FLOAT_EQ(s[2], 0.08f);
  EXPECT_THROW(channel_scale(0.0, 1.0, 1.0), Error);
  EXPECT_THROW(channel_scale(1.0, -1.0, 1.0), Error);
  EXPECT_THROW(channel_scale(1.0, 1.0, INFINITY), Error);
}

// A real pipeline end to end: x and w calibrated, their product requantized by channel_scale,
// lands within one int8 step of the real product quantized with y's scale.
TEST(QuantScale, CalibratedScalesRequantizeTheRealProduct) {
  const double x_real = 3.3, w_real = -0.7, y_amax = 4.0;
  const double xs = scale_from_amax(4.0, QuantFormat::kInt8), ws = scale_from_amax(1.0, QuantFormat::kInt8),
               ys = scale_from_amax(y_amax, QuantFormat::kInt8);
  const double xq = quantize_int8(x_real / xs), wq = quantize_int8(w_real / ws);
  const double y = xq * wq * channel_scale(xs, ws, ys);
  EXPECT_NEAR(y, x_real * w_real / ys, 1.0);
}

TEST(QuantScale, EpilogueScalesAddsAndClips) {
  EXPECT_DOUBLE_EQ(epilogue(10, 0.5, 1, false, 99, 99, false), 6.0);
  EXPECT_DOUBLE_EQ(epilogue(10, 0.5, 1, true, 4, 0.25, false), 7.0);
  EXPECT_DOUBLE_EQ(epilogue(-10, 0.5, 1, true, 4, 0.25, true), 0.0);
  EXPECT_DOUBLE_EQ(epilogue(-10, 0.5, 1, false, 0, 1, false), -4.0);
}

// The graph's chain ((acc * s' + b') + r) * rs is the epilogue acc * s + b + r * rs.
TEST(QuantScale, FoldedResidualScaleGivesTheSameEpilogue) {
  const std::vector<float> scale{0.5f, 0.02f}, bias{1.0f, -3.0f};
  const double rs = 0.25;
  const FoldedEpilogue f = fold_residual_scale(scale, bias, rs);
  for (std::size_t k = 0; k < scale.size(); ++k) {
    const double acc = 117, r = -9;
    EXPECT_NEAR(((acc * f.scale[k] + f.bias[k]) + r) * rs, epilogue(acc, scale[k], bias[k], true, r, rs, false), 1e-5);
  }
  EXPECT_THROW(fold_residual_scale(scale, bias, 0.0), Error);
  EXPECT_THROW(fold_residual_scale(scale, {1.0f}, 1.0), Error);
}

TEST(QuantScale, Int8RoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(quantize_int8(2.5), 2);
  EXPECT_EQ(quantize_int8(3.5), 4);
  EXPECT_EQ(quantize_int8(-2.5), -2);
  EXPECT_EQ(quantize_int8(-2.6), -3);
  EXPECT_EQ(quantize_int8(126.7), 127);
  EXPECT_EQ(quantize_int8(200), 127);
  EXPECT_EQ(quantize_int8(-1e9), -128);
  EXPECT_EQ(quantize_int8(NAN), 0);
}

TEST(QuantScale, E4m3EncodesKnownValues) {
  EXPECT_EQ(encode_e4m3(1.0), 0x38);
  EXPECT_EQ(encode_e4m3(-2.0), 0xc0);
  EXPECT_EQ(encode_e4m3(448.0), 0x7e);
  EXPECT_EQ(encode_e4m3(1e6), 0x7e);  // saturates
  EXPECT_EQ(encode_e4m3(-1e6), 0xfe);
  EXPECT_EQ(encode_e4m3(std::ldexp(1.0, -9)), 0x01);  // the smallest subnormal
  EXPECT_EQ(encode_e4m3(std::ldexp(1.0, -6)), 0x08);  // the smallest normal
  EXPECT_EQ(encode_e4m3(1.0625), 0x38);               // a tie between 1 and 1.125: to even
  EXPECT_EQ(encode_e4m3(1.1875), 0x3a);               // a tie between 1.125 and 1.25: to even
  EXPECT_EQ(encode_e4m3(15.9), 0x58);                 // rounds up into the next binade: 16
  EXPECT_EQ(encode_e4m3(-0.0), 0x80);
  EXPECT_EQ(encode_e4m3(NAN), 0x7f);
  EXPECT_EQ(decode_e4m3(0x7e), 448.0);
  EXPECT_EQ(decode_e4m3(0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(decode_e4m3(0xff)));
}

// Every finite code decodes to a value that encodes back to it, and steps are the gaps between them.
TEST(QuantScale, E4m3RoundTripsEveryCode) {
  for (int b = 0; b < 256; ++b) {
    const auto bits = static_cast<std::uint8_t>(b);
    if ((b & 0x7f) == 0x7f) continue;  // NaN
    EXPECT_EQ(encode_e4m3(decode_e4m3(bits)), bits) << b;
    if ((b & 0x7f) < 0x7e && (b & 0x7f) != 0) {
      EXPECT_EQ(std::fabs(decode_e4m3(static_cast<std::uint8_t>(b + 1)) - decode_e4m3(bits)),
                e4m3_step(decode_e4m3(bits)))
          << b;
    }
  }
  EXPECT_EQ(decode(QuantFormat::kInt8, 0xff), -1.0);
  EXPECT_EQ(decode(QuantFormat::kE4M3, 0x38), 1.0);
}

}  // namespace
}  // namespace scalebench::gpu
