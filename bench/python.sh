#!/usr/bin/env bash
# bench/python.sh — what calling trajcheck from Python costs per trace, against the command line,
# on the benchmark's native traces (bench/gen_traces.cpp) and rules (bench/bench.rules).
#
#   bash bench/python.sh [BUILD_DIR]     # default build/: needs trajcheck and the Python package
#
# Environment: BYTES (default 20M) of traces, RUNS (default 3), PYTHON (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
BYTES=${BYTES:-20M}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
c++ -O2 -std=c++20 -o "$tmp/gen" bench/gen_traces.cpp
"$tmp/gen" native -o "$tmp/native.jsonl" --bytes "$BYTES" --seed 7 2>/dev/null
PYTHONPATH="$build/python" "$PYTHON" bench/python_per_trace.py "$build/trajcheck" bench/bench.rules \
  "$tmp/native.jsonl" "$RUNS"
