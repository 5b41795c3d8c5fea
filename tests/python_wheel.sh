#!/bin/sh
# The Python package as a user installs it: a wheel built by `python3 -m build --wheel
# --no-isolation` and `pip install --no-build-isolation .`, each into a fresh virtual
# environment, offline (--no-index), then the pytest plugin's tests run by that environment's
# interpreter, importing the installed copy (no PYTHONPATH to the build tree).
#
#   python_wheel.sh PYTHON SOURCE_DIR CMAKE_BUILD_DIR WORK_DIR
#
# The extension is not compiled again: TRAJCHECK_CMAKE_BUILD_DIR points setup.py at the
# configured tree, whose trajcheck_python target is up to date. The sources are copied to
# WORK_DIR first, so that setuptools' build and egg-info directories are not written into the
# source tree.
#
# The environments are made with --system-site-packages: pytest (Debian's python3-pytest) is
# not in a fresh venv and there is no package index to install it from. The test checks that
# `trajcheck` is imported from the venv, not from a copy installed for the system interpreter
# (scripts/setup.sh installs one; pip would take it as already installed, hence
# --ignore-installed).
set -eu
python=$1 src=$2 tree=$3 work=$4
rm -rf "$work"
mkdir -p "$work/src"
cp -r "$src/pyproject.toml" "$src/setup.py" "$src/README.md" "$src/python" "$work/src/"
export TRAJCHECK_CMAKE_BUILD_DIR="$tree" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH

"$python" -m build --wheel --no-isolation --outdir "$work/dist" "$work/src" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/trajcheck-*.whl)
echo "built $(basename "$wheel")"
# The wheel holds the extension, the pure-Python modules and the plugin's entry point.
"$python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["trajcheck/__init__.py", "trajcheck/pytest_plugin.py", "trajcheck/dask/__init__.py", "trajcheck/py.typed"]
missing = [n for n in need if n not in names]
missing += [] if any(n.startswith("trajcheck/_native.") and n.endswith(".so") for n in names) else ["trajcheck/_native*.so"]
ep = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
if not ep or b"trajcheck.pytest_plugin" not in zipfile.ZipFile(sys.argv[1]).read(ep[0]):
    missing.append("the pytest11 entry point")
if missing:
    sys.exit(f"the wheel lacks {', '.join(missing)}")
PY

run_plugin_tests() {  # VENV
  venv=$1
  (cd "$work" && "$venv/bin/python" -c '
import sys, trajcheck
assert trajcheck.__file__.startswith(sys.prefix), f"trajcheck imported from {trajcheck.__file__}, not the venv {sys.prefix}"
print("imported", trajcheck.__file__)')
  (cd "$work" && TRAJCHECK_SOURCE_DIR="$src" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
     "$src/tests/python/test_pytest_plugin.py" "$src/examples/python")
}

"$python" -m venv --system-site-packages "$work/wheel-venv"
"$work/wheel-venv/bin/python" -m pip install -q --ignore-installed --no-deps "$wheel"
run_plugin_tests "$work/wheel-venv"

"$python" -m venv --system-site-packages "$work/pip-venv"
"$work/pip-venv/bin/python" -m pip install -q --ignore-installed --no-deps --no-build-isolation "$work/src"
run_plugin_tests "$work/pip-venv"
