#pragma once
#include "report/canvas.hpp"
#include "report/report_model.hpp"

namespace scalebench {

// Draws a chart (title, axes with ticks, grid, series with markers, min–max error bars, dashed
// ideal and model lines, a legend) on `canvas`, which is width x height pixels.
void draw_chart(const Chart& chart, Canvas& canvas, int width, int height);

constexpr int kChartWidth = 900, kChartHeight = 420;

}  // namespace scalebench
