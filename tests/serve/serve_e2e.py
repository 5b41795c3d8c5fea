#!/usr/bin/env python3
"""End-to-end test of `trajcheck serve` over a real socket on 127.0.0.1 (a free port chosen by
the server, read from its stderr). The OTLP files of tests/data/producers/otel are POSTed one
export request at a time; the verdicts must equal `trajcheck check --format jsonl` on the same
files, and its decision log holds a line per violation (an allow per passing trace). Then:
/metrics and /healthz, a 400 on garbage JSON and on garbage protobuf (answered in protobuf), a
415 on another media type, SIGHUP with a bad rules file (old rules kept), SIGTERM with open
traces sent gzip-compressed (every trace checked, exit 0; the gen_ai.evaluation.result events
sent to a local OTLP logs receiver match the verdicts), and SIGTERM the moment serve listens. With node and
tests/producers/otel/node_modules, the real OpenTelemetry JS SDK exports to serve too — OTLP/HTTP
JSON, protobuf, and gzip-compressed protobuf, each to a server of its own, each giving `check`'s
verdicts on the same spans; without them that part is skipped (said on stdout). Every server started is killed on the way out.

    python3 tests/serve/serve_e2e.py TRAJCHECK WORKDIR
"""
import gzip, json, os, re, shutil, signal, subprocess, sys, threading, time, urllib.error, urllib.request

BIN, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
DATA = os.path.join(TESTS, "data", "producers", "otel")
FILES = ["batched.jsonl", "vercel-legacy.jsonl", "vercel-genai.jsonl"]
RULES_SRC = os.path.join(TESTS, "golden", "check", "otlp-batched", "case.rules")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
RULES = os.path.join(WORK, "serve.rules")
shutil.copy(RULES_SRC, RULES)
servers = []
problems = []


def fail(msg):
    problems.append(msg)
    print("FAIL:", msg, flush=True)


class Serve:
    def __init__(self, name, *args):
        self.out = os.path.join(WORK, name + ".verdicts.jsonl")
        self.err_path = os.path.join(WORK, name + ".stderr")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen([BIN, "serve", "-r", RULES, "--listen", "127.0.0.1:0", "--out", self.out, *args],
                                  stdout=subprocess.DEVNULL, stderr=self.err)
        servers.append(self)
        deadline = time.time() + 30
        self.url = None
        while time.time() < deadline and self.url is None:
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.stderr())
            if m:
                self.url = m.group(1)
            elif self.p.poll() is not None:
                break
            else:
                time.sleep(0.05)
        if self.url is None:
            raise SystemExit(f"serve did not start: {self.stderr()}")

    def stderr(self):
        return open(self.err_path).read()

    def request(self, method, path, body=None, content_type="application/json", encoding=None):
        req = urllib.request.Request(self.url + path, data=body, method=method)
        if body is not None:
            req.add_header("Content-Type", content_type)
        if encoding:
            req.add_header("Content-Encoding", encoding)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode(errors="replace"), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace"), dict(e.headers)

    def metric(self, line_prefix):
        _, text, _ = self.request("GET", "/metrics")
        for line in text.splitlines():
            if line.startswith(line_prefix + " "):
                return float(line.split()[-1])
        return None

    def post_files(self, paths, compress=False):
        n = 0
        for path in paths:
            for line in open(path, "rb"):
                if line.strip():
                    if compress:
                        status, body, _ = self.request("POST", "/v1/traces", gzip.compress(line), encoding="gzip")
                    else:
                        status, body, _ = self.request("POST", "/v1/traces", line)
                    if status != 200:
                        fail(f"POST of a record of {path}: {status} {body}")
                    n += 1
        return n

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=30)
        finally:
            self.err.close()

    def verdicts(self):
        return sorted((json.loads(l) for l in open(self.out) if l.strip()), key=lambda v: v["trace_id"])


def check_verdicts(paths):
    r = subprocess.run([BIN, "check", "-r", RULES, "--format", "jsonl", *paths], capture_output=True, text=True)
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    return sorted((v for v in recs if "trace_id" in v), key=lambda v: v["trace_id"])


def wait_checked(s, n, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = (s.metric('trajcheck_serve_traces_checked_total{status="pass"}') or 0) + \
               (s.metric('trajcheck_serve_traces_checked_total{status="fail"}') or 0)
        if done >= n:
            return True
        time.sleep(0.1)
    return False


try:
    paths = [os.path.join(DATA, f) for f in FILES]
    expected = check_verdicts(paths)
    if len(expected) < 4 or {v["status"] for v in expected} != {"pass", "fail"}:
        fail(f"check gave {len(expected)} traces: {[(v['trace_id'], v['status']) for v in expected]}")

    # 1. Traces complete by the idle rule, while serve runs.
    decision_log = os.path.join(WORK, "decisions.jsonl")
    s = Serve("idle", "--idle", "300ms", "--decision-log", decision_log)
    status, body, _ = s.request("GET", "/healthz")
    if status != 200:
        fail(f"/healthz: {status}")
    s.post_files(paths)
    if not wait_checked(s, len(expected)):
        fail(f"the traces were not checked within 30 s of their last span: {s.stderr()}")
    got = s.verdicts()
    if got != expected:
        fail(f"serve's verdicts differ from check's:\nserve: {got}\ncheck: {expected}")
    fails = sum(1 for v in expected if v["status"] == "fail")
    if s.metric('trajcheck_serve_traces_checked_total{status="fail"}') != fails:
        fail("traces_checked_total{status=fail} is not the number of failing traces")
    if s.metric("trajcheck_serve_open_traces") != 0 or s.metric("trajcheck_serve_spans_held") != 0:
        fail("open traces or spans held after every trace was checked")
    if not (s.metric("process_resident_memory_bytes") or 0) > 0:
        fail("process_resident_memory_bytes missing")
    _, text, _ = s.request("GET", "/metrics")
    if not re.search(r'trajcheck_serve_violations_total\{rule="[^"]+",severity="error"\} [1-9]', text):
        fail(f"no violation counted by rule and severity:\n{text}")
    # The decision log: per trace, a "deny" line per violated rule, or one "allow" line.
    decisions = [json.loads(l) for l in open(decision_log) if l.strip()]
    want = sorted((v["trace_id"], "deny", r["rule"]) for v in expected for r in v["results"] if r["status"] == "violated")
    want += sorted((v["trace_id"], "allow", None) for v in expected
                   if not any(r["status"] == "violated" for r in v["results"]))
    got_decisions = sorted((d["trace_id"], d["verdict"], d["rule"]) for d in decisions if d["verdict"] == "deny")
    got_decisions += sorted((d["trace_id"], d["verdict"], d["rule"]) for d in decisions if d["verdict"] == "allow")
    if got_decisions != want or not any(d["verdict"] == "deny" for d in decisions):
        fail(f"decision log {got_decisions} is not the verdicts' {want}")
    fields = ["decision_id", "time", "trace_id", "call_id", "tool", "arguments", "verdict", "mode", "forwarded",
              "rule", "message", "rules_digest"]
    for d in decisions:
        if sorted(d) != sorted(fields) or d["mode"] != "observe" or d["forwarded"] is not True \
                or not d["rules_digest"].startswith("sha256:") or not d["decision_id"].startswith(d["trace_id"] + ":"):
            fail(f"decision line not in guard's format: {d}")
        if d["verdict"] == "deny" and (not d["tool"] or any(v != "***" for v in (d["arguments"] or {}).values())):
            fail(f"a deny line without its call, or with arguments not masked: {d}")

    # 2. Garbage: 400 with a reason, counted (protobuf answered with a protobuf Status); another
    # media type: 415.
    status, body, _ = s.request("POST", "/v1/traces", b"{garbage")
    if status != 400 or "message" not in body:
        fail(f"garbage: {status} {body}")
    status, body, headers = s.request("POST", "/v1/traces", b"\x0a\x05\x12", "application/x-protobuf")
    if status != 400 or headers.get("Content-Type") != "application/x-protobuf" or "ExportTraceServiceRequest" not in body:
        fail(f"garbage protobuf: {status} {headers.get('Content-Type')} {body!r}")
    status, body, _ = s.request("POST", "/v1/traces", b"a,b", "text/csv")
    if status != 415:
        fail(f"text/csv: {status} {body}")
    if s.metric('trajcheck_serve_rejected_total{reason="bad_request"}') != 2:
        fail("the bad requests were not counted")
    # A small gzip body that decompresses past the 16 MiB limit: 413, never held whole.
    bomb = gzip.compress(b" " * (64 << 20))
    status, body, _ = s.request("POST", "/v1/traces", bomb, encoding="gzip")
    if status != 413 or s.metric('trajcheck_serve_rejected_total{reason="too_large"}') != 1:
        fail(f"a gzip body of 64 MiB ({len(bomb)} bytes compressed): {status} {body}")
    if (s.metric("process_resident_memory_bytes") or 0) > 72 << 20:
        fail(f"RSS {s.metric('process_resident_memory_bytes')} after the gzip bomb: the body was held whole")

    # 3. SIGHUP with a bad rules file: the old rules stay, and stderr says why.
    good = open(RULES).read()
    open(RULES, "w").write("this is not ( a rule\n")
    s.p.send_signal(signal.SIGHUP)
    deadline = time.time() + 15
    while time.time() < deadline and "old rules stay in use" not in s.stderr():
        time.sleep(0.05)
    if "old rules stay in use" not in s.stderr() or "serve.rules:1" not in s.stderr():
        fail(f"SIGHUP with a bad file: {s.stderr()}")
    if s.p.poll() is not None:
        fail("serve exited on SIGHUP with a bad file")
    before = len(s.verdicts())
    s.post_files([os.path.join(DATA, "batched.jsonl")])  # the same runs again: two new traces
    if not wait_checked(s, len(expected) + 2):
        fail("after the bad reload, traces were not checked")
    again = [l for l in open(s.out) if l.strip()][before:]
    if not again or any(json.loads(v)["results"] == [] for v in again):
        fail(f"after the bad reload the old rules were not applied: {again}")
    open(RULES, "w").write(good)
    s.p.send_signal(signal.SIGHUP)
    deadline = time.time() + 15
    while time.time() < deadline and "rules reloaded" not in s.stderr():
        time.sleep(0.05)
    if "rules reloaded" not in s.stderr() or s.metric("trajcheck_serve_rule_reloads_total") != 1:
        fail(f"SIGHUP with a good file did not reload: {s.stderr()}")
    rc = s.stop()
    if rc != 0:
        fail(f"serve exited {rc} on SIGTERM: {s.stderr()}")

    # 4. SIGTERM with every trace open (idle of an hour, 60m): nothing is lost; each verdict's
    # rules also go out as gen_ai.evaluation.result events to an OTLP/HTTP logs receiver.
    import http.server
    events = []

    class Logs(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            for rl in body.get("resourceLogs", []):
                for sl in rl.get("scopeLogs", []):
                    events.extend(sl.get("logRecords", []))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    logs = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Logs)
    threading.Thread(target=logs.serve_forever, daemon=True).start()
    t = Serve("term", "--idle", "60m", "--otlp-endpoint", f"http://127.0.0.1:{logs.server_address[1]}")
    t.post_files(paths, compress=True)  # Content-Encoding: gzip
    if t.metric("trajcheck_serve_open_traces") != len(expected):
        fail(f"open traces before SIGTERM: {t.metric('trajcheck_serve_open_traces')}, expected {len(expected)}")
    rc = t.stop()
    if rc != 0:
        fail(f"serve exited {rc} on SIGTERM: {t.stderr()}")
    if t.verdicts() != expected:
        fail(f"after SIGTERM: serve's verdicts differ from check's:\n{t.verdicts()}\n{expected}")
    if f"{len(expected)} at shutdown" not in t.stderr():
        fail(f"the shutdown line does not say the open traces were checked: {t.stderr()}")
    logs.shutdown()
    applied = [(v["trace_id"], r["rule"], "fail" if r["status"] == "violated" else "pass")
               for v in expected for r in v["results"] if r["status"] != "vacuous"]
    def attr(e, k):
        for a in e.get("attributes", []):
            if a["key"] == k:
                return next(iter(a["value"].values()))
    got_events = [(e.get("traceId"), attr(e, "gen_ai.evaluation.name"), attr(e, "gen_ai.evaluation.score.label"))
                  for e in events if e.get("eventName") == "gen_ai.evaluation.result"]
    if sorted(got_events) != sorted(applied) or not applied:
        fail(f"evaluation events {sorted(got_events)} are not the verdicts' {sorted(applied)}")

    # 5. The real OpenTelemetry JS SDK exporting to serve (batch span processor): OTLP/HTTP JSON,
    # protobuf, and gzip-compressed protobuf, each to a server of its own.
    otel = os.path.join(TESTS, "producers", "otel")
    if shutil.which("node") and os.path.isdir(os.path.join(otel, "node_modules", "@opentelemetry")):
        sdk = {"JSON": Serve("sdk-json", "--idle", "300ms"), "protobuf": Serve("sdk-proto", "--idle", "300ms"),
               "gzip protobuf": Serve("sdk-proto-gzip", "--idle", "300ms")}
        sdk_dir = os.path.join(WORK, "sdk")
        os.makedirs(sdk_dir)
        env = dict(os.environ, TRAJCHECK_SERVE_TRACES_URL=sdk["JSON"].url + "/v1/traces",
                   TRAJCHECK_SERVE_PROTO_URL=sdk["protobuf"].url + "/v1/traces",
                   TRAJCHECK_SERVE_PROTO_GZIP_URL=sdk["gzip protobuf"].url + "/v1/traces")
        r = subprocess.run(["node", os.path.join(otel, "agent.mjs"), sdk_dir], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"agent.mjs: {r.stderr}")
        sdk_expected = check_verdicts([os.path.join(sdk_dir, "batched.jsonl")])
        for name, u in sdk.items():
            if not wait_checked(u, len(sdk_expected)):
                fail(f"the SDK's traces ({name}) were not checked")
            requests = u.metric("trajcheck_serve_requests_total") or 0
            protobuf = u.metric("trajcheck_serve_protobuf_requests_total")
            if protobuf != (0 if name == "JSON" else requests):
                fail(f"SDK export ({name}): {protobuf} of {requests} requests were protobuf")
            rejected = sum(u.metric(f'trajcheck_serve_rejected_total{{reason="{k}"}}') or 0
                           for k in ("bad_request", "unsupported_media_type"))
            rc = u.stop()
            if len(sdk_expected) != 2 or u.verdicts() != sdk_expected or rc != 0 or rejected or requests < 3:
                fail(f"SDK export ({name}): serve {u.verdicts()} vs check {sdk_expected}; exit {rc}, "
                     f"{requests} requests, {rejected} refused; {u.stderr()}")
            else:
                print(f"real OpenTelemetry JS SDK, {name}: serve's verdicts equal check's "
                      f"({int(requests)} export requests)", flush=True)
    else:
        print("SKIP: the real OpenTelemetry JS SDK part (node or tests/producers/otel/node_modules missing)", flush=True)
finally:
    for sv in servers:
        if sv.p.poll() is None:
            sv.p.kill()
            sv.p.wait()

# SIGTERM the moment serve says it listens (a service manager stopping it right after start): it
# must stop every time, even when the signal comes before its listening thread has begun to
# listen. The stderr is read in a busy loop, without a pause, to send the signal that early.
early = 0
for i in range(10):
    err_path = os.path.join(WORK, f"early-stop-{i}.stderr")
    with open(err_path, "w") as err:
        p = subprocess.Popen([BIN, "serve", "-r", RULES, "--listen", "127.0.0.1:0", "--out", os.devnull],
                             stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.time() + 30
    while p.poll() is None and time.time() < deadline and "listening on" not in open(err_path).read():
        pass
    p.send_signal(signal.SIGTERM)
    try:
        if p.wait(timeout=15) != 0:
            fail(f"serve stopped right after it listened exited {p.returncode}: {open(err_path).read()}")
    except subprocess.TimeoutExpired:
        early += 1
        p.kill()
        p.wait()
if early:
    fail(f"serve did not exit on a SIGTERM sent as it began to listen, {early} times of 10")

print("ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
