#!/usr/bin/env python3
"""Every Python program that a page or a result's script names is a file of the repository, so that
a result reproduces from the repository alone: a peer kept elsewhere (a PyTorch script that a
result compares with) fails here with the pages that name it. The pages are every Markdown file
git tracks or would track, and the shell scripts under docs/ and scripts/; a name matches a file
of the same name anywhere in the repository (results call their peers from a copied folder, PEERS).
A script that writes its own Python (a heredoc) is outside these folders (tests/integration/).

usage: named_programs.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

PAGES = ("*.md", "docs/*.sh", "scripts/*.sh")
NAME = re.compile(r"\b([A-Za-z0-9_-]+\.py)\b")


def tracked(root, patterns):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--",
                          *patterns], capture_output=True, text=True, check=True).stdout
    return sorted(p for p in set(out.split("\0")) if p and os.path.exists(os.path.join(root, p)))


def main():
    root = sys.argv[1]
    names = {os.path.basename(p) for p in tracked(root, ["*.py"])}
    missing = {}
    pages = tracked(root, PAGES)
    for page in pages:
        with open(os.path.join(root, page), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                for name in sorted(set(NAME.findall(line))):
                    if name not in names:
                        missing.setdefault(name, []).append(f"{page}:{number}")
    for name, where in sorted(missing.items()):
        shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
        print(f"named_programs: {name} is named by {shown} but is no file of the repository: commit it "
              f"(a peer goes to examples/, with a header saying how it is run)")
    print(f"named_programs: {len(pages)} pages and scripts, {len(missing)} programs missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
