"""OTLP traces exported in several requests (tests/data/producers/otel, written by the
OpenTelemetry JS SDK's batch span processor): a JSONL file of them is never cut into byte
ranges, and the spans of one trace are joined over the whole corpus — within a file and across
files — as the command line joins them (docs/distributed.md)."""
import io
import json
import shutil
import subprocess

from conftest import CLI, SOURCE, Cluster

import trajcheck.dask
from trajcheck import _native

RULES = SOURCE / "tests" / "golden" / "check" / "otlp-batched" / "case.rules"
BATCHED = SOURCE / "tests" / "data" / "producers" / "otel" / "batched.jsonl"


def _cli(*inputs):
    p = subprocess.run([CLI, "check", "-r", str(RULES), "--format", "jsonl", *map(str, inputs)],
                       capture_output=True, timeout=60)
    return p.returncode, p.stdout


def test_an_otlp_file_is_never_cut():
    pieces = _native._pieces(str(BATCHED), 512, "auto")
    assert BATCHED.stat().st_size > 4 * 512
    assert len(pieces) == 1 and not pieces[0][3]


def test_dask_joins_an_otlp_file_as_the_cli_does(tmp_path):
    status, out = _cli(BATCHED)
    assert status == 1 and len(out.splitlines()) == 2
    cluster = Cluster(tmp_path)
    try:
        cluster.start(2)
        with cluster.client() as client:
            got = io.BytesIO()
            result = trajcheck.dask.check([str(RULES)], [str(BATCHED)], client=client, partition_size=512,
                                          out=got, err=io.BytesIO())
        assert got.getvalue() == out
        assert result.summary["traces"] == 2 and result.exit_status == status

        # The same requests in two files, every other request in each: each trace has spans in
        # both, and the cluster joins them as the command line does.
        lines = BATCHED.read_text().splitlines(keepends=True)
        folder = tmp_path / "split"
        folder.mkdir()
        (folder / "a.jsonl").write_text("".join(lines[0::2]))
        (folder / "b.jsonl").write_text("".join(lines[1::2]))
        status2, out2 = _cli(folder)
        assert status2 == 1 and len(out2.splitlines()) == 2
        assert sorted(json.loads(l)["status"] for l in out2.splitlines()) == ["fail", "pass"]
        with cluster.client() as client:
            got = io.BytesIO()
            result = trajcheck.dask.check([str(RULES)], [str(folder)], client=client, out=got,
                                          err=io.BytesIO())
            rows = result.verdicts.compute()
        assert got.getvalue() == out2
        assert result.summary["traces"] == 2 and result.exit_status == status2
        # The pieces left every part (a trace's spans in one request) to the joined task.
        parts = sum(len({s["traceId"] for rs in json.loads(line)["resourceSpans"] for ss in rs["scopeSpans"]
                         for s in ss["spans"]}) for line in lines)
        assert result.summary["otlp_parts"] == parts > 2
        assert {r["trace_id"] for r in rows} == {json.loads(l)["trace_id"] for l in out2.splitlines()}
    finally:
        cluster.close()
