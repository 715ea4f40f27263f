#!/usr/bin/env bash
# A rank program for the hung-rank test: every rank notes its rank, pid, the host it was bound to
# (SCALEBENCH_HOST, from scalebench-run --exec-on-host) and its local rank in $1 (shared by the
# ranks of every node), then the last rank hangs while the others print a figure and end.
set -euo pipefail
echo "$OMPI_COMM_WORLD_RANK $$ ${SCALEBENCH_HOST:-none} $OMPI_COMM_WORLD_LOCAL_RANK" >>"$1"
if [[ $OMPI_COMM_WORLD_RANK -eq $((OMPI_COMM_WORLD_SIZE - 1)) ]]; then exec sleep 600; fi
echo "value=1"
