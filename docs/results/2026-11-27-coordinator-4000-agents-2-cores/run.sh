#!/bin/bash
# The coordinator load bench on a quiet many-core machine, the coordinator held to 2 CPUs: first
# with the played agents on the other cores (the coordinator's own budget), then with bench and
# coordinator sharing the same 2 CPUs (as on a 2-core machine). B = the bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
nproc; uptime
echo "== coordinator on CPUs 0,1; played agents on the rest"
timeout 280 $B scalebench-coordinator-load --agents 1000,2000,4000 --duration 20 --coordinator-cpus 0,1; echo "rc=$?"
uptime
echo "== all on CPUs 0,1"
timeout 280 taskset -c 0,1 $B scalebench-coordinator-load --agents 1000,2000,4000 --duration 20; echo "rc=$?"
