#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz (clang, ASan+UBSan) and runs each for SECONDS,
# seeded from the repository's own files. The corpus lives in build-fuzz/corpus/TARGET, crash
# inputs in build-fuzz/artifacts/. Exit status 1 when a target found a crash, a leak or a hang.
#   scripts/fuzz.sh 600                     # every target, 10 minutes each
#   scripts/fuzz.sh 60 fuzz_rules fuzz_suite
# FUZZ_JOBS=N runs N targets at a time (default 1). FUZZ_BUILD_DIR may name a tree configured
# with -DTRAJCHECK_FUZZ=ON already (the set-up script's sanitizer tree is one).
# Targets: fuzz_rules (parser, fmt, compiler), fuzz_traces (every reader), fuzz_compressed
# (gzip/zstd input), fuzz_suite, fuzz_catalog, fuzz_compare (compare's report reader), fuzz_lsp
# (the language server, seeded with the framed conversations of tests/fuzz/lsp_seeds/), fuzz_guard
# (the MCP guard's framing and decisions, seeded with tests/fuzz/guard_seeds/), fuzz_otlp_protobuf
# (serve's OTLP/HTTP protobuf decode, seeded with tests/fuzz/otlp_protobuf_seeds/).
# tests/fuzz/regressions/TARGET/ holds inputs that once crashed TARGET; they are seeds too.
set -euo pipefail
seconds="${1:?usage: scripts/fuzz.sh SECONDS [target…]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${FUZZ_BUILD_JOBS:-2}"
all=()  # every tests/fuzz/fuzz_*.cpp is a target (tests/fuzz/CMakeLists.txt)
for f in "$root"/tests/fuzz/fuzz_*.cpp; do all+=("$(basename "$f" .cpp)"); done
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAJCHECK_FUZZ=ON -DTRAJCHECK_SANITIZE=ON \
    -DTRAJCHECK_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# copy_seeds DIR PATTERN… : the repository's small files matching any PATTERN, into DIR, under
# their paths in the repository (libFuzzer reads a seed directory recursively). One cp for them
# all: a process per file took seconds per target.
copy_seeds() {
  local dir=$1; shift
  local find_args=() sources=()
  for p in "$@"; do find_args+=(${find_args:+-o} -name "$p"); done
  for src in rules tests/data tests/golden examples catalog; do
    [[ -d "$root/$src" ]] && sources+=("$src")
  done
  (cd "$root" && find "${sources[@]}" \( "${find_args[@]}" \) -size -64k -print0 |
     xargs -0 -r cp --parents -t "$dir")
}

# run_target TARGET: one fuzz run; its log in $build/TARGET.log, exit 1 on a finding.
run_target() {
  local target=$1
  local corpus="$build/corpus/$target" seeds="$build/seeds/$target"
  mkdir -p "$corpus" "$seeds" "$build/artifacts"
  case "$target" in
    fuzz_traces) copy_seeds "$seeds" '*.json' '*.jsonl' ;;
    fuzz_compressed)
      copy_seeds "$seeds" '*.jsonl'
      find "$seeds" -name '*.jsonl' -exec gzip -k {} +
      find "$seeds" -name '*.jsonl' -exec zstd -q --rm {} + ;;
    fuzz_suite) copy_seeds "$seeds" '*.suite' ;;
    fuzz_rule_tests) copy_seeds "$seeds" '*.rules.test.json' ;;
    fuzz_catalog) copy_seeds "$seeds" 'tools*.json' 'catalog*.json' 'broken.json' 'lookaround.json' ;;
    fuzz_compare) copy_seeds "$seeds" 'baseline.json' 'report*.json' 'run-*.json' ;;
    fuzz_lsp) cp "$root"/tests/fuzz/lsp_seeds/*.txt "$seeds"/ ;;
    fuzz_guard) cp "$root"/tests/fuzz/guard_seeds/*.txt "$seeds"/ ;;
    fuzz_otlp_protobuf) cp "$root"/tests/fuzz/otlp_protobuf_seeds/*.bin "$seeds"/ ;;
    *) copy_seeds "$seeds" '*.rules' ;;
  esac
  # Inputs that once crashed a target stay among its seeds, so a regression shows at once.
  if [[ -d "$root/tests/fuzz/regressions/$target" ]]; then cp "$root/tests/fuzz/regressions/$target"/* "$seeds"/; fi
  local dict_args=()
  [[ -f "$root/tests/fuzz/$target.dict" ]] && dict_args=(-dict="$root/tests/fuzz/$target.dict")
  "$build/tests/fuzz/$target" "$corpus" "$seeds" "${dict_args[@]}" -max_total_time="$seconds" \
      -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/$target-" \
      -print_final_stats=1 >"$build/$target.log" 2>&1
}

# report TARGET STATUS: its numbers, and the end of its log when it found something.
report() {
  local target=$1 status=$2
  echo "== $target: ${seconds}s$( ((status)) && echo ', FINDING')"
  ((status)) && tail -40 "$build/$target.log"
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$target.log" | sed "s/^/  /" || true
}

parallel="${FUZZ_JOBS:-1}"
failed=()
declare -A target_of=()  # pid → target, while it runs
# reap_one: waits for whichever target ends first (bash 5.1's wait -n -p) and reports it.
reap_one() {
  local pid status=0
  wait -n -p pid "${!target_of[@]}" || status=1
  local t=${target_of[$pid]}
  report "$t" $status; ((status)) && failed+=("$t")
  unset "target_of[$pid]"
}
for target in "${targets[@]}"; do
  while ((${#target_of[@]} >= parallel)); do reap_one; done
  run_target "$target" &
  target_of[$!]=$target
done
while ((${#target_of[@]})); do reap_one; done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (inputs in $build/artifacts/)"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), no findings"
