#!/usr/bin/env python3
"""Throughput of `trajcheck mine` on a generated log of 250 000 events (docs/performance.md).

    mine_bench.py --trajcheck BIN [--events N] [--tools T] [--out FILE] [--rounds R]

Writes a native-format JSONL log (seeded, Python's own random.Random): traces of 10–90 steps,
a vocabulary of T tools (default 50) drawn by weight, in workflows that make orders hold
(a login first, a lookup before a change, a logout last), tool calls of one to three in a turn,
assistant and user messages between them, two to four arguments a call (some constant per
tool), short results. Then runs `trajcheck mine` with all template families on it, and with all but value flow, with -j 1
and -j 2, R rounds each, and prints the best wall time, events per second and
events × families per second, with the load average before each run.
"""
import argparse
import json
import os
import random
import subprocess
import time

FAMILIES = 11  # precedes, response, chain, count, forbid, only, excludes, args, flow, provenance, values


def generate(path, events, tools, seed=7):
    rng = random.Random(seed)
    names = [f"tool_{i:02d}" for i in range(tools)]
    weights = [1.0 / (1 + i) for i in range(tools)]
    written = 0
    n = 0
    with open(path, "w") as f:
        while written < events:
            steps = [{"type": "user_message", "content": "please help with order %d" % rng.randrange(10**6)}]
            turn = 1
            steps.append({"type": "tool_call", "tool": "login", "arguments": {"user": "u%d" % n, "mode": "sso"},
                          "result": {"ok": True}, "turn": turn})
            length = rng.randint(10, 90)
            while len(steps) < length - 1:
                turn += 1
                if rng.random() < 0.2:
                    steps.append({"type": "assistant_message", "content": "working on it", "turn": turn})
                    continue
                for _ in range(rng.choice((1, 1, 1, 2, 3))):
                    t = rng.choices(names, weights)[0]
                    args = {"id": "o%d" % rng.randrange(1000), "region": "eu"}
                    if rng.random() < 0.5:
                        args["limit"] = rng.choice((10, 20))
                    steps.append({"type": "tool_call", "tool": t, "arguments": args,
                                  "result": {"status": "ok", "n": rng.randrange(100)}, "turn": turn})
            turn += 1
            steps.append({"type": "tool_call", "tool": "logout", "arguments": {}, "result": {"ok": True}, "turn": turn})
            f.write(json.dumps({"trace_id": "t%d" % n, "steps": steps}, separators=(",", ":")) + "\n")
            written += len(steps)
            n += 1
    return written, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trajcheck", default="trajcheck")
    ap.add_argument("--events", type=int, default=250000)
    ap.add_argument("--tools", type=int, default=50)
    ap.add_argument("--out", default="/tmp/mine_bench.jsonl")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    events, traces = generate(a.out, a.events, a.tools)
    size = os.path.getsize(a.out)
    print(f"log: {a.out}, {events} events in {traces} traces, {size / 1e6:.1f} MB")
    configs = [("all", FAMILIES),
               ("precedes,response,chain,count,only,excludes,args,flow", FAMILIES - 3),  # all but provenance, values, forbid
               ("precedes,response,chain,count,only,excludes,args,provenance,values", FAMILIES - 2)]  # all but flow, forbid
    for (templates, families), jobs in [(c, j) for c in configs for j in (1, 2)]:
        best = None
        print(f"--templates {templates}")
        for _ in range(a.rounds):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            p = subprocess.run([a.trajcheck, "mine", "-j", str(jobs), "--min-support", "0.05", "--min-confidence", "0.9",
                                "--templates", templates, "-o", "/dev/null", a.out], capture_output=True, text=True)
            dt = time.perf_counter() - t0
            if p.returncode != 0:
                raise SystemExit(p.stderr)
            print(f"  -j {jobs}: {dt:.2f} s (load average before: {load:.2f}) {p.stderr.strip().splitlines()[-1]}")
            best = dt if best is None else min(best, dt)
        print(f"-j {jobs}: best {best:.2f} s, {events / best:,.0f} events/s, "
              f"{events * families / best:,.0f} events x families/s")


if __name__ == "__main__":
    main()
