#!/usr/bin/env python3
"""`trajcheck hook claude-code` inside the real Claude Code CLI, driven by a local mock of the
model API (mock_anthropic.py; no network). The model asks for three Bash commands in turn:

    echo one > one.txt     allowed: runs, and its result is recorded (PostToolUse)
    rm -rf build           denied by a per-call rule (forbid)
    echo two > two.txt     denied by a count rule (at most 1): only the session's state knows

Checks that the allowed command ran and the denied ones did not, that the model was told each
rule's message, that Claude Code's transcript shows the denials, that the hook's state file
records every call (denied ones as `denied_call` steps, so the state's check passes: only the
allowed call ran), and that `trajcheck check` on the transcript finds the rules violated at
the calls the hook denied.

    conversation.py TRAJCHECK CLAUDE WORKDIR
"""
import glob
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAJCHECK, CLAUDE, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
RULES = os.path.join(HERE, "hook.rules")
COMMANDS = ["echo one > one.txt", "rm -rf build", "echo two > two.txt"]
DENIED = {"toolu_mock_01": ("no_rm", "trajcheck: recursive deletes are not allowed here"),
          "toolu_mock_02": ("one_echo", "trajcheck: one echo per session")}
failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    home, proj, state = (os.path.join(WORK, d) for d in ("home", "proj", "state"))
    os.makedirs(os.path.join(proj, "build"))
    os.makedirs(home)
    hook = f"{shlex.quote(TRAJCHECK)} hook claude-code -r {shlex.quote(RULES)} --state-dir {shlex.quote(state)}"
    entry = [{"matcher": "*", "hooks": [{"type": "command", "command": hook}]}]
    settings = os.path.join(WORK, "settings.json")
    with open(settings, "w") as f:
        json.dump({"hooks": {"PreToolUse": entry, "PostToolUse": entry, "PostToolUseFailure": entry}}, f)

    port_file, log_file = os.path.join(WORK, "port"), os.path.join(WORK, "requests.jsonl")
    mock = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_anthropic.py"), port_file, log_file, *COMMANDS])
    try:
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.1)
        port = open(port_file).read()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
               "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "TERM": "dumb"}
        run = subprocess.run([CLAUDE, "-p", "Clean up the build.", "--settings", settings, "--allowedTools", "Bash",
                              "--output-format", "json"], cwd=proj, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=100)
    finally:
        mock.kill()
        mock.wait()
    expect(run.returncode == 0, f"claude -p exits 0 (got {run.returncode}; stderr: {run.stderr[-2000:]})")
    result = json.loads(run.stdout)
    session = result["session_id"]

    # What happened on disk.
    expect(os.path.exists(os.path.join(proj, "one.txt")), "the allowed command ran")
    expect(os.path.isdir(os.path.join(proj, "build")), "rm -rf build was not run")
    expect(not os.path.exists(os.path.join(proj, "two.txt")), "the second echo was not run")

    # What the model was told: the tool results it was sent back.
    told = {}
    for line in open(log_file):
        for m in json.loads(line)["body"].get("messages", []):
            if m.get("role") == "user" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        told[b["tool_use_id"]] = b
    for call_id, (rule, message) in DENIED.items():
        b = told.get(call_id, {})
        text = json.dumps(b.get("content"))
        expect(b.get("is_error") is True and message in text, f"the model was told {message!r} for {call_id}: {b}")
    expect(told.get("toolu_mock_00", {}).get("is_error") is not True, "the allowed call's result reached the model")

    # Claude Code's transcript shows the denials.
    (transcript,) = glob.glob(os.path.join(home, ".claude", "projects", "*", session + ".jsonl"))
    results = {}
    for line in open(transcript):
        d = json.loads(line)
        if d.get("type") == "user" and isinstance(d.get("message", {}).get("content"), list):
            for b in d["message"]["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    results[b["tool_use_id"]] = b
    for call_id, (rule, message) in DENIED.items():
        b = results.get(call_id, {})
        expect(b.get("is_error") is True and message in json.dumps(b.get("content")),
               f"the transcript shows the denial of {call_id}: {b}")

    # The hook's state: every call, the denied ones marked.
    state_file = os.path.join(state, session + ".json")
    st = json.load(open(state_file))
    calls = [(s["type"], s.get("id"), s.get("rule"), "result" in s) for s in st["steps"]]
    expect(calls == [("tool_call", "toolu_mock_00", None, True), ("denied_call", "toolu_mock_01", "no_rm", False),
                     ("denied_call", "toolu_mock_02", "one_echo", False)],
           f"the state records the three calls, two as denied attempts: {calls}")
    check = subprocess.run([TRAJCHECK, "check", "-r", RULES, state_file], capture_output=True, text=True)
    expect(check.returncode == 0, f"check on the state passes: only the allowed call ran ({check.stdout[-500:]})")

    # `trajcheck check` on the transcript agrees with the hook: Claude Code records each denied
    # call as a call whose result is the hook's error.
    for name, path in (("transcript", transcript),):
        norm = subprocess.run([TRAJCHECK, "normalize", path], capture_output=True, text=True)
        check = subprocess.run([TRAJCHECK, "check", "-r", RULES, "--format", "jsonl", path], capture_output=True, text=True)
        expect(check.returncode == 1 and norm.returncode == 0, f"check fails the {name} (exit {check.returncode})" + ("" if check.returncode == 1 else check.stderr[-1000:]))
        steps = json.loads(norm.stdout.splitlines()[0])["steps"]
        ids = [s.get("id") for s in steps if s["type"] == "tool_call"]
        expect(ids == ["toolu_mock_00", "toolu_mock_01", "toolu_mock_02"], f"the {name} holds each call once: {ids}")
        verdict = json.loads(check.stdout.splitlines()[0])
        found = {r["rule"]: steps[r["steps"][-1]].get("id") for r in verdict["results"] if r["status"] == "violated"}
        want = {rule: call_id for call_id, (rule, _) in DENIED.items()}
        expect(found == want, f"check on the {name} finds the rules the hook denied with, at those calls: {found}")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
