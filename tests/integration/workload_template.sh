#!/usr/bin/env bash
# Adding a workload is one folder plus one line, as docs/workloads.md says: a copy of the source
# tree gets workloads/template/ copied to workloads/hello with "example" renamed to "hello", and one
# `add_subdirectory(hello)` line in workloads/CMakeLists.txt; nothing else is edited. Its host-only
# build of scalebench-run then lists hello, prints its parameters, and runs it under mpirun with a
# valid record, and `scalebench-run --capabilities` names it.
source "$(dirname "$0")/lib.sh"
command -v git >/dev/null && git -C "$SRC" rev-parse >/dev/null 2>&1 || { echo "workload_template: skipped: $SRC is not a git checkout"; exit 77; }

# The tree as a user has it: the files git knows (committed or not), without any build folder.
tree=$WORK/src
mkdir -p "$tree"
(cd "$SRC" && git ls-files --cached --others --exclude-standard | while IFS= read -r f; do [[ -e $f ]] && printf '%s\n' "$f"; done |
  tar -cf - -T -) | tar -xf - -C "$tree"

# The folder and the line.
cp -r "$tree/workloads/template" "$tree/workloads/hello"
for f in "$tree"/workloads/hello/*example*; do mv "$f" "${f//example/hello}"; done
sed -i 's/example/hello/g' "$tree"/workloads/hello/*
sed -i '/^scalebench_finish_workloads()/i add_subdirectory(hello)' "$tree/workloads/CMakeLists.txt"
[[ $(diff -r "$SRC/workloads" "$tree/workloads" | grep -c '^[<>]') -eq 1 ]] ||
  fail "more than one line changed outside the new folder: $(diff -r "$SRC/workloads" "$tree/workloads" | head -n 20)"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$tree" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCALEBENCH_CUDA=OFF -DSCALEBENCH_TESTS=OFF \
  "${launcher[@]}" >"$WORK/configure.log" 2>&1 || fail "configure: $(tail -n 20 "$WORK/configure.log")"
cmake --build "$WORK/build" --target scalebench-run -j "$(nproc)" >"$WORK/build.log" 2>&1 ||
  fail "build: $(grep -m 3 -A 8 'error' "$WORK/build.log")"
run=$WORK/build/bin/scalebench-run

"$run" --list | grep -qw hello || fail "--list: $("$run" --list)"
"$run" --capabilities | grep -qw hello || fail "--capabilities: $("$run" --capabilities)"
"$run" hello --help | grep -q "bytes copied per iteration" || fail "help: $("$run" hello --help)"
mpirun -np 2 "$run" hello -p bytes=1MiB -p iters=5 --format json >"$WORK/records.jsonl" 2>"$WORK/run.log" ||
  fail "run: $(cat "$WORK/run.log")"
python3 - "$WORK/records.jsonl" <<'PY' || fail "records: $(cat "$WORK/records.jsonl")"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert len(records) == 2, "one record per rank, got %d" % len(records)
for r in records:
    assert r["workload"] == "hello" and r["metric"] == "copy_bandwidth" and r["status"] == "ok", r
    assert r["value"] > 0 and r["point"]["bytes"] == 1 << 20, r
    assert len(r["stats"]["samples"]) == 5, r["stats"]
    assert r["correctness"]["passed"] is True, r["correctness"]
assert sorted(r["point"]["rank"] for r in records) == [0, 1]
PY
echo "workload_template: ok"
