"""`python3 -m trajcheck.dask` on a real cluster (a scheduler and two workers on 127.0.0.1)
gives byte for byte what `trajcheck check` / `trajcheck score` give for the same corpus, also
when a worker is killed mid-run."""
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from conftest import CLI, PYTHON, SOURCE, kill_group, semaphores_of, stop

RULES = [SOURCE / "rules" / "refunds.rules", SOURCE / "rules" / "guardrails.rules"]


def _lines(path):
    return [l for l in path.read_text().splitlines() if l.strip()]


def _mangle(lines, every):
    """Lines with the oddities a range boundary must survive: blank lines, CRLF, bad records."""
    out = []
    for i, l in enumerate(lines):
        if i % every == 3:
            out.append("")
        if i % every == 5:
            out.append("{\"trace_id\": broken")
        out.append(l + ("\r" if i % every == 7 else ""))
    return "\n".join(out)  # the last line without a newline


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    traces = root / "traces"
    (traces / "sub").mkdir(parents=True)
    base = []
    for name in ("native.jsonl", "refund_ok.jsonl", "refund_violations.jsonl"):
        base += [json.loads(l) for l in _lines(SOURCE / "examples" / "traces" / name)]
    big = []
    for k in range(1200):
        t = dict(base[k % len(base)])
        t["trace_id"] = f"{t.get('trace_id', 't')}-{k}"
        big.append(json.dumps(t))
    (traces / "a-big.jsonl").write_text(_mangle(big, 97))
    shutil.copy(SOURCE / "examples" / "traces" / "refund_violations.jsonl", traces / "sub" / "b.jsonl")
    shutil.copy(SOURCE / "examples" / "traces" / "openai-chat.json", traces / "c.json")
    (traces / "sub" / "ignored.txt").write_text("not read: not a trace file name\n")

    scores = root / "scores"
    scores.mkdir()
    records = _lines(SOURCE / "tests" / "data" / "score" / "records.jsonl")
    (scores / "big.jsonl").write_text(_mangle([records[k % len(records)] for k in range(1500)], 89) + "\n")
    shutil.copy(SOURCE / "tests" / "data" / "score" / "bad.jsonl", scores / "bad.jsonl")
    return root


def cli(*args):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def dask(cluster, *args, partition="16K", extra=(), timeout=120):
    env = dict(os.environ)
    p = subprocess.run([PYTHON, "-m", "trajcheck.dask", *map(str, args), "--scheduler", cluster.address,
                        "--partition-size", partition, *extra], capture_output=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def check_args(corpus, fmt):
    args = ["check"]
    for r in RULES:
        args += ["-r", r]
    return args + ["--format", fmt, corpus / "traces", corpus / "missing.jsonl"]


def assert_same(expected, got):
    assert got[2].decode() == expected[2].decode()
    assert got[1] == expected[1]
    assert got[0] == expected[0]


@pytest.mark.parametrize("spooled", [False, True])
@pytest.mark.parametrize("fmt", ["jsonl", "text", "json", "junit"])
def test_check_matches_cli(cluster, corpus, fmt, spooled, tmp_path):
    expected = cli(*check_args(corpus, fmt))
    assert expected[0] == 2 and b"a-big.jsonl:" in expected[2]  # the bad records are rejected
    spool = tmp_path / "spool"
    spool.mkdir()
    assert_same(expected, dask(cluster, *check_args(corpus, fmt), extra=["--spool-dir", spool] if spooled else []))
    assert not list(spool.iterdir())  # the run's spool is removed


@pytest.mark.parametrize("spooled", [False, True])
def test_check_partition_sizes_and_out_dir(cluster, corpus, tmp_path, spooled):
    expected = cli(*check_args(corpus, "jsonl"))
    spool = tmp_path / "spool"
    spool.mkdir()
    extra = ["--spool-dir", spool] if spooled else []
    assert_same(expected, dask(cluster, *check_args(corpus, "jsonl"), partition="1G", extra=extra))
    got = dask(cluster, *check_args(corpus, "jsonl"), partition="3000",
               extra=["--out-dir", tmp_path / "parts", *extra])
    assert got[2].decode() == expected[2].decode()
    assert got[0] == expected[0]
    parts = sorted((tmp_path / "parts").iterdir())
    assert len(parts) > 10
    assert b"".join(p.read_bytes() for p in parts) + got[1] == expected[1]
    assert not list(spool.iterdir())


def test_spooled_output_of_another_size_ends_the_run(tmp_path):
    """A spooled piece that is not what its task wrote (a file system that lost or truncated
    it) is an error, never a shorter output."""
    import io
    import trajcheck.dask as td
    piece = tmp_path / "piece-000000"
    piece.write_bytes(b"12345")
    sink = td._Sink(io.BytesIO(), False, None, "jsonl")
    with pytest.raises(RuntimeError, match="has 5 bytes, the task wrote 6"):
        sink.write_spooled(str(piece), 6)
    out = io.BytesIO()
    td._Sink(out, False, None, "jsonl").write_spooled(str(piece), 5)
    assert out.getvalue() == b"12345" and not piece.exists()


def _dask_to_file(cluster, corpus, tmp_path, mode, prefix=b""):
    """`check --format jsonl` over the corpus through the Python API, spooled, its output sent
    to the file out.jsonl opened with `mode` after `prefix` was written there; the driver may
    not copy a piece itself (the workers write them into the file in place)."""
    import trajcheck.dask as td
    spool = tmp_path / "spool"
    spool.mkdir()
    path = tmp_path / "out.jsonl"
    path.write_bytes(prefix)
    options = td.check_options([str(r) for r in RULES], format="jsonl")
    err = tmp_path / "err.txt"
    with cluster.client() as c, open(path, mode) as out, open(err, "wb") as e:
        out.seek(0, os.SEEK_END)
        status, _, _ = td.run("check", options, [str(corpus / "traces"), str(corpus / "missing.jsonl")], c,
                              partition_size=3000, out=out, err=e, spool_dir=str(spool))
    assert not list(spool.iterdir())
    return status, path.read_bytes(), err.read_bytes()


def test_spooled_pieces_go_into_the_output_file_from_the_workers(cluster, corpus, tmp_path, monkeypatch):
    """Output to a regular file: each worker copies its spooled piece to where it belongs in
    the file; the driver copies none (its copying functions fail here), and the output is byte
    for byte the CLI's, after what the file held before the run's start."""
    import trajcheck.dask as td

    def no_copy(*a, **k):
        raise AssertionError("the driver copied a piece")

    monkeypatch.setattr(td, "_copy", no_copy)
    monkeypatch.setattr(td, "_copy_at", no_copy)
    expected = cli(*check_args(corpus, "jsonl"))
    assert_same(expected, _dask_to_file(cluster, corpus, tmp_path, "r+b"))
    (tmp_path / "after").mkdir()
    status, out, err = _dask_to_file(cluster, corpus, tmp_path / "after", "r+b", prefix=b"kept\n")
    assert (status, out, err.decode()) == (expected[0], b"kept\n" + expected[1], expected[2].decode())


def test_an_output_file_opened_to_append_is_written_by_the_driver(cluster, corpus, tmp_path):
    """Through a file opened to append, the driver's own writes (joined traces, the summary)
    would land at the file's end whatever their offset: the driver writes the pieces itself,
    in order, as to a pipe."""
    import trajcheck.dask as td
    with open(tmp_path / "probe", "ab") as f:
        assert td._in_place_target(f) is None
    with open(tmp_path / "probe", "r+b") as f:
        assert td._in_place_target(f)[0] == str(tmp_path / "probe")
    expected = cli(*check_args(corpus, "jsonl"))
    status, out, err = _dask_to_file(cluster, corpus, tmp_path, "ab", prefix=b"kept\n")
    assert (status, out, err.decode()) == (expected[0], b"kept\n" + expected[1], expected[2].decode())


def test_a_piece_a_worker_cannot_place_is_copied_by_the_driver(tmp_path):
    """place_pieces writes nothing into a file that is not the driver's output (another file at
    that path on the worker's machine); the driver then copies those pieces to their offsets."""
    import trajcheck.dask as td
    pieces = [tmp_path / f"piece-00000{i}" for i in range(5)]
    for p, text in zip(pieces, (b"second\n", b"third\n", b"fourth\n", b"fifth\n", b"seventh\n")):
        p.write_bytes(text)
    out_path = tmp_path / "out.jsonl"
    out_path.write_bytes(b"")
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"untouched")
    st = os.stat(out_path)
    assert td.place_pieces([(str(pieces[0]), 0, 7)], str(other), (st.st_dev, st.st_ino)) is False
    assert other.read_bytes() == b"untouched"
    with pytest.raises(RuntimeError, match="has 7 bytes, the task wrote 8"):
        td.place_pieces([(str(pieces[0]), 0, 8)], str(out_path), (st.st_dev, st.st_ino))

    class Done:
        def __init__(self, value):
            self.value = value

        def done(self):
            return True

        def result(self):
            return self.value

    class Client:
        batches = []

        def submit(self, fn, batch, dst, ident, **kw):
            self.batches.append([os.path.basename(p) for p, _, _ in batch])
            return Done(False)  # as a worker on another machine answers

    with open(out_path, "r+b") as out:
        out.write(b"first\n")
        sink = td._Sink(out, False, None, "jsonl")
        sink.in_place(Client(), "k", batch=3, tasks_at_end=2)
        assert sink.place_to is not None
        for p in pieces[:3]:
            sink.write_spooled(str(p), p.stat().st_size)
        sink.write(b"sixth\n")  # the driver's own write goes after the pieces, before any is copied
        sink.write_spooled(str(pieces[3]), 6)
        sink.write_spooled(str(pieces[4]), 8)
        sink.close()
        out.write(b"summary\n")
    assert out_path.read_bytes() == b"first\nsecond\nthird\nfourth\nsixth\nfifth\nseventh\nsummary\n"
    # Three pieces a task while the run goes on; the two left at the end, one a task.
    assert Client.batches == [["piece-000000", "piece-000001", "piece-000002"], ["piece-000003"], ["piece-000004"]]
    assert not any(p.exists() for p in pieces)


@pytest.mark.parametrize("fmt,extra", [
    ("jsonl", []), ("text", []), ("json", []),
    ("text", ["--min-overall", "0.9", "--per-record"]),  # failing ids listed in input order
    ("json", ["--min-selection", "0.99", "--min-ordering", "0.5", "--per-record"]),
])
def test_score_matches_cli(cluster, corpus, fmt, extra):
    args = ["score", "--format", fmt, "--multiset", *extra, corpus / "scores"]
    expected = cli(*args)
    assert expected[0] == 2 and expected[1]
    got = dask(cluster, *args)
    if fmt != "json":
        return assert_same(expected, got)
    # The summary's sums and means are written in full, and floating-point addition depends
    # on its order: they may differ in the last digits, as the CLI's own do between -j 1 and
    # -j 4. Everything else is identical.
    head, _, tail = expected[1].partition(b'"summary":')
    assert got[1].startswith(head) and (got[0], got[2]) == (expected[0], expected[2])
    assert_close(json.loads(got[1])["summary"], json.loads(expected[1])["summary"])


def assert_close(got, expected, where="summary"):
    """Equal, but for floats that may differ in their last digits."""
    if isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12), where
    elif isinstance(expected, dict):
        assert sorted(got) == sorted(expected), where
        for k in expected:
            assert_close(got[k], expected[k], f"{where}.{k}")
    elif isinstance(expected, list):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_close(g, e, f"{where}[{i}]")
    else:
        assert got == expected, where


def test_rules_that_do_not_compile(cluster, corpus, tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("forbid\nrule x:\n  nonsense here\n")
    args = ["check", "-r", RULES[0], "-r", bad, "-r", tmp_path / "absent.rules", corpus / "traces"]
    expected = cli(*args)
    assert expected[0] == 2
    assert_same(expected, dask(cluster, *args))


def test_rules_without_a_rule_are_refused_as_the_cli_refuses_them(cluster, corpus, tmp_path):
    empty = tmp_path / "empty.rules"
    empty.write_text("# no rules yet\n")
    args = ["check", "-r", empty, corpus / "traces"]
    expected = cli(*args)
    assert expected[0] == 2 and b"holds no rules" in expected[2] and not expected[1]
    assert_same(expected, dask(cluster, *args))
    allowed = cli(*args, "--allow-no-rules")
    assert allowed[0] == 2 and allowed[1]  # checked: every trace passes, the bad records rejected
    assert_same(allowed, dask(cluster, *args, extra=["--allow-no-rules"]))


def test_the_warning_of_a_result_fetched_again_is_not_written():
    """When a worker dies after its task ended, the client warns that it will fetch the result
    again (the task runs again): the run recovers, and its standard error stays the CLI's."""
    import logging
    import trajcheck.dask as td
    log = logging.getLogger("distributed.client")
    f = td._Refetched()
    gone = log.makeRecord(log.name, logging.WARNING, __file__, 1, "Couldn't gather %s keys, rescheduling %s",
                          (1, {"trajcheck-check-0": ()}), None)
    other = log.makeRecord(log.name, logging.WARNING, __file__, 1, "Restarting worker %s", ("w0",), None)
    assert f.filter(gone) is False and f.filter(other) is True


@pytest.mark.parametrize("spooled", [False, True, "to a file"])
def test_worker_killed_mid_run(cluster, corpus, spooled, tmp_path):
    """SIGKILL one worker after some tasks are done: Dask runs its tasks again on the other
    worker (and a new one joins); the output is still exactly the CLI's, spooled or not, and
    when the workers copy their pieces into the output file themselves."""
    # Nested, so that it is pickled by value for the scheduler.
    def state(dask_scheduler, name):
        """(tasks of the run finished, tasks assigned to the worker `name`)."""
        tp = dask_scheduler.task_prefixes.get("trajcheck-check")
        done = sum(tp.state_counts.get(s, 0) for s in ("memory", "released", "forgotten")) if tp else 0
        assigned = sum(len(ws.processing) for ws in dask_scheduler.workers.values() if ws.name == name)
        return done, assigned

    expected = cli(*check_args(corpus, "jsonl"))
    spool = tmp_path / "spool"
    spool.mkdir()
    to_file = open(tmp_path / "out.jsonl", "wb") if spooled == "to a file" else None
    proc = subprocess.Popen([PYTHON, "-m", "trajcheck.dask", *map(str, check_args(corpus, "jsonl")), "--scheduler",
                             cluster.address, "--partition-size", "2000",
                             *(["--spool-dir", str(spool)] if spooled else [])],
                            stdout=to_file or subprocess.PIPE, stderr=subprocess.PIPE)
    victim = cluster.workers[0]
    victim_name = cluster.names[victim.pid]
    killed_mid_run = False
    try:
        out = {}
        reader = threading.Thread(target=lambda: out.update(zip(("out", "err"), proc.communicate(timeout=150))))
        reader.start()
        with cluster.client() as c:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                done, assigned = c.run_on_scheduler(state, name=victim_name)
                if done >= 20 and assigned > 0:
                    semaphores = semaphores_of(victim.pid)
                    kill_group(victim.pid)  # the nanny and its worker
                    killed_mid_run = proc.poll() is None
                    break
                time.sleep(0.02)
        reader.join(timeout=160)
        assert killed_mid_run, "the run ended before a worker with tasks could be killed"
        if to_file:
            out["out"] = (tmp_path / "out.jsonl").read_bytes()
        assert_same(expected, (proc.returncode, out["out"], out["err"]))
        assert not list(spool.iterdir())  # the spool, with what the killed worker left in it
        # Nor does it leave its semaphores in /dev/shm: the resource tracker removes them.
        assert semaphores, "the killed worker had no named semaphores mapped"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(os.path.exists(n) for n in semaphores):
            time.sleep(0.1)
        assert not [n for n in semaphores if os.path.exists(n)], "the killed worker's semaphores stayed behind"
    finally:
        if to_file:
            to_file.close()
        stop(proc)
        stop(victim)
        # Give the later tests their two workers back.
        cluster.workers.remove(victim)
        cluster.add_worker(f"w-after-kill-{len(cluster.procs)}")  # names are unique in a cluster
        cluster.wait_workers(2)


def test_python_api_summary_and_verdicts(cluster, corpus):
    import trajcheck.dask as td
    _, out, _ = cli(*check_args(corpus, "jsonl"))
    lines = [json.loads(l) for l in out.splitlines()]
    traces = [l for l in lines if "results" in l]
    with cluster.client() as c:
        args = ([str(r) for r in RULES], [str(corpus / "traces"), str(corpus / "missing.jsonl")])
        result = td.check(*args, client=c, partition_size=16384)
        assert result.exit_status == 2
        s = result.summary
        assert (s["traces"], s["rejected"]) == (len(traces), len(lines) - len(traces))
        assert s["failed"] == sum(t["status"] == "fail" for t in traces)
        rows = result.verdicts.compute()
        assert sorted((r["trace_id"], r["rule"], r["status"], tuple(r["steps"])) for r in rows) == sorted(
            (t["trace_id"], r["rule"], r["status"], tuple(r["steps"])) for t in traces for r in t["results"])
        # The rules compile once per worker: running again compiles nothing.
        before = c.run(td.worker_compiles)
        td.check(*args, client=c, partition_size=16384)
        assert c.run(td.worker_compiles) == before
        assert all(n >= 1 for n in before.values())
