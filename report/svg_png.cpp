#include "report/svg_png.hpp"

#include <cairo.h>
#include <librsvg/rsvg.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>

#include "common/error.hpp"

namespace scalebench {
namespace {

struct GObjectUnref {
  void operator()(gpointer p) const { g_object_unref(p); }
};
struct GErrorFree {
  void operator()(GError* e) const { g_error_free(e); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct CairoDestroy {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using Handle = std::unique_ptr<RsvgHandle, GObjectUnref>;
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDestroy>;
using Context = std::unique_ptr<cairo_t, CairoDestroy>;

// Throws Error with librsvg's message when `error` was set.
void check(GError* error, const std::string& what) {
  if (!error) return;
  const std::unique_ptr<GError, GErrorFree> owned(error);
  throw Error("SVG to PNG: " + what + ": " + owned->message);
}

void check(cairo_status_t status, const std::string& what) {
  if (status != CAIRO_STATUS_SUCCESS) throw Error("SVG to PNG: " + what + ": " + cairo_status_to_string(status));
}

Handle read_svg(const std::string& svg) {
  GError* error = nullptr;
  Handle handle(rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error));
  check(error, "cannot read the SVG");
  if (!handle) throw Error("SVG to PNG: cannot read the SVG");
  return handle;
}

// The SVG's width and height in whole pixels (its width and height attributes, at 96 dpi).
std::pair<int, int> size_of(RsvgHandle* handle) {
  double w = 0, h = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) || w < 1 || h < 1)
    throw Error("SVG to PNG: the SVG has no size in pixels (width and height attributes)");
  return {static_cast<int>(std::ceil(w)), static_cast<int>(std::ceil(h))};
}

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

std::string svg_to_png(const std::string& svg) {
  const Handle handle = read_svg(svg);
  const auto [width, height] = size_of(handle.get());
  const Surface surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height));
  check(cairo_surface_status(surface.get()),
        "cannot make a " + std::to_string(width) + "x" + std::to_string(height) + " image");
  const Context cr(cairo_create(surface.get()));
  // Opaque white under the drawing, whatever the SVG's own background.
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  const RsvgRectangle viewport{0, 0, static_cast<double>(width), static_cast<double>(height)};
  GError* error = nullptr;
  rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &error);
  check(error, "cannot render the SVG");
  check(cairo_status(cr.get()), "cannot render the SVG");
  cairo_surface_flush(surface.get());
  std::string png;
  check(cairo_surface_write_to_png_stream(surface.get(), append, &png), "cannot encode the PNG");
  return png;
}

void write_svg_as_png(const std::string& path, const std::string& svg) {
  const std::string png = svg_to_png(svg);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write PNG " + path + ": " + std::strerror(errno));
  out.write(png.data(), static_cast<std::streamsize>(png.size()));
  out.close();
  if (!out) throw Error("cannot write PNG " + path + ": " + std::strerror(errno));
}

}  // namespace scalebench
