#!/bin/sh
# Writes LangChain JS message state (the real @langchain/core and @langchain/openai, from
# node_modules: `npm ci --ignore-scripts` here): generate.mjs builds a conversation from the
# message classes (no model call) into OUT/messages.json and OUT/state.jsonl; generate_model.mjs
# runs a ChatOpenAI tool-calling loop against the local mock of the Responses API
# (../mock_responses.py, following plan.json; no network) into OUT/model.json (trimmed by
# ../trim.py). Exits 77 (skipped) without node_modules.
#   sh tests/producers/langchain/run.sh OUT
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT}
[ -d "$here/node_modules/@langchain/openai" ] || { echo "tests/producers/langchain/node_modules missing (npm ci): skipped"; exit 77; }
command -v node >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || { echo "node or python3 not found: skipped"; exit 77; }
mkdir -p "$out" && node "$here/generate.mjs" "$out" || exit 1
work=$(mktemp -d) || exit 1
trap 'kill "$mock" 2>/dev/null; rm -rf "$work"' EXIT
python3 "$here/../mock_responses.py" "$work/port" "$work/requests.jsonl" "$here/plan.json" &
mock=$!
i=0
while [ ! -s "$work/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$work/port") || exit 1
env -i PATH="${PATH:-/usr/bin:/bin}" HOME="$work" OPENAI_API_KEY=not-a-key OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
  timeout 120 node "$here/generate_model.mjs" "$work/model.json" || exit 1
python3 "$here/../trim.py" "$work" "$work/model.json" "$out/model.json"
