#!/bin/sh
# The extension's checks, for ctest:  test/run.sh grammar | typecheck | package OUT.vsix
# Each needs node and editors/vscode/node_modules (scripts/setup.sh test runs `npm ci` here);
# without them the check is skipped (exit 77, which ctest counts as skipped) and says why.
cd "$(dirname "$0")/.." || exit 1
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed"
  exit 77
fi
if [ ! -d node_modules/vscode-textmate ]; then
  echo "skipped: editors/vscode/node_modules is absent (run npm ci in editors/vscode)"
  exit 77
fi
case "$1" in
  grammar) exec node test/grammar.test.js ;;
  typecheck) exec node node_modules/typescript/bin/tsc -p ./ --noEmit ;;
  package)
    # Packs the extension as a .vsix with @vscode/vsce (its prepublish step compiles the
    # TypeScript into out/); offline: it only reads node_modules.
    exec node node_modules/@vscode/vsce/vsce package --allow-missing-repository --skip-license -o "$2" ;;
  *) echo "usage: test/run.sh grammar|typecheck|package OUT.vsix" >&2; exit 2 ;;
esac
