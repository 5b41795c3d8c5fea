#!/usr/bin/env python3
"""SIGINT/SIGTERM during `trajcheck check`, on a real run over a large generated input.

Usage: cli_interrupt.py TRAJCHECK RULES TRACES.jsonl…

The input is endless: records of the given files, renamed trace-1, trace-2, …, written to the
run's standard input until it exits. So the run can only end by the signal, and it is sent
while records are being checked (after the first report lines for the streamed formats, after
a pause for the buffered ones). For each format and signal the test asserts exit status 130, the
note on standard error, and a report closed as a whole: json parses with "interrupted": true and
one element per checked trace, junit parses with as many test cases as it counts and the
`interrupted` property, markdown has its summary and says it was interrupted, jsonl and text
end with a whole line (every jsonl line is a JSON object).
"""
import json
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

trajcheck, rules, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
templates = []
for path in traces:
    with open(path, encoding="utf-8") as f:
        templates += [json.loads(line) for line in f if line.strip()]
assert templates, "no records in the trace files"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def feed(stdin):
    """Writes records until the run stops reading (broken pipe) or closes."""
    n = 0
    try:
        while True:
            chunk = []
            for t in templates:
                n += 1
                t = dict(t, trace_id=f"trace-{n}")
                chunk.append(json.dumps(t))
            stdin.write(("\n".join(chunk) + "\n").encode())
    except (BrokenPipeError, ValueError, OSError):
        pass


def run(fmt, sig):
    p = subprocess.Popen([trajcheck, "check", "-r", rules, "--format", fmt, "-j", "2", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    feeder = threading.Thread(target=feed, args=(p.stdin,), daemon=True)
    feeder.start()
    out = bytearray()
    err = []
    errt = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    errt.start()
    if fmt in ("jsonl", "text"):
        # Streamed: wait until the report is being written, then stop it mid-stream.
        while out.count(b"\n") < 50:
            chunk = p.stdout.read1(65536)
            assert chunk, f"{fmt}: the run ended on its own"
            out += chunk
    else:
        time.sleep(0.3)
    assert p.poll() is None, f"{fmt}: the run ended before the signal"
    p.send_signal(sig)
    out += p.stdout.read()
    status = p.wait(timeout=60)
    errt.join(timeout=10)
    stderr = err[0].decode() if err else ""
    text = out.decode()
    name = f"{fmt}/{signal.Signals(sig).name}"
    check(status == 130, f"{name}: exit status {status}, not 130")
    check(f"interrupted by {signal.Signals(sig).name}" in stderr, f"{name}: no note on stderr: {stderr[-300:]!r}")
    check(text.endswith("\n"), f"{name}: output does not end with a whole line: {text[-200:]!r}")
    if fmt == "jsonl":
        lines = text.splitlines()
        objs = [json.loads(line) for line in lines]  # raises on a cut line
        check(len(objs) >= 50, f"{name}: {len(objs)} lines")
        check(all("trace_id" in o for o in objs), f"{name}: a line is not a trace's verdict")
    elif fmt == "text":
        check("interrupted: the input was not read to its end" in text, f"{name}: no interrupted line")
        check(" traces from " in text, f"{name}: no summary line")
    elif fmt == "json":
        doc = json.loads(text)
        check(doc.get("interrupted") is True, f"{name}: no \"interrupted\": true")
        s = doc["summary"]
        check(s["traces"] > 0, f"{name}: nothing was checked in 0.3 s")
        check(len(doc["traces"]) == s["traces"] + s["rejected"],
              f"{name}: {len(doc['traces'])} elements for {s['traces']} traces")
    elif fmt == "junit":
        root = ET.fromstring(text)
        suite = root.find("testsuite")
        cases = suite.findall("testcase")
        check(int(suite.get("tests")) == len(cases) > 0, f"{name}: tests={suite.get('tests')} for {len(cases)} cases")
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        check(props.get("interrupted") == "true", f"{name}: no interrupted property")
    elif fmt == "markdown":
        check(text.startswith("## trajcheck: "), f"{name}: no heading")
        check("**Interrupted**" in text, f"{name}: not said to be interrupted")
        check("| records | traces |" in text, f"{name}: no summary table")
    print(f"{name}: status {status}, {len(text)} bytes of report")


for fmt in ("json", "jsonl", "junit", "markdown", "text"):
    run(fmt, signal.SIGINT)
for fmt in ("json", "jsonl"):
    run(fmt, signal.SIGTERM)
sys.exit(1 if failures else 0)
