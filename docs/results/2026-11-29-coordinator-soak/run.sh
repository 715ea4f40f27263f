#!/bin/bash
# The coordinator soak: 30 minutes at 2,000 agents x 8 GPUs (the defaults), agents leaving and
# joining, a study submitted and cancelled each minute, the coordinator SIGKILLed at 15 minutes
# and started again on the same store. On a quiet machine; the coordinator on CPU 0, the played
# cluster on CPU 1, as the load bench's goal is measured. Its store grows to about 3 GB in TMPDIR.
# B = the bundle's env.sh, or leave it empty to run build/bin's programs from PATH.
B=${B:-}
nproc; uptime; df -h "${TMPDIR:-/tmp}" | tail -1
taskset -c 1 $B scalebench-coordinator-soak --coordinator-cpus 0; echo "rc=$?"
uptime
