#!/usr/bin/env python3
"""This call's runs as one records file for `scalebench report --records`:
python3 ../2026-11-22-train-2xh200-batch/to_records.py launch | python3 records.py > records.jsonl

The programs ran before the parameter was renamed: `launch` in these logs is `bucket_launch`. A
1-GPU run has no all-reduce to launch, so it is the baseline of both settings: its records are
written once per setting (the copy under a new run id), so that the report pairs each 2-GPU run
with the 1-GPU runs of its round."""
import json, sys

SETTINGS = ('after_fused_bn', 'ready')
records = [json.loads(line) for line in sys.stdin]
last_id = max(r['run_id'] for r in records)
for r in records:
    p = r['params']
    p['bucket_launch'] = p.pop('launch', 'ready')
    if r['placement']['ranks'] > 1:
        print(json.dumps(r))
        continue
    for k, setting in enumerate(SETTINGS):
        c = json.loads(json.dumps(r))
        c['params']['bucket_launch'] = setting
        c['run_id'] = r['run_id'] + k * last_id
        print(json.dumps(c))
