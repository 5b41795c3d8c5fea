#!/bin/sh
# Runs the generators again (the real OpenTelemetry JS SDK and Vercel AI SDK, each against
# local servers only) and checks what trajcheck makes of the files they write now: the
# batched export holds each trace over several requests, and is read as 2 traces with the
# verdicts of the same spans sent in one request; the AI SDK's tool calls are read as tool
# calls in both of its span formats. Exits 77 (skipped) without node or the npm packages,
# which `scripts/setup.sh test` installs (npm ci).
#   sh tests/producers/otel/run.sh TRAJCHECK WORKDIR
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "node not found: skipped"; exit 77; }
[ -d "$here/node_modules/@ai-sdk/otel" ] || { echo "tests/producers/otel/node_modules missing (npm ci): skipped"; exit 77; }
bin=$1 out=$2
rm -rf "$out" && mkdir -p "$out" || exit 1
node "$here/agent.mjs" "$out" || exit 1
node "$here/vercel.mjs" "$out" legacy || exit 1
node "$here/vercel.mjs" "$out" genai || exit 1
rules="$here/../../golden/check/otlp-batched/case.rules"
for f in batched.jsonl one-request.json vercel-legacy.jsonl vercel-genai.jsonl; do
  "$bin" check -r "$rules" --format jsonl -j 2 "$out/$f" > "$out/$f.verdicts" 2> "$out/$f.stderr"
  echo "$?" > "$out/$f.exit"
done
exec python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def verdicts(name):
    lines = [json.loads(l) for l in open(f"{out}/{name}.verdicts")]
    return [(t["trace_id"], t["status"]) for t in lines if "trace_id" in t]
problems = []
requests = sum(1 for l in open(f"{out}/batched.jsonl") if l.strip())
if requests <= 2:
    problems.append(f"batched.jsonl holds {requests} export requests: no trace was split over several")
batched, whole = verdicts("batched.jsonl"), verdicts("one-request.json")
if sorted(s for _, s in batched) != ["fail", "pass"]:
    problems.append(f"batched.jsonl: {batched}, expected one pass and one fail")
if sorted(batched) != sorted(whole):
    problems.append(f"batched.jsonl {batched} differs from one-request.json {whole}")
for name in ("vercel-legacy.jsonl", "vercel-genai.jsonl"):
    v = verdicts(name)
    if sorted(s for _, s in v) != ["fail", "pass"]:
        problems.append(f"{name}: {v}, expected one pass and one fail")
    if open(f"{out}/{name}.stderr").read().strip():
        problems.append(f"{name}: warnings: " + open(f"{out}/{name}.stderr").read())
for p in problems:
    print("FAIL:", p)
print("ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY
