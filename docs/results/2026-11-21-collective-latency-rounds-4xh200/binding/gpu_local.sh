#!/bin/bash
# Runs "$@" on the CPUs next to this local rank's GPU (sysfs local_cpulist).
r=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i "$r" | tr 'A-Z' 'a-z' | sed 's/^0000//')
cpus=$(cat /sys/bus/pci/devices/$bus/local_cpulist)
exec taskset -c "$cpus" "$@"
