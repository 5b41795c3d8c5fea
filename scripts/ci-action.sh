#!/usr/bin/env bash
# The steps of the GitHub Actions composite action (action.yml at the repository root), as one
# script so that CI can run them outside GitHub (tests/ci_action.py). docs/ci.md documents the
# inputs.
#
#   ci-action.sh build   find or build trajcheck; its path goes to $GITHUB_ENV (TRAJCHECK_BIN)
#   ci-action.sh run     check or eval: the Markdown report appended to $GITHUB_STEP_SUMMARY,
#                        JUnit XML written to INPUT_JUNIT; exits with trajcheck's status
#
# Inputs come as INPUT_* environment variables (action.yml maps them): TRAJCHECK, BUILD_DIR,
# COMMAND (check|eval), RULES and TRACES (whitespace-separated lists), FAIL_ON, SUITE, RUNS,
# JUNIT, ARGS (further options, whitespace-separated).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

split() { read -r -a "$1" <<<"${2//$'\n'/ }" || true; }

case "${1:-}" in
  build)
    if [[ -n "${INPUT_TRAJCHECK:-}" ]]; then
      bin=$INPUT_TRAJCHECK
    elif command -v trajcheck >/dev/null 2>&1; then
      bin=$(command -v trajcheck)
    else
      # A Release build of the command line alone (the Debian packages of scripts/setup.sh must
      # be installed). An already configured tree is built as it is, not reconfigured.
      dir=${INPUT_BUILD_DIR:-${RUNNER_TEMP:-/tmp}/trajcheck-build}
      if [[ ! -f "$dir/CMakeCache.txt" ]]; then
        cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAJCHECK_BUILD_TESTS=OFF \
              -DTRAJCHECK_PYTHON=OFF
      fi
      cmake --build "$dir" --target trajcheck_cli
      bin=$dir/trajcheck
    fi
    if ! "$bin" --version >/dev/null 2>&1; then
      echo "trajcheck action: $bin does not run" >&2
      exit 2
    fi
    echo "TRAJCHECK_BIN=$bin" >>"${GITHUB_ENV:?GITHUB_ENV is not set}"
    echo "trajcheck action: using $bin ($("$bin" --version))"
    ;;
  run)
    bin=${TRAJCHECK_BIN:?the build step did not run}
    summary=${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set}
    junit=${INPUT_JUNIT:-trajcheck-junit.xml}
    split extra "${INPUT_ARGS:-}"
    case "${INPUT_COMMAND:-check}" in
      check)
        split rules "${INPUT_RULES:?the rules input is empty}"
        split traces "${INPUT_TRACES:?the traces input is empty}"
        cmd=("$bin" check --fail-on "${INPUT_FAIL_ON:-error}")
        for r in "${rules[@]}"; do cmd+=(-r "$r"); done
        cmd+=("${extra[@]}")
        # Two runs (the Markdown and the JUnit report); the status is the first one's.
        status=0
        "${cmd[@]}" --format markdown "${traces[@]}" >>"$summary" || status=$?
        "${cmd[@]}" --format junit "${traces[@]}" >"$junit" || true
        ;;
      eval)
        cmd=("$bin" eval "${INPUT_SUITE:?the suite input is empty}")
        [[ -n "${INPUT_RUNS:-}" ]] && { split runs "$INPUT_RUNS"; for r in "${runs[@]}"; do cmd+=(--runs "$r"); done; }
        cmd+=("${extra[@]}")
        status=0
        "${cmd[@]}" --format markdown >>"$summary" || status=$?
        "${cmd[@]}" --format junit -o "$junit" || true
        ;;
      *)
        echo "trajcheck action: command must be check or eval, not '${INPUT_COMMAND}'" >&2
        exit 2
        ;;
    esac
    echo "trajcheck action: ${INPUT_COMMAND:-check} exited $status; JUnit report in $junit"
    exit "$status"
    ;;
  *)
    echo "usage: ci-action.sh build|run" >&2
    exit 2
    ;;
esac
