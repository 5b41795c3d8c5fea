#!/usr/bin/env bash
# One script behind the README's two commands (run as root on Debian 12, idempotent):
#   bash scripts/setup.sh examples   install what is missing, build (Release), install the Python
#                                    package for Debian's python3, run the examples
#   bash scripts/setup.sh test       the same, then run the whole test suite (Release: the golden,
#                                    command-line, Python, Dask and editor tests and the full soak;
#                                    the embedding example against an installed copy; then every
#                                    C++ test built with ASan+UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-examples}
jobs=${JOBS:-$(nproc)}

# Debian packages the build and the tests need.
packages=(build-essential cmake ninja-build pkg-config
          tao-pegtl-dev libfmt-dev nlohmann-json3-dev doctest-dev libsimdjson-dev libre2-dev
          libcli11-dev libarchive-dev zlib1g-dev libzstd-dev libdivsufsort-dev zstd python3 python3-dev pybind11-dev python3-pytest
          python3-distributed
          libvalijson-dev json-schema-test-suite libssl-dev)
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
    # The Release tree: the product (command line, library, Python package) and every test of
    # it — golden files, the command line, Python, Dask, the editor, the examples — but of the
    # C++ unit tests only the full-size soak; all of them run in the sanitizer tree below
    # (compiling every doctest file at -O3 too would double the build: docs/ci.md).
    build build "${release[@]}" -DTRAJCHECK_BUILD_TESTS=ON -DTRAJCHECK_UNIT_TESTS=checker_parametric
    install_python
    ctest --test-dir build --output-on-failure -j "$jobs"
    bash scripts/run-examples.sh build/trajcheck >/dev/null
    # The embedding example is a project of its own: it must build against an installed copy
    # (find_package(trajcheck)), not against this tree.
    prefix=$(mktemp -d)
    trap 'rm -rf "$prefix"' EXIT
    cmake --install build --prefix "$prefix/usr" >/dev/null
    cmake -S examples/embedding -B "$prefix/embedding" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
    cmake --build "$prefix/embedding" -j "$jobs"
    "$prefix/embedding/embedding_tests"
    # The same tests under AddressSanitizer and UndefinedBehaviorSanitizer. This build is most
    # of the CI time: -O1 (ASan's recommendation) and -g1 (line tables, enough for the
    # sanitizers' stack traces) instead of RelWithDebInfo's -O2 -g roughly halve its compile
    # time (docs/ci.md); the instrumentation and the tests are the same.
    build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
      -DTRAJCHECK_BUILD_TESTS=ON -DTRAJCHECK_UNIT_TESTS=all -DTRAJCHECK_SANITIZE=ON -DTRAJCHECK_PYTHON=OFF \
      -DTRAJCHECK_PCH=ON
    # (The extension's tests run no C++ code: once, above, is enough.)
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build-asan --output-on-failure -j "$jobs" -E '^vscode\.'
    ;;
  *)
    echo "usage: scripts/setup.sh examples|test" >&2
    exit 2
    ;;
esac
