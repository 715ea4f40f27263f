#!/usr/bin/env python3
"""Output a page shows as "from a real run" is output a run left in a results folder.

The pages checked are the guides (docs/guide/README.md says every output they show is from a real
run) and every other page given that says "from a real run". Each ```text block of such a page
is output: each of its lines must be a line of a file kept under docs/results/ (text files, and
.gz files read uncompressed; the folders' README.md are left out, since they are written by
hand, but a report.md that `scalebench report` wrote is output), compared with runs of spaces made one. Abridging is allowed: a line that is only "..."
is skipped, and "..." inside a line stands for any text, so "a ... b" matches a kept line that
holds "a", then "b". A block that is not from a run says so in the line just before it (a line
holding "not from a run"), where the reader sees it.

usage: real_output.py SOURCE_ROOT [PAGE.md...]
"""
import gzip
import os
import re
import sys

PHRASE = "from a real run"
EXEMPT = "not from a run"
TEXT_SUFFIXES = (".md", ".txt", ".log", ".csv", ".jsonl", ".json", ".err", ".out", ".prom", ".tsv")


def normal(line):
    return " ".join(line.split())


def kept_lines(results):
    """Every line of the results folders' raw files, normalised, in one set and one list."""
    lines = set()
    for d, _, files in os.walk(results):
        for f in files:
            path = os.path.join(d, f)
            try:
                if f.endswith(".gz") and not f.endswith(".tar.gz"):
                    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                elif f.endswith(TEXT_SUFFIXES) and f != "README.md":
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        text = fh.read()
                else:
                    continue
            except (OSError, EOFError, gzip.BadGzipFile):
                continue
            lines.update(normal(line) for line in text.splitlines())
    lines.discard("")
    return lines, sorted(lines)


def text_blocks(path):
    """(line number, exempt?, [(line number, line)]) of each ```text block of the page."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if not re.match(r"^```text\s*$", lines[i]):
            # Step over other blocks whole: a ```sh block may hold a ```text line in a heredoc.
            if lines[i].startswith("```"):
                i += 1
                while i < len(lines) and not lines[i].startswith("```"):
                    i += 1
            i += 1
            continue
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append((i + 1, lines[i]))
            i += 1
        blocks.append((start, EXEMPT in before.lower(), body))
        i += 1
    return blocks


def held(line, exact, ordered):
    if "..." not in line:
        return line in exact
    parts = [p.strip() for p in line.split("...") if p.strip()]
    pattern = re.compile(".*".join(re.escape(p) for p in parts))
    return any(pattern.search(k) for k in ordered)


def pages(root, extra):
    guide = os.path.join(root, "docs", "guide")
    out = sorted(os.path.join(guide, f) for f in os.listdir(guide) if f.endswith(".md"))
    for p in extra:
        p = p if os.path.isabs(p) else os.path.join(root, p)
        with open(p, encoding="utf-8") as f:
            if PHRASE in " ".join(f.read().split()).lower() and p not in out:
                out.append(p)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    exact, ordered = kept_lines(os.path.join(root, "docs", "results"))
    errors, blocks_checked = [], 0
    checked_pages = pages(root, sys.argv[2:])
    for page in checked_pages:
        rel = os.path.relpath(page, root)
        for start, exempt, body in text_blocks(page):
            if exempt:
                continue
            blocks_checked += 1
            for number, line in body:
                n = normal(line)
                if not n or n == "..." or held(n, exact, ordered):
                    continue
                errors.append(f"{rel}:{number}: no results folder holds this line: {n[:120]}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    print(f"real_output: {len(checked_pages)} pages, {blocks_checked} output blocks, {len(errors)} lines not held")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
