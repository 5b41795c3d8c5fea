#!/usr/bin/env bash
# Opens the eval and compare html reports in a real browser (headless Chromium) and checks
# that the inline SVG charts are in the DOM and that nothing is fetched from the network.
# Installs Debian's chromium when missing; exits 77 (ctest: skipped) only when it cannot.
#   browser_test.sh TRAJCHECK_BINARY SOURCE_DIR
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
"$bin" eval support.suite --format html -o "$work/report.html"
rc=$?
[ "$rc" = 0 ] || { echo "eval --format html exited $rc"; exit 1; }
"$bin" compare reports/release-41.json reports/candidate-b.json --format html -o "$work/compare.html" || exit 1

fail=0
check_page() {  # check_page FILE SVG_ID…
  local file=$1; shift
  if grep -Eiq '<script|<link|src="https?:|href="https?:|url\(https?:' "$file"; then
    echo "FAIL: $file refers to scripts or network resources"; fail=1
  fi
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$work")" --dump-dom "file://$file" \
    >"$file.dom" 2>"$file.err"
  local n
  n=$(grep -o '<svg' "$file.dom" | wc -l)
  echo "$(basename "$file"): $n svg elements in the DOM"
  for id in "$@"; do
    if ! grep -q "<svg[^>]*id=\"$id\"" "$file.dom"; then
      echo "FAIL: chart $id is not in the DOM of $file"; fail=1
    fi
    # The chart must have drawn marks, not be an empty frame.
    if ! awk -v id="$id" 'index($0, "id=\"" id "\"") {on=1} on && /<rect|<line/ {found=1} on && /<\/svg>/ {exit} END {exit !found}' "$file.dom"; then
      echo "FAIL: chart $id has no marks"; fail=1
    fi
  done
}
check_page "$work/report.html" chart-dimensions chart-heatmap chart-calls
check_page "$work/compare.html" chart-deltas
if [ -n "${SCREENSHOT:-}" ]; then
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$work")" --window-size=1200,2200 \
    --screenshot="$SCREENSHOT" "file://$work/report.html" 2>/dev/null
fi
[ "$fail" = 0 ] && echo "html reports render with their charts"
exit $fail
