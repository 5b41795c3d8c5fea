#!/usr/bin/env bash
# Opens the html of `trajcheck history` in a real browser (headless Chromium): the page loads,
# the inline SVG chart is in the DOM with one point per run per metric, and nothing is fetched
# from the network. Installs Debian's chromium when missing; exits 77 (ctest: skipped) only
# when it cannot.
#   history_browser_test.sh TRAJCHECK_BINARY SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "chromium is missing; installing Debian's chromium"
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >"$work/apt.log" 2>&1 ||
      tail -5 "$work/apt.log"
  fi
  browser=$(command -v chromium || true)
fi
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed and cannot be installed here (apt-get install chromium failed)"
  exit 77
fi

cd "$src/examples/eval" || exit 1
day=1
for runs in runs/candidate-a.jsonl runs/candidate-b.jsonl runs/candidate-a.jsonl runs/candidate-b.jsonl; do
  "$bin" eval support.suite -j 1 --runs "$runs" --record "$work/history.db" --label "r$day" \
    --recorded-at "2026-01-0${day}T00:00:00Z" >/dev/null
  day=$((day + 1))
done
"$bin" history "$work/history.db" --format html -o "$work/history.html" || { echo "history --format html failed"; exit 1; }

fail=0
file=$work/history.html
if grep -Eiq '<script|<link|src="https?:|href="https?:|url\(https?:' "$file"; then
  echo "FAIL: $file refers to scripts or network resources"; fail=1
fi
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$work")" --dump-dom "file://$file" \
  >"$file.dom" 2>"$file.err"
if ! grep -q '<svg[^>]*id="chart-history"' "$file.dom"; then
  echo "FAIL: chart-history is not in the DOM"; fail=1
fi
# Every metric drawn (one series each) has one point per run: 4 runs.
series=$(grep -o '<g class="series" data-metric="[^"]*"' "$file.dom" | sed 's/.*data-metric="//; s/"$//')
[ -n "$series" ] || { echo "FAIL: the chart has no series"; fail=1; }
for m in $series; do
  n=$(grep -o "<circle class=\"point\" data-metric=\"$m\" data-run=\"[0-9]*\"" "$file.dom" | sort -u | wc -l)
  echo "history.html: $m: $n points"
  [ "$n" = 4 ] || { echo "FAIL: $m has $n points, not one per run (4)"; fail=1; }
done
for m in selection outcome pass_share; do
  echo "$series" | grep -qx "$m" || { echo "FAIL: no series for $m"; fail=1; }
done
[ "$fail" = 0 ] && echo "history html renders its chart: one point per run per metric"
exit $fail
