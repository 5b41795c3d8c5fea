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
echo "guard cli: ok"
