#pragma once
#include <sstream>
#include <string>

#include "report/canvas.hpp"

namespace scalebench {

// A Canvas that writes an SVG 1.1 document: shapes become <polyline>, <rect>, <circle>, <text>.
class SvgCanvas : public Canvas {
 public:
  SvgCanvas(int width, int height, const std::string& title);
  void polyline(const std::vector<Point2>& points, const Stroke& stroke) override;
  void fill_rect(double x, double y, double w, double h, Color fill) override;
  void circle(Point2 centre, double radius, Color fill) override;
  void text(double x, double y, const std::string& s, double size, TextAnchor anchor, Color color,
            bool vertical = false) override;
  // The finished document (the root <svg> element with an XML-safe <title>).
  std::string str() const;

 private:
  int width_, height_;
  std::string title_;
  std::ostringstream body_;
};

// "#rrggbb" (alpha left out), as the SVG and the page's script write colours.
std::string hex_colour(Color c);

// Text made safe inside XML/HTML element content and attribute values.
std::string xml_escape(const std::string& s);

}  // namespace scalebench
