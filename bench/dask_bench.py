#!/usr/bin/python3
"""Throughput of trajcheck.dask against the CLI on the same data, and the per-task overhead.

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_bench.py --cli build/trajcheck [--mb 200]

Measures, over one generated JSONL corpus (examples' traces, repeated with distinct ids):
  - `trajcheck check -j 1` and `-j 2` (the CLI on one machine);
  - `trajcheck.dask` on a LocalCluster of 1 and of 2 single-threaded workers;
  - per-task overhead: the same corpus cut into many small ranges vs a few large ones,
    (time difference) / (extra tasks);
  - compiling the rules (done once per worker, not per task).
and prints what they predict for 100 workers.
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
RULES = [os.path.join(SOURCE, "rules", "refunds.rules"), os.path.join(SOURCE, "rules", "guardrails.rules")]


def make_corpus(path, mb):
    base = []
    for name in ("native.jsonl", "refund_ok.jsonl", "refund_violations.jsonl"):
        with open(os.path.join(SOURCE, "examples", "traces", name)) as f:
            base += [json.loads(l) for l in f if l.strip()]
    target = mb << 20
    with open(path, "w") as f:
        k = written = 0
        while written < target:
            t = dict(base[k % len(base)])
            t["trace_id"] = f"{t.get('trace_id', 't')}-{k}"
            line = json.dumps(t) + "\n"
            f.write(line)
            written += len(line)
            k += 1
    return k


def timed(fn, repeat=2):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        d = time.perf_counter() - t
        best = d if best is None else min(best, d)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(SOURCE, "build", "trajcheck"))
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--partition", type=int, default=8 << 20)
    a = ap.parse_args()

    from distributed import Client, LocalCluster
    import trajcheck.dask as td
    from trajcheck import _native

    tmp = tempfile.mkdtemp(prefix="trajcheck-bench-")
    corpus = os.path.join(tmp, "corpus.jsonl")
    n = make_corpus(corpus, a.mb)
    size = os.path.getsize(corpus)
    mb = size / 1e6
    print(f"corpus: {n} traces, {mb:.0f} MB, rules: {len(RULES)} files")
    args = [a.cli, "check", "--format", "jsonl", "-q"] + sum((["-r", r] for r in RULES), []) + [corpus]

    for j in (1, 2):
        t = timed(lambda: subprocess.run(args + ["-j", str(j)], stdout=subprocess.DEVNULL, check=False))
        print(f"cli -j {j}:             {t:6.2f} s  {mb / t:7.1f} MB/s  {n / t:9.0f} traces/s")

    options = td.check_options(RULES, format="jsonl", quiet=True)
    t0 = time.perf_counter()
    _native._CheckTask(options)
    print(f"compile the rules:     {1000 * (time.perf_counter() - t0):6.1f} ms (once per worker)")

    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.run(lambda: __import__("trajcheck.dask"))
            def go(p=a.partition):
                st, _, _ = td.run("check", options, [corpus], client, partition_size=p, out=io.BytesIO(),
                                  err=io.BytesIO(), progress=False)
                assert st in (0, 1, 2)
            go()  # warm: workers import and compile
            t = timed(go)
            tasks = -(-size // a.partition)
            print(f"dask {workers} worker{'s' if workers > 1 else ' '}:        {t:6.2f} s  {mb / t:7.1f} MB/s  "
                  f"{n / t:9.0f} traces/s  ({tasks} tasks of {a.partition >> 20} MB)")
            if workers == 1:
                one = t
                small = max(size // 400, 1)
                t_small = timed(lambda: go(small), repeat=1)
                t_big = timed(lambda: go(size), repeat=1)
                extra = -(-size // small) - 1
                overhead = (t_small - t_big) / extra
                print(f"per-task overhead:     {1000 * overhead:6.2f} ms "
                      f"({extra + 1} tasks: {t_small:.2f} s, 1 task: {t_big:.2f} s; scheduling, "
                      f"transfer, newline count)")
            else:
                two = t
    per_worker = mb / one
    print(f"\n2 workers / 1 worker: {one / two:.2f}x")
    print(f"prediction for 100 workers at {per_worker:.0f} MB/s each: {100 * per_worker / 1000:.1f} GB/s if the "
          f"scheduler keeps up ({1 / overhead:.0f} tasks/s at this overhead: partitions of at least "
          f"{100 * per_worker * overhead:.1f} MB keep it under 1 task per 100 workers' time) and the driver "
          f"writes the output as fast (here the driver writes every byte of output).")


if __name__ == "__main__":
    sys.exit(main())
