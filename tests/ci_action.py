#!/usr/bin/env python3
"""The composite action (action.yml) run as GitHub runs it, outside GitHub.

Usage: ci_action.py SOURCE_DIR TRAJCHECK CMAKE_BUILD_DIR WORK_DIR

Each step's `run` and `env` are taken from action.yml, `${{ inputs.X }}` replaced by the test's
`with:` value or the input's default, `${{ github.action_path }}` by the source directory; the
step runs with `bash --noprofile --norc -eo pipefail` (GitHub's bash shell), and the lines a step
appends to $GITHUB_ENV are in the environment of the steps after it. The test asserts the
exit status, the Markdown in $GITHUB_STEP_SUMMARY and the JUnit XML for check (failing and
passing traces), eval, the build branch (no trajcheck given or on PATH: the CMake tree's target
is built) and a bad input.
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

src, trajcheck, tree, work = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
action = yaml.safe_load((src / "action.yml").read_text())
assert action["runs"]["using"] == "composite"
failures = []


def run_action(name, with_, cwd):
    d = work / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(with_) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(with_)

    def expand(text):
        text = text.replace("${{ github.action_path }}", str(src))
        return re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: inputs[m.group(1)], text)

    env = {k: v for k, v in os.environ.items() if k != "TRAJCHECK_BIN"}
    # No trajcheck on PATH: only the one given, or the one built.
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "trajcheck").exists())
    env.update(GITHUB_ENV=str(d / "github_env"), GITHUB_STEP_SUMMARY=str(d / "summary.md"), RUNNER_TEMP=str(d))
    (d / "github_env").write_text("")
    status = 0
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash"
        step_env = dict(env)
        step_env.update({k: expand(str(v)) for k, v in step.get("env", {}).items()})
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"])],
                           cwd=cwd, env=step_env, capture_output=True, text=True)
        print(f"[{name}] {expand(step['name'])}: exit {p.returncode}\n{p.stdout}{p.stderr}", end="")
        for line in (d / "github_env").read_text().splitlines():
            k, _, v = line.partition("=")
            env[k] = v
        status = p.returncode
        if status != 0:
            break
    summary = (d / "summary.md").read_text() if (d / "summary.md").exists() else ""
    junit = Path(cwd) / inputs["junit"]
    return status, summary, junit, env


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def junit_cases(path):
    root = ET.parse(path).getroot()
    return [c for c in root.iter("testcase")], root


ex = src / "examples"
# check, traces with violations: status 1, both reports.
status, summary, junit, env = run_action("check-fail", {
    "trajcheck": trajcheck, "rules": str(ex / "rules/refunds.rules"),
    "traces": f"{ex / 'traces/refund_violations.jsonl'}\n{ex / 'traces/refund_ok.jsonl'}",
    "junit": str(work / "check-fail.xml")}, work)
check(status == 1, f"check-fail: exit {status}, not 1")
check(summary.startswith("## trajcheck: 3 of 5 traces failed"), f"check-fail: summary {summary[:80]!r}")
cases, root = junit_cases(junit)
check(len(cases) == 5 and root.find("testsuite").get("failures") == "3", f"check-fail: junit with {len(cases)} cases")
check(env.get("TRAJCHECK_BIN") == trajcheck, f"check-fail: GITHUB_ENV has {env.get('TRAJCHECK_BIN')}")

# check, passing traces, --fail-on and args passed through: status 0.
status, summary, junit, _ = run_action("check-pass", {
    "trajcheck": trajcheck, "rules": str(ex / "rules/refunds.rules"), "traces": str(ex / "traces/refund_ok.jsonl"),
    "fail-on": "critical", "args": "--quiet", "junit": str(work / "check-pass.xml")}, work)
check(status == 0, f"check-pass: exit {status}, not 0")
check(summary.startswith("## trajcheck: 0 of 2 traces failed") and "| critical |" in summary,
      f"check-pass: summary {summary[:200]!r}")
check(len(junit_cases(junit)[0]) == 2, "check-pass: junit")

# eval of the example suite, from its folder (its paths are relative to the suite).
status, summary, junit, _ = run_action("eval", {
    "trajcheck": trajcheck, "command": "eval", "suite": "support.suite", "junit": str(work / "eval.xml")},
    ex / "eval")
check(status == 0, f"eval: exit {status}, not 0")
check(summary.startswith("## trajcheck eval: support-agent"), f"eval: summary {summary[:80]!r}")
check(len(junit_cases(junit)[0]) > 0, "eval: junit has no test case")

# No trajcheck given or on PATH: the action builds it (here the configured tree, up to date).
status, summary, junit, env = run_action("build", {
    "build-dir": tree, "rules": str(ex / "rules/refunds.rules"), "traces": str(ex / "traces/refund_ok.jsonl"),
    "junit": str(work / "build.xml")}, work)
check(status == 0, f"build: exit {status}")
check(env.get("TRAJCHECK_BIN") == str(Path(tree) / "trajcheck"), f"build: used {env.get('TRAJCHECK_BIN')}")

# A command that is neither check nor eval.
status, _, _, _ = run_action("bad", {"trajcheck": trajcheck, "command": "score"}, work)
check(status == 2, f"bad: exit {status}, not 2")

sys.exit(1 if failures else 0)
