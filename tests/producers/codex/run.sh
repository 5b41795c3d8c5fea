#!/bin/sh
# Writes a Codex CLI rollout file: `codex exec` (the real CLI, from node_modules: `npm ci
# --ignore-scripts` here) against the local mock of the Responses API (../mock_responses.py,
# following plan.json: a shell command, a failing one, an answer; no network), with CODEX_HOME
# in a temporary directory. The rollout Codex writes under CODEX_HOME/sessions/YYYY/MM/DD/ is
# copied, trimmed (../trim.py), to OUT/rollout.jsonl. Exits 77 (skipped) without node_modules.
#   sh tests/producers/codex/run.sh OUT
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT}
codex=
for p in "$here"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex; do
  [ -x "$p" ] && { codex=$p; break; }
done
[ -n "$codex" ] || { echo "tests/producers/codex/node_modules missing (npm ci): skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'kill "$mock" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/home/.codex" "$work/proj" "$out" || exit 1
python3 "$here/../mock_responses.py" "$work/port" "$work/requests.jsonl" "$here/plan.json" &
mock=$!
i=0
while [ ! -s "$work/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$work/port") || exit 1
cat > "$work/home/.codex/config.toml" <<TOML
model = "gpt-mock"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
env_key = "MOCK_OPENAI_KEY"
TOML
(cd "$work/proj" && env -i PATH="${PATH:-/usr/bin:/bin}" HOME="$work/home" CODEX_HOME="$work/home/.codex" \
   MOCK_OPENAI_KEY=not-a-key timeout 120 "$codex" exec --skip-git-repo-check \
   --dangerously-bypass-approvals-and-sandbox "Write hello.txt, then show it and missing.txt." </dev/null) || exit 1
set -- "$work"/home/.codex/sessions/*/*/*/rollout-*.jsonl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "expected one rollout file, found: $*"; exit 1; }
[ -f "$work/proj/hello.txt" ] || { echo "the command did not run"; exit 1; }
python3 "$here/../trim.py" "$work" "$1" "$out/rollout.jsonl"
