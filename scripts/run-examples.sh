#!/usr/bin/env bash
# The main job on the bundled examples: normalize the example traces and check them
# against the example rules. Usage: scripts/run-examples.sh path/to/trajcheck
set -uo pipefail
cd "$(dirname "$0")/.."
tc=${1:-build/trajcheck}
status=0
run() {  # run EXPECTED_EXIT command…
  local want=$1; shift
  echo "\$ trajcheck ${*:2}"
  "$@"
  local rc=$?
  if [ "$rc" != "$want" ]; then echo "run-examples: expected exit $want, got $rc: $*" >&2; status=1; fi
}
for f in examples/traces/*; do
  run 0 "$tc" normalize "$f" >/dev/null
done
echo "normalized $(ls examples/traces | wc -l) example trace files"
exit $status
