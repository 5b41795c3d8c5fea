#!/usr/bin/env bash
# The headline ratios in about a minute, for a quiet moment on a shared machine:
# the floors, check -j 1/-j N, score -j 1/-j N and agentevals, RUNS times each back to back
# (interleaved, so a change in load hits every figure alike), medians of wall and CPU time.
# Needs what bench/run.sh built and generated (build-bench/, bench/out/full/, bench/peers/).
#   bash bench/ratios.sh            # RUNS=3 JOBS=2
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
JOBS=${JOBS:-2}
b=build-bench
native=bench/out/full/native.jsonl
ae=bench/out/full/agentevals.jsonl
for f in "$b/trajcheck" "$b/bench/bench_floor" "$native" "$ae"; do
  [[ -e $f ]] || { echo "missing $f: run bench/run.sh first" >&2; exit 2; }
done
peer=1
[[ -d bench/peers/node_modules/agentevals ]] || { peer=0; echo "no bench/peers: agentevals not measured" >&2; }

out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
measure() {  # NAME CMD…: appends "NAME wall cpu" (seconds)
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" "$@" >/dev/null 2>"$out.err" || true
  tail -n 1 "$out.err" | awk -v n="$name" '{printf "%s %s %.2f\n", n, $1, $2 + $3}' >>"$out"
}
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= RUNS; i++)); do
  measure floor "$b/bench/bench_floor" "$native"
  measure floor-validate "$b/bench/bench_floor" --validate "$native"
  measure check-j1 "$b/trajcheck" check -r bench/bench.rules -j 1 --quiet "$native"
  measure "check-j$JOBS" "$b/trajcheck" check -r bench/bench.rules -j "$JOBS" --quiet "$native"
  measure score-j1 "$b/trajcheck" score -j 1 --tool-args exact --format jsonl "$ae"
  measure "score-j$JOBS" "$b/trajcheck" score -j "$JOBS" --tool-args exact --format jsonl "$ae"
  ((peer)) && measure agentevals node bench/peers/driver.mjs --peer agentevals --input "$ae" --out /dev/null
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$JOBS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    n, w, c = line.split()
    rows.setdefault(n, []).append((float(w), float(c)))
med = {n: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for n, v in rows.items()}
j = sys.argv[2]
print(f"{'figure':16} {'wall s':>8} {'CPU s':>8}")
for n, (w, c) in med.items():
    print(f"{n:16} {w:8.3f} {c:8.2f}")
def r(a, b, k):
    return med[a][k] / med[b][k] if a in med and b in med and med[b][k] > 0 else float("nan")
print()
print(f"check -j1 vs floor:            {r('floor', 'check-j1', 0):.0%} wall, {r('floor', 'check-j1', 1):.0%} CPU (reference)")
print(f"check -j1 vs floor-validate:   {r('floor-validate', 'check-j1', 0):.0%} wall, {r('floor-validate', 'check-j1', 1):.0%} CPU (target >= 75%)")
print(f"check -j{j} vs -j1:              {r('check-j1', f'check-j{j}', 0):.2f}x wall (target >= 1.85x)")
print(f"score -j1 vs agentevals:       {r('agentevals', 'score-j1', 0):.1f}x wall, {r('agentevals', 'score-j1', 1):.1f}x CPU (target >= 10x)")
print(f"score -j{j} vs agentevals:       {r('agentevals', f'score-j{j}', 0):.1f}x wall (target >= 18x)")
PY
