#!/usr/bin/env bash
# `scalebench ratio` between two variants whose names are wider than their numbers
# (docs/guide/own-program.md shows its header): a host-memory study, then the ratio table.
# usage: docs/results/2026-11-29-guides-host/ratio.sh   (BIN=DIR for programs built elsewhere)
set -uo pipefail
cd "$(dirname "$0")/../../.."
HERE=docs/results/2026-11-29-guides-host
BIN=${BIN:-build/bin}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=
rm -rf /tmp/ratio-host.db*
{ uptime; git rev-parse --short HEAD; "$BIN/scalebench" version; } >"$HERE/ratio-machine.txt"
"$BIN/scalebench" study "$HERE/ratio-host.yaml" --db /tmp/ratio-host.db >"$HERE/ratio-study.txt" 2>&1
echo "exit $?" >>"$HERE/ratio-study.txt"
"$BIN/scalebench" ratio --db /tmp/ratio-host.db --variants shared-memory,tcp-loopback --metric busbw >"$HERE/ratio-busbw.txt" 2>&1
echo "exit $?" >>"$HERE/ratio-busbw.txt"
