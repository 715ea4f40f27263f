#!/usr/bin/env python3
"""python3 summarize.py CALL.tgz: per run (round, precision, program): status, images/s, the step,
the algorithm search's seconds, and each convolution pass whose legacy cuDNN algorithm is not
algo 1 (the tensor-core implicit GEMM that every good run chose), with its ms at selection."""
import json, gzip, sys, tarfile, re
rows=[]
with tarfile.open(sys.argv[1]) as tar:
    for m in tar.getmembers():
        if not m.name.endswith('.log.gz') or 'unit' in m.name: continue
        name=m.name.split('/')[-1][:-7]
        for line in gzip.decompress(tar.extractfile(m).read()).decode().splitlines():
            if line.startswith('@@SCALEBENCH_RECORD') and '"metric":"throughput"' in line:
                r=json.loads(line.split(' ',1)[1]); rows.append((name,r))
key=lambda n: (int(re.match(r'r(\d+)',n).group(1)), n)
for name,r in sorted(rows,key=lambda x:key(x[0])):
    d=r['details']
    bad=[(k,p,v[p],round(v[p+'_ms'],3)) for k,v in d['conv_algorithms'].items() for p in ['fwd','bwd_data','bwd_filter'] if v[p] and v[p].startswith('legacy') and v[p]!='legacy algo 1']
    print(f"{name:15s} {r['status']} {r['value']:7.1f} step {d['step_ms']:.2f} search {d['algo_search_s']:.1f}s {bad}")
