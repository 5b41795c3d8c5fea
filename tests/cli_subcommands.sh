#!/usr/bin/env bash
# Each subcommand works when named first, which is when the command line sets up that one
# alone (src/cli/main.cpp): its --help, a flag it does not know refused with exit 2 and named,
# and the list of them all under `trajcheck --help`.
#
#   bash tests/cli_subcommands.sh TRAJCHECK
set -u
bin=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

mapfile -t names < <("$bin" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
((${#names[@]} >= 17)) || fail "trajcheck --help lists ${#names[@]} subcommands: ${names[*]}"
for name in "${names[@]}"; do
  out=$("$bin" "$name" --help 2>&1); rc=$?
  ((rc == 0)) || fail "$name --help: exit $rc: $out"
  grep -q "^Usage: .* $name" <<<"$out" || fail "$name --help shows no usage of $name: $out"
  out=$("$bin" "$name" --no-such-flag 2>&1); rc=$?
  ((rc == 2)) || fail "$name --no-such-flag: exit $rc"
  # Named even when a required option is missing too (CLI11 would report that one alone).
  grep -q -- "not expected: --no-such-flag" <<<"$out" || fail "$name --no-such-flag does not name the flag: $out"
done
# A misspelt required option is the flag named, not the option said to be missing.
out=$("$bin" check --rule x.rules traces.jsonl 2>&1); rc=$?
((rc == 2)) && grep -q -- "not expected: --rule" <<<"$out" && ! grep -q "is required" <<<"$out" \
  || fail "check --rule: exit $rc: $out"
# Not a subcommand: every one is set up, and the error is the usual one.
out=$("$bin" chek traces.jsonl 2>&1); rc=$?
((rc == 2)) || fail "an unknown subcommand: exit $rc: $out"
out=$("$bin" --version 2>&1); rc=$?
((rc == 0)) && grep -q '^trajcheck ' <<<"$out" || fail "--version: exit $rc: $out"
((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "ok: ${#names[@]} subcommands"
