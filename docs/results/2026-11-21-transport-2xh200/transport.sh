#!/bin/bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for v in "" "NCCL_P2P_DISABLE=1" "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1"; do
  echo "== env: ${v:-none}"
  env $v mpirun --allow-run-as-root -np 2 --bind-to none $(for x in $v; do echo -x ${x%%=*}; done) scalebench-run collective -p backend=nccl \
    -p min_bytes=64MiB -p max_bytes=64MiB --repetitions 5 --emit records | grep -o '"nccl_transports":{[^}]*}\|"metric":"busbw"[^}]*"value":[0-9.]*\|"status":"[a-z]*","reason":"[^"]*"' | sort | uniq -c
done
scalebench study examples/quick.yaml --db /tmp/q.db | tail -4
scalebench results --db /tmp/q.db --format json | grep -o '"variant":"[a-z]*"\|"nccl_transports":{[^}]*}' | paste - - | sort | uniq -c
