#!/bin/bash
# One call on one GPU: the standard level on the clean GPU as often as fits (BUDGET_S), then the
# quick level clean and beside a competing GEMM process, then the gpt checks on the merged code.
BUDGET_S=${BUDGET_S:-170} bash docs/results/2026-11-25-accept-h100/standard.sh
bash docs/results/2026-11-25-accept-h100/contended.sh
