#ifdef SCALEBENCH_HAVE_PNG  // built with SCALEBENCH_PNG (the default)
#include "report/svg_png.hpp"

#include <cairo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "report/chart_render.hpp"
#include "report/report_model.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

// A PNG read back through cairo (not through the code under test), as rows of 0xAARRGGBB.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint32_t> pixels;
  std::uint32_t at(int x, int y) const { return pixels[static_cast<std::size_t>(y * width + x)]; }
};

struct PngReader {
  const std::string* png;
  std::size_t pos = 0;
};

cairo_status_t read_chunk(void* closure, unsigned char* data, unsigned int length) {
  auto* r = static_cast<PngReader*>(closure);
  if (r->pos + length > r->png->size()) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(data, r->png->data() + r->pos, length);
  r->pos += length;
  return CAIRO_STATUS_SUCCESS;
}

Image decode(const std::string& png) {
  PngReader reader{&png};
  const std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)> s(
      cairo_image_surface_create_from_png_stream(read_chunk, &reader), cairo_surface_destroy);
  EXPECT_EQ(cairo_surface_status(s.get()), CAIRO_STATUS_SUCCESS) << "not a PNG cairo reads";
  Image img;
  if (cairo_surface_status(s.get()) != CAIRO_STATUS_SUCCESS) return img;
  cairo_surface_flush(s.get());
  img.width = cairo_image_surface_get_width(s.get());
  img.height = cairo_image_surface_get_height(s.get());
  const int stride = cairo_image_surface_get_stride(s.get());
  const unsigned char* data = cairo_image_surface_get_data(s.get());
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      std::uint32_t p = 0;
      std::memcpy(&p, data + y * stride + 4 * x, 4);
      img.pixels.push_back(p);
    }
  return img;
}

// Pixels clearly darker than the white background: ink of text or lines.
struct Ink {
  int pixels = 0, left = 1 << 30, right = -1, top = 1 << 30, bottom = -1;
};
Ink ink_of(const Image& img, int x0 = 0, int y0 = 0, int x1 = -1, int y1 = -1) {
  if (x1 < 0) x1 = img.width;
  if (y1 < 0) y1 = img.height;
  Ink ink;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const std::uint32_t p = img.at(x, y);
      const int r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
      if (r + g + b > 3 * 160) continue;
      ++ink.pixels;
      ink.left = std::min(ink.left, x), ink.right = std::max(ink.right, x);
      ink.top = std::min(ink.top, y), ink.bottom = std::max(ink.bottom, y);
    }
  return ink;
}

std::string svg_with(const std::string& body, int width = 200, int height = 60) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
         std::to_string(height) + "\" font-family=\"DejaVu Sans, sans-serif\">" + body + "</svg>";
}

TEST(SvgPng, TextIsDrawnFromItsStartOnItsBaseline) {
  const Image img = decode(svg_to_png(svg_with("<text x=\"10\" y=\"40\" font-size=\"20\">Hello</text>")));
  ASSERT_EQ(img.width, 200);
  ASSERT_EQ(img.height, 60);
  const Ink ink = ink_of(img);
  EXPECT_GT(ink.pixels, 100) << "the glyphs of a real font, not a blank image";
  EXPECT_GE(ink.left, 10);
  EXPECT_LE(ink.left, 14);
  EXPECT_LE(ink.bottom, 40) << "no descender in Hello: nothing below the baseline";
  EXPECT_GE(ink.bottom, 38);
  EXPECT_LE(ink.top, 40 - 12) << "capital H stands about 0.73 em above the baseline";
  // The same SVG without the text is white throughout.
  EXPECT_EQ(ink_of(decode(svg_to_png(svg_with("")))).pixels, 0);
}

TEST(SvgPng, TextScalesWithItsSize) {
  const Ink small = ink_of(decode(svg_to_png(svg_with("<text x=\"5\" y=\"40\" font-size=\"10\">Scaling</text>"))));
  const Ink large = ink_of(decode(svg_to_png(svg_with("<text x=\"5\" y=\"40\" font-size=\"20\">Scaling</text>"))));
  const double w_small = small.right - small.left + 1, w_large = large.right - large.left + 1;
  EXPECT_NEAR(w_large / w_small, 2.0, 0.25);
  EXPECT_GT(large.pixels, 3 * small.pixels);
}

TEST(SvgPng, ChartBecomesAPngOfTheChartsSizeWithItsTitle) {
  Chart c;
  c.id = "busbw", c.title = "all_reduce float32: bus bandwidth";
  c.x_label = "size", c.y_label = "busbw (GB/s)";
  c.log_x = true, c.x_bytes = true;
  Series s;
  s.name = "nvlink · 8 GPUs";
  for (double x = 8; x <= 1 << 20; x *= 8) s.points.push_back({x, x / 4096, x / 4096, x / 4096});
  c.series.push_back(s);
  const std::string png = svg_to_png(chart_svg(c));
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), kPngSignature);
  const Image img = decode(png);
  EXPECT_EQ(img.width, kChartWidth);
  EXPECT_EQ(img.height, kChartHeight);
  EXPECT_GT(ink_of(img, 0, 0, kChartWidth, 40).pixels, 200) << "the title's text along the top";
  EXPECT_EQ(img.at(kChartWidth - 1, kChartHeight - 1) & 0xffffff, 0xffffffu) << "a white background";
}

TEST(SvgPng, MalformedSvgIsAnError) {
  try {
    svg_to_png("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SVG to PNG"), std::string::npos) << e.what();
  }
  EXPECT_THROW(svg_to_png("not an image"), Error);
}

TEST(SvgPng, WritesTheFileAndNamesThePathWhenItCannot) {
  const std::string svg = svg_with("<text x=\"10\" y=\"40\" font-size=\"20\">file</text>");
  const auto path = std::filesystem::temp_directory_path() / ("svg_png_test_" + std::to_string(::getpid()) + ".png");
  write_svg_as_png(path.string(), svg);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_EQ(bytes.substr(0, 8), kPngSignature);
  EXPECT_EQ(decode(bytes).width, 200);

  const std::string bad = "/nonexistent-dir-for-svg-png-test/chart.png";
  try {
    write_svg_as_png(bad, svg);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalebench

#endif  // SCALEBENCH_HAVE_PNG
