#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz (clang, ASan+UBSan) and runs each for SECONDS,
# seeded from the repository's own files. The corpus lives in build-fuzz/corpus/TARGET, crash
# inputs in build-fuzz/artifacts/. Exit status 1 when a target found a crash, a leak or a hang.
#   scripts/fuzz.sh 600                     # every target, 10 minutes each
#   scripts/fuzz.sh 60 fuzz_rules fuzz_suite
# Targets: fuzz_rules (parser, fmt, compiler), fuzz_traces (every reader), fuzz_compressed
# (gzip/zstd input), fuzz_suite, fuzz_catalog, fuzz_compare (compare's report reader), fuzz_lsp
# (the language server, seeded with the framed conversations of tests/fuzz/lsp_seeds/).
set -euo pipefail
seconds="${1:?usage: scripts/fuzz.sh SECONDS [target…]}"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${FUZZ_BUILD_JOBS:-2}"
all=(fuzz_rules fuzz_traces fuzz_compressed fuzz_suite fuzz_catalog fuzz_compare fuzz_lsp)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTRAJCHECK_FUZZ=ON -DTRAJCHECK_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" >/dev/null
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# copy_seeds DIR PATTERN… : the repository's small files matching any PATTERN, into DIR.
copy_seeds() {
  local dir=$1; shift
  local find_args=()
  for p in "$@"; do find_args+=(${find_args:+-o} -name "$p"); done
  for src in rules tests/data tests/golden examples catalog; do
    [[ -d "$root/$src" ]] || continue
    find "$root/$src" \( "${find_args[@]}" \) -size -64k -print0 | while IFS= read -r -d '' f; do
      cp "$f" "$dir/$(echo "$f" | sha1sum | cut -c1-16).${f##*.}"
    done
  done
}

failed=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  seeds="$build/seeds/$target"
  mkdir -p "$corpus" "$seeds" "$build/artifacts"
  case "$target" in
    fuzz_traces) copy_seeds "$seeds" '*.json' '*.jsonl' ;;
    fuzz_compressed)
      copy_seeds "$seeds" '*.jsonl'
      for f in "$seeds"/*.jsonl; do
        gzip -c "$f" > "$f.gz"; zstd -q -c "$f" > "$f.zst"; rm "$f"
      done ;;
    fuzz_suite) copy_seeds "$seeds" '*.suite' ;;
    fuzz_catalog) copy_seeds "$seeds" 'tools*.json' 'catalog*.json' 'broken.json' 'lookaround.json' ;;
    fuzz_compare) copy_seeds "$seeds" 'baseline.json' 'report*.json' 'run-*.json' ;;
    fuzz_lsp) cp "$root"/tests/fuzz/lsp_seeds/*.txt "$seeds"/ ;;
    *) copy_seeds "$seeds" '*.rules' ;;
  esac
  dict_args=()
  [[ -f "$root/tests/fuzz/$target.dict" ]] && dict_args=(-dict="$root/tests/fuzz/$target.dict")
  echo "== $target: ${seconds}s"
  if ! "$build/tests/fuzz/$target" "$corpus" "$seeds" "${dict_args[@]}" -max_total_time="$seconds" \
      -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/$target-" \
      -print_final_stats=1 2>"$build/$target.log"; then
    failed+=("$target")
    tail -40 "$build/$target.log"
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$target.log" | sed "s/^/  /" || true
done
if ((${#failed[@]})); then
  echo "fuzz: findings in ${failed[*]} (inputs in $build/artifacts/)"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), no findings"
