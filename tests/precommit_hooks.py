#!/usr/bin/env python3
"""The hooks of .pre-commit-hooks.yaml run as pre-commit runs them (pre-commit itself is not
needed): the files of a commit that match a hook's `files` pattern (and no `exclude`) are given
after its `entry`, split as a shell would split it, with the program found on PATH
(`language: system`).

Usage: precommit_hooks.py SOURCE_DIR TRAJCHECK WORK_DIR

Asserts, per hook: canonical, correct rules pass; a rules file out of canonical form fails
trajcheck-fmt only; a rules file that does not compile fails trajcheck-lint; files that are not
rules are not given to either; trajcheck-lint parses suites and compiles their rules files
(an error in either fails), and trajcheck-fmt is not given suites.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

src, trajcheck, work = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
hooks = {h["id"]: h for h in yaml.safe_load((src / ".pre-commit-hooks.yaml").read_text())}
assert set(hooks) == {"trajcheck-fmt", "trajcheck-lint"}, hooks.keys()
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(trajcheck)) + os.pathsep + os.environ["PATH"])
failures = []

good = (src / "examples/rules/refunds.rules").read_text()
files = {
    "good.rules": good,
    # Out of canonical form (the blank lines fmt folds) but compiles.
    "loose.rules": good.replace("\n\n", "\n\n\n\n", 1),
    "broken.rules": 'workflow "w"\nforbid\n',
    "notes.md": "not rules\n",
    # Suites: lint parses them and compiles their rules files; fmt does not take them.
    "good.suite": 'suite "s"\ncases "cases.jsonl"\nrules "good.rules"\ngate selection >= 90%\n',
    "bad.suite": 'suite "s"\ncases "cases.jsonl"\ngate speed >= 1\n',
    "badrules.suite": 'suite "s"\ncases "cases.jsonl"\nrules "broken.rules"\n',
}
for name, text in files.items():
    (work / name).write_text(text)


def run_hook(hook_id, names):
    h = hooks[hook_id]
    assert h["language"] == "system"
    chosen = [n for n in names if re.search(h.get("files", ""), n) and not re.search(h.get("exclude", "^$"), n)]
    if not chosen:
        return None
    p = subprocess.run(shlex.split(h["entry"]) + chosen, cwd=work, env=env, capture_output=True, text=True)
    print(f"{hook_id} {' '.join(chosen)}: exit {p.returncode}\n{p.stdout}{p.stderr}", end="")
    return p.returncode


def expect(hook_id, names, ok):
    status = run_hook(hook_id, names)
    if status is None or (status == 0) != ok:
        failures.append(f"{hook_id} on {names}: exit {status}, expected {'0' if ok else 'non-zero'}")
        print("FAIL:", failures[-1], file=sys.stderr)


# The loose file really is out of canonical form, else the test below could not fail.
assert subprocess.run([trajcheck, "fmt", "--check", str(work / "loose.rules")], capture_output=True).returncode == 1
expect("trajcheck-fmt", ["good.rules", "notes.md"], True)
expect("trajcheck-lint", ["good.rules", "notes.md"], True)
expect("trajcheck-fmt", ["good.rules", "loose.rules"], False)
expect("trajcheck-lint", ["good.rules", "loose.rules"], True)
expect("trajcheck-lint", ["good.rules", "broken.rules"], False)
expect("trajcheck-lint", ["good.rules", "good.suite"], True)
expect("trajcheck-lint", ["good.suite", "bad.suite"], False)
expect("trajcheck-lint", ["good.suite", "badrules.suite"], False)
# fmt is not given suites: only the rules file of this commit.
if run_hook("trajcheck-fmt", ["good.suite"]) is not None:
    failures.append("trajcheck-fmt was given a .suite file")
for hook_id in hooks:
    if run_hook(hook_id, ["notes.md"]) is not None:
        failures.append(f"{hook_id} was given notes.md")
sys.exit(1 if failures else 0)
