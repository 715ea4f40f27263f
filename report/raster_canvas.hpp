#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "report/canvas.hpp"

namespace scalebench {

// A Canvas that paints pixels: an RGBA8 image, opaque white to start with, drawn with
// anti-aliased edges and the built-in bitmap font (report/bitmap_font.hpp). Pixel (x, y) covers
// [x, x+1) x [y, y+1), as in SVG, so a 1 px line along y = 10 shades rows 9 and 10 by half;
// draw it along y = 10.5 to fill row 10 only. Colours blend in sRGB, as browsers blend the SVG.
class RasterCanvas : public Canvas {
 public:
  RasterCanvas(int width, int height);
  void polyline(const std::vector<Point2>& points, const Stroke& stroke) override;
  void fill_rect(double x, double y, double w, double h, Color fill) override;
  void circle(Point2 centre, double radius, Color fill) override;
  void text(double x, double y, const std::string& s, double size, TextAnchor anchor, Color color,
            bool vertical = false) override;

  int width() const { return width_; }
  int height() const { return height_; }
  Color pixel(int x, int y) const;
  // Rows top to bottom, 4 bytes a pixel (r, g, b, a).
  const std::vector<std::uint8_t>& rgba() const { return rgba_; }

 private:
  struct Coverage;
  void blend(int x, int y, Color c, double coverage);
  void paint(const Coverage& cov, Color c);

  int width_, height_;
  std::vector<std::uint8_t> rgba_;
};

}  // namespace scalebench
