#!/usr/bin/env bash
# The command workload through the real agent: a program this test builds, launched under mpirun
# and as torchrun-style ranks, its figures read from two output formats and from a file; a program
# that fails, one that lacks a figure, and one that is not there.
source "$(dirname "$0")/lib.sh"
${CXX:-c++} -std=c++17 -O1 -o "$WORK/figure_printer" "$SRC/tests/integration/programs/figure_printer.cpp" ||
  fail "cannot build the test program"

cat >"$WORK/mpi.yaml" <<YAML
name: cmd-mpi
workload: command
command:
  program: $WORK/figure_printer
  args: [--sizes, "{sizes}"]
  launch: mpi
  parser: images-per-second
  figures:
    bw:   {regex: '^\s*(\d+)\s+\S+\s+(\S+)\s*$', value_group: 2, context: {size: 1}, unit: GB/s}
    time: {regex: '^\s*(\d+)\s+(\S+)\s+\S+\s*$', value_group: 2, context: {size: 1}, unit: us, better: lower}
    mpi_size: {regex: 'mpi_size=(\d+)', unit: ranks}
    mark: {regex: 'visible=(\d+)', unit: ""}
params:
  sizes: "1024,4096"
placement:
  ranks_per_node: [2]
variants:
  plain:
    env: {SCALEBENCH_TEST_MARK: "1"}
  marked:
    env: {SCALEBENCH_TEST_MARK: "7"}
YAML
"$BIN/scalebench" study "$WORK/mpi.yaml" --db "$WORK/c.db" >"$WORK/mpi.log" 2>&1 || fail "mpi study exited $?"
"$BIN/scalebench" results --db "$WORK/c.db" --format json >"$WORK/mpi.jsonl"
# Per variant: bw and time at 2 sizes, mpi_size, mark (only the marked one parses), throughput.
json_check "$WORK/mpi.jsonl" 'all(r["status"] == "ok" and r["workload"] == "command" for r in records)'
json_check "$WORK/mpi.jsonl" 'sorted((r["point"]["size"], r["value"]) for r in records if r["metric"] == "bw" and r["variant"] == "plain") == [(1024, 1.0), (4096, 4.0)]'
json_check "$WORK/mpi.jsonl" 'sorted(r["value"] for r in records if r["metric"] == "time") == [10.24, 10.24, 40.96, 40.96]'
json_check "$WORK/mpi.jsonl" 'all(r["better"] == "lower" and r["unit"] == "us" for r in records if r["metric"] == "time")'
json_check "$WORK/mpi.jsonl" '[r["value"] for r in records if r["metric"] == "mpi_size"] == [2, 2]'
json_check "$WORK/mpi.jsonl" '[r["value"] for r in records if r["metric"] == "throughput"] == [1234.5, 1234.5]'
json_check "$WORK/mpi.jsonl" 'all(r["unit"] == "images/s" for r in records if r["metric"] == "throughput")'
json_check "$WORK/mpi.jsonl" '[(r["variant"], r["value"]) for r in records if r["metric"] == "mark"] == [("plain", 1), ("marked", 7)]'
json_check "$WORK/mpi.jsonl" 'all(r["placement"]["ranks"] == 2 and r["environment"]["scalebench_version"] for r in records)'
json_check "$WORK/mpi.jsonl" 'all(r["environment"]["command"]["launch"] == "mpi" and "-np 2" in r["environment"]["command"]["argv"] for r in records)'

cat >"$WORK/ranks.yaml" <<YAML
name: cmd-ranks
workload: command
command:
  program: $WORK/figure_printer
  args: [--write, "{output_dir}/summary-{round}.txt"]
  launch: ranks
  output_file: "{output_dir}/summary-{round}.txt"
  figures:
    world_size: {regex: 'world_size=(\d+)', unit: ranks}
    local_rank: {regex: 'local_rank=(\d+)', unit: ""}
    master_port: {regex: 'master_port=(\d+)', unit: ""}
    elapsed: {regex: 'elapsed_ms=([0-9.]+)', unit: ms, better: lower}
placement:
  ranks_per_node: [2]
rounds: 2
YAML
"$BIN/scalebench" study "$WORK/ranks.yaml" --db "$WORK/r.db" >"$WORK/ranks.log" 2>&1 || fail "ranks study exited $?"
"$BIN/scalebench" results --db "$WORK/r.db" --format json >"$WORK/ranks.jsonl"
json_check "$WORK/ranks.jsonl" 'len(records) == 8 and all(r["status"] == "ok" for r in records)'
json_check "$WORK/ranks.jsonl" '[r["value"] for r in records if r["metric"] == "world_size"] == [2, 2]'
json_check "$WORK/ranks.jsonl" '[r["value"] for r in records if r["metric"] == "local_rank"] == [0, 0]'
json_check "$WORK/ranks.jsonl" 'all(r["value"] > 0 for r in records if r["metric"] == "master_port")'
json_check "$WORK/ranks.jsonl" 'sorted(r["round"] for r in records if r["metric"] == "elapsed") == [1, 2]'
grep -q "\[rank 1\] hello from rank 1 of 2" "$WORK"/agent-*/run-*.log 2>/dev/null ||
  grep -rq "hello from rank 1 of 2" "$WORK" || fail "rank 1's output is not in the run log"

cat >"$WORK/bad.yaml" <<YAML
name: cmd-bad
workload: command
command:
  program: "{program}"
  args: [--mode, "{mode}"]
  launch: once
  figures:
    elapsed: {regex: 'elapsed_ms=([0-9.]+)', unit: ms, better: lower}
matrix:
  program: [$WORK/figure_printer, no-such-benchmark-program]
  mode: [fail, nosummary]
placement:
  ranks_per_node: [1]
YAML
set +e
"$BIN/scalebench" study "$WORK/bad.yaml" --db "$WORK/b.db" >"$WORK/bad.log" 2>&1
rc=$?
set -e
[[ $rc -eq 3 ]] || fail "a study with failed runs exits 3, got $rc"
"$BIN/scalebench" results --db "$WORK/b.db" --format json >"$WORK/bad.jsonl"
json_check "$WORK/bad.jsonl" 'len(records) == 4'
json_check "$WORK/bad.jsonl" '[r for r in records if r["params"]["mode"] == "fail" and r["params"]["program"].endswith("figure_printer")][0]["status"] == "failed"'
json_check "$WORK/bad.jsonl" '"exited with code 3" in [r for r in records if r["params"]["mode"] == "fail" and r["status"] == "failed"][0]["reason"]'
json_check "$WORK/bad.jsonl" '"failing on purpose with 3" in [r for r in records if r["params"]["mode"] == "fail" and r["status"] == "failed"][0]["reason"]'
json_check "$WORK/bad.jsonl" '"figure '"'"'elapsed'"'"' is not in the output" in [r for r in records if r["params"]["mode"] == "nosummary" and r["status"] == "failed"][0]["reason"]'
json_check "$WORK/bad.jsonl" 'sum(1 for r in records if r["status"] == "skipped" and "no-such-benchmark-program" in r["reason"] and "not found on PATH" in r["reason"]) == 2'

# Bad input: a placeholder that names nothing, with file, line and field.
cat >"$WORK/typo.yaml" <<YAML
name: cmd-typo
workload: command
command:
  program: $WORK/figure_printer
  args: [--sizes, "{sise}"]
  figures:
    bw: {regex: 'x(\d+)'}
params:
  sizes: 8
YAML
set +e
"$BIN/scalebench" study "$WORK/typo.yaml" --db "$WORK/t.db" >"$WORK/typo.log" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "a bad experiment file exits 2, got $rc"
grep -q "typo.yaml:5:.*command.args\[1\].*{sise}" "$WORK/typo.log" || fail "the placeholder error names file, line and field: $(cat "$WORK/typo.log")"
echo "study_command: ok"
