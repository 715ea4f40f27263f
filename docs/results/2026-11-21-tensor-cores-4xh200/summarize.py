"""Tables of the Tensor Core study from records.jsonl(.gz) and the peers' JSON files beside it."""
import gzip, json, statistics, sys, os
here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
recs = [json.loads(l) for l in gzip.open(os.path.join(here, 'records.jsonl.gz'), 'rt')]
def last_json(f):  # the peer prints a line per figure, then its JSON
    return json.loads([l for l in open(os.path.join(here, f)) if l.startswith('{')][-1])
peer_g = [last_json(f) for f in ('peer-gemm-before.json', 'peer-gemm-after.json')]
peer_l = json.load(open(os.path.join(here, 'peer-lstm-before.json')))
bad = [r for r in recs if r['status'] != 'ok']
checked = [r for r in recs if r.get('correctness', {}).get('checked')]
print(f"{len(recs)} records, {len(bad)} not ok, {sum(1 for r in checked if r['correctness']['passed'])} of {len(checked)} checked records passed")
def val(wl, metric, gpus, **pt):
    out = [r for r in recs if r['workload'] == wl and r['metric'] == metric and r['status'] == 'ok'
           and r['placement']['gpus'] == gpus and all(r['point'].get(k) == v for k, v in pt.items())]
    return out
print("\n## gemm 8192^3 (TFLOP/s; TOP/s int8)\n")
print("| precision | 1 GPU | % of peak | 4 GPUs total | per GPU min-max | spread % | torch.matmul (grid data, before/after) | ratio |")
print("|---|---|---|---|---|---|---|---|")
for p in ['fp64', 'fp32', 'tf32', 'fp16', 'bf16', 'fp8e4m3', 'int8']:
    one = val('gemm', 'throughput', 1, precision=p, m=8192, n=8192, k=8192)
    tot = val('gemm', 'throughput_total', 4, precision=p, m=8192, n=8192, k=8192)
    per = val('gemm', 'throughput', 4, precision=p, m=8192, n=8192, k=8192)
    spr = val('gemm', 'gpu_spread', 4, precision=p, m=8192, n=8192, k=8192)
    if not one: continue
    o = one[0]['value']; pct = one[0].get('pct_of_peak')
    torch = [r['tflops'] for g in peer_g for r in g['results'] if r['precision'] == p and r['data'] == 'grid']
    tt = '/'.join(f"{t:.1f}" for t in torch) if torch else '-'
    ratio = f"{o / max(torch):.3f}" if torch else '-'
    pv = [r['value'] for r in per]
    print(f"| {p} | {o:.1f} | {pct:.1f} | {tot[0]['value']:.1f} | {min(pv):.1f}-{max(pv):.1f} | {spr[0]['value']:.2f} | {tt} | {ratio} |" if tot else f"| {p} | {o:.1f} | {pct} | - | - | - | {tt} | {ratio} |")
print("\n## rnn: LSTM training, seq 32, batch 128 (samples/s)\n")
print("| precision | hidden | 1 GPU | torch.nn.LSTM | ratio | 4 GPUs total | spread % | algo |")
print("|---|---|---|---|---|---|---|---|")
for p in ['fp32', 'tf32', 'fp16']:
    for h in [128, 256, 512, 1024]:
        one = [r for r in val('rnn', 'throughput', 1, hidden=h) if r['params']['precision'] == p and r['params']['cell'] == 'lstm']
        tot = [r for r in val('rnn', 'throughput_total', 4, hidden=h) if r['params']['precision'] == p and r['params']['cell'] == 'lstm']
        spr = [r for r in val('rnn', 'gpu_spread', 4, hidden=h) if r['params']['precision'] == p and r['params']['cell'] == 'lstm']
        if not one: continue
        t = peer_l.get(f'h{h}_{p}')
        print(f"| {p} | {h} | {one[0]['value']:.0f} | {t:.0f} | {one[0]['value'] / t:.2f} | {tot[0]['value']:.0f} | {spr[0]['value']:.2f} | {one[0].get('details', {}).get('algo', '')} |")
print("\n## conv: ResNet-50 layers, batch 64, NHWC, one GPU (TFLOP/s, median over the 23 layers; sum of layer times weighted by occurrences gives the network figure)\n")
print("| precision | fwd | bwd_data | bwd_filter | 4 GPUs: median spread % |")
print("|---|---|---|---|---|")
for p in ['fp32', 'tf32', 'fp16', 'bf16']:
    row = []
    for ps in ['fwd', 'bwd_data', 'bwd_filter']:
        v = [r['value'] for r in val('conv', 'throughput', 1, precision=p, **{'pass': ps})]
        row.append(f"{statistics.median(v):.1f}" if v else '-')
    s = [r['value'] for r in val('conv', 'gpu_spread', 4, precision=p)]
    print(f"| {p} | {' | '.join(row)} | {statistics.median(s):.2f} |" if s else f"| {p} | {' | '.join(row)} | - |")
