#!/usr/bin/env python3
"""Is a screenshot a page drawn? png_check.py PNG WIDTH HEIGHT: the PNG (8-bit RGB or RGBA) has
that size, is mostly the page's white, holds text (dark pixels) and coloured curves (saturated
pixels); a page that failed to draw is blank or one colour. Prints the shares; exits 1 if not."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), f"depth {depth}, colour type {colour}"
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):  # undo PNG's per-row filters
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, [tuple(r[x:x + 3]) for r in rows for x in range(0, stride, channels)]


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    width, height, px = pixels(path)
    white = sum(1 for p in px if min(p) >= 245) / len(px)
    dark = sum(1 for p in px if max(p) <= 90) / len(px)  # text
    coloured = sum(1 for p in px if max(p) - min(p) >= 80) / len(px)  # the curves
    print(f"screenshot {width}x{height}: white {white:.1%}, text {dark:.2%}, coloured {coloured:.2%}")
    assert (width, height) == (want_w, want_h), f"size {width}x{height}"
    assert 0.4 <= white <= 0.99, "not a page: white %.1f%%" % (100 * white)
    assert dark >= 0.002, "no text"
    assert coloured >= 0.001, "no coloured curve"


if __name__ == "__main__":
    main()
