#!/usr/bin/env bash
# `trajcheck case vary` on the datasets example, twice, each in a scratch copy of the example
# without its synthetic cases: both must write exactly the bytes committed under
# cases/synthetic/ (the same seed gives the same bytes).
# Usage: vary_test.sh TRAJCHECK EXAMPLE_DIR SCRATCH_DIR
set -euo pipefail
tc=$1 example=$2 scratch=$3
rm -rf "$scratch"
for copy in one two; do
  mkdir -p "$scratch/$copy"
  cp -r "$example"/. "$scratch/$copy"
  rm -rf "$scratch/$copy/cases/synthetic" "$scratch/$copy/.trajcheck-cache"
  (cd "$scratch/$copy" &&
   "$tc" case vary datasets.suite --from refund-101 --kinds attempts,fixture-reorder --seed 7 \
       --out cases/synthetic >/dev/null)
  diff -r "$scratch/$copy/cases/synthetic" "$example/cases/synthetic"
done
echo "case vary: the same seed gave the committed bytes twice"
