#include "report/png.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/error.hpp"
#include "report/raster_canvas.hpp"

namespace scalebench {

namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

// A chunk: length, type, data, and the CRC-32 of type and data.
void put_chunk(std::string& out, const char type[4], const std::string& data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = out.size();
  out.append(type, 4);
  out += data;
  const auto* bytes = reinterpret_cast<const Bytef*>(out.data() + start);
  put_u32(out, static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0), bytes, static_cast<uInt>(out.size() - start))));
}

std::uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return static_cast<std::uint8_t>(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// One row of filter type `type` (0 none, 1 sub, 2 up, 3 average, 4 paeth) into out.
void filter_row(int type, const std::uint8_t* row, const std::uint8_t* prev, std::size_t n, std::uint8_t* out) {
  constexpr std::size_t bpp = 4;
  for (std::size_t i = 0; i < n; ++i) {
    const int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0, c = prev && i >= bpp ? prev[i - bpp] : 0;
    int predicted = 0;
    switch (type) {
      case 1:
        predicted = a;
        break;
      case 2:
        predicted = b;
        break;
      case 3:
        predicted = (a + b) / 2;
        break;
      case 4:
        predicted = paeth(a, b, c);
        break;
    }
    out[i] = static_cast<std::uint8_t>(row[i] - predicted);
  }
}

}  // namespace

std::string encode_png(int width, int height, const std::vector<std::uint8_t>& rgba) {
  if (width <= 0 || height <= 0 || rgba.size() != static_cast<std::size_t>(width) * height * 4)
    throw Error("PNG: " + std::to_string(rgba.size()) + " bytes are not a " + std::to_string(width) + "x" +
                std::to_string(height) + " RGBA image");
  const std::size_t stride = static_cast<std::size_t>(width) * 4;

  // Each row keeps the filter whose output has the smallest sum of magnitudes (as signed bytes):
  // the usual rule of thumb, and charts' flat areas and straight lines shrink well under it.
  std::vector<std::uint8_t> raw((stride + 1) * height), trial(stride);
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* row = &rgba[y * stride];
    const std::uint8_t* prev = y > 0 ? &rgba[(y - 1) * stride] : nullptr;
    std::uint8_t* dst = &raw[y * (stride + 1)];
    long best = -1;
    for (int type = 0; type <= 4; ++type) {
      filter_row(type, row, prev, stride, trial.data());
      long sum = 0;
      for (std::uint8_t v : trial) sum += v < 128 ? v : 256 - v;
      if (best < 0 || sum < best) {
        best = sum;
        dst[0] = static_cast<std::uint8_t>(type);
        std::memcpy(dst + 1, trial.data(), stride);
      }
    }
  }

  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, raw.data(),
                           static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION);
  if (rc != Z_OK) throw Error("PNG: zlib compression failed (" + std::to_string(rc) + ")");
  packed.resize(packed_size);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_u32(ihdr, static_cast<std::uint32_t>(width));
  put_u32(ihdr, static_cast<std::uint32_t>(height));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);  // 8 bits, RGBA, deflate, adaptive filters, no interlace
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", packed);
  put_chunk(png, "IEND", "");
  return png;
}

std::string encode_png(const RasterCanvas& canvas) {
  return encode_png(canvas.width(), canvas.height(), canvas.rgba());
}

void write_png(const std::string& path, const RasterCanvas& canvas) {
  const std::string png = encode_png(canvas);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write PNG " + path + ": " + std::strerror(errno));
  out.write(png.data(), static_cast<std::streamsize>(png.size()));
  out.close();
  if (!out) throw Error("cannot write PNG " + path + ": " + std::strerror(errno));
}

}  // namespace scalebench
