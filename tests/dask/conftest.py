"""A real Dask cluster for the tests: one dask-scheduler and dask-worker processes (two unless
asked) on 127.0.0.1, each in its own process group, stopped at the end whatever happens."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("TRAJCHECK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("TRAJCHECK_CLI", str(SOURCE / "build" / "trajcheck"))
GEN = os.environ.get("TRAJCHECK_GEN")
PYTHON = sys.executable


def _bin(name):
    found = shutil.which(name, path="/usr/bin:" + os.environ.get("PATH", ""))
    if not found:
        pytest.skip(f"{name} not installed")
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_members(pgid):
    """The pids of the processes in process group `pgid`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:  # state, ppid, pgrp
                pids.append(int(entry))
    return pids


def is_resource_tracker(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing.resource_tracker" in f.read()
    except OSError:
        return False


def kill_group(pgid):
    """SIGKILL every process of the group but multiprocessing's resource tracker. A dask-worker
    (its nanny and its worker) makes named semaphores (/dev/shm/sem.mp-*) that the tracker
    unlinks once the processes using them are gone; killed with them, it would leave them
    behind. It ignores SIGTERM and SIGINT and exits by itself when they have died."""
    for pid in group_members(pgid):
        if not is_resource_tracker(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def semaphores_of(pgid):
    """The named semaphores the group's processes have mapped."""
    names = set()
    for pid in group_members(pgid):
        try:
            with open(f"/proc/{pid}/maps") as f:
                names.update(line.split()[-1] for line in f if "/dev/shm/sem.mp-" in line)
        except OSError:
            continue
    return names


def stop(p, timeout=10):
    """SIGTERM the process group, then SIGKILL it (all but the resource tracker, see kill_group)."""
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        p.wait(timeout=timeout)
        return
    except subprocess.TimeoutExpired:
        pass
    kill_group(p.pid)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


class Cluster:
    def __init__(self, tmp):
        self.tmp = tmp
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.procs = []
        self.workers = []
        self.names = {}
        self.env = dict(os.environ)

    def _start(self, args, log):
        f = open(self.tmp / log, "wb")
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        self.procs.append(p)
        return p

    def start(self, workers=2):
        port = self.address.rsplit(":", 1)[1]
        self._start([_bin("dask-scheduler"), "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
                    "scheduler.log")
        for i in range(workers):
            self.add_worker(f"w{i}")
        self.wait_workers(workers)

    def add_worker(self, name):
        p = self._start([_bin("dask-worker"), self.address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                         "--name", name, "--host", "127.0.0.1", "--death-timeout", "60",
                         "--local-directory", str(self.tmp / f"dask-{name}")], f"worker-{name}.log")
        self.workers.append(p)
        self.names[p.pid] = name
        return p

    def client(self):
        from distributed import Client
        return Client(self.address, timeout=30)

    def wait_workers(self, n, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with self.client() as c:
                    c.wait_for_workers(n, timeout=max(1, deadline - time.monotonic()))
                    return
            except (OSError, TimeoutError):
                time.sleep(0.5)
        raise RuntimeError("the Dask cluster did not start: " + self.logs())

    def logs(self):
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in self.tmp.glob("*.log"))

    def close(self):
        for p in reversed(self.procs):
            stop(p)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        c.close()
