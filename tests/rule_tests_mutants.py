#!/usr/bin/env python3
"""The bundled rules tests (rules/*.rules.test.json, examples/**/*.rules.test.json) catch small
edits of the rules they test: every mutant below, applied to a copy of the rules file, must make
`trajcheck test` fail on that file's tests. A mutant that does not compile is not counted.

    rule_tests_mutants.py ROOT TRAJCHECK WORK_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

root, trajcheck, work = sys.argv[1:4]
trajcheck = os.path.abspath(trajcheck)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "tests", "data"))
for d in ("rules", "examples", "catalog"):
    shutil.copytree(os.path.join(root, d), os.path.join(work, d))
shutil.copytree(os.path.join(root, "tests", "data", "tau-bench-retail"),
                os.path.join(work, "tests", "data", "tau-bench-retail"))

# name, pattern, replacement
OPERATORS = [
    ("a count bound raised", re.compile(r"at most (\d+)"), lambda m: "at most %d" % (int(m.group(1)) + 1)),
    ("a forbid's condition negated", re.compile(r"(forbid [^\n]*? where )(.+)$", re.M),
     lambda m: m.group(1) + "not (" + m.group(2) + ")"),
    ("precedes turned into is followed by", re.compile(r" precedes "), lambda m: " is followed by "),
    ("approved turned into denied", re.compile(r'"approved"'), lambda m: '"denied"'),
    ("a glob narrowed to its prefix", re.compile(r"(\w)_\*"), lambda m: m.group(1)),
]

rules_files = sorted(glob.glob(os.path.join(work, "rules", "*.rules")) +
                     glob.glob(os.path.join(work, "examples", "**", "*.rules"), recursive=True))
total = killed = 0
survivors = []
for path in rules_files:
    tests = path + ".test.json"
    if not os.path.exists(tests):
        continue
    with open(path, encoding="utf-8") as f:
        original = f.read()
    for name, rx, rep in OPERATORS:
        for m in list(rx.finditer(original)):
            mutant = original[:m.start()] + rep(m) + original[m.end():]
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutant)
            r = subprocess.run([trajcheck, "test", "--quiet", tests], cwd=work, capture_output=True, text=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
            if r.returncode == 2 and ("error[E604]" in r.stderr or "error[E60" not in r.stderr):
                continue  # the mutant does not compile
            total += 1
            # Caught: a case fails (1), or an unnamed rule's text changed and a case naming it
            # by its old text is refused (2, E602).
            if r.returncode == 1 or (r.returncode == 2 and "error[E602]" in r.stderr):
                killed += 1
            else:
                line = original.count("\n", 0, m.start()) + 1
                survivors.append(f"{os.path.relpath(path, work)}:{line}: {name} ({m.group(0)!r}): exit {r.returncode}")
print(f"{total} mutants of {len(rules_files)} rules files, {killed} caught by their tests")
for s in survivors:
    print("not caught:", s)
sys.exit(0 if total > 0 and killed == total else 1)
