"""trajcheck.dask: ``trajcheck check`` and ``trajcheck score`` over a Dask cluster.

    from distributed import Client
    import trajcheck.dask
    client = Client("tcp://scheduler:8786")
    result = trajcheck.dask.check(["rules/refunds.rules"], ["traces/"], client=client)
    print(result.summary["failed"], result.exit_status)
    rows = result.verdicts            # a dask bag: one dict per trace and rule

The inputs are listed and cut into pieces by the library's input layer, as the command line
lists them: one piece per file, and byte ranges for plain JSONL files larger than the partition
size (a range owns every line that starts inside it; compressed files are never cut). Each piece is one task, run
by the library exactly as the command line runs the whole corpus; the driver writes the
pieces' output in input order and the summary from the statistics merged over all pieces, so
the output is byte for byte the command line's. OpenTelemetry traces are joined over the whole
corpus as the command line joins them: the pieces leave them aside, and one last task reads
the pieces that held some and checks the joined traces. Tasks are pure (they read, they
return) and Dask runs again those of a worker that died. Paths must name the same files on
every worker.
"""
import contextlib
import errno
import fcntl
import glob
import hashlib
import json
import logging
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
import uuid
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from .. import _native

__all__ = ["CheckResult", "ScoreResult", "check", "plan", "score", "UsageError"]

DEFAULT_PARTITION_SIZE = 64 << 20
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class UsageError(ValueError):
    """An option or input the run cannot use; the message is the command line's."""


# ---------------------------------------------------------------------------------------
# Partitioning

# A piece of the input, as the library's input layer (trajcheck/input.hpp) cuts it:
# (path, kind, message, ranged, start, end, lines_before). `kind` is the listing's entry kind
# (0 a file, 1 standard input, 2 unreadable, 3 skipped, `message` saying why); a ranged piece
# holds the lines of a plain JSONL file that start in [start, end).
Piece = Tuple[str, int, str, bool, int, int, int]


def expand(inputs: Iterable[str]) -> List[str]:
    """Globs as their matches, sorted (the shell expands them for the command line); other inputs
    as they are. Directories are listed by the library, as the command line lists them."""
    out: List[str] = []
    for given in inputs:
        if given == "-":
            raise UsageError("standard input cannot be read on a cluster; give files")
        if not os.path.lexists(given) and glob.has_magic(given):
            matches = sorted(glob.glob(given, recursive=True), key=os.fsencode)
            out.extend(matches or [given])
        else:
            out.append(given)
    return out


def _count_newlines(ranges: List[Tuple[str, int, int]]) -> List[int]:
    """The '\\n' in each (path, start, end) byte range."""
    return [_native._count_newlines(path, start, end) for path, start, end in ranges]


def plan(inputs: Iterable[str], partition_size: int = DEFAULT_PARTITION_SIZE, client=None,
         input_format: str = "auto") -> List[Piece]:
    """The pieces of a run, in input order: every file the command line reads (compressed, `.json`,
    `.eval`, session logs: one piece each), and byte ranges of `partition_size` for plain JSONL
    files larger than that. The line numbers of ranges come from counting the '\\n' of every range
    before them (on the cluster when a client is given)."""
    if partition_size < 1:
        raise UsageError("--partition-size must be positive")
    pieces: List[Piece] = []
    for path in expand(inputs):
        pieces.extend(_native._pieces(path, partition_size, input_format))
    # Every range but the last of its file is counted (the last one's count is never needed).
    counted = [i for i, p in enumerate(pieces)
               if p[3] and i + 1 < len(pieces) and pieces[i + 1][3] and pieces[i + 1][4] > 0]
    if not counted:
        return pieces
    ranges = [(pieces[i][0], pieces[i][4], pieces[i][5]) for i in counted]
    if client is not None:
        # One task a worker (a task costs the scheduler milliseconds; counting is at disk
        # speed), in order, so that the counts come back in the ranges' order.
        tasks = min(len(ranges), _workers(client))
        groups = [ranges[k * len(ranges) // tasks:(k + 1) * len(ranges) // tasks] for k in range(tasks)]
        numbers = [n for group in client.gather(client.map(_count_newlines, groups, pure=False)) for n in group]
    else:
        numbers = _count_newlines(ranges)
    counts = [0] * len(pieces)
    for i, n in zip(counted, numbers):
        counts[i] = n
    return _native._with_lines_before(pieces, counts)


def _workers(client) -> int:
    """How many workers the cluster of `client` has (at least 1)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


# ---------------------------------------------------------------------------------------
# Tasks (run on the workers)

_tasks: Dict[Any, Any] = {}
_tasks_lock = threading.Lock()
compiles = 0  # rule sets compiled by this process (once per worker and rule set)


def _digest(paths: Iterable[str]) -> Tuple[str, ...]:
    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                out.append(hashlib.sha256(f.read()).hexdigest())
        except OSError as e:
            out.append(f"unreadable:{e.errno}")
    return tuple(out)


def _task(kind: str, options: Dict[str, Any]):
    """This process's compiled task for `options`, keyed by the options and the contents of
    the rules and catalog files (edited files compile again)."""
    global compiles
    files = list(options.get("rules", ())) + ([options["catalog"]] if options.get("catalog") else [])
    key = (kind, json.dumps(options, sort_keys=True), _digest(files))
    with _tasks_lock:
        task = _tasks.get(key)
        if task is None:
            task = _native._CheckTask(options) if kind == "check" else _native._ScoreTask(options)
            if task.error:
                raise RuntimeError(task.error.rstrip("\n"))
            compiles += 1
            _tasks[key] = task
    return task


def _spooled(spool: str, ordinal: int) -> str:
    return os.path.join(spool, f"piece-{ordinal:06d}")


def run_piece(kind: str, options: Dict[str, Any], piece: Piece, ordinal: int,
              spool: Optional[str] = None) -> Tuple[Any, bytes, str]:
    """The piece numbered `ordinal` checked (or scored): its output, its messages, its
    statistics as JSON. With `spool` (a directory the driver reads too), the output is written
    to a file there (replaced whole, so a task run again after its worker died writes it anew)
    and its size is returned in its place."""
    if spool is None:
        return _task(kind, options).run(piece, ordinal)
    path = _spooled(spool, ordinal)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        size, messages, stats = _task(kind, options).run(piece, ordinal, tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    os.replace(tmp, path)
    return size, messages, stats


def place_pieces(pieces: List[Tuple[str, int, int]], dst: str, ident: Tuple[int, int]) -> bool:
    """Copies each spooled output `src` of `pieces` ((src, offset, size): consecutive pieces whose
    places are known) into the file `dst` at `offset`, when `dst` is the file `ident` (device,
    inode) names: the driver's output, seen by this worker at the same path. False, with nothing
    written, when this worker cannot open that file (the driver then copies the pieces itself).
    Copying again after a worker died writes the same bytes at the same places."""
    try:
        fd = os.open(dst, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != tuple(ident) or not stat.S_ISREG(st.st_mode):
            return False
        for src, offset, size in pieces:
            with open(src, "rb") as f:
                _check_spooled(src, f, size)
                _copy_at(f.fileno(), fd, size, offset)
    finally:
        os.close(fd)
    return True


def _check_spooled(path: str, f, size: int):
    found = os.fstat(f.fileno()).st_size
    if found != size:
        raise RuntimeError(f"{path}: the spooled output has {found} bytes, the task wrote {size}")


def _copy_at(src: int, dst: int, size: int, offset: int):
    """The first `size` bytes of the file `src` written to the file `dst` at `offset`: by the
    kernel (copy_file_range) where it can, else through a buffer."""
    done = 0
    try:
        while done < size:
            n = os.copy_file_range(src, dst, size - done, done, offset + done)
            if n == 0:
                break
            done += n
    except OSError as e:
        if done or e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        while done < size:
            block = os.pread(src, min(size - done, 1 << 20), done)
            if not block:
                break
            _pwrite_all(dst, block, offset + done)
            done += len(block)
    if done != size:
        raise RuntimeError(f"the spooled output ended after {done} of its {size} bytes")


def _pwrite_all(fd: int, data: bytes, offset: int):
    """All of `data` written to the file `fd` at `offset`."""
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def run_joined(options: Dict[str, Any], pieces: List[Piece]) -> Tuple[bytes, bytes, str]:
    """The OTLP traces of `pieces` (the pieces that held parts of some, in input order), joined
    across them: their output, messages and statistics, which come after every piece's."""
    return _task("check", options).run_joined(pieces)


def _rows(part: Tuple[bytes, bytes, str]) -> List[Dict[str, Any]]:
    """The per-trace rows of a piece checked with --format jsonl."""
    rows = []
    for line in part[0].splitlines():
        obj = json.loads(line)
        if "results" not in obj:
            continue  # a rejected record
        for r in obj["results"]:
            rows.append({"trace_id": obj.get("trace_id"), "rule": r["rule"], "severity": r["severity"],
                         "status": r["status"], "steps": r["steps"]})
    return rows


def worker_compiles() -> int:
    """How many rule sets this process compiled (for measuring: once per worker)."""
    return compiles


# ---------------------------------------------------------------------------------------
# The driver

class _Progress:
    """Tasks done and records/s on standard error, when it is a terminal."""

    def __init__(self, total: int, enabled: bool, stream):
        self.total, self.enabled, self.stream = total, enabled, stream
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, done: int, records: int):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < 1 or (now - self.last < 0.2 and done < self.total):
            return
        self.last = now
        self.shown = True
        width = 24
        filled = width * done // max(self.total, 1)
        rate = records / (now - self.start)
        self.stream.write(f"\r\033[Ktrajcheck: [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} tasks, "
                          f"{records} records ({rate:.0f}/s)")
        self.stream.flush()

    def finish(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


# What a cluster started for one run does not do: it has no dashboard, so nothing reads the
# statistical profile its processes would take every 10 ms, the host's disk and network counters
# its scheduler and nannies would read twice a second, or the event loops' health they would
# measure 50 times a second. In the driver's process (the scheduler and the nannies run there,
# on the cores the workers use) these took 62 ms of CPU a second beside 2 idle workers, 15 ms
# without. The nannies still watch their workers' memory, twice a second instead of ten times.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.worker.memory.monitor-interval": "500ms",
}


def _local_client(workers: Optional[int] = None):
    """A client of a LocalCluster of `workers` single-threaded worker processes (one per core
    without it), and the cluster."""
    import dask
    from distributed import Client, LocalCluster
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               dashboard_address=None, processes=True)
    # The pieces' outputs are fetched from the workers themselves, not relayed through the
    # scheduler: on one machine the relay is a third copy of every byte of output, made by a
    # process that shares the workers' cores.
    return Client(cluster, direct_to_workers=True), cluster


def _copy(src, dst, size: int):
    """`size` bytes of the file `src` appended to the binary stream `dst`: by the kernel
    (sendfile) when `dst` is a file descriptor's stream, else through a buffer."""
    try:
        fd = dst.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        dst.flush()
        offset = 0
        try:
            while offset < size:
                sent = os.sendfile(fd, src.fileno(), offset, size - offset)
                if sent == 0:
                    break
                offset += sent
        except OSError:
            if offset:
                raise
        else:
            if offset == size:
                return
        src.seek(offset)
    shutil.copyfileobj(src, dst, 1 << 20)


def _in_place_target(out) -> Optional[Tuple[str, Tuple[int, int], int]]:
    """(path, (device, inode), position) of `out` when the workers can write their pieces into
    it where they belong: a regular file, not opened to append (which would put every write at
    its end), that its path (as /proc tells it) still names. None otherwise."""
    try:
        fd = out.fileno()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
            return None
        path = os.readlink(f"/proc/self/fd/{fd}")
        named = os.stat(path)
    except (AttributeError, OSError, ValueError):
        return None
    if (named.st_dev, named.st_ino) != (st.st_dev, st.st_ino):
        return None
    out.flush()
    return path, (st.st_dev, st.st_ino), out.tell()


class _Sink:
    """Where per-trace parts go: a stream, a temporary body (buffered formats), or part files.

    A spooled piece bound for a regular file is written there by a worker (`in_place`): the
    driver only says where each one goes, as the pieces before it are known, so that no byte
    of output passes through it. One copying task takes several consecutive pieces (`batch`),
    since each task costs the scheduler, in the driver's process, as much as a few pieces' bytes
    cost a worker to copy."""

    def __init__(self, out, buffered: bool, out_dir: Optional[str], ext: str):
        self.out, self.out_dir, self.ext = out, out_dir, ext
        self.body = tempfile.NamedTemporaryFile(prefix="trajcheck-body-", delete=False) if buffered else None
        self.parts = 0
        self.place_to = None  # (path, identity) of the output file when the workers place pieces
        self.pos = 0  # then: where the next byte of output goes in it
        self.batch: List[Tuple[str, int, int]] = []  # (spooled file, offset, size) not yet given to a task
        self.placing: List[Tuple[Any, List[Tuple[str, int, int]]]] = []  # (future, its pieces)
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)

    def in_place(self, client, key: str, batch: int = 1, tasks_at_end: int = 1):
        """Spooled pieces go into the output file from the workers, when it is one they can
        write (see _in_place_target): `batch` pieces a copying task, and the pieces left at the
        end in `tasks_at_end` tasks (one per worker, copying at once); `key` prefixes the copying
        tasks' keys."""
        target = _in_place_target(self.out) if self.body is None and not self.out_dir else None
        if target is not None:
            self.place_to, self.pos = target[:2], target[2]
        self.client, self.key, self.placed = client, key, 0
        self.batch_size, self.tasks_at_end = max(1, batch), max(1, tasks_at_end)

    def write_spooled(self, path: str, size: int):
        """The output a worker spooled to `path` (`size` bytes, as the task said), moved where
        `write` would put it, then removed. A file missing or of another size ends the run."""
        if self.place_to is not None:
            if size:
                self.batch.append((path, self.pos, size))
                self.pos += size
                if len(self.batch) >= self.batch_size:
                    self._place(self.batch)
                    self.batch = []
            else:
                os.unlink(path)
            self._placed(wait=False)
            return
        with open(path, "rb") as f:
            _check_spooled(path, f, size)
            if size == 0:
                pass
            elif self.out_dir and self.body is None:
                name = os.path.join(self.out_dir, f"part-{self.parts:05d}.{self.ext}")
                self.parts += 1
                try:
                    os.replace(path, name)  # the spooled file becomes the part (one file system)
                    return
                except OSError as e:
                    if e.errno != errno.EXDEV:
                        raise
                tmp = name + ".tmp"
                with open(tmp, "wb") as o:
                    _copy(f, o, size)
                os.replace(tmp, name)
            else:
                _copy(f, self.body if self.body is not None else self.out, size)
        os.unlink(path)

    def _place(self, pieces: List[Tuple[str, int, int]]):
        future = self.client.submit(place_pieces, pieces, *self.place_to, pure=False, key=f"{self.key}-{self.placed}")
        self.placed += 1
        self.placing.append((future, pieces))

    def _placed(self, wait: bool):
        """Removes the spooled files the workers have copied (waiting for all with `wait`);
        copies itself those a worker could not open the output for."""
        pending = []
        for future, pieces in self.placing:
            if not wait and not future.done():
                pending.append((future, pieces))
                continue
            if not future.result():
                for path, at, size in pieces:
                    with open(path, "rb") as f:
                        _check_spooled(path, f, size)
                        _copy_at(f.fileno(), self.out.fileno(), size, at)
            for path, _, _ in pieces:
                os.unlink(path)
        self.placing = pending

    def write(self, data: bytes):
        if self.body is not None:
            self.body.write(data)
        elif self.out_dir:
            if data:
                name = os.path.join(self.out_dir, f"part-{self.parts:05d}.{self.ext}")
                tmp = name + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, name)
                self.parts += 1
        elif self.place_to is not None:
            _pwrite_all(self.out.fileno(), data, self.pos)
            self.pos += len(data)
        else:
            self.out.write(data)

    def close(self) -> Optional[str]:
        """Ends the parts: every piece in its place (the output's position after the last), or
        the temporary body's path (buffered formats)."""
        if self.place_to is not None:
            left, tasks = self.batch, min(self.tasks_at_end, len(self.batch))
            for k in range(tasks):
                self._place(left[k * len(left) // tasks:(k + 1) * len(left) // tasks])
            self.batch = []
            self._placed(wait=True)
            self.out.seek(self.pos)
        if self.body is None:
            return None
        self.body.close()
        return self.body.name

    def abandon(self):
        """A failed run: the copies still to come are cancelled."""
        futures = [f for f, _ in self.placing]
        if futures:
            self.client.cancel(futures)
        self.placing, self.batch = [], []


def _finish(task, summary_json: str, body: Optional[str], out) -> int:
    """The end of the run written to `out` (a binary stream); returns the exit status."""
    out.flush()
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        return task.finish(summary_json, body, fd)
    with tempfile.TemporaryFile() as tmp:
        status = task.finish(summary_json, body, tmp.fileno())
        tmp.seek(0)
        shutil.copyfileobj(tmp, out)
    return status


def _merge(kind: str, parts: List[str]) -> str:
    return _native._merge_check_stats(parts) if kind == "check" else _native._merge_score_summaries(parts)


class _Refetched(logging.Filter):
    """Drops the client's warning that a result could not be fetched from its worker (the worker
    died after the task ended) and that the task will run again: Dask recovers from it, the run
    loses nothing, and standard error stays the command line's."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith("Couldn't gather"))


def _submit_pieces(client, kind: str, options: Dict[str, Any], pieces: List[Piece], spool: Optional[str],
                   key: str) -> List[Any]:
    """The pieces' tasks (keys `key`-ordinal), in input order. Each is submitted alone, so that
    the scheduler hands them out one at a time as workers free up, and from this small function:
    Dask reads the source of the function that submits (for its dashboard) at every submit."""
    return [client.submit(run_piece, kind, options, p, i, spool, key=f"{key}-{i}", pure=False)
            for i, p in enumerate(pieces)]


def run(kind: str, options: Dict[str, Any], inputs: Sequence[str], client=None, *,
        partition_size: int = DEFAULT_PARTITION_SIZE, out=None, err=None, out_dir: Optional[str] = None,
        progress: Optional[bool] = None, keep: bool = False, spool_dir: Optional[str] = None):
    """Runs `kind` ("check" or "score") with the command line's option spellings, writing what
    the command writes to `out` and `err` (binary streams). Returns (exit status, merged
    statistics JSON or None, the futures of the pieces when `keep`).

    The pieces' per-trace output reaches the driver through the cluster, or, with `spool_dir`
    (a directory the workers and the driver see at the same path), through files the workers
    write there; a local cluster started for the run always spools to a temporary directory."""
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr.buffer
    prefix = f"trajcheck {kind}"
    driver = _native._CheckTask(options) if kind == "check" else _native._ScoreTask(options)
    if kind == "check" and driver.diagnostics:
        err.write(driver.diagnostics)
    if driver.error:
        err.write(driver.error.encode())
        err.flush()
        return EXIT_BAD_INPUT, None, []
    if out_dir and driver.buffered:
        err.write(f"{prefix}: --out-dir writes per-trace parts: use --format text or jsonl\n".encode())
        return EXIT_BAD_INPUT, None, []

    own = spool = None
    refetched = _Refetched()
    logging.getLogger("distributed.client").addFilter(refetched)
    try:
        if client is None:
            client, own = _local_client()
        try:
            pieces = plan(inputs, partition_size, client, options.get("input_format", "auto"))
        except UsageError as e:
            err.write(f"{prefix}: {e}\n".encode())
            return EXIT_BAD_INPUT, None, []
        from distributed import as_completed
        run_id = uuid.uuid4().hex[:12]
        if keep:
            spool = None  # the verdicts are read from the pieces' results
        elif spool_dir:
            spool = os.path.join(spool_dir, f"trajcheck-{run_id}")
            os.makedirs(spool)
        elif own is not None:
            spool = tempfile.mkdtemp(prefix="trajcheck-spool-")
        else:
            spool = None
        futures = _submit_pieces(client, kind, options, pieces, spool, f"trajcheck-{kind}-{run_id}")
        index = {f.key: i for i, f in enumerate(futures)}
        if progress is None:
            progress = not options.get("quiet") and hasattr(err, "isatty") and err.isatty()
        bar = _Progress(len(futures), progress, err)
        sink = _Sink(out, driver.buffered, out_dir, "jsonl" if options["format"] == "jsonl" else "txt")
        if spool is not None:
            # Two copying tasks a worker over the run, and one a worker for the pieces left
            # at the end, so that the workers copy those at once.
            workers = _workers(client)
            sink.in_place(client, f"trajcheck-place-{run_id}", batch=-(-len(pieces) // (2 * workers)),
                          tasks_at_end=workers)
        ready: Dict[int, Tuple[Any, bytes, str]] = {}  # output bytes, or its spooled size
        stats: List[str] = []
        next_out = records = done = 0
        try:
            for f in as_completed(futures):
                part = f.result()
                ready[index[f.key]] = part
                done += 1
                records += json.loads(part[2])["records"]
                while next_out in ready:
                    o, e, s = ready.pop(next_out)
                    if e:
                        bar.finish()
                    err.write(e)
                    if isinstance(o, int):
                        sink.write_spooled(_spooled(spool, next_out), o)
                    else:
                        sink.write(o)
                    stats.append(s)
                    if not keep:
                        futures[next_out].release()
                    next_out += 1
                bar.update(done, records)
            # OTLP traces are joined over the whole corpus, as the command line joins them: one
            # more task reads the pieces that held parts of some, and its traces come last.
            otlp = [pieces[i] for i, s in enumerate(stats) if kind == "check" and json.loads(s)["otlp_parts"]]
            if otlp:
                joined = client.submit(run_joined, options, otlp, key=f"trajcheck-{kind}-{run_id}-joined", pure=False)
                o, e, s = joined.result()
                err.write(e)
                sink.write(o)
                stats.append(s)
                if keep:
                    futures.append(joined)
            body = sink.close()  # waits for the pieces copied in place
        except Exception as e:  # a task failed for good (e.g. its workers kept dying)
            bar.finish()
            sink.abandon()
            body = sink.close()
            if body:
                os.unlink(body)
            err.write(f"{prefix}: internal error: {e}\n".encode())
            return EXIT_INTERNAL, None, []
        bar.finish()
        merged = _merge(kind, stats)
        try:
            status = _finish(driver, merged, body, out)
        finally:
            if body:
                os.unlink(body)
        err.flush()
        return status, merged, futures if keep else []
    finally:
        logging.getLogger("distributed.client").removeFilter(refetched)
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
        if own is not None:
            client.close()
            own.close()


# ---------------------------------------------------------------------------------------
# Options as the command line spells them

def reading_options(input_format: str = "auto", aliases: Iterable[str] = (), error_patterns: Iterable[str] = (),
                    context: Iterable[str] = ()) -> Dict[str, Any]:
    return {"input_format": input_format, "aliases": list(aliases), "error_patterns": list(error_patterns),
            "context": list(context)}


def check_options(rules: Sequence[str], *, format: str = "text", fail_on: str = "error", catalog: str = "",
                  quiet: bool = False, color: bool = False, stderr_color: bool = False, jobs: int = 1,
                  allow_no_rules: bool = False, **reading) -> Dict[str, Any]:
    o = {"rules": list(rules), "format": format, "fail_on": fail_on, "catalog": catalog or "", "quiet": quiet,
         "color": color, "stderr_color": stderr_color, "jobs": jobs, "allow_no_rules": allow_no_rules}
    o.update(reading_options(**reading))
    return o


def score_options(*, format: str = "text", selection: str = "jaccard", multiset: bool = False,
                  weights: str = "0.6,0.4", min_order_length: int = 0, tool_args: str = "exact",
                  tool_args_for: Iterable[str] = (), min_overall: Optional[float] = None,
                  min_selection: Optional[float] = None, min_ordering: Optional[float] = None,
                  min_arguments: Optional[float] = None, per_record: bool = False, quiet: bool = False,
                  jobs: int = 1, **reading) -> Dict[str, Any]:
    o = {"format": format, "selection": selection, "multiset": multiset, "weights": weights,
         "min_order_length": min_order_length, "tool_args": tool_args, "tool_args_for": list(tool_args_for),
         "min_overall": min_overall, "min_selection": min_selection, "min_ordering": min_ordering,
         "min_arguments": min_arguments, "per_record": per_record, "quiet": quiet, "jobs": jobs}
    o.update(reading_options(**reading))
    return o


# ---------------------------------------------------------------------------------------
# The Python API

class CheckResult(NamedTuple):
    exit_status: int              # as `trajcheck check` would exit: 0 pass, 1 fail, 2 rejected input
    summary: Dict[str, Any]       # the merged statistics (records, traces, passed, failed, rules, …)
    verdicts: Any                 # dask bag: {trace_id, rule, severity, status, steps} per trace and rule


class ScoreResult(NamedTuple):
    exit_status: int
    summary: Dict[str, Any]       # the merged score summary (sums, counts, buckets, missed, extra)


class _Null:
    def write(self, data):
        return len(data)

    def flush(self):
        pass


def check(rules_paths: Sequence[str], inputs: Sequence[str], client=None, *, fail_on: str = "error",
          catalog: str = "", allow_no_rules: bool = False, partition_size: int = DEFAULT_PARTITION_SIZE, out=None,
          err=None, **reading) -> CheckResult:
    """Checks `inputs` (files, directories, globs) against the rules files on the cluster of
    `client` (a LocalCluster without one). `out`, when given, receives the jsonl report of
    `trajcheck check --format jsonl`; `err` its messages (rejected records, warnings). The
    verdicts stay on the cluster until the bag is computed."""
    import dask.bag as db
    import io
    options = check_options(rules_paths, format="jsonl", fail_on=fail_on, catalog=catalog,
                            allow_no_rules=allow_no_rules, **reading)
    messages = io.BytesIO()
    own = None
    if client is None:
        client, own = _local_client()
    status, merged, futures = run("check", options, inputs, client, partition_size=partition_size,
                                  out=out if out is not None else _Null(), err=err if err is not None else messages,
                                  progress=False, keep=True)
    if merged is None:
        if own is not None:
            client.close()
            own.close()
        from .._types import OptionError
        raise OptionError((messages.getvalue() or b"").decode(errors="replace").rstrip("\n"))
    rows = client.map(_rows, futures, pure=False)
    bag = db.from_delayed(rows) if rows else db.from_sequence([])
    return CheckResult(status, json.loads(merged), bag)


def score(inputs: Sequence[str], client=None, *, partition_size: int = DEFAULT_PARTITION_SIZE, out=None,
          err=None, **options) -> ScoreResult:
    """Scores `inputs` on the cluster; `out` receives `trajcheck score --format jsonl`'s lines."""
    import io
    reading_keys = ("input_format", "aliases", "error_patterns", "context")
    reading = {k: options.pop(k) for k in reading_keys if k in options}
    opts = score_options(format="jsonl", **options, **reading)
    messages = io.BytesIO()
    status, merged, _ = run("score", opts, inputs, client, partition_size=partition_size,
                            out=out if out is not None else _Null(), err=err if err is not None else messages,
                            progress=False)
    if merged is None:
        from .._types import OptionError
        raise OptionError(messages.getvalue().decode(errors="replace").rstrip("\n"))
    return ScoreResult(status, json.loads(merged))
