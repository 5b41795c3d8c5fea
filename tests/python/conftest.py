"""Shared helpers of the Python package's tests: where the sources and the command line are,
and running the command line to compare with."""
import json
import os
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SOURCE = Path(os.environ.get("TRAJCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("TRAJCHECK_CLI", str(SOURCE / "build" / "trajcheck"))


def run_cli(*args, check_status=None, stdin=None):
    """Runs `trajcheck ARGS…` from the source directory; returns (status, stdout, stderr)."""
    p = subprocess.run([CLI, *map(str, args)], cwd=SOURCE, capture_output=True, text=True, input=stdin)
    if check_status is not None:
        assert p.returncode == check_status, p.stderr
    return p.returncode, p.stdout, p.stderr


def cli_jsonl(*args):
    """The records of a `--format jsonl` run, one dict per output line."""
    _, out, _ = run_cli(*args)
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def source():
    return SOURCE
