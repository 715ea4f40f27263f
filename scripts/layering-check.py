#!/usr/bin/env python3
"""The folders' layers (docs/design.md): every #include runs to the same folder or one below it.

usage: layering-check.py [SOURCE_DIR]

Folders from the bottom up; those on one line are side by side (neither includes the other).
Under workloads/, the shared folders come first, then the workload folders, none of which includes
another's. Prints every include that breaks a rule, as FILE:LINE: what and why; exits 1 if any.
"""
import os
import re
import sys

LAYERS = [
    ["common"],
    ["catalog"],
    ["experiment"],
    ["http", "topology", "analysis"],
    ["record"],
    ["store"],
    ["workloads"],
    ["agent", "coordinator"],
    ["accept"],
    ["report"],
    ["cli"],
    ["bench", "deploy", "fuzz", "tests"],
]
# workloads/: shared folders from the bottom up; every other folder there is a workload.
WORKLOAD_SHARED = [["gpu"], ["runtime"], ["compute", "dataset", "mllog", "infer"]]
SOURCE = re.compile(r"\.(cpp|hpp|cu|cuh|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rank(table, name):
    for i, names in enumerate(table):
        if name in names:
            return i
    return None


def workload_rank(folder):
    """Shared folders by their layer; any workload folder above them all."""
    r = rank(WORKLOAD_SHARED, folder)
    return len(WORKLOAD_SHARED) if r is None else r


def check(root):
    problems = []
    for top in sorted(os.listdir(root)):
        if rank(LAYERS, top) is None or top == "tests":
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
            for name in sorted(filenames):
                if SOURCE.search(name):
                    problems += check_file(root, os.path.relpath(os.path.join(dirpath, name), root))
    return problems


def check_file(root, path):
    parts = path.split("/")
    problems = []
    with open(os.path.join(root, path), errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue
            target = m.group(1).split("/")
            where = "%s:%d: includes %s" % (path, number, m.group(1))
            if rank(LAYERS, target[0]) is None:
                continue  # a generated header or a third-party path
            if rank(LAYERS, target[0]) > rank(LAYERS, parts[0]):
                problems.append("%s, from %s/ up to %s/" % (where, parts[0], target[0]))
            elif parts[0] == target[0] == "workloads" and len(parts) > 2 and len(target) > 2:
                mine, theirs = parts[1], target[1]
                if mine == theirs:
                    continue
                if rank(WORKLOAD_SHARED, theirs) is None:
                    problems.append("%s: workload folders do not include one another's" % where)
                elif workload_rank(theirs) > workload_rank(mine):
                    problems.append("%s, from workloads/%s/ up to workloads/%s/" % (where, mine, theirs))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print("%d includes break the layers (scripts/layering-check.py, docs/design.md)" % len(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
