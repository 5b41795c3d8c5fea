#!/usr/bin/env bash
# bench/score_large.sh — scores one record of N actual × N expected calls (default 100 000,
# bench/gen_score_large.py) and prints its wall time, CPU time and peak RSS (GNU time), and with
# CACHEGRIND=1 its instruction count (valgrind's cachegrind: independent of the machine's load).
#
#   bash bench/score_large.sh [TRAJCHECK] [CALLS]
#
# TRAJCHECK defaults to build-bench/trajcheck, else build/trajcheck. The record is written to
# bench/out/score_large-CALLS.jsonl if missing (about 28 MB for 100 000 calls). Exit status 1
# when the record is not scored (an error line instead of scores).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
calls=${2:-100000}
if [[ -z $bin ]]; then
  if [[ -x build-bench/trajcheck ]]; then bin=build-bench/trajcheck; else bin=build/trajcheck; fi
fi
mkdir -p bench/out
data=bench/out/score_large-$calls.jsonl
[[ -s $data ]] || python3 bench/gen_score_large.py --calls "$calls" -o "$data" >&2
out=$(mktemp)
trap 'rm -f "$out" "$out.time"' EXIT
/usr/bin/time -v "$bin" score --format jsonl "$data" >"$out" 2>"$out.time" || true
if ! grep -q '"selection"' "$out"; then
  echo "score_large: the record was not scored:" >&2
  cut -c1-300 "$out" >&2
  exit 1
fi
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out.time")
user=$(sed -n 's/.*User time (seconds): //p' "$out.time")
sys=$(sed -n 's/.*System time (seconds): //p' "$out.time")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out.time")
printf 'score_large: %s calls a side, %s bytes: wall %s, user %s s, system %s s, peak RSS %s kB (%.1f MB)\n' \
  "$calls" "$(stat -c %s "$data")" "$wall" "$user" "$sys" "$rss" "$(echo "$rss / 1000" | bc -l)"
cut -c1-200 "$out"
if [[ ${CACHEGRIND:-0} == 1 ]]; then
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bin" score --format jsonl "$data" 2>&1 >/dev/null | grep 'I *refs'
fi
