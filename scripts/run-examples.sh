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

# Rules files must compile cleanly, and be in canonical form.
run 0 "$tc" lint examples/rules/*.rules rules/*.rules
run 0 "$tc" fmt --check examples/rules/*.rules rules/*.rules
# The refund workflow: the good traces pass, each bad one breaks a rule (exit 1).
run 0 "$tc" check -r examples/rules/refunds.rules examples/traces/refund_ok.jsonl
run 1 "$tc" check -r examples/rules/refunds.rules examples/traces/refund_violations.jsonl
run 1 "$tc" check -r examples/rules/refunds.rules --format jsonl examples/traces/refund_ok.jsonl \
      examples/traces/refund_violations.jsonl
# Below the failing level a violation is reported but does not fail the run.
run 0 "$tc" check -r examples/rules/refunds.rules --fail-on never --quiet examples/traces/refund_violations.jsonl
exit $status
