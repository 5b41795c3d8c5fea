#!/bin/sh
# Runs the Claude Code hook test; exits 77 (skipped) without python3 or the CLI's npm
# packages, which `scripts/setup.sh test` installs (npm ci). The package's own launcher
# needs its install script; the platform package holds the same program, run directly.
#   sh tests/claude-code/run.sh TRAJCHECK WORKDIR
here=$(dirname "$0")
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
claude=
for p in "$here"/node_modules/@anthropic-ai/claude-code-linux-*/claude; do
  [ -x "$p" ] && { claude=$p; break; }
done
[ -n "$claude" ] || { echo "tests/claude-code/node_modules missing (npm ci): skipped"; exit 77; }
rm -rf "$2" && mkdir -p "$2" || exit 1
exec python3 "$here/conversation.py" "$1" "$claude" "$2"
