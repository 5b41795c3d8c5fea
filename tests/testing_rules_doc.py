#!/usr/bin/env python3
"""docs/testing-rules.md shows a test file and what `trajcheck test` prints when one of its
expectations is wrong: both are what the command does. The example runs beside a copy of
rules/refunds.rules and must pass; with the witness of `a refund nobody approved` changed to #3,
the FAIL block the page shows must be what the command prints.

    testing_rules_doc.py ROOT TRAJCHECK WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

root, trajcheck, work = sys.argv[1:4]
trajcheck = os.path.abspath(trajcheck)
with open(os.path.join(root, "docs", "testing-rules.md"), encoding="utf-8") as f:
    page = f.read()
example = re.search(r"```json\n(.*?)```", page, re.S).group(1)
shown = re.search(r"```\n(FAIL .*?)```", page, re.S).group(1)

shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "rules"))
shutil.copy(os.path.join(root, "rules", "refunds.rules"), os.path.join(work, "rules"))
shutil.copytree(os.path.join(root, "examples", "traces"), os.path.join(work, "examples", "traces"))
test_file = os.path.join(work, "rules", "refunds.rules.test.json")

failed = False
with open(test_file, "w", encoding="utf-8") as f:
    f.write(example)
r = subprocess.run([trajcheck, "test", "rules/refunds.rules"], cwd=work, capture_output=True, text=True)
if r.returncode != 0:
    print(f"the page's example does not pass (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    failed = True

wrong = example.replace('"refund_needs_approval": {"violated": [4]}', '"refund_needs_approval": {"violated": [3]}')
assert wrong != example, "the example no longer expects refund_needs_approval violated at [4]"
with open(test_file, "w", encoding="utf-8") as f:
    f.write(wrong)
r = subprocess.run([trajcheck, "test", "rules/refunds.rules"], cwd=work, capture_output=True, text=True)
printed = "".join(line + "\n" for line in r.stdout.splitlines() if not line.startswith("PASS "))
printed = printed.split("\n2 cases")[0] + "\n"
if r.returncode != 1 or printed != shown:
    print(f"the page shows:\n{shown}\nthe command printed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    failed = True
sys.exit(1 if failed else 0)
