#!/usr/bin/env python3
"""Per run of `run-launch.sh` or `run-buckets.sh`: python3 summarize.py launch|buckets. A 1-GPU run: its step (ms) and
ms power-capped; a 2-GPU run: the slowest rank's step, the slowest rank's step without
all-reduce, efficiency against the same round's 1-GPU step, communication (the difference),
the all-reduce alone, each GPU's power-capped ms; then per rank the marked step's backward
stretch (total ms and the 3 layers that lost most) and each bucket's all-reduce ms."""
import json,gzip,glob,os,sys,re
d=sys.argv[1]
def recs(f):
    out=[]
    for l in gzip.open(f,'rt'):
        if l.startswith('@@SCALEBENCH_RECORD'):
            out.append(json.loads(l.split(' ',1)[1]))
    return out
runs={}
for f in sorted(glob.glob(d+'/*.log.gz')):
    n=os.path.basename(f)[:-7]
    rs=[r for r in recs(f) if r.get('metric')=='throughput' and r.get('workload')=='train']
    runs[n]=rs
for n,rs in runs.items():
    m=re.match(r'r(\d+)_(\w+?)_np(\d)(?:_(.*))?',n); rnd,p,np_,l=m.groups()
    if np_=='1':
        base=rs[0]['details']['step_ms']; print(n, 'step %.3f'%base, 'capped', rs[0]['details'].get('clock_limits',{}).get('power_capped_ms')); continue
    step=max(r['details']['step_ms'] for r in rs); alone=max(r['details']['step_ms_without_allreduce'] for r in rs)
    caps=[round(r['details'].get('clock_limits',{}).get('power_capped_ms',0)) for r in rs]
    tl=[r['details'].get('timeline') for r in rs]
    st=[]
    for t in tl:
        if not t: continue
        bs=t.get('backward_stretch',{})
        top=[(L['layer'],round(L['ms_with']-L['ms_without'],3)) for L in bs.get('layers',[])[:3]]
        st.append((round(bs.get('total_ms',0),3), top, [round(b['allreduce_ms'],3) for b in t['buckets']]))
    print(n, 'step %.3f alone %.3f eff %.2f%% comm %.3f'%(step,alone,100*base/step,step-alone), 'AR alone %.3f'%rs[0]['details']['allreduce_alone_ms'], 'capped',caps, 'bucket_launch', rs[0]['details'].get('bucket_launch', rs[0]['details'].get('launch')))
    for s in st: print('    ', s)
