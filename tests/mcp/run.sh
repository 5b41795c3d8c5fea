#!/bin/sh
# Runs the guard conversation test and the hostile-bytes test; exits 77 (skipped) without node or the npm packages,
# which `scripts/setup.sh test` installs (npm ci).
#   sh tests/mcp/run.sh TRAJCHECK WORKDIR
here=$(dirname "$0")
command -v node >/dev/null 2>&1 || { echo "node not found: skipped"; exit 77; }
[ -d "$here/node_modules/@modelcontextprotocol/sdk" ] || { echo "tests/mcp/node_modules missing (npm ci): skipped"; exit 77; }
rm -rf "$2" && mkdir -p "$2" || exit 1
node "$here/conversation.mjs" "$1" "$2" || exit 1
exec node "$here/hostile.mjs" "$1" "$2"
