#!/usr/bin/env python3
"""Tables from a call's runs (CALL.tgz, as the run scripts pack them): python3 summarize.py CALL.tgz

Per run: the step (ms, the slowest rank's median), and for several GPUs the efficiency against the
same round's 1-GPU run of the same precision (its "np1" run; with two, the one named "_old" is
skipped unless it is the only one), the slowest rank's step without all-reduce (`wo`), the exposed
and the lone all-reduce (ms), which all-reduce ran, the record's all-reduce check (wrong elements
per rank) and whether the ranks' weights were identical. With a timeline: the end of the backward
pass with and without all-reduce, how long the last all-reduce ended after it, the backward
stretch (ms the backward pass's layers lost beside the all-reduces), and per bucket its MB, when
it was launched and how long it ran. For 1-GPU runs: batch norm's ms per step (forward and
backward, the eager profile) and the gradients' allocator where the record names it.
"""
import gzip, json, os, sys, tarfile


def records(tar, member):
    out = []
    with tar.extractfile(member) as raw:
        for line in gzip.open(raw, "rt", errors="replace"):
            i = line.find("@@SCALEBENCH_RECORD ")
            if i < 0:
                continue
            r = json.loads(line[i + 20:])
            if r.get("metric") == "time" and "step_ms" in r.get("details", {}):
                out.append(r["details"])
    return out


def main(path):
    tar = tarfile.open(path)
    runs = sorted((os.path.basename(m.name)[:-7], m) for m in tar.getmembers() if m.name.endswith(".log.gz"))
    ones = {}
    for name, m in runs:
        parts = name.split("_")
        if len(parts) < 3 or not parts[2].startswith("np"):
            continue
        d = records(tar, m)
        if not d:
            print(f"{name:28s} no records")
            continue
        step = max(x["step_ms"] for x in d)
        bn = [x["profile"]["by_op_ms"].get("batchnorm fwd", 0) + x["profile"]["by_op_ms"].get("batchnorm bwd", 0) for x in d]
        if parts[2] == "np1":
            if not name.endswith("_old") or (parts[0], parts[1]) not in ones:
                ones[(parts[0], parts[1])] = step
            print(f"{name:28s} step {step:7.3f}  batch norm {max(bn):6.2f}  gradients {d[0].get('gradient_memory', '-')}")
            continue
        one = ones.get((parts[0], parts[1]))
        eff = 100 * one / step if one else float("nan")
        wo = max(x.get("step_ms_without_allreduce", 0) for x in d)
        exposed = max(x.get("exposed_allreduce_ms", 0) for x in d)
        alone = max(x.get("allreduce_alone_ms", 0) for x in d)
        check = [x.get("allreduce_check", {}).get("wrong_elements") for x in d]
        same = all(x.get("weights_identical_across_ranks") for x in d)
        print(f"{name:28s} step {step:7.3f}  eff {eff:6.2f}%  wo {wo:7.3f}  exposed {exposed:.3f}  alone {alone:.3f}"
              f"  {d[0].get('allreduce', 'nccl')}  check {check}  identical {same}  batch norm {max(bn):6.2f}")
        t = d[0].get("timeline")
        if t:
            print("    backward end %.3f (without all-reduce %.3f), reduced after it %.3f, backward stretch %.3f" % (
                t["backward_end_ms"], t["backward_end_without_allreduce_ms"], t["reduced_after_backward_ms"],
                t["backward_stretch"]["total_ms"]))
            print("    buckets (MB, launched at ms, ran ms):",
                  ", ".join("%.1f @ %.2f: %.3f" % (b["bytes"] / 1e6, b["ready_ms"], b["allreduce_ms"]) for b in t["buckets"]))


if __name__ == "__main__":
    main(sys.argv[1])
