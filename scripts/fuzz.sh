#!/usr/bin/env bash
# Builds the libFuzzer targets into build-fuzz (clang, ASan+UBSan) and runs one of them for
# SECONDS, seeded from the repository's rule files or trace files. The corpus lives in build-fuzz/corpus/.
#   scripts/fuzz.sh 600              # fuzz_rules for 10 minutes
#   scripts/fuzz.sh 60 fuzz_rules
set -euo pipefail
seconds="${1:?usage: scripts/fuzz.sh SECONDS [target]}"
target="${2:-fuzz_rules}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
jobs="${FUZZ_BUILD_JOBS:-2}"

if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTRAJCHECK_FUZZ=ON -DTRAJCHECK_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
fi
cmake --build "$build" -j"$jobs" --target "$target"

corpus="$build/corpus/$target"
seeds="$build/seeds/$target"
mkdir -p "$corpus" "$seeds"
# Seeds: every .rules file of the repository (rules/, tests/golden/, examples/) for the rule
# parser; every small trace file (.json, .jsonl) of tests/data and examples/ for the readers;
# framed LSP conversations (tests/fuzz/lsp_seeds/) for the language server.
if [[ "$target" == fuzz_traces ]]; then
  patterns=(-name '*.json' -o -name '*.jsonl')
  dirs=(tests/data examples)
elif [[ "$target" == fuzz_lsp ]]; then
  patterns=(-name '*.txt')
  dirs=(tests/fuzz/lsp_seeds)
else
  patterns=(-name '*.rules')
  dirs=(rules tests/golden examples)
fi
for dir in "${dirs[@]}"; do
  [[ -d "$root/$dir" ]] || continue
  find "$root/$dir" \( "${patterns[@]}" \) -size -64k -print0 | while IFS= read -r -d '' f; do
    cp "$f" "$seeds/$(echo "$f" | sha1sum | cut -c1-16).${f##*.}"
  done
done

dict_args=()
[[ -f "$root/tests/fuzz/$target.dict" ]] && dict_args=(-dict="$root/tests/fuzz/$target.dict")
mkdir -p "$build/artifacts"
exec "$build/tests/fuzz/$target" "$corpus" "$seeds" "${dict_args[@]}" -max_total_time="$seconds" \
  -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/" -print_final_stats=1
