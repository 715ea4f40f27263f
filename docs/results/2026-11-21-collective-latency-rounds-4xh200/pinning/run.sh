#!/bin/bash
# Each rank of all_reduce_perf (2 GPUs) pinned to 2 cores from BASE (+2 per local rank), twice per
# BASE, then 4 runs unpinned. From the repository root with OUT set and the bundle in .gpu-bundle.
set -u
E=.gpu-bundle/env.sh; export PATH=$PWD/.gpu-bundle/bin:$PATH
W=$OUT/w/lat; mkdir -p $W
cat > /tmp/pin1.sh <<'X'
#!/bin/bash
r=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
c=$((BASE + 2*r))
exec taskset -c $c,$((c+1)) "$@"
X
chmod +x /tmp/pin1.sh
for rep in 1 2; do for base in 0 16 32 48; do
  BASE=$base timeout 20 $E mpirun -np 2 --bind-to none -x BASE /tmp/pin1.sh all_reduce_perf -b 8 -e 4K -f 4 -w 5 -n 50 -N 3 -c 0 > $W/pin-$base-r$rep.txt 2>&1
done; done
for rep in 1 2 3 4; do timeout 20 $E mpirun -np 2 --bind-to none all_reduce_perf -b 8 -e 4K -f 4 -w 5 -n 50 -N 3 -c 0 > $W/free-r$rep.txt 2>&1; done
