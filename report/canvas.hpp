#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench {

// An sRGB colour with alpha (255 = opaque).
struct Color {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
};

struct Point2 {
  double x = 0, y = 0;
};

enum class TextAnchor { kStart, kMiddle, kEnd };

struct Stroke {
  Color color;
  double width = 1;
  bool dashed = false;  // dashes of 6 px with gaps of 4 px
};

// What a chart draws on: the drawing calls become SVG for the HTML page, and the PNG copy is that
// SVG rendered (report/svg_png.hpp), so both pictures of a chart agree. Coordinates are pixels,
// y downwards, origin top left.
class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void polyline(const std::vector<Point2>& points, const Stroke& stroke) = 0;
  virtual void fill_rect(double x, double y, double w, double h, Color fill) = 0;
  virtual void circle(Point2 centre, double radius, Color fill) = 0;
  // Text with its baseline at y; `vertical` turns it 90 degrees counter-clockwise around (x, y).
  virtual void text(double x, double y, const std::string& s, double size, TextAnchor anchor, Color color,
                    bool vertical = false) = 0;

  void line(Point2 a, Point2 b, const Stroke& stroke) { polyline({a, b}, stroke); }
};

}  // namespace scalebench
