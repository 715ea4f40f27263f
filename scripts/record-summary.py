#!/usr/bin/env python3
"""One line per record: the workload's model, point, metric, median, spread and verdict.

Reads record lines (`scalebench-run --emit records`, with or without the line prefix) from the
files given, or from stdin. Used by the device calls' scripts under docs/results/ so that each
prints the same summary; extra detail keys are shown with --details a,b.c (dots go into objects).
"""
import argparse
import json
import sys


def records(stream):
    for line in stream:
        i = line.find("{")
        if i < 0:
            continue
        try:
            r = json.loads(line[i:])
        except ValueError:
            continue
        if isinstance(r, dict) and "metric" in r:
            yield r


def lookup(obj, dotted):
    for key in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def summary(r, details):
    params, st = r.get("params") or {}, r.get("stats") or {}
    fields = [
        r.get("workload"),
        params.get("model", ""),
        json.dumps(r.get("point"), separators=(",", ":")),
        r.get("metric"),
        r.get("unit"),
        f"median {st.get('median')}",
        f"cv {round(st.get('cv') or 0, 4)}",
        f"n {st.get('n')}",
        f"correct {(r.get('correctness') or {}).get('passed')}",
        str(r.get("status")),
    ]
    if r.get("reason"):
        fields.append(f"reason {r['reason']}")
    for d in details:
        fields.append(f"{d} {json.dumps(lookup(r.get('details') or {}, d), separators=(',', ':'))}")
    return " ".join(str(f) for f in fields if f != "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="record files (default: stdin)")
    ap.add_argument("--details", default="", help="comma-separated detail keys to show, e.g. profile.by_op_ms")
    args = ap.parse_args()
    details = [d for d in args.details.split(",") if d]
    streams = [open(f, encoding="utf-8", errors="replace") for f in args.files] or [sys.stdin]
    for s in streams:
        for r in records(s):
            print(summary(r, details))


if __name__ == "__main__":
    main()
