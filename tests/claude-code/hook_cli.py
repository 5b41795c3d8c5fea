#!/usr/bin/env python3
"""`trajcheck hook claude-code` fed Claude Code's hook events by hand: the answers, the
session's state across calls (counts, orderings, results, denied calls), and that nothing
fails open — every input, state or rules problem blocks the call with exit status 2.

    hook_cli.py TRAJCHECK WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

TRAJCHECK, WORK = sys.argv[1], sys.argv[2]
RULES = """
rule no_rm [critical]: forbid bash where arguments.command contains "rm -rf"
  message "no recursive deletes"
rule tested_first: bash where arguments.command contains "make test" and status == "ok" precedes bash where arguments.command contains "git push"
  message "run the tests before pushing"
rule few_reads: read at most 2
  message "read at most two files"
rule in_project: forbid "write" where context.cwd exists and not arguments.file_path contains context.cwd
  message "write only inside the project"
"""
failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def hook(event, state, rules=None, extra_args=()):
    text = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run([TRAJCHECK, "hook", "claude-code", "-r", rules or RULES_FILE, "--state-dir", state, *extra_args],
                          input=text, capture_output=True, text=True, timeout=30)


def pre(session, tool, tool_input, call_id, cwd="/proj"):
    return {"session_id": session, "transcript_path": "/nowhere.jsonl", "cwd": cwd, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id}


def post(session, tool, tool_input, call_id, response, failed=False):
    e = pre(session, tool, tool_input, call_id)
    if failed:
        e.update(hook_event_name="PostToolUseFailure", error=response)
    else:
        e.update(hook_event_name="PostToolUse", tool_response=response)
    return e


def denial(p):
    if p.returncode != 0 or not p.stdout.strip():
        return None
    out = json.loads(p.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny", out
    return out["permissionDecisionReason"]


def allowed(p):
    return p.returncode == 0 and p.stdout == ""


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
RULES_FILE = os.path.join(WORK, "hook.rules")
with open(RULES_FILE, "w") as f:
    f.write(RULES)
state = os.path.join(WORK, "state")

# Per-call rules, and Claude Code's output format for a denial.
p = hook(pre("s1", "Bash", {"command": "rm -rf /"}, "t0"), state)
expect(p.returncode == 0 and json.loads(p.stdout) == {"hookSpecificOutput": {
    "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no recursive deletes"}},
    f"a forbidden call is denied in Claude Code's format: {p.stdout!r}")
expect(allowed(hook(pre("s1", "Bash", {"command": "ls"}, "t1"), state)), "an allowed call gets no output, exit 0")
expect(allowed(hook(post("s1", "Bash", {"command": "ls"}, "t1", {"stdout": "a\n", "stderr": ""}), state)),
       "PostToolUse is recorded, exit 0")

# Orderings see the session: the push before a passing test run is denied, after it allowed;
# a test run that failed (PostToolUseFailure) does not count.
expect(denial(hook(pre("s1", "Bash", {"command": "git push"}, "t2"), state)) == "run the tests before pushing",
       "a push before the tests is denied")
hook(pre("s1", "Bash", {"command": "make test"}, "t3"), state)
hook(post("s1", "Bash", {"command": "make test"}, "t3", "Command failed with exit code 2", failed=True), state)
expect(denial(hook(pre("s1", "Bash", {"command": "git push"}, "t4"), state)) == "run the tests before pushing",
       "a push after a failed test run is denied")
hook(pre("s1", "Bash", {"command": "make test"}, "t5"), state)
hook(post("s1", "Bash", {"command": "make test"}, "t5", {"stdout": "ok", "stderr": ""}), state)
expect(allowed(hook(pre("s1", "Bash", {"command": "git push"}, "t6"), state)), "a push after passing tests is allowed")

# Counts: the third read is denied; a denied call had no effect and is not counted.
for i in range(2):
    expect(allowed(hook(pre("s2", "Read", {"file_path": f"/proj/{i}"}, f"r{i}"), state)), f"read {i} allowed")
    hook(post("s2", "Read", {"file_path": f"/proj/{i}"}, f"r{i}", {"type": "text"}), state)
expect(denial(hook(pre("s2", "Read", {"file_path": "/proj/2"}, "r2"), state)) == "read at most two files",
       "the third read is denied")
expect(denial(hook(pre("s2", "Read", {"file_path": "/proj/3"}, "r3"), state)) == "read at most two files",
       "and the fourth (the denied third did not run, but two did)")
s3 = [pre("s3", "Bash", {"command": "rm -rf x"}, "d0"), pre("s3", "Read", {"file_path": "/a"}, "d1"),
      pre("s3", "Read", {"file_path": "/b"}, "d2")]
answers = [hook(e, state) for e in s3]
expect(denial(answers[0]) and allowed(answers[1]) and allowed(answers[2]),
       "denied calls are not counted by later decisions")

# The context: the session's cwd (as the transcript gives it) and --context.
expect(allowed(hook(pre("s4", "Write", {"file_path": "/proj/a.txt"}, "w0"), state)), "a write inside cwd is allowed")
expect(denial(hook(pre("s4", "Write", {"file_path": "/etc/passwd"}, "w1"), state)) == "write only inside the project",
       "a write outside the session's cwd is denied")
expect(denial(hook(pre("s5", "Write", {"file_path": "/proj/a.txt"}, "w0"), state, extra_args=["--context", "cwd=/other"]))
       == "write only inside the project", "--context overrides the context")

# The state file is a native trace of every call: check agrees with the hook.
st = json.load(open(os.path.join(state, "s1.json")))
expect([(s["type"], s["id"], s.get("status", "ok"), s.get("rule")) for s in st["steps"]] == [
    ("denied_call", "t0", "ok", "no_rm"), ("tool_call", "t1", "ok", None), ("denied_call", "t2", "ok", "tested_first"),
    ("tool_call", "t3", "error", None), ("denied_call", "t4", "ok", "tested_first"), ("tool_call", "t5", "ok", None),
    ("tool_call", "t6", "ok", None)], f"the state records each call, the denied ones as denied_call steps: {st['steps']}")
expect(st["steps"][0] == {"type": "denied_call", "id": "t0", "denied_tool": "Bash", "arguments": {"command": "rm -rf /"},
                          "rule": "no_rm", "message": "no recursive deletes"}, f"a denied call's step: {st['steps'][0]}")
expect(st["steps"][1]["result"] == {"stdout": "a\n", "stderr": ""} and st["context"] == {"cwd": "/proj"},
       "results and the context are kept")
# check on the state agrees with the decisions: what ran breaks no rule; the attempts are there.
state_rules = RULES + 'rule no_attempts: forbid step where type == "denied_call"\n  message "blocked"\n'
with open(os.path.join(WORK, "state.rules"), "w") as f:
    f.write(state_rules)
check = subprocess.run([TRAJCHECK, "check", "-r", os.path.join(WORK, "state.rules"), "--format", "jsonl",
                        os.path.join(state, "s1.json")], capture_output=True, text=True)
violated = {r["rule"]: r["steps"] for r in json.loads(check.stdout)["results"] if r["status"] == "violated"}
expect(check.returncode == 1 and violated == {"no_attempts": [0, 2, 4]}, f"check on the state agrees: {violated}")

# Parallel calls of one session take turns: none is lost.
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda i: hook(pre("s6", "Glob", {"pattern": str(i)}, f"g{i}"), state), range(16)))
expect(len(json.load(open(os.path.join(state, "s6.json")))["steps"]) == 16, "16 parallel calls, 16 steps")

# Nothing fails open: each of these blocks the call (exit 2, the reason on stderr).
def blocked(p, what, part):
    expect(p.returncode == 2 and p.stdout == "" and part in p.stderr,
           f"{what}: blocked ({p.returncode}, {p.stderr.strip()!r})")

blocked(hook("not json", state), "input that is not JSON", "not a JSON object")
blocked(hook("", state), "no input", "not a JSON object")
blocked(hook({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}, state), "no session id",
        "no session_id")
blocked(hook(pre("../escape", "Bash", {"command": "ls"}, "x"), state), "a session id that is a path",
        "not a safe file name")
blocked(hook(dict(pre("s7", "Bash", {"command": "ls"}, "x"), tool_input="ls"), state), "no tool_input object",
        "no tool_input")
blocked(hook(dict(pre("s7", "Bash", {"command": "ls"}, "x"), hook_event_name="Stop"), state), "an event it does not handle",
        "not one this hook handles")
with open(os.path.join(state, "s8.json"), "w") as f:
    f.write('{"trace_id": "s8", "steps": [')
blocked(hook(pre("s8", "Bash", {"command": "ls"}, "x"), state), "a state file cut short", "is not a trace")
with open(os.path.join(state, "s9.json"), "w") as f:
    f.write('{"trace_id": "s9", "steps": [{"type": "tool_call"}]}')
blocked(hook(pre("s9", "Bash", {"command": "ls"}, "x"), state), "a state whose steps cannot be read", "cannot be read as a trace")
blocked(hook(pre("s7", "Bash", {"command": "ls"}, "x"), os.path.join(RULES_FILE, "state")), "a state directory that cannot be made",
        "cannot create the state directory")
bad_rules = os.path.join(WORK, "bad.rules")
with open(bad_rules, "w") as f:
    f.write("rule broken: forbid (\n")
blocked(hook(pre("s7", "Bash", {"command": "ls"}, "x"), state, rules=bad_rules), "rules that do not compile",
        "did not compile")
blocked(hook(pre("s7", "Bash", {"command": "ls"}, "x"), state, rules=os.path.join(WORK, "missing.rules")),
        "a rules file that is missing", "did not compile")
blocked(hook(post("s8", "Bash", {"command": "ls"}, "x", "out"), state), "a result with a broken state", "not recorded")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
