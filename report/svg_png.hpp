#pragma once
#include <string>

namespace scalebench {

// PNG copies of the charts: the chart's SVG (report/svg_canvas.hpp) rendered by librsvg through
// cairo, its text in the fonts fontconfig finds for the SVG's font-family (DejaVu Sans, from
// fonts-dejavu-core), so that the PNG shows what the SVG shows. Opaque, the SVG's size in pixels.
// Throws Error when the SVG cannot be read or rendered.
std::string svg_to_png(const std::string& svg);

// Writes svg_to_png(svg) at path; Error naming the path if it cannot be written.
void write_svg_as_png(const std::string& path, const std::string& svg);

}  // namespace scalebench
