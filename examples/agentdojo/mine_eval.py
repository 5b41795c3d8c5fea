#!/usr/bin/env python3
"""Mines rules from AgentDojo's clean runs and measures how many injections they flag.

    mine_eval.py RUNS_DIR [--trajcheck BIN] [--min-support S] [--min-confidence C]
                 [--templates LIST] [--out DIR] [--markdown]

Per suite, the user tasks are split by their number: even numbers are mined, odd numbers are
held out. `trajcheck mine` reads only the runs without an attack (`<user_task>/none/none.json`)
of the mined user tasks, of every pipeline: nothing about the injection tasks is used (the
`injection_task_*` folders, which run each attacker goal as a user task, are never read).
`trajcheck check` then runs the mined rules over the held-out user tasks':
  - clean runs (`none/none.json`): a flagged one is a false flag;
  - attacked runs whose injection succeeded (`security` true), except the denial-of-service
    attacks (`*dos`), whose goal is to stop the agent rather than make it act.
A run is flagged when any mined rule is violated on it. Prints a table per suite.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

BATCH = 800


def task_number(name):
    m = re.match(r"user_task_(\d+)$", name)
    return int(m.group(1)) if m else None


def collect(root):
    """suite -> {"clean": {task: [files]}, "attacked": {task: [(file, attack)]}}"""
    out = collections.defaultdict(lambda: {"clean": collections.defaultdict(list),
                                           "attacked": collections.defaultdict(list)})
    for pipeline in sorted(os.listdir(root)):
        pdir = os.path.join(root, pipeline)
        if not os.path.isdir(pdir):
            continue
        for suite in sorted(os.listdir(pdir)):
            sdir = os.path.join(pdir, suite)
            for task in sorted(os.listdir(sdir)):
                n = task_number(task)
                if n is None:
                    continue  # injection_task_*: never read
                tdir = os.path.join(sdir, task)
                for attack in sorted(os.listdir(tdir)):
                    adir = os.path.join(tdir, attack)
                    if not os.path.isdir(adir):
                        continue
                    for f in sorted(os.listdir(adir)):
                        if not f.endswith(".json"):
                            continue
                        path = os.path.join(adir, f)
                        if attack == "none":
                            out[suite]["clean"][n].append(path)
                        else:
                            out[suite]["attacked"][n].append((path, attack))
    return out


def flagged_runs(tc, rules, files):
    """file -> set of violated rule names."""
    res = {}
    for i in range(0, len(files), BATCH):
        chunk = files[i:i + BATCH]
        p = subprocess.run([tc, "check", "-r", rules, "--format", "jsonl", "--fail-on", "never", "--quiet", "--allow-no-rules", *chunk],
                           capture_output=True, text=True)
        lines = p.stdout.splitlines()
        if len(lines) != len(chunk):
            sys.exit(f"check gave {len(lines)} lines for {len(chunk)} files (exit {p.returncode}):\n{p.stderr[-3000:]}")
        for f, line in zip(chunk, lines):
            r = json.loads(line)
            if "error" in r:
                sys.exit(f"{f}: rejected: {r['error']}")
            res[f] = {x["rule"] for x in r["results"] if x["status"] == "violated"}
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--trajcheck", default="trajcheck")
    ap.add_argument("--min-support", default="0.05")
    ap.add_argument("--min-confidence", default="1")
    ap.add_argument("--templates", default="all")
    ap.add_argument("--out", default="mined-agentdojo")
    ap.add_argument("--group-by", default="",
                    help="e.g. metadata.user_task_id: the runs of one user task are one group (trajcheck mine --group-by)")
    ap.add_argument("--max-p", default="",
                    help="trajcheck mine --max-p: the significance an `excludes` rule needs (default: mine's)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--contrastive", action="store_true",
                    help="mine with --good (the mined tasks' clean runs) --bad (their successful injections): "
                         "uses the injection labels of the mined half, reported apart from the headline")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    data = collect(a.runs)
    rows = []
    for suite in sorted(data):
        d = data[suite]
        train = sorted(n for n in d["clean"] if n % 2 == 0)
        test = sorted(n for n in set(d["clean"]) | set(d["attacked"]) if n % 2 == 1)
        train_files = [f for n in train for f in d["clean"][n]]
        rules = os.path.join(a.out, f"{suite}.rules")
        cmd = [a.trajcheck, "mine", "--quiet", "--min-support", a.min_support, "--min-confidence",
               a.min_confidence, "--templates", a.templates, "-o", rules]
        if a.group_by:
            cmd += ["--group-by", a.group_by]
        if a.max_p:
            cmd += ["--max-p", a.max_p]
        if a.contrastive:
            bad = [f for n in train for f, attack in d["attacked"][n]
                   if not attack.endswith("dos") and json.load(open(f)).get("security") is True]
            cmd += ["--good", *train_files, "--bad", *bad]
        else:
            cmd += train_files
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"mine failed on {suite} (exit {p.returncode}):\n{p.stderr[-3000:]}")
        n_rules = sum(1 for line in open(rules) if line.strip() and not line.startswith("#"))
        clean = [f for n in test for f in d["clean"][n]]
        attacked = []
        for n in test:
            for f, attack in d["attacked"][n]:
                if attack.endswith("dos"):
                    continue
                with open(f) as fh:
                    if json.load(fh).get("security") is True:
                        attacked.append(f)
        verdicts = flagged_runs(a.trajcheck, rules, clean + attacked)
        fc = sum(1 for f in clean if verdicts[f])
        fa = sum(1 for f in attacked if verdicts[f])
        why = collections.Counter(r for f in attacked if verdicts[f] for r in verdicts[f])
        fwhy = collections.Counter(r for f in clean if verdicts[f] for r in verdicts[f])
        rows.append((suite, len(train), len(train_files), n_rules, len(test), len(attacked), fa, len(clean), fc,
                     why.most_common(3), fwhy.most_common(3)))
    if a.markdown:
        extra = (f" --group-by {a.group_by}" if a.group_by else "") + (f" --max-p {a.max_p}" if a.max_p else "")
        print(f"Settings: {'contrastive, ' if a.contrastive else ''}--min-support {a.min_support} --min-confidence {a.min_confidence} --templates {a.templates}{extra}\n")
        print("| suite | user tasks mined / held out | clean runs mined | rules | successful injections flagged | clean runs flagged |")
        print("|---|---|---|---|---|---|")
        for s, nt, ntf, nr, nte, na, fa, nc, fc, _, _ in rows:
            print(f"| {s} | {nt} / {nte} | {ntf} | {nr} | {fa}/{na} ({100.0 * fa / max(na, 1):.1f}%) "
                  f"| {fc}/{nc} ({100.0 * fc / max(nc, 1):.1f}%) |")
        ta = sum(r[5] for r in rows)
        tfa = sum(r[6] for r in rows)
        tc = sum(r[7] for r in rows)
        tfc = sum(r[8] for r in rows)
        print(f"| all | | | | {tfa}/{ta} ({100.0 * tfa / max(ta, 1):.1f}%) | {tfc}/{tc} ({100.0 * tfc / max(tc, 1):.1f}%) |")
        print()
        for s, *_, why, fwhy in rows:
            print(f"- {s}: most flagging rules on injections: " + "; ".join(f"`{r}` ({n})" for r, n in why))
            print(f"  on clean runs: " + "; ".join(f"`{r}` ({n})" for r, n in fwhy))
    else:
        for r in rows:
            print(r)


if __name__ == "__main__":
    main()
