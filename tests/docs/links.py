#!/usr/bin/env python3
"""Every relative link of the README and of docs/ (guides and results index included) points at a
file that exists, and a #anchor at a heading of that page (GitHub's rule: lower case,
punctuation dropped, spaces to hyphens).

usage: links.py SOURCE_ROOT
"""
import glob
import os
import re
import sys


def anchors(path):
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#+\s+(.*)", line)
            if m:
                out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def main():
    root = sys.argv[1]
    files = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) \
        + sorted(glob.glob(os.path.join(root, "docs", "guide", "*.md"))) + [os.path.join(root, "docs", "results", "README.md")]
    errors = []
    for f in files:
        if not os.path.exists(f):
            continue
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        # Links in code blocks are examples, not links.
        text = re.sub(r"(?ms)^```.*?^```", "", text)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            link = m.group(1)
            if re.match(r"^[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, root)
            if not os.path.exists(target):
                errors.append(f"{rel}: link {link}: no such file")
            elif anchor and target.endswith(".md") and anchor not in anchors(target):
                errors.append(f"{rel}: link {link}: no heading with that anchor")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    print(f"links: {len(files)} pages, {len(errors)} broken links")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
