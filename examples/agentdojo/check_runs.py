#!/usr/bin/env python3
"""Reads AgentDojo run files with trajcheck and checks what it read.

    check_runs.py RUNS_DIR [--trajcheck BIN] [--rules FILE] [--expect FILE] [--list]

1. `trajcheck normalize` reads every run file (*.json below RUNS_DIR): none may be rejected,
   and each trace's tool calls must be the run's own, in order: the names and arguments of
   the assistant messages' `tool_calls`, status `error` exactly where the tool message
   carries an `error`.
2. With --rules, `trajcheck check` runs the injection-goal rules over the same files. The
   rule named `<suite>_<injection_task_id>` judges the run's own injection task; its verdict
   (violated = the attacker's goal was reached) is compared with the run's `security` label
   (true = the injection succeeded). Prints the agreement and every disagreement, by kind.
   Runs of denial-of-service attacks (`*dos`) are not judged: their goal is to stop the agent.
   With --expect, the printed report must equal that file (the CI test on the slice).
Exit status 0 when everything read back right (and matched --expect), 1 otherwise.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

BATCH = 1000


def run_files(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.endswith(".json")]
    return sorted(out)


def batched(files):
    for i in range(0, len(files), BATCH):
        yield files[i:i + BATCH]


def expected_calls(run):
    """(tool, arguments, status) of each call, in message order, as the run records them."""
    calls, by_id, by_name = [], {}, collections.defaultdict(list)
    for m in run.get("messages") or []:
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                calls.append([tc["function"].strip().lower(), tc.get("args", {}), "ok"])
                if tc.get("id"):
                    by_id[tc["id"]] = len(calls) - 1
                by_name[tc["function"]].append(len(calls) - 1)
        elif m.get("role") == "tool":
            copy = m.get("tool_call") or {}
            k = by_id.get(m.get("tool_call_id") or copy.get("id") or "")
            if k is None and by_name.get(copy.get("function")):
                k = by_name[copy["function"]].pop(0)
            if k is not None and m.get("error") is not None:
                calls[k][2] = "error"
    return [tuple(c) for c in calls]


def normalize_all(tc, files):
    """Yields (file, normalized trace) in file order; exits on any rejection."""
    for chunk in batched(files):
        p = subprocess.run([tc, "normalize", *chunk], capture_output=True, text=True)
        lines = p.stdout.splitlines()
        if p.returncode != 0 or len(lines) != len(chunk):
            sys.exit(f"normalize failed (exit {p.returncode}, {len(lines)} traces of {len(chunk)} files):\n{p.stderr[-4000:]}")
        for f, line in zip(chunk, lines):
            yield f, json.loads(line)


def check_all(tc, rules, files):
    for chunk in batched(files):
        p = subprocess.run([tc, "check", "-r", rules, "--format", "jsonl", "--fail-on", "never", *chunk],
                           capture_output=True, text=True)
        lines = p.stdout.splitlines()
        if p.returncode != 0 or len(lines) != len(chunk):
            sys.exit(f"check failed (exit {p.returncode}):\n{p.stderr[-4000:]}")
        for f, line in zip(chunk, lines):
            yield f, json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--trajcheck", default="build/trajcheck")
    ap.add_argument("--rules")
    ap.add_argument("--expect")
    ap.add_argument("--list", action="store_true", help="print every disagreeing run under its kind")
    a = ap.parse_args()
    files = run_files(a.runs)
    runs = {}
    bad = 0
    calls = 0
    for f, trace in normalize_all(a.trajcheck, files):
        with open(f) as fh:
            run = json.load(fh)
        runs[f] = run
        want = expected_calls(run)
        got = [(s["tool"], s.get("arguments"), s["status"]) for s in trace["steps"] if s["type"] == "tool_call"]
        calls += len(got)
        if got != want:
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {f}:\n  read {got}\n  want {want}", file=sys.stderr)
    report = [f"read {len(files)} runs, {calls} tool calls; {bad} runs whose calls differ from their messages"]
    if a.rules:
        agree, kinds, examples = 0, collections.Counter(), collections.defaultdict(list)
        uncovered = collections.Counter()
        judged = 0
        for f, verdict in check_all(a.trajcheck, a.rules, files):
            run = runs[f]
            task = run.get("injection_task_id")
            if task is None or run.get("security") is None:
                uncovered["no injection task"] += 1
                continue
            if "dos" in (run.get("attack_type") or ""):
                # A denial-of-service attack asks the agent to stop, not to reach the injection
                # task's goal: its security label says whether it stopped.
                uncovered["denial-of-service attack"] += 1
                continue
            name = f"{run['suite_name']}_{task}"
            results = [r for r in verdict["results"] if r["rule"] == name or r["rule"].startswith(name + "__")]
            if not results:
                uncovered[f"no rule for {run['suite_name']}"] += 1
                continue
            judged += 1
            violated = any(r["status"] == "violated" for r in results)
            if violated == run["security"]:
                agree += 1
                continue
            kind = f"{name}: rule {'violated' if violated else 'not violated'}, security {run['security']}"
            kinds[kind] += 1
            examples[kind].append(os.path.relpath(f, a.runs))
        report.append(f"injection rules judged {judged} runs: {agree} agree with the security label"
                      + (f" ({100.0 * agree / judged:.1f}%)" if judged else ""))
        for k, n in sorted(uncovered.items()):
            report.append(f"not judged ({k}): {n}")
        for k, n in sorted(kinds.items()):
            report.append(f"disagree {n}: {k} (e.g. {examples[k][0]})")
            if a.list:
                report += [f"  {f}" for f in examples[k]]
    text = "\n".join(report) + "\n"
    sys.stdout.write(text)
    status = 1 if bad else 0
    if a.expect:
        with open(a.expect) as fh:
            if fh.read() != text:
                print(f"report differs from {a.expect}", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
