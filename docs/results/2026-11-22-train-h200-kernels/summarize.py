#!/usr/bin/env python3
"""Per run of run-maxpool.sh or run-ab.sh (python3 summarize.py CALL.tgz): status, images/s and
its cv, the output check, the gradient check's wrong tensors, the eager profile's max-pool and
batch-norm milliseconds (forward/backward, whole step), ms power-capped, first and last loss,
the step in ms."""
import json, sys, tarfile, gzip, os

with tarfile.open(sys.argv[1]) as tar:
    for m in sorted(tar.getmembers(), key=lambda m: m.name):
        if not m.name.endswith('.log.gz') or 'unit-tests' in m.name:
            continue
        for line in gzip.decompress(tar.extractfile(m).read()).decode().splitlines():
            if not line.startswith('@@SCALEBENCH_RECORD'):
                continue
            r = json.loads(line.split(' ', 1)[1])
            if r.get('metric') != 'throughput':
                continue
            d = r['details']
            p = d.get('profile', {}).get('by_op_ms', {})
            print(os.path.basename(m.name)[:-7].ljust(16), r['status'], 'img/s %.1f' % r['value'],
                  'cv %.4f' % r['stats']['cv'], 'check', r['correctness']['passed'],
                  'gradient-check wrong', d.get('gradient_check', {}).get('wrong'),
                  'maxpool %.2f/%.2f' % (p.get('maxpool fwd', 0), p.get('maxpool bwd', 0)),
                  'batchnorm %.2f/%.2f' % (p.get('batchnorm fwd', 0), p.get('batchnorm bwd', 0)),
                  'capped', round(d.get('clock_limits', {}).get('power_capped_ms', 0)),
                  'loss %.3f %.3f' % (d['loss_first'], d['loss_last']), 'step %.3f' % d['step_ms'])
