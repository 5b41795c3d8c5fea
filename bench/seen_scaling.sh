#!/usr/bin/env bash
# seen() must cost the lookups' lengths, not lookups × trace: one trace of N user messages,
# each followed by a call whose argument is looked up (absent, so the whole text is searched
# when it is searched), and one of N calls without results, each looking up its argument,
# checked at N and 4N. Linear cost gives a ratio near 4, a search of every earlier step per
# lookup about 16. A ratio check, not a test: run it on a quiet machine.
#   bash bench/seen_scaling.sh build/trajcheck [N]      # N = 20000 by default
set -euo pipefail
bin=${1:?usage: seen_scaling.sh TRAJCHECK [N]}
n=${2:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'forbid lookup where not seen(arguments.q)\n' > "$work/seen.rules"
gen() {  # N FILE [bare]: one trace, N user messages of ~40 bytes, N lookups of absent values;
         # bare: N lookups without results and nothing else
  python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
n, out, bare = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "bare"
steps = []
for i in range(n):
    if not bare:
        steps.append({"type": "user_message", "content": f"please look at order ord_{i:08d} for me today"})
    steps.append({"type": "tool_call", "tool": "lookup", "arguments": {"q": f"absent value number {i:08d} x"}})
with open(out, "w") as f:
    f.write(json.dumps({"trace_id": "seen", "steps": steps}) + "\n")
PY
}
cpu() {  # FILE: user+system seconds of one check
  /usr/bin/time -f "%U %S" "$bin" check -j 1 --quiet -r "$work/seen.rules" "$1" >/dev/null 2>"$work/time" || true
  tail -n 1 "$work/time" | awk '{printf "%.3f", $1 + $2}'
}
status=0
for shape in text bare; do
  gen "$n" "$work/small.jsonl" "$shape"
  gen $((4 * n)) "$work/large.jsonl" "$shape"
  small=$(cpu "$work/small.jsonl")
  large=$(cpu "$work/large.jsonl")
  ratio=$(awk -v a="$small" -v b="$large" 'BEGIN { printf "%.1f", (a > 0) ? b / a : 0 }')
  what=$([[ $shape == text ]] && echo "over user text: $n messages" || echo "over calls without results: $n calls")
  echo "seen() $what ${small}s, 4x ${large}s: ratio $ratio (linear ~4, quadratic ~16)"
  awk -v r="$ratio" 'BEGIN { exit !(r < 8) }' || { echo "FAIL: seen() $what does not scale linearly" >&2; status=1; }
done
exit $status
