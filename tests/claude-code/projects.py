#!/usr/bin/env python3
"""Writes a Claude Code projects folder with a subagent, for trajcheck's reader tests: the real
Claude Code CLI (tests/claude-code/node_modules) run against the local mock of the model API
(mock_anthropic.py --subagent; no network), with its config dir in WORKDIR. The main
conversation hands the work to a subagent (its `Agent`/`Task` tool), which runs two Bash
commands; Claude Code writes the session's transcript, the subagent's transcript and the
subagent's meta file under WORKDIR/home/.claude/projects/. They are copied to OUT (the
project folder's name made stable, WORKDIR written as /work, and, to keep the copy small,
strings over 240 characters cut to 240 and arrays over 8 elements to 8: every line and
every key stays).

    projects.py CLAUDE WORKDIR OUT
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLAUDE, WORK, OUT = (os.path.abspath(a) for a in sys.argv[1:4])
COMMANDS = ["echo one > one.txt", "ls"]


def trim(v):
    if isinstance(v, str):
        v = v.replace(WORK, "/work")
        return v if len(v) <= 240 else v[:240]
    if isinstance(v, list):
        return [trim(x) for x in v[:8]]
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    return v


def main():
    home, proj = os.path.join(WORK, "home"), os.path.join(WORK, "proj")
    os.makedirs(proj)
    os.makedirs(home)
    port_file, log_file = os.path.join(WORK, "port"), os.path.join(WORK, "requests.jsonl")
    mock = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_anthropic.py"), port_file, log_file,
                             "--subagent", *COMMANDS])
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
        run = subprocess.run([CLAUDE, "-p", "Run the commands with a subagent.", "--allowedTools", "Bash,Agent,Task",
                              "--output-format", "json"], cwd=proj, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=100)
    finally:
        mock.kill()
        mock.wait()
    if run.returncode != 0:
        print(f"claude -p exited {run.returncode}: {run.stderr[-2000:]}")
        return 1
    session = json.loads(run.stdout)["session_id"]
    found = glob.glob(os.path.join(home, ".claude", "projects", "*", session + ".jsonl"))
    if len(found) != 1:
        print(f"expected one transcript of session {session}, found {found}")
        return 1
    project = os.path.dirname(found[0])
    agents = glob.glob(os.path.join(project, session, "subagents", "agent-*.jsonl"))
    if len(agents) != 1:
        print(f"expected one subagent transcript, found {agents}")
        return 1
    if not os.path.exists(os.path.join(proj, "one.txt")):
        print("the subagent's command did not run")
        return 1
    target = os.path.join(OUT, "-work-proj")
    shutil.rmtree(target, ignore_errors=True)
    for root, _, files in os.walk(project):
        for name in files:
            src = os.path.join(root, name)
            dst = os.path.join(target, os.path.relpath(src, project))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(src) as f, open(dst, "w") as out:
                if name.endswith(".jsonl"):
                    for line in f:
                        out.write(json.dumps(trim(json.loads(line)), ensure_ascii=False, separators=(",", ":")) + "\n")
                else:
                    out.write(json.dumps(trim(json.load(f)), ensure_ascii=False, separators=(",", ":")))
    print(f"session {session}: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
