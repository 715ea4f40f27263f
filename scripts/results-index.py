#!/usr/bin/env python3
"""Writes docs/results/README.md, the index of measured results, from each folder's claims.txt.

    scripts/results-index.py            rewrite docs/results/README.md
    scripts/results-index.py --check    exit 1 if README.md is not what this script writes, or a
                                        folder's claims.txt is missing or wrong (ctest docs.results_index)
    --results DIR                       another results folder (the tests use it)

Every folder under docs/results/ (named YYYY-MM-DD-what) holds its README.md and a claims.txt
that says in a few lines what the folder claims. The format is described in FORMAT below, which
this script also prints into the index it writes. Python 3 standard library only.
"""
import argparse
import os
import re
import sys

FORMAT = """\
`claims.txt` holds one or more blocks separated by blank lines; each line of a block is
`key: value`; lines starting with `#` are comments. A block is either a **claim** (a headline
figure of the folder) or, when the folder recorded an experiment on the way and claims no
headline figure, one **investigation** block.

```
kind: claim
topic: collective: busbw against nccl-tests, 64 MiB-1 GiB
figure: every collective at 2 GPUs: medians 0.997-1.004 (NVLink)
peer: nccl-tests 2.19.6, same call
ratio: 0.983-1.010 at every size
gpu: 2 x H200
commit: 1664ac1 (added)
supersedes: 2026-11-21-quick-2xh200, 2026-11-21-nccl-tests-in-study-4xh200

kind: claim
topic: collective: small-message time against nccl-tests, CUDA-graph launches
figure: 4 GPUs, P2P off, every collective
gpu: 4 x H200
commit: 2c33edf
alongside: 2026-11-22-collective-latency-graph-4xh200

kind: investigation
about: which transport NCCL really connected per variant (P2P, SHM, NET)
gpu: 2 x H200
commit: ff75ed7 (added)
```

- `topic` (claim): what is measured; rows of one topic form one table. Start it with the
  workload or part (`train:`, `collective:`, `gemm:`, `coordinator:` ...). Reuse an existing
  topic's exact text when your folder measures the same thing again.
- `figure`, `peer`, `ratio`: copied from the folder's README.md, never recomputed or rounded
  differently: every number in them (and in `about` and `note`) must appear in README.md, or the
  script stops. `peer` and
  `ratio` may be left out (shown as "-") when the README gives none.
- `gpu`: the machine, e.g. `4 x H200`, `1 x H100`, `none (2-vCPU host)`.
- `commit`: the scalebench commit the README says the programs were built from; where it says
  none, the commit that added the folder, followed by `(added)`.
- `supersedes` (claim, optional): earlier folders whose claims of the same topic this one
  replaces, comma-separated. A claim that no later folder supersedes is marked current.
- `alongside` (claim, optional): earlier folders whose current claims of the same topic and
  `gpu` stay current beside this one, because they measured other cases (other collectives,
  other sizes). Two current claims of one topic on one machine from different folders are an
  error unless the newer one names the older in `supersedes` or `alongside`: the current rows are
  one per claim.
- `about` (investigation): one line on what the folder looked into.
- `note` (optional): a few words shown under the figure.
- The date is the folder name's `YYYY-MM-DD`."""

CLAIM_KEYS = {"kind", "topic", "figure", "peer", "ratio", "gpu", "commit", "supersedes", "alongside", "note"}
CLAIM_REQUIRED = ("topic", "figure", "gpu", "commit")
INVESTIGATION_KEYS = {"kind", "about", "gpu", "commit", "note"}
INVESTIGATION_REQUIRED = ("about", "gpu", "commit")
FOLDER_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})-[a-z0-9][a-z0-9.-]*$")
NUMBER_RE = re.compile(r"\d[\d,.]*\d|\d")

TEMPLATE = """\
# What this folder claims, for docs/results/README.md (scripts/results-index.py; format there)
kind: claim
topic: WORKLOAD: what is measured (reuse an existing topic's text to add a row to its table)
figure: the headline figure, copied from README.md
peer: the peer's figure, copied from README.md (or leave this line out)
ratio: the ratio README.md states (or leave this line out)
gpu: N x GPU MODEL
commit: the commit README.md names (else: the commit that adds the folder, then "(added)")
supersedes: earlier folders of the same topic this one replaces (or leave this line out)

# or, when the folder records an experiment on the way and claims no headline figure:
# kind: investigation
# about: one line on what it looked into
# gpu: N x GPU MODEL
# commit: ..."""


class Block:
    def __init__(self, folder, line):
        self.folder = folder
        self.line = line
        self.fields = {}

    def get(self, key, default="-"):
        return self.fields.get(key, default)


def parse_claims(path, folder, errors):
    blocks = []
    block = None
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                block = None
                continue
            if line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            key = key.strip()
            value = value.strip()
            if not sep or not re.fullmatch(r"[a-z]+", key):
                errors.append(f"{path}:{number}: expected 'key: value', got {line!r}")
                continue
            if block is None:
                block = Block(folder, number)
                blocks.append(block)
            if key in block.fields:
                errors.append(f"{path}:{number}: '{key}' given twice in one block")
            if not value:
                errors.append(f"{path}:{number}: '{key}' has no value")
            block.fields[key] = value
    return blocks


def numbers(text):
    return NUMBER_RE.findall(text)


def check_block(path, block, readme_text, errors):
    kind = block.fields.get("kind")
    where = f"{path}:{block.line}"
    if kind == "claim":
        allowed, required = CLAIM_KEYS, CLAIM_REQUIRED
    elif kind == "investigation":
        allowed, required = INVESTIGATION_KEYS, INVESTIGATION_REQUIRED
    else:
        errors.append(f"{where}: 'kind' must be 'claim' or 'investigation', got {kind!r}")
        return
    for key in block.fields:
        if key not in allowed:
            errors.append(f"{where}: unknown key '{key}' in a {kind} block (allowed: {', '.join(sorted(allowed))})")
    for key in required:
        if key not in block.fields:
            errors.append(f"{where}: a {kind} block needs '{key}:'")
    for key in ("figure", "peer", "ratio", "about", "note"):
        if key in allowed:
            for n in numbers(block.fields.get(key, "")):
                if not re.search(r"(?<![\d.,])" + re.escape(n) + r"(?![\d]|[.,]\d)", readme_text):
                    errors.append(f"{where}: {key} has {n}, which the folder's README.md does not state "
                                  f"(copy figures exactly from it)")


def collect(results):
    errors = []
    folders = []
    for name in sorted(os.listdir(results)):
        full = os.path.join(results, name)
        if not os.path.isdir(full):
            continue
        m = FOLDER_RE.match(name)
        if not m:
            errors.append(f"{full}: a results folder is named YYYY-MM-DD-what (lower case, digits, '-')")
            continue
        readme = os.path.join(full, "README.md")
        claims = os.path.join(full, "claims.txt")
        if not os.path.isfile(readme):
            errors.append(f"{readme}: missing: every results folder has a README.md with its command and figures")
            continue
        if not os.path.isfile(claims):
            errors.append(f"{claims}: missing. Every results folder needs one, read by scripts/results-index.py "
                          f"to build docs/results/README.md. Write it like this (blocks separated by a blank "
                          f"line; format in docs/results/README.md, 'Adding a results folder'):\n\n"
                          + "\n".join("    " + l for l in TEMPLATE.splitlines())
                          + "\n\n  then run: python3 scripts/results-index.py")
            continue
        raw = [os.path.join(d, f) for d, _, files in os.walk(full) for f in files
               if os.path.join(d, f) not in (readme, claims)]
        if not raw:
            errors.append(f"{full}: holds only README.md and claims.txt: keep the raw output of the runs beside "
                          f"them (logs, records; compressed where large), so that a figure can be traced")
        with open(readme, encoding="utf-8") as f:
            readme_text = f.read()
        blocks = parse_claims(claims, name, errors)
        if not blocks:
            errors.append(f"{claims}: no block: give at least one claim, or one investigation")
        kinds = {b.fields.get("kind") for b in blocks}
        if "investigation" in kinds and len(blocks) > 1:
            errors.append(f"{claims}: an investigation folder has one investigation block and no claim")
        for b in blocks:
            check_block(claims, b, readme_text, errors)
        folders.append((name, m.group(1), blocks))
    claims = [b for _, _, bl in folders for b in bl if b.fields.get("kind") == "claim"]
    dates = {name: date for name, date, _ in folders}
    superseded = {}
    for b in claims:
        for old in [s.strip() for s in b.fields.get("supersedes", "").split(",") if s.strip()]:
            where = f"{os.path.join(results, b.folder, 'claims.txt')}:{b.line}"
            if old not in dates:
                errors.append(f"{where}: supersedes '{old}', which is not a folder of {results}")
                continue
            if dates[old] > dates[b.folder]:
                errors.append(f"{where}: supersedes '{old}', which is newer")
            targets = [c for c in claims if c.folder == old and c.fields.get("topic") == b.fields.get("topic")]
            if not targets:
                errors.append(f"{where}: supersedes '{old}', which has no claim of topic "
                              f"'{b.fields.get('topic')}'")
            for c in targets:
                superseded.setdefault(id(c), []).append(b.folder)
    errors += check_one_current(results, claims, superseded, dates)
    return folders, claims, superseded, errors


def folder_list(block, key):
    return [s.strip() for s in block.fields.get(key, "").split(",") if s.strip()]


def check_one_current(results, claims, superseded, dates):
    """Two current claims of one topic on one machine from different folders: the newer must say
    whether it replaces the older (supersedes) or stands beside it (alongside)."""
    errors = []
    current = {}
    for b in claims:
        if id(b) not in superseded:
            current.setdefault((b.fields.get("topic"), b.fields.get("gpu")), []).append(b)
    for b in claims:
        for old in folder_list(b, "alongside"):
            if old not in dates or not any(c.folder == old for c in current.get((b.fields.get("topic"),
                                                                                 b.fields.get("gpu")), [])):
                errors.append(f"{os.path.join(results, b.folder, 'claims.txt')}:{b.line}: alongside '{old}', "
                              f"which has no current claim of topic '{b.fields.get('topic')}' on "
                              f"'{b.fields.get('gpu')}'")
    for (topic, gpu), group in sorted(current.items(), key=lambda kv: str(kv[0])):
        for new in group:
            for old in group:
                if old.folder == new.folder or (dates[old.folder], old.folder) > (dates[new.folder], new.folder):
                    continue
                if old.folder in folder_list(new, "alongside") or new.folder in folder_list(old, "alongside"):
                    continue  # either may say it: folders of one date have no order but their names
                errors.append(f"{os.path.join(results, new.folder, 'claims.txt')}:{new.line}: a second current "
                              f"claim of topic '{topic}' on '{gpu}' beside {old.folder}'s: the index's current "
                              f"rows are one per claim. Write 'supersedes: {old.folder}' if this one replaces "
                              f"it, or 'alongside: {old.folder}' if both stand (they measured other cases)")
    return errors


def cell(text):
    return text.replace("|", "\\|")


def link(folder):
    return f"[{folder}]({folder}/)"


def render(folders, claims, superseded):
    topics = {}
    for b in claims:
        topics.setdefault(b.fields["topic"], []).append(b)
    date_of = {name: date for name, date, _ in folders}
    by_folder_topic = {}
    for b in claims:
        by_folder_topic.setdefault((b.folder, b.fields["topic"]), []).append(b)

    def generation(b, seen=()):
        # 0 for a claim that supersedes nothing, else 1 + the generation of what it supersedes:
        # orders the claims of one day by what replaced what, not by name.
        gens = [0]
        for old in [s.strip() for s in b.fields.get("supersedes", "").split(",") if s.strip()]:
            for c in by_folder_topic.get((old, b.fields["topic"]), []):
                if id(c) not in seen:
                    gens.append(1 + generation(c, seen + (id(b),)))
        return max(gens)

    def row_key(b):
        return (date_of[b.folder], generation(b), b.folder)

    out = []
    out.append("# Measured results: the index")
    out.append("")
    out.append("<!-- Generated by scripts/results-index.py from each folder's claims.txt. Do not edit by hand:")
    out.append("     change a folder's claims.txt and run `python3 scripts/results-index.py`. -->")
    out.append("")
    out.append("Every folder here holds one measurement on real machines: its README.md (the machine, the")
    out.append("exact commands, the figures and what they show) and the logs or records behind it. This page")
    out.append("is generated from each folder's `claims.txt` by `scripts/results-index.py`, and the test")
    out.append("`docs.results_index` fails when it is out of date, so it cannot drift from the folders.")
    out.append("")
    out.append("Figures are copied from the folders' READMEs. Claims of one topic measured at different")
    out.append("commits differ: the **current** row is the latest; the superseded rows stay, with the folder")
    out.append("that replaced them, because each was true of the code it measured. `commit` is the commit the")
    out.append("programs were built from, or, where the folder names none, the commit that added the folder")
    out.append("(marked `added`).")
    out.append("")
    out.append("## Current claims")
    out.append("")
    out.append("| topic | figure | peer figure | ratio | GPU | date | commit | folder |")
    out.append("|---|---|---|---|---|---|---|---|")
    for topic in sorted(topics):
        for b in sorted(topics[topic], key=row_key, reverse=True):
            if id(b) in superseded:
                continue
            out.append(f"| {cell(topic)} | {cell(b.get('figure'))} | {cell(b.get('peer'))} | {cell(b.get('ratio'))} "
                       f"| {cell(b.get('gpu'))} | {date_of[b.folder]} | {cell(b.get('commit'))} | {link(b.folder)} |")
    out.append("")
    out.append("## Every claim, by topic (newest first)")
    for topic in sorted(topics):
        out.append("")
        out.append(f"### {topic}")
        out.append("")
        out.append("| status | figure | peer figure | ratio | GPU | date | commit | folder |")
        out.append("|---|---|---|---|---|---|---|---|")
        for b in sorted(topics[topic], key=row_key, reverse=True):
            if id(b) in superseded:
                status = "superseded by " + ", ".join(link(f) for f in sorted(set(superseded[id(b)])))
            else:
                status = "**current**"
            figure = b.get("figure")
            if "note" in b.fields:
                figure += f" ({b.fields['note']})"
            out.append(f"| {status} | {cell(figure)} | {cell(b.get('peer'))} | {cell(b.get('ratio'))} "
                       f"| {cell(b.get('gpu'))} | {date_of[b.folder]} | {cell(b.get('commit'))} | {link(b.folder)} |")
    out.append("")
    out.append("## Investigations")
    out.append("")
    out.append("Folders that recorded an experiment on the way (a cause looked for, a setting tried) and")
    out.append("claim no headline figure of their own; their README says what was found.")
    out.append("")
    out.append("| date | GPU | what it looked into | commit | folder |")
    out.append("|---|---|---|---|---|")
    for name, date, blocks in sorted(folders, key=lambda f: (f[1], f[0]), reverse=True):
        for b in blocks:
            if b.fields.get("kind") != "investigation":
                continue
            about = b.get("about")
            if "note" in b.fields:
                about += f" ({b.fields['note']})"
            out.append(f"| {date} | {cell(b.get('gpu'))} | {cell(about)} | {cell(b.get('commit'))} | {link(name)} |")
    out.append("")
    out.append("## Adding a results folder")
    out.append("")
    out.append("Name it `YYYY-MM-DD-what`, give it a README.md (machine, exact commands from the repository")
    out.append("root, figures, what they show), the raw output of the runs (logs, records; compressed where")
    out.append("large) and a `claims.txt`, then run `python3 scripts/results-index.py` and commit the")
    out.append("regenerated README.md with the folder.")
    out.append("")
    out.extend(FORMAT.splitlines())
    out.append("")
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="Write docs/results/README.md from each folder's claims.txt.")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if README.md differs from what would be written")
    parser.add_argument("--results", default=os.path.join(os.path.dirname(here), "docs", "results"),
                        help="the results folder (default: docs/results of this repository)")
    args = parser.parse_args()

    folders, claims, superseded, errors = collect(args.results)
    if errors:
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        print(f"results-index: {len(errors)} error(s); docs/results/README.md not written", file=sys.stderr)
        return 1
    text = render(folders, claims, superseded)
    index = os.path.join(args.results, "README.md")
    current = None
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            current = f.read()
    if args.check:
        if current != text:
            print(f"error: {index} is not what scripts/results-index.py writes from the folders' claims.txt; "
                  f"run: python3 scripts/results-index.py (and commit the result)", file=sys.stderr)
            return 1
        print(f"results-index: {index} is up to date ({len(folders)} folders, {len(claims)} claims)")
        return 0
    if current != text:
        with open(index, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"results-index: wrote {index} ({len(folders)} folders, {len(claims)} claims)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
