#!/bin/bash
# examples/resnet50-scaling.yaml as a study on all GPUs of the machine (local coordinator and agent), then its report. OUT set; B=BUNDLE.
set -u
B=${B:-.gpu-bundle}; E=$B/env.sh; export PATH=$PWD/$B/bin:$PATH
W=$OUT/s4; mkdir -p $W
finish() { tar czf $OUT/s4.tgz -C $OUT s4; }
trap finish EXIT
t() { local name=$1 lim=$2; shift 2; local t0=$(date +%s); timeout $lim "$@" > $W/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s" >> $W/summary.txt; }
t study 540 $E scalebench study examples/resnet50-scaling.yaml --db $W/study.db --logs $W/study-logs
t report 30 $E scalebench report --db $W/study.db --out $W/report
$E scalebench results --db $W/study.db --format json > $W/results.jsonl 2>> $W/summary.txt
