"""One folder of every kind of file the command line reads — plain JSONL (cut into byte
ranges), gzip and zstd JSONL (never cut), an Inspect `.eval` archive, a coding-agent session
log, a `.json` document, OpenTelemetry exports whose traces are split over two files with
other files between them, and one broken file — gives the same verdict bytes, messages and
counts of records, rejections and warnings through the command line, the Python module and the
Dask runner on 1, 2 and 3 workers: every front door lists and reads it through the library's
input layer."""
import gzip
import io
import json
import random
import shutil
import subprocess

import pytest

from conftest import CLI, SOURCE, Cluster

import trajcheck
import trajcheck.dask
from trajcheck import _native

RULES = [SOURCE / "rules" / "refunds.rules", SOURCE / "rules" / "guardrails.rules"]
PARTITION = 4096
OTLP = SOURCE / "tests" / "data" / "producers" / "otel" / "batched.jsonl"


def _traces(n, tag):
    rng = random.Random(tag)
    base = []
    for name in ("native.jsonl", "refund_ok.jsonl", "refund_violations.jsonl"):
        base += [json.loads(l) for l in (SOURCE / "examples" / "traces" / name).read_text().splitlines() if l.strip()]
    out = []
    for k in range(n):
        t = dict(base[k % len(base)])
        t["trace_id"] = f"{tag}-{k}-{rng.getrandbits(96):024x}-{t.get('trace_id', 't')}"
        out.append(json.dumps(t))
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    d = root / "traces"
    (d / "sub").mkdir(parents=True)
    plain = _traces(300, "plain")
    plain.insert(7, '{"trace_id": broken')  # a rejected record inside a cut file
    plain.insert(40, "")
    (d / "a-plain.jsonl").write_text("\r\n".join(plain[:100]) + "\n" + "\n".join(plain[100:]) + "\n")
    # Random ids keep the compressed file larger than a partition.
    gz = "\n".join(_traces(800, "gz")) + "\n"
    (d / "b-big.jsonl.gz").write_bytes(gzip.compress(gz.encode(), mtime=0))
    (d / "c.jsonl").write_text("\n".join(_traces(50, "zst")) + "\n")
    subprocess.run(["zstd", "-q", "--rm", str(d / "c.jsonl"), "-o", str(d / "c.jsonl.zst")], check=True)
    shutil.copy(SOURCE / "tests" / "data" / "formats" / "inspect-log.eval", d / "d-inspect.eval")
    shutil.copy(SOURCE / "examples" / "traces" / "coding-agent-session.jsonl", d / "e-session.jsonl")
    shutil.copy(SOURCE / "examples" / "traces" / "openai-chat.json", d / "sub" / "f.json")
    # One broken file: a gzip stream cut short (the records before the cut are still read).
    cut = gzip.compress(("\n".join(_traces(30, "cut")) + "\n").encode(), mtime=0)
    (d / "g-truncated.jsonl.gz").write_bytes(cut[: len(cut) * 2 // 3])
    # OTLP export requests, every other one in each of two files: each trace is in both, and
    # is joined over the corpus (the command line writes joined traces last).
    otlp = OTLP.read_text().splitlines(keepends=True)
    (d / "c0-otlp.jsonl").write_text("".join(otlp[0::2]))
    (d / "sub" / "otlp-rest.jsonl").write_text("".join(otlp[1::2]))
    (d / "sub" / "notes.txt").write_text("not a trace file name: not read\n")
    assert (d / "b-big.jsonl.gz").stat().st_size > 2 * PARTITION
    assert (d / "a-plain.jsonl").stat().st_size > 4 * PARTITION
    # The folder, and a compressed file named on its own (it must not be cut either).
    return [str(d), str(d / "b-big.jsonl.gz")]


def _counts(summary):
    return {k: summary[k] for k in ("records", "traces", "passed", "failed", "rejected", "warnings")}


def _cli(inputs):
    args = [CLI, "check", *[a for r in RULES for a in ("-r", str(r))], "-j", "2"]
    jsonl = subprocess.run(args + ["--format", "jsonl", *inputs], capture_output=True, timeout=120)
    whole = subprocess.run(args + ["--format", "json", *inputs], capture_output=True, timeout=120)
    assert jsonl.stderr == whole.stderr
    return jsonl.returncode, jsonl.stdout, jsonl.stderr, _counts(json.loads(whole.stdout)["summary"])


@pytest.fixture(scope="module")
def expected(folder):
    status, out, err, counts = _cli(folder)
    # What makes this folder a test: every kind of file was read, and the broken one reported.
    text = out.decode()
    for tag in ("plain-", "gz-", "zst-", "3f9c1e52-"):
        assert f'"trace_id":"{tag}' in text, tag
    assert b"g-truncated.jsonl.gz:8:1: error: truncated gzip stream" in err and b'"trace_id":"1_epoch_2"' in out
    otlp_ids = {s["traceId"] for line in OTLP.read_text().splitlines() for rs in json.loads(line)["resourceSpans"]
                for ss in rs["scopeSpans"] for s in ss["spans"]}
    last = [json.loads(l)["trace_id"] for l in text.splitlines()[-len(otlp_ids):]]
    assert len(otlp_ids) == 2 and set(last) == otlp_ids  # joined across the two files, written last
    assert counts["rejected"] == 2 and counts["records"] > 1000 and status == 2
    return status, out, err, counts


def test_every_file_is_listed_and_compressed_files_are_never_cut(folder):
    pieces = [p for given in folder for p in _native._pieces(given, PARTITION, "auto")]
    names = [p[0].rsplit("/", 1)[1] for p in pieces]
    assert sorted(set(names)) == ["a-plain.jsonl", "b-big.jsonl.gz", "c.jsonl.zst", "c0-otlp.jsonl", "d-inspect.eval",
                                  "e-session.jsonl", "f.json", "g-truncated.jsonl.gz", "otlp-rest.jsonl"]
    ranged = {n for n, p in zip(names, pieces) if p[3]}
    assert ranged == {"a-plain.jsonl"} and names.count("a-plain.jsonl") > 4
    assert names.count("b-big.jsonl.gz") == 2  # once in the folder, once named


def test_python_check_file_is_the_cli(folder, expected):
    status, out, err, counts = expected
    rules = trajcheck.load_rules(*map(str, RULES))
    run = rules.check_file(*folder, jobs=2)
    lines = [r.to_json() for r in run]
    assert "".join(l + "\n" for l in lines).encode() == out
    assert _counts(run.summary) == counts


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_dask_is_the_cli(folder, expected, tmp_path, workers):
    status, out, err, counts = expected
    cluster = Cluster(tmp_path)
    try:
        cluster.start(workers)
        with cluster.client() as client:
            got, messages = io.BytesIO(), io.BytesIO()
            result = trajcheck.dask.check(list(map(str, RULES)), folder, client=client, partition_size=PARTITION,
                                          out=got, err=messages)
            assert len(client.scheduler_info()["workers"]) == workers
        assert got.getvalue() == out
        assert messages.getvalue() == err
        assert result.exit_status == status
        assert _counts(result.summary) == counts
    finally:
        cluster.close()
