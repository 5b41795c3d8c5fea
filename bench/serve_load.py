#!/usr/bin/env python3
"""Load for `trajcheck serve`: starts it on a free 127.0.0.1 port, sends traces of SPANS tool
spans each from CONNECTIONS client threads (keep-alive), each trace in two export requests (its
tool spans, then its ended root span last), and measures the spans/s sustained and the time
from just before a trace's last request is sent to its verdict line in --out (p50/p99; this
includes the --idle quiet time). RSS is read from /metrics before the load, every --rss-every
seconds and at the end.

Two ways to end:
- TRACES traces sent (--traces N), then every verdict awaited and SIGTERM;
- --sigterm-after S: SIGTERM S seconds into the load while the clients still send (with
  --traces 0 they send until then). Every trace of which a request was answered 200 must have
  its verdict; latency counts the traces whose verdict came before the SIGTERM.
Exits 1 when a trace is lost, serve exits non-zero, or a request is refused other than 429/503.

    python3 bench/serve_load.py TRAJCHECK [--traces 2000] [--spans 10] [--connections 4] [--idle 100ms]
        [--sigterm-after S] [--rss-every S]
"""
import argparse, http.client, itertools, json, os, re, signal, subprocess, sys, tempfile, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--traces", type=int, default=2000, help="traces to send; 0: until --sigterm-after")
ap.add_argument("--spans", type=int, default=10)
ap.add_argument("--connections", type=int, default=4)
ap.add_argument("--idle", default="100ms")
ap.add_argument("--sigterm-after", type=float, default=0,
                help="send SIGTERM this many seconds into the load; then every trace of which a request was "
                     "answered 200 must have its verdict")
ap.add_argument("--rss-every", type=float, default=0, help="sample RSS from /metrics this often (seconds) during the load")
a = ap.parse_args()
if a.traces == 0 and a.sigterm_after <= 0:
    ap.error("--traces 0 needs --sigterm-after")

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

    def rss_now():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # a keep-alive one would time out
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        return int(re.search(r"^process_resident_memory_bytes (\d+)", text, re.M).group(1))

    sent_at = {}
    lock = threading.Lock()
    errors = []
    seen = {}
    stop = threading.Event()        # the load is over (all sent, or SIGTERM)
    terminated = threading.Event()  # SIGTERM sent
    accepted = set()                # traces of which some request was answered 200
    spans_accepted = [0]

    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        numbers = itertools.count(k, a.connections) if a.traces == 0 else range(k, a.traces, a.connections)
        for i in numbers:
            if terminated.is_set():
                return
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
                            spans_accepted[0] += a.spans if n == 0 else 1
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

    def tail():
        while not os.path.exists(out):
            time.sleep(0.01)
        with open(out) as f:
            buf = ""
            while True:
                chunk = f.readline()
                if not chunk:
                    if stop.is_set():
                        break
                    time.sleep(0.002)
                    continue
                buf += chunk
                if buf.endswith("\n"):
                    seen.setdefault(json.loads(buf)["trace_id"], time.monotonic())
                    buf = ""

    rss_samples = []

    def sample_rss():
        while not stop.wait(a.rss_every):
            try:
                rss_samples.append((time.monotonic() - t0, rss_now()))
            except OSError:
                return  # the server stopped
            print(f"  {rss_samples[-1][0]:.0f} s: RSS {rss_samples[-1][1] / 1e6:.1f} MB, {len(seen)} verdicts", flush=True)

    rss_start = rss_now()
    t0 = time.monotonic()
    if a.rss_every > 0:
        threading.Thread(target=sample_rss, daemon=True).start()
    tailer = threading.Thread(target=tail, daemon=True)
    tailer.start()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(a.connections)]
    for t in threads:
        t.start()
    if a.sigterm_after > 0:
        time.sleep(max(0.0, a.sigterm_after - (time.monotonic() - t0)))
        rss_end = rss_now()
        with lock:
            load_s, spans_sent = time.monotonic() - t0, spans_accepted[0]
            verdicts_before = dict(seen)
        terminated.set()
        p.send_signal(signal.SIGTERM)
        for t in threads:
            t.join()
        rc = p.wait(timeout=120)
        stop.set()
        tailer.join()
        latency_of = verdicts_before
    else:
        for t in threads:
            t.join()
        load_s, spans_sent = time.monotonic() - t0, spans_accepted[0]
        deadline = time.monotonic() + 60
        while len(seen) < a.traces and time.monotonic() < deadline:
            time.sleep(0.05)
        rss_end = rss_now()
        latency_of = dict(seen)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        stop.set()
        tailer.join()

    got = {json.loads(l)["trace_id"] for l in open(out) if l.strip()}
    lost = accepted - got
    lat = sorted((latency_of[t] - sent_at[t]) * 1000 for t in sent_at if t in latency_of)
    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    rss_all = [rss_start] + [r for _, r in rss_samples] + [rss_end]
    print(f"{len(accepted)} traces x {a.spans + 1} spans, {a.connections} connections, --idle {a.idle}, "
          f"{load_s:.0f} s of load")
    print(f"{spans_sent / load_s:.0f} spans/s accepted")
    print(f"last request -> verdict ({len(lat)} traces): p50 {pct(0.5):.0f} ms, p99 {pct(0.99):.0f} ms, "
          f"max {lat[-1] if lat else 0:.0f} ms")
    print(f"RSS before the load {rss_start / 1e6:.1f} MB, at the end {rss_end / 1e6:.1f} MB, "
          f"max {max(rss_all) / 1e6:.1f} MB ({len(rss_all)} samples)")
    if a.sigterm_after > 0:
        print(f"SIGTERM after {a.sigterm_after:.0f} s: {len(accepted)} traces had a request accepted, {len(got)} verdicts, "
              f"{len(lost)} lost; {len(got) - len(verdicts_before)} checked after the SIGTERM")
    else:
        print(f"verdicts {len(got)}/{a.traces}, {len(lost)} lost")
    print(f"serve exit {rc}; refused {len(errors)}: " + open(err.name).read().strip().splitlines()[-1])
    complete = a.sigterm_after > 0 or len(got) == a.traces
    sys.exit(0 if complete and not lost and rc == 0 and not errors else 1)
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
