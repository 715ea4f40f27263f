#!/usr/bin/env bash
# The report page as a reader sees it: written from real records (tests/data/report/records.jsonl:
# a host-memory quick study, and a 4-GPU NVLink/PCIe all-reduce with nccl-tests beside it), opened
# in headless Chromium, its window taken as a PNG. The picture must be the page drawn: the size
# asked for, mostly the page's white, with the header's text and the charts' coloured curves in
# it (a page that failed to draw is blank, or one colour). SCALEBENCH_SCREENSHOT=FILE keeps the
# PNG (the README shows one taken so).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/browser/headless.sh"
"$BIN/scalebench" report --records "$SRC/tests/data/report/records.jsonl" --experiment nccl-tests-vs-scalebench \
  --out "$WORK/report" >"$WORK/report.log" 2>&1 || fail "report exited $?: $(cat "$WORK/report.log")"
screenshot "$WORK/report/index.html" "$WORK/report.png" 1280,1600
python3 - "$WORK/report.png" <<'PY' || fail "the screenshot is not the page drawn"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
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
assert (width, height) == (1280, 1600), f"size {width}x{height}"
assert depth == 8 and colour in (2, 6), f"depth {depth}, colour type {colour}"
channels = 3 if colour == 2 else 4
raw, stride = zlib.decompress(idat), width * channels
rows, previous = [], bytearray(stride)
for y in range(height):  # undo PNG's per-row filters
    kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - channels] if x >= channels else 0
        b, c = previous[x], previous[x - channels] if x >= channels else 0
        if kind == 1: line[x] = (line[x] + a) & 255
        elif kind == 2: line[x] = (line[x] + b) & 255
        elif kind == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    previous = line
pixels = [tuple(r[x:x + 3]) for r in rows for x in range(0, stride, channels)]
white = sum(1 for p in pixels if min(p) >= 245) / len(pixels)
dark = sum(1 for p in pixels if max(p) <= 90) / len(pixels)  # text
coloured = sum(1 for p in pixels if max(p) - min(p) >= 80) / len(pixels)  # the curves
print(f"screenshot {width}x{height}: white {white:.1%}, text {dark:.2%}, coloured {coloured:.2%}")
assert 0.4 <= white <= 0.99, "not a page: white %.1f%%" % (100 * white)
assert dark >= 0.002, "no text"
assert coloured >= 0.001, "no coloured curve"
PY
[[ -z ${SCALEBENCH_SCREENSHOT:-} ]] || cp "$WORK/report.png" "$SCALEBENCH_SCREENSHOT"
echo "report_screenshot: ok"
