#!/usr/bin/env bash
# Reader warnings must cost their number, not warnings × record: one record of N OpenAI tool
# results that match no call (a warning each, at its position), read at N and 4N. Linear cost
# gives a ratio near 4, placing each warning by a scan from the record's start about 16. A
# ratio check, not a test: run it on a quiet machine.
#   bash bench/warnings_scaling.sh build/trajcheck [N]      # N = 20000 by default
set -euo pipefail
bin=${1:?usage: warnings_scaling.sh TRAJCHECK [N]}
n=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() {  # N FILE: one record of N unmatched tool results
  python3 - "$1" "$2" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
messages = [{"role": "tool", "tool_call_id": f"call_{i:08d}", "content": "ok"} for i in range(n)]
with open(out, "w") as f:
    f.write(json.dumps({"trace_id": "orphans", "messages": messages}) + "\n")
PY
}
gen "$n" "$work/small.jsonl"
gen $((4 * n)) "$work/large.jsonl"
cpu() {  # FILE: user+system seconds of one normalize
  /usr/bin/time -f "%U %S" "$bin" normalize -j 1 "$1" >/dev/null 2>"$work/time" || true
  tail -n 1 "$work/time" | awk '{printf "%.3f", $1 + $2}'
}
small=$(cpu "$work/small.jsonl")
large=$(cpu "$work/large.jsonl")
ratio=$(awk -v a="$small" -v b="$large" 'BEGIN { printf "%.1f", (a > 0) ? b / a : 0 }')
echo "reader warnings: $n unmatched results ${small}s, $((4 * n)) ${large}s: ratio $ratio (linear ~4, quadratic ~16)"
awk -v r="$ratio" 'BEGIN { exit !(r < 8) }' || { echo "FAIL: reader warnings do not scale linearly" >&2; exit 1; }
