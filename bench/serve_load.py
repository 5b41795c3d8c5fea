#!/usr/bin/env python3
"""Load for `trajcheck serve`: starts it on a free 127.0.0.1 port, sends TRACES traces of SPANS
tool spans each from CONNECTIONS client threads (keep-alive), each trace in two export
requests (its tool spans, then its ended root span last), and measures the spans/s sustained
and the time from just before a trace's last request is sent to its verdict line in --out (p50/p99; this includes
the --idle quiet time). RSS from /metrics at the end. SIGTERM at the end; the test fails when a
trace sent has no verdict.

    python3 bench/serve_load.py TRAJCHECK [--traces 2000] [--spans 10] [--connections 4] [--idle 100ms]
"""
import argparse, http.client, json, os, re, signal, subprocess, sys, tempfile, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--traces", type=int, default=2000)
ap.add_argument("--spans", type=int, default=10)
ap.add_argument("--connections", type=int, default=4)
ap.add_argument("--idle", default="100ms")
ap.add_argument("--sigterm-after", type=float, default=0,
                help="send SIGTERM this many seconds into the load; then every trace of which a request was "
                     "answered 200 must have its verdict")
ap.add_argument("--rss-every", type=float, default=0, help="sample RSS from /metrics this often (seconds) during the load")
a = ap.parse_args()

work = tempfile.mkdtemp(prefix="trajcheck-serve-load-")
rules = os.path.join(work, "load.rules")
open(rules, "w").write("get_order_details precedes refund_order\n")
out = os.path.join(work, "verdicts.jsonl")
err = open(os.path.join(work, "serve.stderr"), "w")
p = subprocess.Popen([a.bin, "serve", "-r", rules, "--listen", "127.0.0.1:0", "--idle", a.idle, "--out", out],
                     stderr=err, stdout=subprocess.DEVNULL)
try:
    port = None
    for _ in range(600):
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(err.name).read())
        if m:
            port = int(m.group(1))
            break
        time.sleep(0.05)
    assert port, open(err.name).read()

    def span(trace, sid, parent, start, end, tool):
        attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                 {"key": "gen_ai.tool.name", "value": {"stringValue": tool}},
                 {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": json.dumps({"order_id": "ord_" + trace[:6]})}}] if tool else []
        return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": tool or "invoke_agent",
                "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": attrs}

    def body(spans):
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()

    sent_at = {}
    lock = threading.Lock()
    errors = []

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(k, a.traces, a.connections):
            trace = f"{i:032x}"
            tools = ["get_order_details" if (j % 3 == 0) else "refund_order" if j % 3 == 1 else "search" for j in range(a.spans)]
            if i % 5 == 0:
                tools[0], tools[1] = tools[1], tools[0]  # a violation
            kids = [span(trace, f"{i:08x}{j:08x}", f"{i:08x}ffffffff", 10 + j, 11 + j, t) for j, t in enumerate(tools)]
            for n, part in enumerate((body(kids), body([span(trace, f"{i:08x}ffffffff", "", 1, 100, "")]))):
                while True:
                    if n == 1:
                        last = time.monotonic()  # just before the trace's last request (its root span)
                    try:
                        c.request("POST", "/v1/traces", part, {"Content-Type": "application/json"})
                        r = c.getresponse()
                        r.read()
                    except (OSError, http.client.HTTPException):
                        if terminated.is_set():
                            return  # the server is gone
                        raise
                    if r.status == 200:
                        with lock:
                            accepted.add(trace)
                        break
                    if terminated.is_set():
                        return
                    if r.status in (429, 503):
                        time.sleep(float(r.getheader("Retry-After", "1")))
                        continue
                    errors.append(r.status)
                    break
            with lock:
                sent_at[trace] = last

    seen = {}
    stop = threading.Event()
    terminated = threading.Event()
    accepted = set()

    if a.sigterm_after > 0:
        def term():
            terminated.set()
            p.send_signal(signal.SIGTERM)
        threading.Timer(a.sigterm_after, term).start()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(a.connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rc = p.wait(timeout=60)
        got = {json.loads(l)["trace_id"] for l in open(out) if l.strip()}
        lost = accepted - got
        print(f"SIGTERM after {a.sigterm_after} s: {len(accepted)} traces had a request accepted, "
              f"{len(got)} verdicts, {len(lost)} lost; serve exit {rc}")
        print(open(err.name).read().strip().splitlines()[-1])
        sys.exit(0 if not lost and rc == 0 and not errors else 1)

    def tail():
        while not os.path.exists(out):
            time.sleep(0.01)
        with open(out) as f:
            buf = ""
            while not (stop.is_set() and len(seen) >= a.traces):
                chunk = f.readline()
                if not chunk:
                    if stop.is_set() and len(seen) >= a.traces:
                        break
                    time.sleep(0.002)
                    continue
                buf += chunk
                if buf.endswith("\n"):
                    seen[json.loads(buf)["trace_id"]] = time.monotonic()
                    buf = ""

    rss_samples = []

    def sample_rss():
        while not stop.is_set():
            time.sleep(a.rss_every)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # a keep-alive one would time out
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            rss_samples.append((time.monotonic() - t0, int(re.search(r"^process_resident_memory_bytes (\d+)", text, re.M).group(1))))
            print(f"  {rss_samples[-1][0]:.0f} s: RSS {rss_samples[-1][1] / 1e6:.1f} MB, {len(seen)} verdicts", flush=True)

    t0 = time.monotonic()
    if a.rss_every > 0:
        threading.Thread(target=sample_rss, daemon=True).start()
    tailer = threading.Thread(target=tail, daemon=True)
    tailer.start()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(a.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sending = time.monotonic() - t0
    deadline = time.monotonic() + 60
    while len(seen) < a.traces and time.monotonic() < deadline:
        time.sleep(0.05)
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/metrics")
    metrics = conn.getresponse().read().decode()
    rss = int(re.search(r"^process_resident_memory_bytes (\d+)", metrics, re.M).group(1))
    stop.set()
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    lat = sorted((seen[t] - sent_at[t]) * 1000 for t in sent_at if t in seen)
    total_spans = a.traces * (a.spans + 1)
    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    print(f"traces {a.traces} x {a.spans + 1} spans, {a.connections} connections, --idle {a.idle}")
    print(f"sent in {sending:.2f} s: {total_spans / sending:.0f} spans/s, {2 * a.traces / sending:.0f} requests/s")
    print(f"last request -> verdict: p50 {pct(0.5):.0f} ms, p99 {pct(0.99):.0f} ms, max {lat[-1] if lat else 0:.0f} ms")
    print(f"RSS at the end {rss / 1e6:.1f} MB; verdicts {len(seen)}/{a.traces}; serve exit {rc}; refused {len(errors)}")
    sys.exit(0 if len(seen) == a.traces and rc == 0 and not errors else 1)
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
