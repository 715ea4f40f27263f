#!/usr/bin/env bash
# Stands in for ssh when the "nodes" of a test are addresses of this machine (127.0.0.x): mpirun
# calls it as its rsh agent (OMPI_MCA_plm_rsh_agent) to start its daemon on each host of the
# hostfile. Like sshd it starts the command in a session of its own (so mpirun's process group
# does not reach it: mpirun must end it itself) with a bare environment (so what the ranks need
# must travel on mpirun's command line, -x). Each call is logged to $SCALEBENCH_RSH_LOG.
set -euo pipefail
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in -l | -p | -o | -i) shift 2 ;; *) shift ;; esac
done
host=${1:?local_rsh: no host}
shift
# Only addresses of this machine: a test must never reach another one.
case $host in
  127.* | localhost) ;;
  *) getent hosts "$host" | grep -q '^127\.' || { echo "local_rsh: $host is not this machine" >&2; exit 255; } ;;
esac
[[ -n ${SCALEBENCH_RSH_LOG:-} ]] && echo "$host $*" >>"$SCALEBENCH_RSH_LOG"
# Separate machines have separate /tmp: with SCALEBENCH_RSH_TMPDIR each host gets a folder in it.
tmp=${TMPDIR:-/tmp}
if [[ -n ${SCALEBENCH_RSH_TMPDIR:-} ]]; then
  tmp=$SCALEBENCH_RSH_TMPDIR/$host
  mkdir -p "$tmp"
fi
exec setsid env -i PATH="$PATH" HOME="${HOME:-/root}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" TMPDIR="$tmp" \
  bash -c "$*"
