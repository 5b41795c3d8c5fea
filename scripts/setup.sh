#!/usr/bin/env bash
# One script behind the README's two commands (run as root on Debian 12, idempotent):
#   bash scripts/setup.sh examples   install what is missing, build (Release), install the Python
#                                    package for Debian's python3, run the examples
#   bash scripts/setup.sh test       the same, then run the whole test suite (Release: the golden,
#                                    command-line, Python, Dask and editor tests and the full soak;
#                                    the embedding example against an installed copy; then every
#                                    C++ test built with ASan+UBSan, the record pipeline with
#                                    TSan, and 30 seconds of each fuzz target)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-examples}
jobs=${JOBS:-$(nproc)}

# Debian packages the build and the tests need.
packages=(build-essential cmake ninja-build pkg-config
          tao-pegtl-dev libfmt-dev nlohmann-json3-dev doctest-dev libsimdjson-dev libre2-dev
          libcli11-dev libarchive-dev zlib1g-dev libzstd-dev libdivsufsort-dev zstd python3 python3-dev pybind11-dev python3-pytest
          python3-venv python3-pip python3-setuptools python3-wheel python3-build python3-yaml
          python3-distributed
          libvalijson-dev json-schema-test-suite libssl-dev libcpp-httplib-dev libsqlite3-dev
          libprotobuf-dev protobuf-compiler
          nettle-dev liblzma-dev libbz2-dev liblz4-dev)
# (The last four: the static archives that libarchive.a's zip reader and filters need, so
# that the trajcheck executable links libarchive statically: cmake/static_deps.cmake.)
# The sanitizer tree and the fuzz targets are built with clang (libFuzzer, and a shorter build);
# the editor tests run docs/editors.md's Neovim set-up in Debian's Neovim.
[[ $mode == test ]] && packages+=(clang libclang-rt-14-dev neovim)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm for the VS Code extension's tests (any install will do; Debian's when missing).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Each stage's time on stderr, so that a run's log shows where its minutes went (docs/ci.md).
stage_start=0
stage() {  # stage NAME: the time since the previous stage ended
  echo "setup: $1 took $((SECONDS - stage_start)) s (${SECONDS} s in all)" >&2
  stage_start=$SECONDS
}
stage "the Debian packages"

build() {  # build DIR [cmake args…]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

# The Python package is built for Debian's own interpreter (another python3 may come first on
# PATH) and installed into its site directory under /usr/local, which that interpreter reads.
python=/usr/bin/python3
release=(-DCMAKE_BUILD_TYPE=Release -DTRAJCHECK_NATIVE=ON -DTRAJCHECK_PYTHON=ON -DPython3_EXECUTABLE=$python
         -DTRAJCHECK_PCH=ON)
install_python() {
  cmake --install build --component python >/dev/null
  (cd / && "$python" -c "import trajcheck") || { echo "setup: the installed trajcheck package does not import" >&2; exit 1; }
  echo "setup: Python package installed for $python ($(cd / && "$python" -c 'import os, trajcheck; print(os.path.dirname(trajcheck.__file__))'))"
}

case "$mode" in
  examples)
    build build "${release[@]}" -DTRAJCHECK_BUILD_TESTS=OFF
    install_python
    stage "the Release build"
    bash scripts/run-examples.sh build/trajcheck
    ;;
  test)
    # The extension's npm packages, exactly as package-lock.json pins them (install scripts
    # are not run: nothing the tests use needs one). Without them its tests report skipped.
    if ! (cd editors/vscode && npm ci --ignore-scripts --no-audit --no-fund); then
      echo "setup: npm ci failed in editors/vscode: the extension's tests will be skipped" >&2
    fi
    # The MCP client SDK and reference server of the guard conversation test, pinned likewise.
    if ! (cd tests/mcp && npm ci --ignore-scripts --no-audit --no-fund); then
      echo "setup: npm ci failed in tests/mcp: the guard conversation test will be skipped" >&2
    fi
    # The Claude Code CLI of the hook test, pinned likewise (its launcher's install script is
    # not needed: the test runs the platform package's program directly).
    if ! (cd tests/claude-code && npm ci --ignore-scripts --no-audit --no-fund); then
      echo "setup: npm ci failed in tests/claude-code: the Claude Code hook test will be skipped" >&2
    fi
    # The agent software whose output the readers are tested on (tests/producers.cmake), pinned
    # likewise.
    for producer in tests/producers/codex tests/producers/openai-agents tests/producers/langchain tests/producers/otel; do
      if ! (cd "$producer" && npm ci --ignore-scripts --no-audit --no-fund); then
        echo "setup: npm ci failed in $producer: its producer test will be skipped" >&2
      fi
    done
    stage "the npm packages"
    # The Release tree: the product (command line, library, Python package) and every test of
    # it — golden files, the command line, Python, Dask, the editor, the examples — but of the
    # C++ unit tests only the full-size soak and the allocation count (which the sanitizers'
    # own allocator rules out); all of them run in the sanitizer tree below (compiling every
    # doctest file at -O3 too would double the build: docs/ci.md).
    build build "${release[@]}" -DTRAJCHECK_BUILD_TESTS=ON "-DTRAJCHECK_UNIT_TESTS=checker_parametric;checker_alloc"
    install_python
    stage "the Release build"
    ctest --test-dir build --output-on-failure -j "$jobs"
    bash scripts/run-examples.sh build/trajcheck >/dev/null
    stage "the Release tests and the examples"
    # The embedding example is a project of its own: it must build against an installed copy
    # (find_package(trajcheck)), not against this tree.
    prefix=$(mktemp -d)
    trap 'rm -rf "$prefix"' EXIT
    cmake --install build --prefix "$prefix/usr" >/dev/null
    cmake -S examples/embedding -B "$prefix/embedding" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
    cmake --build "$prefix/embedding" -j "$jobs"
    "$prefix/embedding/embedding_tests"
    stage "the embedding example"
    # The same tests under AddressSanitizer and UndefinedBehaviorSanitizer, in a tree built by
    # clang (docs/ci.md: how this tree is kept short): -O1, as ASan recommends, but the unit
    # tests' own sources at -O0; -g1, the line tables the sanitizers' stack traces need; unity
    # batches of sources; the library instrumented for coverage too, so the fuzz targets are
    # built in the same tree. simdjson sizes its classes by __OPTIMIZE__ unless told: the -O0
    # tests and the -O1 library must agree on them.
    build build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DTRAJCHECK_UNIT_TEST_FLAGS=-O0 -DCMAKE_UNITY_BUILD=ON \
      -DCMAKE_CXX_FLAGS=-DSIMDJSON_DEVELOPMENT_CHECKS=0 \
      -DTRAJCHECK_BUILD_TESTS=ON -DTRAJCHECK_UNIT_TESTS=all -DTRAJCHECK_SANITIZE=ON -DTRAJCHECK_FUZZ=ON \
      -DTRAJCHECK_PYTHON=OFF -DTRAJCHECK_PCH=ON
    stage "the sanitizer build"
    symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer  # file:line in clang's sanitizer reports
    [[ -x $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
    # (The extension's tests run no C++ code: once, above, is enough.)
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build-asan --output-on-failure -j "$jobs" -E '^vscode\.'
    stage "the sanitizer tests"
    # The record pipeline's threads and RecordSource's reading ahead under ThreadSanitizer: a
    # program of its own (the tree above is built with ASan, which TSan cannot join).
    clang++ -std=c++20 -fsanitize=thread -O1 -g1 -Iinclude -Isrc tests/tsan/pipeline_tsan.cpp \
      src/readers/{record_source,input_stream,input_list,record_shape}.cpp src/json/text.cpp \
      -lsimdjson -lfmt -larchive -lz -lzstd -o build-asan/pipeline_tsan
    TSAN_OPTIONS=halt_on_error=1 build-asan/pipeline_tsan
    stage "the ThreadSanitizer program"
    # 30 seconds of each fuzz target, seeded from the repository's files: a crash, leak or hang
    # fails the run, and the input that caused it is in build-asan/artifacts/.
    FUZZ_BUILD_DIR=$PWD/build-asan FUZZ_BUILD_JOBS=$jobs FUZZ_JOBS=$jobs bash scripts/fuzz.sh 30
    stage "the fuzz targets"
    ;;
  *)
    echo "usage: scripts/setup.sh examples|test" >&2
    exit 2
    ;;
esac
