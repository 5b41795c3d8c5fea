"""Builds the extension trajcheck._native with CMake for `pip install .` and `python3 -m build`
(the metadata is in pyproject.toml; docs/python.md).

The extension is the CMake target trajcheck_python (python/CMakeLists.txt) built for the
interpreter running this script. By default a Release tree is configured and built under
setuptools' build directory (the whole library: minutes). With TRAJCHECK_CMAKE_BUILD_DIR set to
an already configured trajcheck build tree, that tree's target is built instead (nothing to do
when it is up to date), provided its extension is for this interpreter's ABI. CMAKE_ARGS adds
options to the configure step (e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache), JOBS the build's
parallelism.
"""
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        tree = os.environ.get("TRAJCHECK_CMAKE_BUILD_DIR")
        if tree:
            tree = Path(tree).resolve()
            if not (tree / "CMakeCache.txt").is_file():
                sys.exit(f"setup.py: TRAJCHECK_CMAKE_BUILD_DIR={tree} is not a configured CMake tree")
        else:
            tree = Path(self.build_temp).resolve() / "cmake"
            configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                         "-DTRAJCHECK_PYTHON=ON", "-DTRAJCHECK_BUILD_TESTS=OFF",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            subprocess.run(configure, check=True)
        build = ["cmake", "--build", str(tree), "--target", "trajcheck_python"]
        if os.environ.get("JOBS"):
            build += ["-j", os.environ["JOBS"]]
        subprocess.run(build, check=True)
        built = tree / "python" / "trajcheck" / f"_native{suffix}"
        if not built.is_file():
            # A tree configured for another interpreter builds an extension this one cannot import.
            found = sorted(p.name for p in (tree / "python" / "trajcheck").glob("_native*"))
            sys.exit(f"setup.py: {tree} holds no _native{suffix} for {sys.executable} "
                     f"(it has: {', '.join(found) or 'none'}); configure it with -DPython3_EXECUTABLE")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("trajcheck._native", sources=[])], cmdclass={"build_ext": CMakeBuild})
