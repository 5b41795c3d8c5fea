#!/bin/sh
# Writes LangChain JS message state: generate.mjs (the real @langchain/core, from node_modules:
# `npm ci --ignore-scripts` here; no model is called) to OUT/messages.json and OUT/state.jsonl.
# Exits 77 (skipped) without node_modules.
#   sh tests/producers/langchain/run.sh OUT
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT}
[ -d "$here/node_modules/@langchain/core" ] || { echo "tests/producers/langchain/node_modules missing (npm ci): skipped"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "node not found: skipped"; exit 77; }
mkdir -p "$out" && node "$here/generate.mjs" "$out"
