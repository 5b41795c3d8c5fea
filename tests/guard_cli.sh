#!/bin/sh
# The command line of `trajcheck guard`, with a stand-in server (`sh -c 'cat > FILE'`: it
# records what reaches it and never answers).
#   sh tests/guard_cli.sh TRAJCHECK WORKDIR
set -u
bin=$1 work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":{}}}\n' "$1" "$2"; }
printf 'rule ctx: forbid list_users where context.user == "u1"\n    message "not for u1"\n' > ctx.rules

# Everything after -- is the server's command line, dashes included.
call 1 list_users | "$bin" guard -r ctx.rules -- sh -c 'cat > server.txt' -y --flag >out.txt 2>log.txt \
  || fail "guard -- sh -c … -y: exit $? ($(cat log.txt))"
grep -q list_users server.txt || fail "the call did not reach the server"

# --context KEY=VALUE, as check takes it: the rule on context.user fires.
call 1 list_users | "$bin" guard -r ctx.rules --context user=u1 --context n=2 -- sh -c 'cat > server2.txt' >out.txt 2>log.txt \
  || fail "guard --context user=u1: exit $?"
[ -s server2.txt ] && fail "--context user=u1 was ignored: the call reached the server"
grep -q 'not for u1' out.txt || fail "no denial: $(cat out.txt)"
# … and as a JSON object.
call 1 list_users | "$bin" guard -r ctx.rules --context '{"user":"u1"}' -- sh -c 'cat > server3.txt' >out.txt 2>log.txt
[ -s server3.txt ] && fail "--context JSON was ignored"
# A context that cannot be used is an error at start: the server never runs.
for bad in 'user' '=u1' '{"user":' '[1]'; do
  call 1 list_users | "$bin" guard -r ctx.rules --context "$bad" -- sh -c 'touch started' >out.txt 2>log.txt
  rc=$?
  [ $rc -eq 2 ] || fail "--context '$bad': exit $rc, expected 2"
  [ -e started ] && fail "--context '$bad': the server was started"
done

# A trace path that cannot be written is refused before the server starts.
call 1 list_users | "$bin" guard -r ctx.rules --trace-out no-such-dir/t.jsonl -- sh -c 'touch started' >out.txt 2>log.txt
rc=$?
[ $rc -eq 2 ] || fail "--trace-out no-such-dir/t.jsonl: exit $rc, expected 2"
[ -e started ] && fail "unwritable --trace-out: the server was started"
grep -q 'cannot write the trace to no-such-dir/t.jsonl' log.txt || fail "no message: $(cat log.txt)"

# Two sessions append two traces with distinct ids; check reads both.
for i in 1 2; do
  call 1 list_users | "$bin" guard -r ctx.rules --trace-out t.jsonl -- sh -c 'cat > /dev/null' >out.txt 2>log.txt
done
[ "$(wc -l < t.jsonl)" -eq 2 ] || fail "two sessions did not append two lines: $(cat t.jsonl)"
[ "$(cut -c1-60 t.jsonl | sort -u | wc -l)" -eq 2 ] || fail "the two traces share an id"
"$bin" check -r ctx.rules t.jsonl >check.txt 2>&1 || fail "check of the appended trace: $(cat check.txt)"
grep -q '2 traces' check.txt || fail "check did not read two traces: $(cat check.txt)"
call 1 list_users | "$bin" guard -r ctx.rules --trace-out t.jsonl --trace-id mine -- sh -c 'cat > /dev/null' >out.txt 2>log.txt
tail -n 1 t.jsonl | grep -q '^{"trace_id":"mine",' || fail "--trace-id: $(tail -n 1 t.jsonl)"

# Decision log on stderr; --mode observe forwards the denied call; --on-violation still works.
call 1 list_users | "$bin" guard -r ctx.rules --context user=u1 --mode observe --decision-log - \
  -- sh -c 'cat > server4.txt' >out.txt 2>log.txt || fail "--mode observe: exit $?"
grep -q list_users server4.txt || fail "--mode observe denied the call"
grep -q '"verdict":"deny"' log.txt && grep -q '"forwarded":true' log.txt && grep -q '"rules_digest":"sha256:' log.txt \
  || fail "decision log: $(cat log.txt)"
call 1 list_users | "$bin" guard -r ctx.rules --context user=u1 --on-violation warn -- sh -c 'cat > server5.txt' >out.txt 2>log.txt
grep -q list_users server5.txt || fail "--on-violation warn denied the call"
call 1 list_users | "$bin" guard -r ctx.rules --mode enforce --on-violation warn -- true >out.txt 2>log.txt
[ $? -eq 2 ] || fail "--mode enforce --on-violation warn must be refused"

# --otlp-endpoint: a value that is no URL is refused before the server starts.
call 1 list_users | "$bin" guard -r ctx.rules --otlp-endpoint 127.0.0.1:4318 -- sh -c 'touch started' >out.txt 2>log.txt
rc=$?
[ $rc -eq 2 ] || fail "--otlp-endpoint 127.0.0.1:4318: exit $rc, expected 2"
[ -e started ] && fail "bad --otlp-endpoint: the server was started"
grep -q "otlp-endpoint '127.0.0.1:4318' is not an OTLP/HTTP endpoint" log.txt || fail "no message: $(cat log.txt)"
# Each decision reaches a collector (a receiver on 127.0.0.1 that keeps what is posted to /v1/logs).
python3 - <<'PY' &
import http.server, json, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open("posted.jsonl", "ab") as f:
            f.write(self.path.encode() + b" " + body + b"\n")
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open("port.tmp", "w").write(str(s.server_address[1])); __import__("os").rename("port.tmp", "port")
s.timeout = 30
s.handle_request()
PY
receiver=$!
for _ in $(seq 100); do [ -e port ] && break; sleep 0.1; done
port=$(cat port)
call 1 list_users | "$bin" guard -r ctx.rules --context user=u1 --otlp-endpoint "http://127.0.0.1:$port" \
  -- sh -c 'cat > /dev/null' >out.txt 2>log.txt || fail "--otlp-endpoint: exit $? ($(cat log.txt))"
wait $receiver
grep -q "decision events exported to http://127.0.0.1:$port/v1/logs" log.txt || fail "no export line: $(cat log.txt)"
grep -q '^/v1/logs .*"eventName":"gen_ai.guardrail.result"' posted.jsonl || fail "no event posted: $(cat posted.jsonl)"
grep -q '"key":"gen_ai.guardrail.rule","value":{"stringValue":"ctx"}' posted.jsonl || fail "no rule: $(cat posted.jsonl)"
# A collector that is not there: the events are lost, said, and the exit status is 2.
call 1 list_users | "$bin" guard -r ctx.rules --otlp-endpoint "http://127.0.0.1:$port" -- sh -c 'cat > /dev/null' >out.txt 2>log.txt
rc=$?
[ $rc -eq 2 ] || fail "an unreachable collector: exit $rc, expected 2"
grep -q "1 of 1 decision events could not be exported to http://127.0.0.1:$port/v1/logs" log.txt || fail "no loss line: $(cat log.txt)"
echo "guard cli: ok"
