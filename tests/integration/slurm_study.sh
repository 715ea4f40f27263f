#!/usr/bin/env bash
# SLURM for real: a one-node cluster on localhost (munged, slurmctld and slurmd from Debian's
# packages, each in the foreground in its own folder, on free ports), deploy/slurm's batch script
# submitted with sbatch for a host-memory study, the agent starting its runs as job steps with
# srun --mpi=pmix; then the stored results, the report, and the steps SLURM ran are checked.
# Skipped (77) only where slurmctld is not installed (scripts/install-test-deps.sh installs it).
if ! command -v slurmctld >/dev/null 2>&1; then
  echo "slurm_study: skipped: slurmctld is not installed (scripts/install-test-deps.sh installs it)"
  exit 77
fi
source "$(dirname "$0")/lib.sh"
for p in munged slurmd sbatch srun squeue scontrol scancel sinfo; do
  command -v "$p" >/dev/null || fail "$p is not installed next to slurmctld"
done
[[ $(id -u) -eq 0 ]] || fail "slurm_study starts slurmd, which must run as root"

S=$WORK/slurm
mkdir -p "$S/state" "$S/spool" "$S/munge-key" "$S/munge-run"
chmod 700 "$S/munge-key"
chmod 755 "$S/munge-run"  # every user reaches munged's socket; only root reads the key

# munged with a key made here, on its own socket.
head -c 1024 /dev/urandom >"$S/munge-key/munge.key"
chmod 400 "$S/munge-key/munge.key"
munged --foreground --force --socket="$S/munge-run/munge.socket" --key-file="$S/munge-key/munge.key" \
  --pid-file="$S/munge-run/munged.pid" --seed-file="$S/munge-key/munged.seed" --log-file="$WORK/munged.log" \
  >>"$WORK/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [[ -S $S/munge-run/munge.socket ]] && break; sleep 0.1; done
munge --socket="$S/munge-run/munge.socket" --no-input | unmunge --socket="$S/munge-run/munge.socket" >/dev/null ||
  fail "munged does not answer"

read -r CTLD_PORT SLURMD_PORT < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
# This node as slurmd sees it (name, CPUs, sockets, cores, memory), reached over loopback.
NODE_LINE=$(slurmd -C | head -n 1)
NODE=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$NODE_LINE")
[[ -n $NODE ]] || fail "slurmd -C printed no NodeName: $NODE_LINE"
export SLURM_CONF=$S/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=scalebench-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge-run/munge.socket
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
MailProg=/bin/true
# No cgroups, no accounting: what a container without systemd offers.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# Two GPUs as a generic resource (stand-in device files, below): the job asks for them as GPU
# sites require, and the steps pass the request on.
GresTypes=gpu
$NODE_LINE Gres=gpu:2 NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF

# Two GPU device files that are no GPU (the null device's numbers): slurmd counts a GPU by its
# File, and no step here is confined to its devices (no cgroups).
mkdir -p "$S/dev"
for i in 0 1; do mknod "$S/dev/nvidia$i" c 1 3; done
echo "NodeName=$NODE Name=gpu File=$S/dev/nvidia[0-1]" >"$S/gres.conf"

slurmctld -D -f "$SLURM_CONF" >>"$WORK/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" -N "$NODE" >>"$WORK/slurmd.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do
  [[ $(sinfo -h -n "$NODE" -o %t 2>/dev/null) == idle ]] && break
  sleep 0.1
done
[[ $(sinfo -h -n "$NODE" -o %t 2>/dev/null) == idle ]] || fail "node $NODE is not idle: $(sinfo 2>&1)"
srun --mpi=list 2>&1 | grep -qw pmix || fail "SLURM has no pmix plugin: $(srun --mpi=list 2>&1)"

# A host-memory collective: all_reduce on the MPI backend at 1 and 2 ranks, 3 small sizes.
cat >"$WORK/study.yaml" <<'YAML'
name: slurm-smoke
workload: collective
params: {backend: mpi, op: all_reduce, min_bytes: 1KiB, max_bytes: 16KiB, step_factor: 4, time_cap: 0.2}
placement: {ranks_per_node: [1, 2]}
repetitions: 5
timeout: 2m
YAML

JOB=""
stop_job() {
  [[ -n $JOB ]] || return 0
  scancel "$JOB" 2>/dev/null || true
  for _ in $(seq 100); do
    squeue -h -j "$JOB" 2>/dev/null | grep -q . || return 0
    sleep 0.1
  done
}
# The job first (its processes are slurmstepd's, not ours), then the daemons by pid (lib.sh).
trap 'rc=$?; set +e; stop_job; (exit $rc); cleanup' EXIT

JOB=$(sbatch --parsable --nodes=1 --gpus-per-node=2 --time=10 --chdir="$WORK" --output="$WORK/job.log" \
  --export=ALL,SCALEBENCH_BIN="$BIN",SCALEBENCH_AGENT_DIR="$WORK/agents" "$SRC/deploy/slurm/scalebench.sbatch" "$WORK/study.yaml" "$WORK/out") ||
  fail "sbatch refused the job"
JOB=${JOB%%;*}
state=""
for _ in $(seq 480); do
  state=$(scontrol show job "$JOB" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  [[ $state == PENDING || $state == RUNNING || $state == CONFIGURING || $state == COMPLETING ]] || break
  sleep 0.5
done
[[ $state == COMPLETED ]] || fail "job $JOB ended $state (want COMPLETED): $(tail -n 20 "$WORK/job.log")"
JOB_DONE=$JOB
JOB=""
# SLURM_STUDY_JOB_LOG=FILE keeps the job's output (docs/results/2026-11-29-guides-host shows it).
[[ -z ${SLURM_STUDY_JOB_LOG:-} ]] || cp "$WORK/job.log" "$SLURM_STUDY_JOB_LOG"
grep -q "scalebench.sbatch: .* records; report in" "$WORK/job.log" || fail "the batch script did not finish: $(cat "$WORK/job.log")"

# Stored results: 2 placements x 3 sizes x 3 metrics, all ok, from the 1- and 2-rank runs, with
# ranks and local ranks as SLURM's PMIx gave them.
"$BIN/scalebench" results --db "$WORK/out/scalebench.db" --format json >"$WORK/records.jsonl"
json_check "$WORK/records.jsonl" 'len(records) == 18'
json_check "$WORK/records.jsonl" 'all(r["status"] == "ok" and r["correctness"]["passed"] for r in records)'
json_check "$WORK/records.jsonl" 'sorted(set(r["point"]["size"] for r in records)) == [1024, 4096, 16384]'
json_check "$WORK/records.jsonl" 'sorted(set(r["placement"]["ranks"] for r in records)) == [1, 2]'
json_check "$WORK/records.jsonl" 'all(r["placement"]["nodes"] == 1 and r["placement"]["gpus"] == 0 for r in records)'
json_check "$WORK/records.jsonl" 'all(sorted(d["rank"] for d in r["placement"]["devices"]) == list(range(r["placement"]["ranks"])) for r in records)'
json_check "$WORK/records.jsonl" 'all(sorted(d["local_rank"] for d in r["placement"]["devices"]) == list(range(r["placement"]["ranks"])) for r in records)'
json_check "$WORK/records.jsonl" 'all(r["environment"]["backend"] == "mpi" and r["environment"]["mpi"] for r in records)'
# Every rank's binding as the kernel reported it: host runs are not pinned (--cpu-bind=none), so
# each rank has the CPUs its step was given, as a Linux CPU list.
json_check "$WORK/records.jsonl" 'all(sorted(b["rank"] for b in r["environment"]["binding"]) == list(range(r["placement"]["ranks"])) for r in records)'
json_check "$WORK/records.jsonl" 'all(b["cpus"] and set(b["cpus"]) <= set("0123456789,-") and isinstance(b["numa_nodes"], list) for r in records for b in r["environment"]["binding"])'
cmp -s <(sort "$WORK/records.jsonl") <(sort "$WORK/out/results.jsonl") || fail "results.jsonl differs from the store"
grep -q '"ok":2' "$WORK/out/status.txt" || fail "status: $(cat "$WORK/out/status.txt")"
for f in index.html report.md report.json; do [[ -s $WORK/out/report/$f ]] || fail "report/$f missing"; done
grep -q "all_reduce" "$WORK/out/report/report.md" || fail "the report has no all_reduce results"

# The runs were SLURM job steps started with srun --mpi=pmix by the agent: slurmd launched step 0
# (the agents) and steps 1 and 2 (the runs).
grep -q "runs start with srun --mpi=pmix on SLURM node $NODE" "$WORK/out/agents.log" || fail "agent launcher"
runlogs=("$WORK/agents"/run-*.log)
[[ ${#runlogs[@]} -eq 2 ]] || fail "want 2 run logs, got ${runlogs[*]}"
for l in "${runlogs[@]}"; do
  head -n 1 "$l" | grep -q "^# srun --mpi=pmix --nodes=1 --ntasks=[12] --ntasks-per-node=[12] --nodelist=$NODE " ||
    fail "$l: $(head -n 1 "$l")"
  # The job's GPU request goes to each run's step; a host run's tasks are not pinned.
  head -n 1 "$l" | grep -q " --cpu-bind=none .* --gpus-per-node=2 " || fail "$l: GPU request or binding: $(head -n 1 "$l")"
done
grep -q "GPU request per step: --gpus-per-node=2$" "$WORK/job.log" || fail "the batch script passed no GPU request"
grep -q "launch task StepId=$JOB_DONE.3 " "$WORK/slurmd.log" && fail "a step more than the 2 runs"
for step in 0 1 2; do
  grep -q "launch task StepId=$JOB_DONE.$step " "$WORK/slurmd.log" || fail "slurmd launched no step $JOB_DONE.$step"
done
echo "slurm_study: ok (job $JOB_DONE)"
