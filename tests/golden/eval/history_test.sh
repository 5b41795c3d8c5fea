#!/usr/bin/env bash
# `eval --record` and `history` on the example suite: three runs (release-41, candidate-a, then
# the regressed candidate-b) recorded with fixed labels and times, the history in text and json
# against its goldens (UPDATE_GOLDEN=1 rewrites them), --fail-on-regression's exit status, and
# bad databases (not SQLite, not trajcheck's, a newer schema) refused with exit 2 and the path.
# Usage: history_test.sh TRAJCHECK SOURCE_DIR SCRATCH_DIR
set -uo pipefail
tc=$1 src=$2 scratch=$3
golden=$src/tests/golden/eval
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
fail=0
check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected $2, got $3"; fail=1; fi
}
cd "$src/examples/eval" || exit 1
record() {  # record LABEL DAY [eval args…]
  local label=$1 day=$2; shift 2
  "$tc" eval support.suite -j 1 --record "$scratch/history.db" --label "$label" \
    --recorded-at "2026-01-0${day}T12:00:00Z" "$@" >/dev/null
}
record release-41 1; check "record release-41" 0 $?
record candidate-a 2; check "record candidate-a" 0 $?
record candidate-b 3 --runs runs/candidate-b.jsonl; check "record candidate-b (gates fail: exit 1)" 1 $?

cd "$scratch" || exit 1
for format in text json; do
  "$tc" history history.db --seed 7 --format "$format" >"history.$format" 2>"history.$format.err"
  check "history --format $format" 0 $?
  if [ -n "${UPDATE_GOLDEN:-}" ] && [ "${UPDATE_GOLDEN}" != 0 ]; then
    cp "history.$format" "$golden/history.$format.expected"
  elif ! diff -u "$golden/history.$format.expected" "history.$format"; then
    echo "FAIL: history --format $format differs from its golden"; fail=1
  fi
  grep -q "the latest run (candidate-b) regressed" "history.$format.err" || { echo "FAIL: no regression note"; fail=1; }
done
"$tc" history history.db --fail-on-regression >/dev/null 2>&1; check "--fail-on-regression, latest regressed" 1 $?
"$tc" history history.db --fail-on-regression --last 2 --suite support-agent >/dev/null 2>&1
check "--fail-on-regression --last 2" 1 $?
"$tc" history history.db --fail-on-regression --last 1 >/dev/null 2>&1; check "--last 1: nothing before it" 0 $?
"$tc" history history.db --suite nope >/dev/null 2>"nope.err"; check "unknown --suite" 2 $?
grep -q "history.db: error: no run of suite \`nope\` is recorded (suites: support-agent)" nope.err ||
  { echo "FAIL: unknown suite message: $(cat nope.err)"; fail=1; }

# Not a SQLite file: a located error, exit 2, for history and for eval --record.
printf 'not a database, just text\n%.0s' {1..200} >notadb.db
"$tc" history notadb.db >/dev/null 2>"notadb.err"; check "history on a text file" 2 $?
grep -q "^notadb.db: error: .*not a SQLite database" notadb.err || { echo "FAIL: text file message: $(cat notadb.err)"; fail=1; }
(cd "$src/examples/eval" && "$tc" eval support.suite -j 1 --record "$scratch/notadb.db" >/dev/null 2>"$scratch/notadb-record.err")
check "eval --record on a text file" 2 $?
grep -q "notadb.db: error: .*not a SQLite database" notadb-record.err ||
  { echo "FAIL: record on text file message: $(cat notadb-record.err)"; fail=1; }
"$tc" history missing.db >/dev/null 2>"missing.err"; check "history on a missing file" 2 $?
grep -q "^missing.db: error: cannot open" missing.err || { echo "FAIL: missing file message: $(cat missing.err)"; fail=1; }

[ "$fail" = 0 ] && echo "history: goldens, exit statuses and bad databases as expected"
exit $fail
