#include "report/chart_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/units.hpp"
#include "report/build_report.hpp"

namespace scalebench {

namespace {

// A palette that stays apart for the colour-blind (Okabe-Ito, then darker extras).
const Color kPalette[] = {{0, 114, 178}, {230, 159, 0},   {0, 158, 115},  {204, 121, 167}, {86, 180, 233},
                          {213, 94, 0},  {120, 120, 120}, {240, 228, 66}, {0, 0, 0},       {148, 103, 189}};
const Color kAxis{60, 60, 60}, kGrid{225, 225, 225}, kText{30, 30, 30}, kWarning{180, 30, 30};

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v, double p0, double p1) const {
    const double a = log ? std::log2(lo) : lo, b = log ? std::log2(hi) : hi;
    const double t = ((log ? std::log2(v) : v) - a) / (b - a);
    return p0 + t * (p1 - p0);
  }
};

// Round tick steps of 1, 2 or 5 x 10^k, about `want` of them.
std::vector<double> linear_ticks(double lo, double hi, int want) {
  const double raw = (hi - lo) / want;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

// Powers of two (or of ten for log y beyond a few decades) spaced so that at most ~9 show.
std::vector<double> log_ticks(double lo, double hi, bool base2) {
  std::vector<double> t;
  if (base2) {
    const int a = static_cast<int>(std::floor(std::log2(lo))), b = static_cast<int>(std::ceil(std::log2(hi)));
    const int stride = std::max(1, (b - a + 8) / 9);
    for (int e = a; e <= b; ++e)
      if ((e - a) % stride == 0 && std::ldexp(1.0, e) >= lo * 0.999 && std::ldexp(1.0, e) <= hi * 1.001)
        t.push_back(std::ldexp(1.0, e));
  } else {
    const int a = static_cast<int>(std::floor(std::log10(lo))), b = static_cast<int>(std::ceil(std::log10(hi)));
    for (int e = a; e <= b; ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * 0.999 && v <= hi * 1.001 && (b - a < 3 || m == 1.0)) t.push_back(v);
      }
  }
  return t;
}

std::string tick_label(double v, bool bytes) {
  if (bytes) return format_size(static_cast<std::uint64_t>(std::llround(v)));
  if (std::fabs(v) >= 1e6) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  std::string s = format_number(v);
  if (s.find('.') != std::string::npos) {  // 2.000 -> 2, 0.2500 -> 0.25
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

std::vector<Color> series_colours(const Chart& c) {
  std::vector<Color> out;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    // A series and its model or ideal line share a colour: match by the name before " model".
    std::size_t colour = i;
    for (std::size_t j = 0; j < i; ++j)
      if (s.colour_of.empty() ? !c.series[j].dashed && s.dashed &&
                                    s.name.rfind(c.series[j].name.substr(0, c.series[j].name.rfind(' ')), 0) == 0
                              : c.series[j].name == s.colour_of) {
        colour = j;
        if (!s.colour_of.empty()) break;
      }
    out.push_back(colour < i ? out[colour] : kPalette[colour % std::size(kPalette)]);
  }
  return out;
}

void draw_chart(const Chart& c, Canvas& cv, int width, int height) {
  // Legend on the right, the plot in the rest; a warning takes a line under the title.
  const double legend_w = 230, left = 72, top = c.warning.empty() ? 36 : 54, bottom = height - 52.0,
               right = width - legend_w - 16;
  cv.text(width / 2.0, 22, c.title, 13, TextAnchor::kMiddle, kText);
  if (!c.warning.empty()) cv.text(width / 2.0, 40, c.warning, 11, TextAnchor::kMiddle, kWarning);

  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      if (c.log_x && p.x <= 0) continue;
      xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x);
      for (double y : {p.y, p.low, p.high})
        if (!c.log_y || y > 0) ylo = std::min(ylo, y), yhi = std::max(yhi, y);
    }
  if (!(xlo <= xhi) || !(ylo <= yhi)) {
    cv.text((left + right) / 2, (top + bottom) / 2, "no data", 12, TextAnchor::kMiddle, kText);
    return;
  }
  if (xlo == xhi) xlo = c.log_x ? xlo / 2 : xlo - 1, xhi = c.log_x ? xhi * 2 : xhi + 1;
  if (!c.log_y) ylo = std::min(0.0, ylo);  // bandwidth and ratios read best from zero
  if (ylo == yhi) yhi = c.log_y ? ylo * 2 : ylo + 1;
  if (c.log_y)
    ylo /= 1.2, yhi *= 1.2;
  else
    yhi += (yhi - ylo) * 0.05;
  Axis ax{xlo, xhi, c.log_x}, ay{ylo, yhi, c.log_y};
  std::vector<double> xt = c.log_x ? log_ticks(xlo, xhi, true) : linear_ticks(xlo, xhi, 8);
  std::vector<double> yt = c.log_y ? log_ticks(ylo, yhi, false) : linear_ticks(ylo, yhi, 6);
  if (!c.log_y) ay.lo = std::min(ay.lo, yt.front()), ay.hi = std::max(ay.hi, yt.back());

  for (double v : yt) {
    const double y = ay.map(v, bottom, top);
    cv.line({left, y}, {right, y}, {kGrid, 1});
    cv.text(left - 6, y + 4, tick_label(v, false), 11, TextAnchor::kEnd, kText);
  }
  for (double v : xt) {
    const double x = ax.map(v, left, right);
    cv.line({x, top}, {x, bottom}, {kGrid, 1});
    cv.text(x, bottom + 16, tick_label(v, c.x_bytes), 11, TextAnchor::kMiddle, kText);
  }
  cv.polyline({{left, top}, {left, bottom}, {right, bottom}}, {kAxis, 1.2});
  cv.text((left + right) / 2, bottom + 38, c.x_label, 12, TextAnchor::kMiddle, kText);
  cv.text(18, (top + bottom) / 2, c.y_label, 12, TextAnchor::kMiddle, kText, true);

  const std::vector<Color> colours = series_colours(c);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const Color col = colours[i];
    std::vector<Point2> pts;
    for (const auto& p : s.points) {
      if ((c.log_x && p.x <= 0) || (c.log_y && p.y <= 0)) continue;
      pts.push_back({ax.map(p.x, left, right), ay.map(p.y, bottom, top)});
      if (s.error_bars && p.high > p.low && (!c.log_y || p.low > 0)) {
        const double x = pts.back().x, y0 = ay.map(p.low, bottom, top), y1 = ay.map(p.high, bottom, top);
        const Stroke bar{Color{col.r, col.g, col.b, 170}, 1};
        cv.line({x, y0}, {x, y1}, bar);
        cv.line({x - 3, y0}, {x + 3, y0}, bar);
        cv.line({x - 3, y1}, {x + 3, y1}, bar);
      }
    }
    cv.polyline(pts, {col, s.dashed ? 1.6 : 2.0, s.dashed});
    if (s.markers)
      for (const auto& p : pts) cv.circle(p, 3, col);
    // Legend entry.
    const double ly = top + 8 + 18.0 * i, lx = width - legend_w;
    if (ly > height - 12) continue;
    cv.line({lx, ly}, {lx + 22, ly}, {col, 2, s.dashed});
    if (s.markers) cv.circle({lx + 11, ly}, 3, col);
    std::string label = s.name;
    if (label.size() > 34) {
      std::size_t cut = 32;
      while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
      label = label.substr(0, cut) + "..";
    }
    cv.text(lx + 28, ly + 4, label, 11, TextAnchor::kStart, kText);
  }
}

}  // namespace scalebench
