#!/usr/bin/python3
"""Throughput of trajcheck.dask against the CLI on the same data, and the per-task overhead.

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_bench.py --cli build/trajcheck [--mb 500] [--rounds 3]

Measures, over one generated JSONL corpus (examples' traces, repeated with distinct ids):
  - `trajcheck check -j 1` and `-j 2` (the CLI on one machine);
  - `trajcheck.dask` on the local cluster it starts for a run (`_local_client`), of 1 and of 2
    single-threaded workers, both clusters up at once and their runs interleaved (1, 2, 1, 2, …;
    medians of --rounds), so that both see the same machine load; the ratio of the medians is the scaling figure;
  - that every Dask run's output is byte for byte the CLI's (`check -j 1 --format jsonl`), and
    its exit status the same (exit 1 when not);
  - per-task overhead: the same corpus on one worker cut into many small ranges and into one,
    (time difference) / (extra tasks);
  - compiling the rules (done once per worker, not per task).
and prints what they predict for 100 workers. Wall times: on a shared machine, read the ratios.
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
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


class Digest:
    """A binary stream that keeps only the SHA-256 of what is written and its length."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.n = 0

    def write(self, b):
        self.h.update(b)
        self.n += len(b)
        return len(b)

    def flush(self):
        pass

    def value(self):
        return self.h.hexdigest(), self.n


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
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--partition", type=int, default=None,
                    help="bytes per task (default: corpus / 16, 8 tasks per worker of 2)")
    a = ap.parse_args()

    import trajcheck.dask as td
    from trajcheck import _native

    tmp = tempfile.mkdtemp(prefix="trajcheck-bench-")
    corpus = os.path.join(tmp, "corpus.jsonl")
    n = make_corpus(corpus, a.mb)
    size = os.path.getsize(corpus)
    mb = size / 1e6
    part = a.partition or -(-size // 16)
    print(f"corpus: {n} traces, {mb:.0f} MB, rules: {len(RULES)} files; load average {os.getloadavg()}")
    args = [a.cli, "check", "--format", "jsonl", "-q"] + sum((["-r", r] for r in RULES), []) + [corpus]

    cli_out = os.path.join(tmp, "cli.jsonl")
    with open(cli_out, "wb") as f:
        cli_status = subprocess.run(args + ["-j", "1"], stdout=f, check=False).returncode
    with open(cli_out, "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest(), os.path.getsize(cli_out)
    os.remove(cli_out)
    for j in (1, 2):
        t = timed(lambda: subprocess.run(args + ["-j", str(j)], stdout=subprocess.DEVNULL, check=False))
        print(f"cli -j {j}:             {t:6.2f} s  {mb / t:7.1f} MB/s  {n / t:9.0f} traces/s")

    options = td.check_options(RULES, format="jsonl", quiet=True)
    t0 = time.perf_counter()
    _native._CheckTask(options)
    print(f"compile the rules:     {1000 * (time.perf_counter() - t0):6.1f} ms (once per worker)")

    mismatches = 0
    spool = os.path.join(tmp, "spool")
    os.makedirs(spool)

    def go(client, p):
        nonlocal mismatches
        # The output goes to a file, as `> verdicts.jsonl` sends it, through a spool directory
        # (as the local cluster a run starts for itself does); it is compared after the timing.
        dask_out = os.path.join(tmp, "dask.jsonl")
        with open(dask_out, "wb") as f:
            t = time.perf_counter()
            st, _, _ = td.run("check", options, [corpus], client, partition_size=p, out=f,
                              err=Digest(), progress=False, spool_dir=spool)
            t = time.perf_counter() - t
        out = Digest()
        with open(dask_out, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                out.write(block)
        os.remove(dask_out)
        if st != cli_status or out.value() != want:
            mismatches += 1
            print(f"MISMATCH: exit {st} (cli {cli_status}), output {out.value()} (cli {want})")
        return t

    # The local cluster a run without --scheduler starts, with 1 and with 2 workers.
    clients, clusters = {}, {}
    for w in (1, 2):
        clients[w], clusters[w] = td._local_client(w)
    try:
        for w, c in clients.items():
            c.run(lambda: __import__("trajcheck.dask"))
            go(c, part)  # warm: workers import and compile
        times = {1: [], 2: []}
        for _ in range(a.rounds):
            for w in (1, 2):
                times[w].append(go(clients[w], part))
        tasks = -(-size // part)  # the checking tasks (each worker also copies ~2 batches of pieces, counts lines once)
        med = {w: statistics.median(v) for w, v in times.items()}
        for w in (1, 2):
            print(f"dask {w} worker{'s' if w > 1 else ' '}:        {med[w]:6.2f} s  {mb / med[w]:7.1f} MB/s  "
                  f"{n / med[w]:9.0f} traces/s  ({tasks} tasks of {part / 1e6:.0f} MB; runs "
                  f"{', '.join(f'{x:.2f}' for x in times[w])} s)")
        small = max(size // 400, 1)
        t_small = go(clients[1], small)
        t_big = go(clients[1], size)
        extra = -(-size // small) - 1
        overhead = (t_small - t_big) / extra
        print(f"per-task overhead:     {1000 * overhead:6.2f} ms "
              f"({extra + 1} pieces: {t_small:.2f} s, 1 piece: {t_big:.2f} s; a piece's checking task and the "
              f"copying of its output into place, a task for a batch of pieces: scheduling, transfer, newline count)")
    finally:
        for c in clients.values():
            c.close()
        for c in clusters.values():
            c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    per_worker = mb / med[1]
    print(f"\n2 workers / 1 worker: {med[1] / med[2]:.2f}x (medians of {a.rounds} interleaved runs each)")
    print(f"output byte for byte the CLI's: {'yes' if not mismatches else f'NO ({mismatches} runs differ)'} "
          f"({want[1]} bytes, exit status {cli_status})")
    print(f"load average at the end {os.getloadavg()}")
    if overhead > 0:
        print(f"prediction for 100 workers at {per_worker:.0f} MB/s each: {100 * per_worker / 1000:.1f} GB/s if the "
              f"scheduler keeps up ({1 / overhead:.0f} tasks/s at this overhead: partitions of at least "
              f"{100 * per_worker * overhead:.1f} MB keep it under 1 task per 100 workers' time) and the file "
              f"system takes the output as fast (here each worker copies its pieces into the output file; "
              f"the driver copies none of it).")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
