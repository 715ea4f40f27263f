#pragma once
#include <cstdint>
#include <string>

namespace scalebench {

// The font RasterCanvas draws text with: hand-drawn glyphs on a 5-column, 9-row grid (rows 0-6
// above the baseline, 7-8 for descenders). One grid cell is size/10 px, so capitals are 0.7 em
// tall and text takes about the room the SVG page's sans-serif text does.
inline constexpr int kGlyphColumns = 5;
inline constexpr int kGlyphRows = 9;
inline constexpr int kGlyphAscent = 7;
inline constexpr double kGlyphCellsPerEm = 10;

struct Glyph {
  std::uint8_t rows[kGlyphRows] = {};  // bit 4 is the leftmost column
  int left = 0;                        // first inked column
  int width = kGlyphColumns;           // inked columns; the pen moves on width + 1
};

// The code points of UTF-8 text; a byte that starts no valid sequence becomes U+FFFD.
std::u32string decode_utf8(const std::string& s);

// The glyph for a code point; one the font lacks gets the U+FFFD box, so it stays visible.
const Glyph& glyph(char32_t cp);

// Width in grid cells of `text` from its first to its last inked column.
int text_cells(const std::u32string& text);

// Width in px of UTF-8 `text` at font size `size`, as RasterCanvas::text lays it out.
double text_width(const std::string& text, double size);

}  // namespace scalebench
