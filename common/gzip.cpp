#include "common/gzip.hpp"

#include <zlib.h>

#include "common/error.hpp"

namespace scalebench {

bool is_gzip(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

std::string gunzip(std::string_view in, const std::string& what) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer (checked, CRC included), not a raw zlib stream.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error(what + ": zlib could not start inflating");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = rc == Z_BUF_ERROR ? "the gzip stream is cut short" : (z.msg ? z.msg : "inflate failed");
      inflateEnd(&z);
      throw Error(what + ": corrupt gzip data: " + why);
    }
    out.append(chunk, sizeof chunk - z.avail_out);
  }
  inflateEnd(&z);
  return out;
}

}  // namespace scalebench
