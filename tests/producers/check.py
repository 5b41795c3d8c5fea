#!/usr/bin/env python3
"""Reruns one producer's generator and checks that trajcheck reads what it wrote as it reads the
committed copy under tests/data/producers/: every file read, none rejected, and the same steps
(type, tool, status, in order) in the same number of traces; ids and times differ between runs.
Exits 77 (skipped) when the generator does (its node_modules not installed).

    check.py NAME TRAJCHECK WORKDIR      NAME: claude-code, codex, openai-agents, langchain
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME, TRAJCHECK, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])


def generate(out):
    if NAME == "claude-code":
        cc = os.path.join(ROOT, "tests", "claude-code")
        plat = os.path.join(cc, "node_modules", "@anthropic-ai")
        claude = None
        if os.path.isdir(plat):
            for d in sorted(os.listdir(plat)):
                p = os.path.join(plat, d, "claude")
                if d.startswith("claude-code-linux-") and os.access(p, os.X_OK):
                    claude = p
        if not claude:
            print("tests/claude-code/node_modules missing (npm ci): skipped")
            return 77
        return subprocess.call([sys.executable, os.path.join(cc, "projects.py"), claude, os.path.join(WORK, "run"), out],
                               timeout=200)
    return subprocess.call(["sh", os.path.join(HERE, NAME, "run.sh"), out], timeout=200)


def steps(path):
    run = subprocess.run([TRAJCHECK, "normalize", path], capture_output=True, text=True)
    if run.returncode != 0 or " 0 rejected" not in run.stderr:
        print(f"normalize {path} exited {run.returncode}:\n{run.stderr[-3000:]}")
        return None
    traces = [json.loads(l) for l in run.stdout.splitlines() if l.strip()]
    return [[(s["type"], s.get("tool"), s.get("status")) for s in t["steps"]] for t in traces]


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    out = os.path.join(WORK, "out")
    rc = generate(out)
    if rc != 0:
        return rc
    fresh = steps(out)
    committed = steps(os.path.join(ROOT, "tests", "data", "producers", NAME))
    if fresh is None or committed is None:
        return 1
    if fresh != committed:
        print(f"the generator's output reads as\n{fresh}\nthe committed copy as\n{committed}")
        return 1
    print(f"{NAME}: {len(fresh)} traces, {sum(len(t) for t in fresh)} steps, as committed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
