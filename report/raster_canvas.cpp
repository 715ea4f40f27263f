#include "report/raster_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/error.hpp"
#include "report/bitmap_font.hpp"

namespace scalebench {

namespace {

constexpr double kDash = 6, kGap = 4;  // the SVG page's stroke-dasharray="6 4"

bool finite(Point2 p) { return std::isfinite(p.x) && std::isfinite(p.y); }
double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// Pieces of a dashed polyline that are inked: the pattern runs on along the whole line, so a
// dash that reaches a corner goes round it, as SVG's does.
std::vector<std::vector<Point2>> dash_runs(const std::vector<Point2>& points) {
  std::vector<std::vector<Point2>> runs;
  std::vector<Point2> run;
  double pos = 0;  // where in the 10 px pattern the pen is
  for (std::size_t i = 1; i < points.size(); ++i) {
    const Point2 a = points[i - 1], b = points[i];
    const double len = std::hypot(b.x - a.x, b.y - a.y);
    if (len <= 0) continue;
    auto at = [&](double d) { return Point2{a.x + (b.x - a.x) * d / len, a.y + (b.y - a.y) * d / len}; };
    double done = 0;
    while (done < len) {
      const bool on = pos < kDash;
      const double step = std::min(len - done, (on ? kDash : kDash + kGap) - pos);
      if (on) {
        if (run.empty()) run.push_back(at(done));
        run.push_back(at(done + step));
      }
      done += step;
      pos += step;
      // Tolerances keep rounding from leaving a zero-length step (and the loop) behind.
      if (on && pos >= kDash - 1e-9) {
        pos = kDash;
        runs.push_back(std::move(run));
        run.clear();
      }
      if (pos >= kDash + kGap - 1e-9) pos = 0;
    }
  }
  if (run.size() >= 2) runs.push_back(std::move(run));
  return runs;
}

}  // namespace

// How much of each pixel in a box one shape covers (0..1), so that a shape made of parts (a
// polyline's segments and joins, a string's glyph cells) blends once: overlaps do not darken.
struct RasterCanvas::Coverage {
  int x0, y0, x1, y1;  // half-open, inside the canvas
  std::vector<float> v;

  // The box around [x0, x1] x [y0, y1] (in px), cut to a width x height canvas.
  Coverage(double fx0, double fy0, double fx1, double fy1, int width, int height) {
    x0 = static_cast<int>(std::floor(std::clamp(fx0, 0.0, double(width))));
    y0 = static_cast<int>(std::floor(std::clamp(fy0, 0.0, double(height))));
    x1 = static_cast<int>(std::ceil(std::clamp(fx1, 0.0, double(width))));
    y1 = static_cast<int>(std::ceil(std::clamp(fy1, 0.0, double(height))));
    x1 = std::max(x1, x0);
    y1 = std::max(y1, y0);
    v.assign(static_cast<std::size_t>(x1 - x0) * (y1 - y0), 0.f);
  }
  bool empty() const { return v.empty(); }
  float& at(int x, int y) { return v[static_cast<std::size_t>(y - y0) * (x1 - x0) + (x - x0)]; }
  float at(int x, int y) const { return v[static_cast<std::size_t>(y - y0) * (x1 - x0) + (x - x0)]; }
  void keep_max(int x, int y, double c) {
    float& p = at(x, y);
    p = std::max(p, static_cast<float>(c));
  }

  // Pixels of this box within `pad` of [ax, bx] x [ay, by], as a loop over (x, y).
  template <typename F>
  void each(double ax, double ay, double bx, double by, double pad, F f) {
    const int px0 = std::max(x0, static_cast<int>(std::floor(std::max(std::min(ax, bx) - pad, double(x0)))));
    const int py0 = std::max(y0, static_cast<int>(std::floor(std::max(std::min(ay, by) - pad, double(y0)))));
    const int px1 = std::min(x1, static_cast<int>(std::ceil(std::min(std::max(ax, bx) + pad, double(x1)))));
    const int py1 = std::min(y1, static_cast<int>(std::ceil(std::min(std::max(ay, by) + pad, double(y1)))));
    for (int y = py0; y < py1; ++y)
      for (int x = px0; x < px1; ++x) f(x, y);
  }

  // A stroke segment of half-width hw. A cap end (an end of the run) is butt and shaded over
  // half a pixel either side; an inner end stops sharply at the corner, where the next segment
  // and the round join take over, so that a straight run shows no seam.
  void segment(Point2 a, Point2 b, double hw, double peak, bool cap_a, bool cap_b) {
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len <= 0) return;
    const double ux = dx / len, uy = dy / len;
    each(a.x, a.y, b.x, b.y, hw + 1, [&](int x, int y) {
      const double px = x + 0.5 - a.x, py = y + 0.5 - a.y;
      const double t = px * ux + py * uy, across = std::abs(px * uy - py * ux);
      const double side = std::clamp(hw + 0.5 - across, 0.0, peak);
      if (side <= 0) return;
      const double from_a = cap_a ? clamp01(t + 0.5) : (t >= 0 ? 1 : 0);
      const double from_b = cap_b ? clamp01(len - t + 0.5) : (t <= len ? 1 : 0);
      double along = from_a * from_b;
      if (cap_a && cap_b) along = std::min(along, len);
      keep_max(x, y, side * along);
    });
  }

  // A filled disc, its edge shaded over a pixel; `peak` caps the centre (thin or small shapes).
  void disc(Point2 c, double r, double peak) {
    each(c.x, c.y, c.x, c.y, r + 1, [&](int x, int y) {
      const double d = std::hypot(x + 0.5 - c.x, y + 0.5 - c.y);
      keep_max(x, y, std::clamp(r + 0.5 - d, 0.0, peak));
    });
  }

  // Adds the area of [rx0, rx1] x [ry0, ry1] that falls in each pixel (parts that tile add up).
  void add_rect(double rx0, double ry0, double rx1, double ry1) {
    each(rx0, ry0, rx1, ry1, 0, [&](int x, int y) {
      const double w = std::min<double>(x + 1, rx1) - std::max<double>(x, rx0);
      const double h = std::min<double>(y + 1, ry1) - std::max<double>(y, ry0);
      if (w > 0 && h > 0) at(x, y) += static_cast<float>(w * h);
    });
  }
};

RasterCanvas::RasterCanvas(int width, int height) : width_(width), height_(height) {
  if (width <= 0 || height <= 0)
    throw Error("raster canvas: size must be positive, not " + std::to_string(width) + "x" + std::to_string(height));
  rgba_.assign(static_cast<std::size_t>(width) * height * 4, 255);
}

Color RasterCanvas::pixel(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_)
    throw Error("raster canvas: pixel (" + std::to_string(x) + ", " + std::to_string(y) + ") is outside the " +
                std::to_string(width_) + "x" + std::to_string(height_) + " image");
  const std::uint8_t* p = &rgba_[(static_cast<std::size_t>(y) * width_ + x) * 4];
  return Color{p[0], p[1], p[2], p[3]};
}

// Source-over compositing of c, its alpha scaled by coverage.
void RasterCanvas::blend(int x, int y, Color c, double coverage) {
  const double a = c.a / 255.0 * clamp01(coverage);
  if (a <= 0) return;
  std::uint8_t* p = &rgba_[(static_cast<std::size_t>(y) * width_ + x) * 4];
  const double da = p[3] / 255.0 * (1 - a), out = a + da;
  const std::uint8_t src[3] = {c.r, c.g, c.b};
  for (int k = 0; k < 3; ++k) p[k] = static_cast<std::uint8_t>(std::lround((src[k] * a + p[k] * da) / out));
  p[3] = static_cast<std::uint8_t>(std::lround(out * 255));
}

void RasterCanvas::paint(const Coverage& cov, Color c) {
  for (int y = cov.y0; y < cov.y1; ++y)
    for (int x = cov.x0; x < cov.x1; ++x) blend(x, y, c, cov.at(x, y));
}

void RasterCanvas::polyline(const std::vector<Point2>& points, const Stroke& stroke) {
  if (points.size() < 2 || !(stroke.width > 0) || stroke.color.a == 0) return;
  if (!std::all_of(points.begin(), points.end(), finite)) return;
  std::vector<std::vector<Point2>> runs;
  if (stroke.dashed) {
    runs = dash_runs(points);
  } else {
    runs.emplace_back();
    for (const Point2& p : points)
      if (runs[0].empty() || p.x != runs[0].back().x || p.y != runs[0].back().y) runs[0].push_back(p);
  }
  const double hw = stroke.width / 2, pad = hw + 1;
  double x0 = points[0].x, y0 = points[0].y, x1 = x0, y1 = y0;
  for (const Point2& p : points) {
    x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
  }
  Coverage cov(x0 - pad, y0 - pad, x1 + pad, y1 + pad, width_, height_);
  if (cov.empty()) return;
  // A line thinner than a pixel shades its pixels by its width rather than drawing them solid.
  const double peak = std::min(1.0, stroke.width);
  for (const auto& run : runs) {
    for (std::size_t i = 1; i < run.size(); ++i) cov.segment(run[i - 1], run[i], hw, peak, i == 1, i + 1 == run.size());
    for (std::size_t i = 1; i + 1 < run.size(); ++i) cov.disc(run[i], hw, peak);  // round joins
  }
  paint(cov, stroke.color);
}

void RasterCanvas::fill_rect(double x, double y, double w, double h, Color fill) {
  if (!(w > 0) || !(h > 0) || !std::isfinite(x + y + w + h) || fill.a == 0) return;
  Coverage cov(x, y, x + w, y + h, width_, height_);
  if (cov.empty()) return;
  cov.add_rect(x, y, x + w, y + h);
  paint(cov, fill);
}

void RasterCanvas::circle(Point2 c, double radius, Color fill) {
  if (!(radius > 0) || !finite(c) || fill.a == 0) return;
  Coverage cov(c.x - radius - 1, c.y - radius - 1, c.x + radius + 1, c.y + radius + 1, width_, height_);
  if (cov.empty()) return;
  // A disc smaller than a pixel shades it by its area.
  cov.disc(c, radius, std::min(1.0, std::numbers::pi * radius * radius));
  paint(cov, fill);
}

void RasterCanvas::text(double x, double y, const std::string& s, double size, TextAnchor anchor, Color color,
                        bool vertical) {
  if (s.empty() || !(size > 0) || !std::isfinite(x + y + size) || color.a == 0) return;
  const std::u32string cps = decode_utf8(s);
  const double cell = size / kGlyphCellsPerEm;
  const double w = text_cells(cps) * cell;
  const double shift = anchor == TextAnchor::kStart ? 0 : anchor == TextAnchor::kMiddle ? w / 2 : w;
  // Text space: u along the baseline from the pen's start, v down from the baseline; vertical
  // text turns it a quarter counter-clockwise, u going up the page. The start is snapped to a
  // whole pixel, so at whole-pixel cell sizes (10 px, 20 px) every cell lands on pixels.
  const double ox = std::round(vertical ? x : x - shift), oy = std::round(vertical ? y + shift : y);
  const double up = kGlyphAscent * cell, down = (kGlyphRows - kGlyphAscent) * cell;
  Coverage cov = vertical ? Coverage(ox - up - 1, oy - w - 1, ox + down + 1, oy + 1, width_, height_)
                          : Coverage(ox - 1, oy - up - 1, ox + w + 1, oy + down + 1, width_, height_);
  if (cov.empty()) return;
  // Just above 1 px a cell, box filtering would smear every 1 px stroke over two pixels and
  // turn small labels grey. There cell edges snap to pixels instead (cell k starts at
  // round(k * cell)) and a stroke that ends in a cell stays 1 px thick, so that the odd 2 px
  // cell does not make one stem twice as heavy as the next. Larger text is box filtered.
  const bool snap = cell > 1 && cell < 1.25;
  auto edge = [&](int k) { return snap ? std::round(k * cell) : k * cell; };
  auto inked = [](const Glyph& g, int r, int c) {
    return r >= 0 && r < kGlyphRows && c >= g.left && c < g.left + g.width &&
           (g.rows[r] >> (kGlyphColumns - 1 - c) & 1);
  };
  int pen = 0;  // in cells: advances are whole cells
  for (char32_t cp : cps) {
    const Glyph& g = glyph(cp);
    for (int r = 0; r < kGlyphRows; ++r) {
      const double v0 = edge(r - kGlyphAscent);
      for (int c = g.left; c < g.left + g.width; ++c) {
        if (!inked(g, r, c)) continue;
        const int k = pen + c - g.left;
        const double u0 = edge(k), u1 = snap && !inked(g, r, c + 1) ? u0 + 1 : edge(k + 1);
        const double v1 = snap && !inked(g, r + 1, c) ? v0 + 1 : edge(r + 1 - kGlyphAscent);
        if (vertical)
          cov.add_rect(ox + v0, oy - u1, ox + v1, oy - u0);
        else
          cov.add_rect(ox + u0, oy + v0, ox + u1, oy + v1);
      }
    }
    pen += g.width + 1;
  }
  paint(cov, color);
}

}  // namespace scalebench
