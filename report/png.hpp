#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench {

class RasterCanvas;

// A PNG file (8-bit RGBA, not interlaced, zlib-compressed, each row's filter chosen for it) of a
// width x height image given as rows top to bottom, 4 bytes a pixel. Throws Error on a size that
// does not match.
std::string encode_png(int width, int height, const std::vector<std::uint8_t>& rgba);
std::string encode_png(const RasterCanvas& canvas);

// Writes canvas as a PNG file at path; Error naming the path if it cannot be written.
void write_png(const std::string& path, const RasterCanvas& canvas);

}  // namespace scalebench
