#!/usr/bin/env python3
"""Every relative link (and image) of every Markdown file of the repository points at a file that
exists, and a #anchor at a heading of that page (GitHub's rule: lower case, punctuation dropped,
spaces to hyphens). The pages are the files git tracks or would track (`git ls-files`, untracked
ones included, ignored ones not), else, outside a git checkout, every .md under the root but the
build folders. tests/data/ is left out: its .md files are a unit test's expected output, compared
as text, not pages to read.

usage: links.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

SKIPPED = ("tests/data/",)


def pages(root):
    """The repository's Markdown files, relative to root."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z",
                              "--", "*.md"], capture_output=True, text=True, check=True).stdout
        found = [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            found += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
    return sorted(p for p in set(found) if not p.startswith(SKIPPED) and os.path.exists(os.path.join(root, p)))


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
    files = [os.path.join(root, p) for p in pages(root)]
    errors = []
    for f in files:
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
