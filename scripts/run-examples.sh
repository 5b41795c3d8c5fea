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
run 0 "$tc" lint examples/rules/*.rules examples/agentdojo/*.rules rules/*.rules
run 0 "$tc" fmt --check examples/rules/*.rules examples/agentdojo/*.rules rules/*.rules
# Their tests pass and cover every rule both ways (docs/testing-rules.md).
run 0 "$tc" test --quiet --coverage --min-coverage 100 rules examples
# AgentDojo runs: all read; the injection-goal rules find the injections that succeeded (1).
run 0 "$tc" normalize examples/agentdojo/runs >/dev/null
run 1 "$tc" check -r examples/agentdojo/injections.rules --quiet examples/agentdojo/runs
# The refund workflow: the good traces pass, each bad one breaks a rule (exit 1).
run 0 "$tc" check -r examples/rules/refunds.rules examples/traces/refund_ok.jsonl
run 1 "$tc" check -r examples/rules/refunds.rules examples/traces/refund_violations.jsonl
# One approval, two refunds: the approval is linked to its own call, so the second fails (1).
run 1 "$tc" check -r examples/rules/refunds.rules examples/traces/refund_approval_reused.jsonl
run 1 "$tc" check -r examples/rules/refunds.rules --format jsonl examples/traces/refund_ok.jsonl \
      examples/traces/refund_violations.jsonl
# A coding-agent session log: one session passes the coding-agent rules, the other breaks four (1).
run 1 "$tc" check -r rules/coding-agent.rules examples/traces/coding-agent-session.jsonl
# Below the failing level a violation is reported but does not fail the run.
run 0 "$tc" check -r examples/rules/refunds.rules --fail-on never --quiet examples/traces/refund_violations.jsonl
# ---- evaluation suites (eval helper: examples/eval, examples/tau-retail) ----------------
# The refund suite: candidate A passes the release gates; B, a regression of A, fails them (1).
run 0 "$tc" eval examples/eval/support.suite
run 1 "$tc" eval examples/eval/support.suite --runs examples/eval/runs/candidate-b.jsonl --format markdown
run 0 "$tc" compare examples/eval/reports/release-41.json examples/eval/reports/candidate-b.json
# tau-bench retail judged against its own tasks: policy violations fail the critical gate (1).
run 1 "$tc" eval examples/tau-retail/tau-retail.suite --error-pattern '^Error' --format markdown
# Fixtures, injected failures, synthetic cases and an external grader: the synthetic split
# catches a refund retried under a new idempotency key, so the recovery gates fail (1).
run 1 "$tc" eval examples/datasets/datasets.suite
# ---- end of evaluation suites ------------------------------------------------------------
exit $status
