#!/usr/bin/env bash
# `case vary` with a suite's variation command (tests/data/eval/vary-command): the derived cases
# are the committed bytes; a second run takes the command's answer from the cache (the command
# runs once); `--cache -` runs it again.
# Usage: vary_command_test.sh TRAJCHECK DATA_DIR SCRATCH_DIR
set -euo pipefail
tc=$1 data=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
cp -r "$data"/. "$scratch"
rm -rf "$scratch/expected" "$scratch/calls.log" "$scratch/.trajcheck-cache"
cd "$scratch"
for run in 1 2; do
  "$tc" case vary vary.suite --from refund-1 --kinds paraphrase,empty --seed 3 --out out >/dev/null
  diff -r out "$data/expected"
done
test "$(wc -l < calls.log)" -eq 1 || { echo "the cached answer was not used: $(wc -l < calls.log) runs"; exit 1; }
"$tc" case vary vary.suite --from refund-1 --kinds paraphrase --seed 3 --out out-nocache --cache - >/dev/null
test "$(wc -l < calls.log)" -eq 2 || { echo "--cache - did not run the command"; exit 1; }
echo "case vary: variation commands give the committed cases, cached"
