#!/usr/bin/env bash
# The NVLink-vs-PCIe study on this machine's GPUs with its peers measured in the same call:
# nccl-tests for every collective (NVLink and P2P off) and nvbandwidth for the copy matrix.
# Needs scalebench's programs, nccl-tests' *_perf and nvbandwidth on PATH. Split in two parts so
# that each fits a ten-minute window:
#   scripts/nvlink-vs-pcie.sh a OUTDIR   1 and all GPUs; latency, CUDA graph, one process x N GPUs
#   scripts/nvlink-vs-pcie.sh b OUTDIR   2 GPUs; the copy matrix against nvbandwidth
# Results go to OUTDIR/study.db; `scalebench ratio --db OUTDIR/study.db` prints the ratios.
set -uo pipefail
part=${1:?usage: nvlink-vs-pcie.sh a|b|c OUTDIR}
out=${2:?usage: nvlink-vs-pcie.sh a|b|c OUTDIR}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L | wc -l)
here=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/progress.txt"; }

{
  date -u
  nvidia-smi -L
  nvidia-smi topo -m
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv,noheader
  mpirun --version | head -1
  echo "NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-unset}"
  scalebench-run --topology
} >"$out/machine-$part.txt" 2>&1

# Smoke first: every program and mode once, small, so that a broken build stops the call within
# a minute instead of spending it.
if [ "$part" = a ]; then
  smoke=(
    "scalebench-run --topology"
    "mpirun -np 2 --bind-to none scalebench-run collective -p backend=nccl -p min_bytes=1MiB -p max_bytes=1MiB"
    "mpirun -np 2 --bind-to none scalebench-run collective -p backend=nccl -p min_bytes=1MiB -p max_bytes=1MiB -p cuda_graph=true"
    "mpirun -np 1 --bind-to none scalebench-run collective -p backend=nccl -p min_bytes=1MiB -p max_bytes=1MiB -p gpus_per_process=2"
    "mpirun -np 1 --bind-to none scalebench-run copy -p bytes=64MiB -p iters=4 --repetitions 3"
    "mpirun -np 1 --bind-to none scalebench-run copy -p test=h2d -p engine=sm -p bytes=64MiB -p iters=4 --repetitions 3"
  )
  for c in "${smoke[@]}"; do
    echo "### $c" >>"$out/smoke.txt"
    # shellcheck disable=SC2086
    if ! timeout 90 $c >>"$out/smoke.txt" 2>&1; then
      log "SMOKE FAILED: $c"
      tail -30 "$out/smoke.txt"
      exit 1
    fi
  done
  log "smoke passed"
fi

# The study, restricted to this part's GPU counts (part b: the six collectives the comparison
# needs, to fit its window).
ops="all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv"
if [ "$part" != c ]; then
  [ "$part" = a ] && gpus="[1, all]" || gpus="[2]"
  [ "$part" = b ] && ops="all_reduce all_gather reduce_scatter alltoall broadcast sendrecv"
  sed -e "s/^  gpus_per_node: .*/  gpus_per_node: $gpus/" \
    -e "s/^  op: \[.*/  op: [$(echo "$ops" | sed 's/ /, /g')]/" \
    "$here/examples/nvlink-vs-pcie.yaml" >"$out/nvlink-vs-pcie-$part.yaml"
  log "study part $part: gpus_per_node $gpus"
  scalebench study "$out/nvlink-vs-pcie-$part.yaml" --db "$out/study.db" >"$out/study-$part.txt" 2>&1
  log "study done: $(tail -1 "$out/study-$part.txt")"
fi

# nccl-tests, same sizes, warm-up and the same two transports.
[ "$part" = a ] && np=$ngpu || np=2
[ "$part" = c ] && np=0
for op in $ops; do
  [ "$np" = 0 ] && break
  for v in nvlink pcie; do
    envs=()
    [ "$v" = pcie ] && envs=(-x NCCL_P2P_DISABLE=1)
    echo "### $op $v np$np" >>"$out/nccl-tests-np$np.txt"
    mpirun -np "$np" --bind-to none "${envs[@]}" "${op}_perf" -b 8 -e 1G -f 8 -g 1 -w 5 -n 20 \
      >>"$out/nccl-tests-np$np.txt" 2>&1
  done
done
log "nccl-tests np$np done"

if [ "$part" = c ]; then
  # Latency, 8 B to 64 KiB: stream launches, CUDA graphs and blocking waits, against nccl-tests'
  # -G and -z; then one process driving every GPU (nccl-tests -g).
  small=(-b 8 -e 64K -f 2 -w 20 -n 100)
  sb_small=(-p min_bytes=8 -p max_bytes=64KiB -p step_factor=2 -p warmup=20 -p iters=100 -p backend=nccl)
  {
    for mode in plain graph blocking; do
      nt=() sb=()
      [ "$mode" = graph ] && nt=(-G 1) sb=(-p cuda_graph=true)
      [ "$mode" = blocking ] && nt=(-z 1) sb=(-p blocking=true)
      echo "### all_reduce latency $mode nccl-tests"
      mpirun -np "$ngpu" --bind-to none all_reduce_perf "${small[@]}" "${nt[@]}"
      echo "### all_reduce latency $mode scalebench"
      mpirun -np "$ngpu" --bind-to none scalebench-run collective "${sb_small[@]}" "${sb[@]}"
    done
    echo "### sendrecv pcie np$ngpu nccl-tests"
    mpirun -np "$ngpu" --bind-to none -x NCCL_P2P_DISABLE=1 sendrecv_perf -b 8 -e 1G -f 8 -g 1 -w 5 -n 20
    echo "### all_reduce one process x $ngpu GPUs nccl-tests -g $ngpu"
    mpirun -np 1 --bind-to none all_reduce_perf -b 64M -e 1G -f 4 -g "$ngpu" -w 5 -n 20
    echo "### all_reduce one process x $ngpu GPUs scalebench gpus_per_process=$ngpu"
    mpirun -np 1 --bind-to none scalebench-run collective -p backend=nccl -p min_bytes=64MiB -p max_bytes=1GiB \
      -p step_factor=4 -p warmup=5 -p iters=20 -p gpus_per_process="$ngpu"
  } >"$out/latency-and-modes.txt" 2>&1
  log "latency and launch modes done"
fi

if [ "$part" = c ]; then
  "$here/scripts/copy-vs-nvbandwidth.sh" "$out" >"$out/copy-vs-nvbandwidth.txt" 2>&1
  log "copy vs nvbandwidth done"
fi
[ "$part" != c ] && scalebench ratio --db "$out/study.db" --variants nvlink,pcie --metric busbw >"$out/ratio-$part.txt" 2>&1
log "part $part finished"
