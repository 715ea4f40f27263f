#!/usr/bin/env python3
"""The call's runs as one records file for `scalebench report --records`:
python3 to_records.py FOLDER > records.jsonl (FOLDER/NAME.log.gz holds a run's output).

Direct runs (`scalebench-run ... --emit records`) all say run_id 0 and experiment "adhoc"; here
each log becomes its own run (run_id = its place in the sorted list) of one experiment, variant
"nvlink", round = the name's rN prefix, so that the report pairs each 4-GPU run with the 1-GPU
runs of the same precision and batch."""
import glob, gzip, json, os, sys

TAG = '@@SCALEBENCH_RECORD '
folder = sys.argv[1]
for run_id, path in enumerate(sorted(glob.glob(os.path.join(folder, '*.log.gz'))), start=1):
    name = os.path.basename(path)[:-7]
    with gzip.open(path, 'rt', errors='replace') as f:
        for line in f:
            i = line.find(TAG)
            if i < 0:
                continue
            r = json.loads(line[i + len(TAG):])
            r['run_id'] = run_id
            r['experiment'] = os.path.basename(os.path.normpath(folder))
            r['variant'] = 'nvlink'
            r['round'] = int(name.split('_')[0][1:]) if name.startswith('r') else 1
            print(json.dumps(r))
