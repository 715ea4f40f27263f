#include "report/svg_canvas.hpp"

#include <cstdio>

namespace scalebench {

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
std::string opacity(Color c, const char* attr) {
  if (c.a == 255) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " %s=\"%.3f\"", attr, c.a / 255.0);
  return buf;
}
}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgCanvas::SvgCanvas(int width, int height, const std::string& title) : width_(width), height_(height), title_(title) {}

void SvgCanvas::polyline(const std::vector<Point2>& points, const Stroke& stroke) {
  if (points.size() < 2) return;
  body_ << "<polyline fill=\"none\" stroke=\"" << hex_colour(stroke.color) << "\""
        << opacity(stroke.color, "stroke-opacity") << " stroke-width=\"" << num(stroke.width) << "\""
        << (stroke.dashed ? " stroke-dasharray=\"6 4\"" : "") << " points=\"";
  for (std::size_t i = 0; i < points.size(); ++i)
    body_ << (i ? " " : "") << num(points[i].x) << "," << num(points[i].y);
  body_ << "\"/>\n";
}

void SvgCanvas::fill_rect(double x, double y, double w, double h, Color fill) {
  body_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h)
        << "\" fill=\"" << hex_colour(fill) << "\"" << opacity(fill, "fill-opacity") << "/>\n";
}

void SvgCanvas::circle(Point2 c, double radius, Color fill) {
  body_ << "<circle cx=\"" << num(c.x) << "\" cy=\"" << num(c.y) << "\" r=\"" << num(radius) << "\" fill=\""
        << hex_colour(fill) << "\"" << opacity(fill, "fill-opacity") << "/>\n";
}

void SvgCanvas::text(double x, double y, const std::string& s, double size, TextAnchor anchor, Color color,
                     bool vertical) {
  const char* a = anchor == TextAnchor::kStart ? "start" : anchor == TextAnchor::kMiddle ? "middle" : "end";
  body_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(size) << "\" text-anchor=\"" << a
        << "\" fill=\"" << hex_colour(color) << "\"";
  if (vertical) body_ << " transform=\"rotate(-90 " << num(x) << " " << num(y) << ")\"";
  body_ << ">" << xml_escape(s) << "</text>\n";
}

std::string SvgCanvas::str() const {
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width_ << "\" height=\"" << height_
      << "\" viewBox=\"0 0 " << width_ << " " << height_
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>" << xml_escape(title_)
      << "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << body_.str() << "</svg>\n";
  return out.str();
}

std::string hex_colour(Color c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

}  // namespace scalebench
