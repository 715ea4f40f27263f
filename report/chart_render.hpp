#pragma once
#include <vector>

#include "report/canvas.hpp"
#include "report/report_model.hpp"

namespace scalebench {

// Draws a chart (title, axes with ticks, grid, series with markers, min–max error bars, dashed
// ideal and model lines, a legend) on `canvas`, which is width x height pixels.
void draw_chart(const Chart& chart, Canvas& canvas, int width, int height);

// Each series' colour, as the SVG draws it and the interactive chart takes it: a palette colour
// each, shared by a model or ideal line with its measured series and by an overlay with the
// series it overlays.
std::vector<Color> series_colours(const Chart& chart);

constexpr int kChartWidth = 900, kChartHeight = 420;

}  // namespace scalebench
