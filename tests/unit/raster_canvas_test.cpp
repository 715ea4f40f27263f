#include "report/raster_canvas.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/error.hpp"
#include "report/bitmap_font.hpp"
#include "report/png.hpp"

namespace scalebench {
namespace {

const Color kBlack{0, 0, 0, 255};
const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

// --- A small PNG reader of its own, so that the encoder is checked against the format rather
// than against itself: signature, chunk CRCs, IHDR, inflated IDAT, all five row filters.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};

std::uint32_t be32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s.at(at + i));
  return v;
}

Image decode_png(const std::string& png) {
  if (png.compare(0, 8, kPngSignature) != 0) throw std::runtime_error("no PNG signature");
  Image img;
  std::string idat;
  bool header = false, end = false;
  std::size_t pos = 8;
  while (!end) {
    if (pos + 12 > png.size()) throw std::runtime_error("truncated chunk at " + std::to_string(pos));
    const std::uint32_t len = be32(png, pos);
    const std::string type = png.substr(pos + 4, 4);
    if (pos + 12 + len > png.size()) throw std::runtime_error("chunk " + type + " runs past the end");
    const std::string data = png.substr(pos + 8, len);
    const auto* bytes = reinterpret_cast<const Bytef*>(png.data() + pos + 4);
    if (crc32(crc32(0L, Z_NULL, 0), bytes, len + 4) != be32(png, pos + 8 + len))
      throw std::runtime_error("bad CRC in " + type);
    if (!header && type != "IHDR") throw std::runtime_error("first chunk is " + type);
    if (type == "IHDR") {
      if (len != 13) throw std::runtime_error("IHDR length");
      img.width = static_cast<int>(be32(data, 0));
      img.height = static_cast<int>(be32(data, 4));
      if (data.substr(8) != std::string("\x08\x06\x00\x00\x00", 5))
        throw std::runtime_error("not 8-bit RGBA, deflate, standard filters, no interlace");
      header = true;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      end = true;
    }
    pos += 12 + len;
  }
  if (pos != png.size()) throw std::runtime_error("bytes after IEND");
  const std::size_t stride = static_cast<std::size_t>(img.width) * 4;
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size())
    throw std::runtime_error("IDAT does not inflate to the image's size");
  img.rgba.resize(stride * img.height);
  for (int y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* in = &raw[y * (stride + 1) + 1];
    std::uint8_t* out = &img.rgba[y * stride];
    const std::uint8_t* up = y ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= 4 ? out[i - 4] : 0, b = up ? up[i] : 0, c = up && i >= 4 ? up[i - 4] : 0;
      const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
      int pred = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4:
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        default:
          throw std::runtime_error("unknown filter " + std::to_string(filter));
      }
      out[i] = static_cast<std::uint8_t>(in[i] + pred);
    }
  }
  return img;
}

std::vector<int> filters_used(const std::string& png) {
  const Image img = decode_png(png);
  // Re-inflate to read the filter bytes themselves.
  std::string idat;
  for (std::size_t pos = 8; pos < png.size(); pos += 12 + be32(png, pos))
    if (png.substr(pos + 4, 4) == "IDAT") idat += png.substr(pos + 8, be32(png, pos));
  const std::size_t stride = static_cast<std::size_t>(img.width) * 4 + 1;
  std::vector<std::uint8_t> raw(stride * img.height);
  uLongf n = raw.size();
  uncompress(raw.data(), &n, reinterpret_cast<const Bytef*>(idat.data()), idat.size());
  std::vector<int> used(5, 0);
  for (int y = 0; y < img.height; ++y) ++used.at(raw[y * stride]);
  return used;
}

bool dark(Color c) { return c.r < 96 && c.g < 96 && c.b < 96; }
bool white(Color c) { return c.r == 255 && c.g == 255 && c.b == 255 && c.a == 255; }

struct Box {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;  // inclusive; x1 < x0 when nothing is inked
  bool empty() const { return x1 < x0; }
};

// The bounding box of every pixel that is not white.
Box ink(const RasterCanvas& c) {
  Box b;
  for (int y = 0; y < c.height(); ++y)
    for (int x = 0; x < c.width(); ++x)
      if (!white(c.pixel(x, y))) b = {std::min(b.x0, x), std::min(b.y0, y), std::max(b.x1, x), std::max(b.y1, y)};
  return b;
}

std::vector<std::uint8_t> row_of(const RasterCanvas& c, int y) {
  auto begin = c.rgba().begin() + static_cast<std::ptrdiff_t>(y) * c.width() * 4;
  return {begin, begin + c.width() * 4};
}

// --- PNG

TEST(Png, RoundTripsEveryPixelThroughAnIndependentReader) {
  // Gradients, noise and flat runs, so that rows pick different filters.
  const int w = 37, h = 23;
  std::vector<std::uint8_t> rgba(w * h * 4);
  unsigned seed = 12345;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = &rgba[(y * w + x) * 4];
      seed = seed * 1103515245 + 12345;
      if (y % 3 == 0) {
        p[0] = static_cast<std::uint8_t>(x * 7), p[1] = static_cast<std::uint8_t>(y * 11), p[2] = 200, p[3] = 255;
      } else if (y % 3 == 1) {
        for (int k = 0; k < 4; ++k) p[k] = static_cast<std::uint8_t>(seed >> (8 + 4 * k));
      } else {
        p[0] = p[1] = p[2] = static_cast<std::uint8_t>(x * y), p[3] = static_cast<std::uint8_t>(255 - x);
      }
    }
  const std::string png = encode_png(w, h, rgba);
  const Image back = decode_png(png);
  EXPECT_EQ(back.width, w);
  EXPECT_EQ(back.height, h);
  EXPECT_EQ(back.rgba, rgba);
  const std::vector<int> used = filters_used(png);
  int kinds = 0;
  for (int n : used) kinds += n > 0;
  EXPECT_GE(kinds, 2) << "each row chooses its own filter";
}

TEST(Png, ChunksAreSignatureHeaderDataEnd) {
  const std::string png = encode_png(2, 1, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(png.substr(0, 8), kPngSignature);
  EXPECT_EQ(be32(png, 8), 13u);
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), 2u);
  EXPECT_EQ(be32(png, 20), 1u);
  EXPECT_EQ(png.substr(png.size() - 12), std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12));
}

TEST(Png, CorruptedByteFailsTheCrc) {
  std::string png = encode_png(1, 1, {9, 9, 9, 255});
  png[20] ^= 1;  // inside IHDR's width
  EXPECT_THROW(decode_png(png), std::runtime_error) << "the reader checks CRCs, so the round trip checks them too";
}

TEST(Png, RejectsAPixelBufferOfTheWrongSize) {
  EXPECT_THROW(encode_png(2, 2, std::vector<std::uint8_t>(15)), Error);
  EXPECT_THROW(encode_png(0, 2, {}), Error);
}

TEST(Png, WritesTheFileAndNamesThePathWhenItCannot) {
  RasterCanvas c(8, 4);
  c.fill_rect(0, 0, 4, 4, Color{10, 20, 30, 255});
  const auto path =
      std::filesystem::temp_directory_path() / ("raster_canvas_test_" + std::to_string(::getpid()) + ".png");
  write_png(path.string(), c);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_EQ(bytes, encode_png(c));
  EXPECT_EQ(decode_png(bytes).rgba, c.rgba());

  const std::string bad = "/nonexistent-dir-for-raster-test/chart.png";
  try {
    write_png(bad, c);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

// --- Canvas basics

TEST(RasterCanvas, StartsWhiteAndOpaque) {
  RasterCanvas c(5, 3);
  EXPECT_EQ(c.width(), 5);
  EXPECT_EQ(c.height(), 3);
  EXPECT_EQ(c.rgba().size(), 5u * 3 * 4);
  EXPECT_TRUE(ink(c).empty());
  EXPECT_THROW(c.pixel(5, 0), Error);
  EXPECT_THROW(RasterCanvas(0, 3), Error);
}

TEST(RasterCanvas, HalfAlphaGivesTheMidColour) {
  RasterCanvas c(4, 4);
  c.fill_rect(0, 0, 2, 4, Color{0, 0, 0, 128});  // black at 128/255 over white
  c.fill_rect(2, 0, 2, 4, Color{0, 0, 255, 255});
  c.fill_rect(2, 0, 2, 4, Color{255, 0, 0, 128});  // red over blue
  const Color grey = c.pixel(0, 0), mix = c.pixel(3, 3);
  EXPECT_NEAR(grey.r, 127, 1);
  EXPECT_EQ(grey.r, grey.g);
  EXPECT_EQ(grey.a, 255);
  EXPECT_NEAR(mix.r, 128, 1);
  EXPECT_EQ(mix.g, 0);
  EXPECT_NEAR(mix.b, 127, 1);
}

TEST(RasterCanvas, FillRectShadesPartlyCoveredPixels) {
  RasterCanvas c(30, 10);
  c.fill_rect(10.5, 2, 10, 5, kBlack);  // x from 10.5 to 20.5
  EXPECT_NEAR(c.pixel(10, 4).r, 128, 1);
  EXPECT_EQ(c.pixel(15, 4).r, 0);
  EXPECT_NEAR(c.pixel(20, 4).r, 128, 1);
  EXPECT_TRUE(white(c.pixel(21, 4)));
  EXPECT_TRUE(white(c.pixel(15, 7)));
  EXPECT_TRUE(white(c.pixel(15, 1)));
}

TEST(RasterCanvas, DrawingPastTheEdgesIsClipped) {
  RasterCanvas c(20, 20);
  c.line({-100, -100}, {1000, 1000}, Stroke{kBlack, 3});
  c.circle({25, 10}, 8, kBlack);
  c.fill_rect(-5, -5, 8, 8, kBlack);
  c.text(15, 10, "clipped text", 12, TextAnchor::kStart, kBlack);
  EXPECT_TRUE(dark(c.pixel(10, 10)));
  EXPECT_TRUE(dark(c.pixel(19, 10)));
  EXPECT_TRUE(dark(c.pixel(0, 0)));
}

// --- Lines

TEST(RasterCanvas, HorizontalLineIsDarkOnItsRowAndWhiteAwayFromIt) {
  RasterCanvas c(60, 30);
  c.line({5, 10.5}, {50, 10.5}, Stroke{kBlack, 1});  // centred on row 10
  EXPECT_EQ(c.pixel(20, 10).r, 0);
  EXPECT_TRUE(white(c.pixel(20, 9)));
  EXPECT_TRUE(white(c.pixel(20, 11)));
  EXPECT_TRUE(white(c.pixel(20, 25)));
  EXPECT_TRUE(white(c.pixel(55, 10)));
  EXPECT_TRUE(white(c.pixel(3, 10)));

  // On a pixel boundary a 1 px line shades the rows either side by half, as in the SVG.
  c.line({5, 20}, {50, 20}, Stroke{kBlack, 1});
  EXPECT_NEAR(c.pixel(20, 19).r, 128, 1);
  EXPECT_NEAR(c.pixel(20, 20).r, 128, 1);
}

TEST(RasterCanvas, WideLinesCoverTheirWidth) {
  RasterCanvas c(60, 30);
  c.line({5, 15}, {50, 15}, Stroke{kBlack, 4});  // rows 13 to 16
  for (int y = 13; y <= 16; ++y) EXPECT_EQ(c.pixel(30, y).r, 0) << y;
  EXPECT_TRUE(white(c.pixel(30, 12)));
  EXPECT_TRUE(white(c.pixel(30, 17)));
}

TEST(RasterCanvas, DiagonalLinesAreAntiAliased) {
  RasterCanvas c(50, 50);
  c.line({0, 0}, {50, 50}, Stroke{kBlack, 1.5});
  EXPECT_TRUE(dark(c.pixel(20, 20)));
  EXPECT_TRUE(white(c.pixel(20, 25)));
  EXPECT_TRUE(white(c.pixel(25, 20)));
  int partial = 0;
  for (int x = 0; x < 50; ++x) partial += c.pixel(x, 21).r > 30 && c.pixel(x, 21).r < 225;
  EXPECT_GE(partial, 2) << "edge pixels take intermediate shades";
}

TEST(RasterCanvas, TranslucentPolylineDoesNotDarkenWhereItOverlapsItself) {
  RasterCanvas c(80, 40);
  c.polyline({{10, 20.5}, {60, 20.5}, {10, 20.5}}, Stroke{Color{0, 0, 0, 128}, 3});
  EXPECT_NEAR(c.pixel(30, 20).r, 127, 1);
  EXPECT_NEAR(c.pixel(60, 20).r, 127, 1) << "the round join is blended once too";
}

TEST(RasterCanvas, CornersHaveNoNotch) {
  RasterCanvas c(60, 60);
  c.polyline({{10, 50}, {30, 10}, {50, 50}}, Stroke{kBlack, 6});
  // Just above the apex, where butt ends alone would leave a gap, the round join fills in.
  EXPECT_TRUE(dark(c.pixel(29, 8)));
  EXPECT_TRUE(dark(c.pixel(30, 8)));
}

TEST(RasterCanvas, DashesAreSixOnFourOff) {
  RasterCanvas c(100, 20);
  c.line({0, 10.5}, {100, 10.5}, Stroke{kBlack, 1, true});
  for (int x = 0; x < 100; ++x) {
    const bool on = x % 10 < 6;
    EXPECT_EQ(c.pixel(x, 10).r, on ? 0 : 255) << "x = " << x;
  }
}

TEST(RasterCanvas, DashPatternCarriesOnAcrossPolylineVertices) {
  RasterCanvas one(100, 20), many(100, 20), solid(100, 20);
  one.line({0, 10.5}, {100, 10.5}, Stroke{kBlack, 1, true});
  std::vector<Point2> pts;
  for (int x = 0; x <= 100; x += 4) pts.push_back({double(x), 10.5});  // vertices mid-dash and mid-gap
  many.polyline(pts, Stroke{kBlack, 1, true});
  for (int y = 8; y <= 12; ++y) EXPECT_EQ(row_of(many, y), row_of(one, y)) << "row " << y;
  solid.polyline(pts, Stroke{kBlack, 1, false});
  EXPECT_NE(row_of(solid, 10), row_of(one, 10));
}

// --- Circles

TEST(RasterCanvas, CircleCoversItsCentreAndNothingOutside) {
  RasterCanvas c(60, 60);
  c.circle({30, 30}, 10, Color{200, 0, 0, 255});
  EXPECT_EQ(c.pixel(30, 30).r, 200);
  EXPECT_EQ(c.pixel(30, 30).g, 0);
  EXPECT_EQ(c.pixel(36, 36).g, 0);  // 9.2 px from the centre
  EXPECT_TRUE(white(c.pixel(41, 30)));
  EXPECT_TRUE(white(c.pixel(37, 37)));  // 10.6 px out
  const Box b = ink(c);
  EXPECT_EQ(b.x0, 20);
  EXPECT_EQ(b.x1, 39);
  EXPECT_EQ(b.y0, 20);
  EXPECT_EQ(b.y1, 39);
  const Color edge = c.pixel(36, 37);  // 9.9 px from the centre: partly inside
  EXPECT_GT(edge.g, 0);
  EXPECT_LT(edge.g, 255);

  RasterCanvas tiny(4, 4);
  tiny.circle({1.5, 1.5}, 0.2, kBlack);  // smaller than a pixel: shades by its area
  EXPECT_GT(tiny.pixel(1, 1).r, 200);
  EXPECT_LT(tiny.pixel(1, 1).r, 255);
}

// --- Text

TEST(BitmapFont, EveryPrintableAsciiCharacterHasItsOwnGlyph) {
  for (char32_t a = 33; a <= 126; ++a) {
    const Glyph& g = glyph(a);
    int inked = 0;
    for (std::uint8_t r : g.rows) inked += r != 0;
    EXPECT_GT(inked, 0) << "char " << int(a);
    EXPECT_NE(&g, &glyph(U'\uFFFD')) << "char " << int(a);
    for (char32_t b = 33; b < a; ++b)
      EXPECT_FALSE(std::equal(std::begin(g.rows), std::end(g.rows), std::begin(glyph(b).rows)))
          << "chars " << int(b) << " and " << int(a) << " look the same";
  }
}

TEST(BitmapFont, DecodesUtf8AndMarksBadBytes) {
  EXPECT_EQ(decode_utf8("\xc2\xb5s"), U"\u00b5s");
  EXPECT_EQ(decode_utf8("8\xc3\x97"), U"8\u00d7");
  EXPECT_EQ(decode_utf8("\xe2\x89\xa5"), U"\u2265");
  EXPECT_EQ(decode_utf8("\xf0\x9f\x98\x80"), U"\U0001F600");
  EXPECT_EQ(decode_utf8("a\xff"), U"a\uFFFD");
  EXPECT_EQ(decode_utf8("\xe2\x89"), U"\uFFFD\uFFFD");  // cut short
  EXPECT_EQ(decode_utf8("\xc0\xaf"), U"\uFFFD\uFFFD");  // overlong '/'
}

TEST(BitmapFont, MicroAndTimesHaveGlyphsOthersGetTheBox) {
  const Glyph& box = glyph(U'\uFFFD');
  EXPECT_NE(&glyph(U'\u00b5'), &box);
  EXPECT_NE(&glyph(U'\u00d7'), &box);
  EXPECT_NE(&glyph(U'\u2265'), &box);
  EXPECT_EQ(&glyph(U'\u20ac'), &box);  // the euro sign is not drawn

  RasterCanvas euro(30, 20), boxed(30, 20), invalid(30, 20);
  euro.text(5, 12, "\xe2\x82\xac", 10, TextAnchor::kStart, kBlack);
  boxed.text(5, 12, "\xef\xbf\xbd", 10, TextAnchor::kStart, kBlack);
  invalid.text(5, 12, "\xff", 10, TextAnchor::kStart, kBlack);
  EXPECT_FALSE(ink(euro).empty());
  EXPECT_EQ(euro.rgba(), boxed.rgba());
  EXPECT_EQ(invalid.rgba(), boxed.rgba());
}

TEST(RasterCanvas, TextSitsOnItsBaselineFromItsStart) {
  RasterCanvas c(120, 40);
  c.text(20, 30, "Hello", 10, TextAnchor::kStart, kBlack);
  const Box b = ink(c);
  const double w = text_width("Hello", 10);
  EXPECT_EQ(b.x0, 20);
  EXPECT_EQ(b.x1, 20 + static_cast<int>(w) - 1);
  EXPECT_EQ(b.y0, 23) << "capitals are 7 px at size 10";
  EXPECT_EQ(b.y1, 29) << "no descenders: the last inked row is just above the baseline";
  int black = 0;
  for (int y = b.y0; y <= b.y1; ++y)
    for (int x = b.x0; x <= b.x1; ++x) black += c.pixel(x, y).r == 0;
  EXPECT_GT(black, 30) << "at size 10 glyph cells are whole pixels";

  RasterCanvas d(120, 40);
  d.text(20, 20, "gyp", 10, TextAnchor::kStart, kBlack);
  EXPECT_EQ(ink(d).y1, 21) << "descenders go 2 px below";
}

TEST(RasterCanvas, AnchorsMoveTheTextBox) {
  const std::string s = "1.5 GB/s";
  RasterCanvas start(200, 30), middle(200, 30), end(200, 30);
  start.text(100, 20, s, 12, TextAnchor::kStart, kBlack);
  middle.text(100, 20, s, 12, TextAnchor::kMiddle, kBlack);
  end.text(100, 20, s, 12, TextAnchor::kEnd, kBlack);
  const Box bs = ink(start), bm = ink(middle), be = ink(end);
  const double w = text_width(s, 12);
  EXPECT_GT(w, 30);
  EXPECT_NEAR(bs.x0, 100, 1);
  EXPECT_NEAR(bs.x1 + 1, 100 + w, 1.5);
  EXPECT_NEAR((bm.x0 + bm.x1 + 1) / 2.0, 100, 1.5);
  EXPECT_NEAR(be.x1 + 1, 100, 1.5);
  EXPECT_NEAR(be.x0, 100 - w, 1.5);
  EXPECT_EQ(bs.y0, be.y0);
  EXPECT_EQ(bs.y1, bm.y1);
}

TEST(RasterCanvas, VerticalTextReadsUpwardsFromItsAnchor) {
  const std::string s = "Latency (\xc2\xb5s)";
  const double w = text_width(s, 10);
  RasterCanvas c(40, 120), m(40, 120);
  c.text(20, 100, s, 10, TextAnchor::kStart, kBlack, true);
  const Box b = ink(c);
  // Turned counter-clockwise about (20, 100): letters' tops face left, the text runs up.
  EXPECT_EQ(b.y1, 99);
  EXPECT_EQ(b.y0, 100 - static_cast<int>(w));
  EXPECT_EQ(b.x0, 13);
  EXPECT_EQ(b.x1, 21) << "the descender of the 'y' and 'µ' pass the baseline by 2 px";
  // The 'L' comes first, at the bottom: its stem is a run of 7 px along x at the lowest row.
  for (int x = 13; x < 20; ++x) EXPECT_EQ(c.pixel(x, 99).r, 0) << x;

  m.text(20, 60, s, 10, TextAnchor::kMiddle, kBlack, true);
  const Box bm = ink(m);
  EXPECT_NEAR((bm.y0 + bm.y1 + 1) / 2.0, 60, 1);
  EXPECT_EQ(bm.x0, b.x0);
}

TEST(RasterCanvas, TextScalesWithSize) {
  RasterCanvas small(200, 60), large(200, 60);
  small.text(10, 40, "HX", 10, TextAnchor::kStart, kBlack);
  large.text(10, 40, "HX", 20, TextAnchor::kStart, kBlack);
  const Box a = ink(small), b = ink(large);
  EXPECT_EQ(a.y1 - a.y0 + 1, 7);
  EXPECT_EQ(b.y1 - b.y0 + 1, 14);
  EXPECT_EQ(b.x1 - b.x0 + 1, 2 * (a.x1 - a.x0 + 1));
  EXPECT_DOUBLE_EQ(text_width("HX", 20), 2 * text_width("HX", 10));
}

TEST(RasterCanvas, SmallTextBetweenWholePixelSizesStaysSharp) {
  RasterCanvas c(200, 30);
  c.text(10.3, 20.4, "Throughput 1.5 GB/s", 11, TextAnchor::kStart, kBlack);
  int black = 0, grey = 0;
  for (int y = 0; y < c.height(); ++y)
    for (int x = 0; x < c.width(); ++x) {
      const int r = c.pixel(x, y).r;
      black += r == 0;
      grey += r > 0 && r < 255;
    }
  EXPECT_GT(black, 100);
  EXPECT_EQ(grey, 0) << "cells 1.1 px wide snap to pixels rather than blur";
}

// --- A chart-like scene, end to end

TEST(RasterCanvas, ChartSceneBecomesAPngFile) {
  RasterCanvas c(320, 200);
  const Color axis{51, 51, 51, 255}, grid{220, 220, 220, 255}, series{31, 119, 180, 255};
  for (int i = 0; i <= 4; ++i) {
    const double y = 160.5 - i * 35;
    c.line({50, y}, {300, y}, Stroke{grid, 1, true});
    c.text(45, y + 4, std::to_string(i * 25), 10, TextAnchor::kEnd, axis);
  }
  c.line({50.5, 20}, {50.5, 160}, Stroke{axis, 1});
  c.line({50, 160.5}, {300, 160.5}, Stroke{axis, 1});
  const std::vector<Point2> pts{{60, 150}, {120, 110}, {180, 80}, {240, 60}, {290, 52}};
  c.polyline(pts, Stroke{series, 2});
  for (Point2 p : pts) c.circle(p, 3, series);
  c.fill_rect(200, 100, 40, 30, Color{255, 127, 14, 90});
  c.text(175, 185, "GPUs (1\xc3\x97 to 8\xc3\x97)", 12, TextAnchor::kMiddle, axis);
  c.text(15, 90, "Latency (\xc2\xb5s)", 12, TextAnchor::kMiddle, axis, true);

  EXPECT_EQ(c.pixel(120, 110).b, series.b) << "a marker's centre";
  EXPECT_TRUE(white(c.pixel(300, 190)));

  const auto path = std::filesystem::temp_directory_path() / ("raster_scene_" + std::to_string(::getpid()) + ".png");
  write_png(path.string(), c);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), kPngSignature) << "what file(1) recognises as PNG image data";
  const Image img = decode_png(bytes);
  EXPECT_EQ(img.width, 320);
  EXPECT_EQ(img.height, 200);
  EXPECT_EQ(img.rgba, c.rgba());
  EXPECT_LT(bytes.size(), c.rgba().size() / 10) << "mostly white: it compresses";
}

}  // namespace
}  // namespace scalebench
