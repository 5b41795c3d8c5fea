#!/usr/bin/env python3
"""`trajcheck diff` catches small edits of the bundled rules (docs/rule-diff.md, "Measured"):
every rule of rules/*.rules and examples/**/*.rules is edited one way at a time (operands of
precedes/followed-by swapped, a count bound raised or lowered, a `where` dropped, a tool name
widened to a glob `a_b` -> `a_*`); `diff ORIGINAL MUTANT` must report the edited rule with a
counterexample of at most 10 steps, and `check` must confirm every counterexample it prints
(exactly one of the two files' rule is violated, the one the direction names).

    rule_diff_mutants.py ROOT TRAJCHECK WORK_DIR [--report] [--every N]

A mutant that does not compile, or whose edit leaves the rule's meaning the same (diff says
`unchanged`: the same text once groups are expanded), is not counted. Mutants diff does not
catch are printed with diff's reason; the known ones (listed below, each with why the search
cannot reach it) do not fail the test, any other does. A counterexample `check` does not
confirm always fails it. `--every N` tries only every Nth mutant (in the order they are made, so
every file and kind of edit still comes up): the sanitizer build's run, where each `diff` is
several times slower, while the Release build tries them all.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

root, trajcheck, work = sys.argv[1:4]
report = "--report" in sys.argv[4:]
every = int(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv[4:] else 1
trajcheck = os.path.abspath(trajcheck)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
for d in ("rules", "examples", "catalog"):
    if os.path.isdir(os.path.join(root, d)):
        shutil.copytree(os.path.join(root, d), os.path.join(work, d))

HEADER = re.compile(r"^\s*(#|rule\b|group\b|workflow\b|catalog\b|alias\b|message\b|tags?\b|case\b|$)")
RELATION = re.compile(r"^(\s*)(.+?) (precedes|immediately precedes|is followed by|is immediately followed by|"
                      r"is never followed by|requires|excludes) (.+?)\s*$")
COUNT = re.compile(r"\b(at most|at least|exactly) (\d+)")
NAME = re.compile(r"(?<![\w.$\"/*])([a-z][a-z0-9]*_[a-z0-9_]+)(?![\w*:(])")
NOT_TOOLS = {"tool_call", "user_message", "assistant_message", "approval_request", "final_answer",
             "system_message", "file_write"}


def strip_literals(line):
    """The line with quoted strings and /regexes/ blanked (same length), so edits stay outside them."""
    out, i = list(line), 0
    while i < len(line):
        c = line[i]
        if c == '"' or (c == "/" and line[:i].rstrip().endswith("matches")):
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            for k in range(i, min(j + 1, len(line))):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def where_end(line, start):
    """End of the condition of the ` where ` at `start`: an unbalanced `)`, a relation keyword at
    depth 0, or the end of the line."""
    blank = strip_literals(line)
    depth, i = 0, start + len(" where ")
    while i < len(line):
        c = blank[i]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and re.match(r" (precedes|immediately|is |requires |excludes |at most|at least|exactly|"
                                     r"in a row)", blank[i:]):
            return i
        i += 1
    return len(line)


def mutants(text):
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if HEADER.match(line) or line.strip().startswith("expect"):
            continue
        blank = strip_literals(line)

        def emit(kind, new_line):
            yield kind, n + 1, "\n".join(lines[:n] + [new_line] + lines[n + 1:])

        m = RELATION.match(blank)
        if m and " where " not in m.group(2) + m.group(4) or (m and "(" in blank):
            a = line[m.start(2):m.end(2)]
            b = line[m.start(4):m.end(4)]
            yield from emit("operands swapped", m.group(1) + b + " " + m.group(3) + " " + a)
        for c in COUNT.finditer(blank):
            k = int(line[c.start(2):c.end(2)])
            yield from emit("count raised", line[:c.start(2)] + str(k + 1) + line[c.end(2):])
            if k > 0:
                yield from emit("count lowered", line[:c.start(2)] + str(k - 1) + line[c.end(2):])
        for w in re.finditer(r" where ", blank):
            yield from emit("where dropped", line[:w.start()] + line[where_end(line, w.start()):])
        for t in NAME.finditer(blank):
            name = t.group(1)
            if name in NOT_TOOLS or blank[:t.start()].rstrip().endswith(("of", "=")):
                continue
            yield from emit("glob widened", line[:t.start()] + name[:name.index("_") + 1] + "*" + line[t.end():])


def violated(rules, rule, trace_file):
    r = subprocess.run([trajcheck, "check", "-r", rules, "--format", "jsonl", trace_file],
                       cwd=work, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"check {rules}: exit {r.returncode}: {r.stderr}")
    doc = json.loads(r.stdout.splitlines()[0])
    return any(x["rule"] == rule and x["status"] == "violated" for x in doc["results"])


# Rules whose edits the search cannot reach, and why ("file:line"): diff says so in its
# "not exhaustive because" lines (docs/rule-diff.md).
KNOWN = {
    "examples/datasets/rules/refunds.rules:6": "compares with fixture.* (the traces carry no fixture)",
    "examples/python/support.rules:14": "binds $o (parametric: two fixed values only)",
    "examples/rules/refunds.rules:19": "binds $call to step ids (parametric; ids are not varied)",
    "rules/tau-retail.rules:45": "seen(…) (provenance of earlier results is not generated)",
}

rules_files = sorted(glob.glob(os.path.join(work, "rules", "*.rules")) +
                     glob.glob(os.path.join(work, "examples", "**", "*.rules"), recursive=True))
total = caught = unchanged = not_compiling = made = 0
bad, missed, times = [], [], []
for path in rules_files:
    with open(path, encoding="utf-8") as f:
        original = f.read()
    rel = os.path.relpath(path, work)
    mutant_path = path[:-len(".rules")] + ".mutant.rules"
    seen = set()
    for kind, line, text in mutants(original):
        if text in seen or text == original:
            continue
        seen.add(text)
        made += 1
        if (made - 1) % every:
            continue
        with open(mutant_path, "w", encoding="utf-8") as f:
            f.write(text)
        r = subprocess.run([trajcheck, "diff", "--format", "json", "--timings", path, mutant_path],
                           cwd=work, capture_output=True, text=True)
        if r.returncode == 2:
            not_compiling += 1
            continue
        doc = json.loads(r.stdout)
        changed = [e for e in doc["rules"] if e["change"] != "unchanged"]
        times += [(e["milliseconds"], f"{rel}:{line}: {kind}") for e in doc["rules"] if "exhaustive_steps" in e]
        if not changed:
            unchanged += 1
            continue
        total += 1
        where = f"{rel}:{line}: {kind}"
        found = False
        for e in changed:
            for direction, old_violates in (("new_accepts_old_rejects", True), ("old_accepts_new_rejects", False)):
                cx = e.get(direction)
                if not cx:
                    continue
                if len(cx["steps"]) > 10:
                    bad.append(f"{where}: a counterexample of {len(cx['steps'])} steps")
                trace_file = os.path.join(work, "cx.jsonl")
                with open(trace_file, "w", encoding="utf-8") as f:
                    f.write(json.dumps(cx["trace"]) + "\n")
                ov = e["old_name"] is not None and violated(path, e["old_name"], trace_file)
                nv = e["new_name"] is not None and violated(mutant_path, e["new_name"], trace_file)
                if (ov, nv) != (old_violates, not old_violates):
                    bad.append(f"{where}: check does not confirm {direction} of {e['old_name'] or e['new_name']!r}: "
                               f"old violated={ov}, new violated={nv}")
                else:
                    found = True
        if found:
            caught += 1
        else:
            why = "; ".join(sorted({w for e in changed for w in e["not_exhaustive_because"]}))
            missed.append((where, why))
    if os.path.exists(mutant_path):
        os.remove(mutant_path)

times.sort()
print(f"{total} mutants that change a rule ({len(rules_files)} rules files; {unchanged} left the meaning "
      f"unchanged, {not_compiling} did not compile): {caught} caught with a confirmed counterexample "
      f"({100.0 * caught / max(total, 1):.1f}%)")
if times:
    print(f"time per rule pair searched ({len(times)} pairs): median {times[len(times) // 2][0]:.1f} ms, "
          f"p90 {times[int(len(times) * 0.9)][0]:.1f} ms, max {times[-1][0]:.1f} ms ({times[-1][1]})")
for b in bad:
    print("WRONG:", b)
unknown = [(w, why) for w, why in missed if ":".join(w.split(":", 2)[:2]) not in KNOWN]
for w, why in missed:
    known = KNOWN.get(":".join(w.split(":", 2)[:2]))
    print("not caught:", w, "--", f"known: {known}" if known else "UNEXPECTED: " + why)
sys.exit(0 if total > 0 and not bad and (report or not unknown) else 1)
