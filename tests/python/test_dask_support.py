"""The native helpers trajcheck.dask merges piece statistics with (python/dask_support.cpp):
they need no Dask, so they are tested here with the package alone."""
import json

import pytest

from trajcheck import _native

STATS = {
    "records": 2, "traces": 2, "passed": 1, "failed": 1, "rejected": 0, "flagged": 0, "warnings": 1,
    "otlp_parts": 0, "rules": [[1, 1, 2]],
    "catalog": {"calls": 3, "known_calls": 1, "invalid_calls": 0, "write_calls": 0, "unknown_calls": 2,
                "unknown_tools": {"x": 2}},
}


def test_check_statistics_of_pieces_merge_and_give_the_exit_status():
    part = json.dumps(STATS)
    merged = json.loads(_native._merge_check_stats([part, part]))
    assert merged["records"] == 4 and merged["failed"] == 2 and merged["rules"] == [[2, 2, 4]]
    assert merged["catalog"]["unknown_tools"] == {"x": 4}
    assert _native._check_exit_status(part) == 1
    assert _native._check_exit_status(json.dumps(dict(STATS, rejected=1))) == 2


def test_score_summaries_of_pieces_merge():
    empty = _native._merge_score_summaries([])
    assert _native._merge_score_summaries([empty, empty]) == empty
    assert json.loads(empty)["missed"] == {}


def test_statistics_that_are_not_theirs_are_errors_naming_them():
    with pytest.raises(RuntimeError, match=r"^bad statistics: check stats: not JSON$"):
        _native._merge_check_stats([json.dumps(STATS), "{"])
    with pytest.raises(RuntimeError, match=r"^bad statistics: check stats: "):
        _native._check_exit_status("{}")
    with pytest.raises(RuntimeError, match=r'^bad summary: score summary: "records" is not a non-negative integer$'):
        _native._merge_score_summaries(["{}"])


def test_a_spooled_piece_is_written_by_the_task_as_the_unspooled_one_returns_it(tmp_path):
    from trajcheck import dask as tdask
    from conftest import SOURCE
    options = tdask.check_options([str(SOURCE / "rules" / "refunds.rules")], format="jsonl")
    traces = SOURCE / "examples" / "traces" / "refund_violations.jsonl"
    (piece,) = tdask.plan([str(traces)])
    out, messages, stats = tdask.run_piece("check", options, piece, 0)
    assert out.count(b"\n") >= 2
    spool = tmp_path / "spool"
    spool.mkdir()
    size, spooled_messages, spooled_stats = tdask.run_piece("check", options, piece, 0, str(spool))
    assert (size, spooled_messages, spooled_stats) == (len(out), messages, stats)
    assert [p.name for p in spool.iterdir()] == ["piece-000000"]
    assert (spool / "piece-000000").read_bytes() == out
    # A spool that cannot be written raises, naming the file, and leaves no partial file.
    for p in spool.iterdir():
        p.unlink()
    spool.rmdir()
    with pytest.raises(RuntimeError, match=r"^cannot write .*piece-000000\..*\.tmp: No such file or directory$"):
        tdask.run_piece("check", options, piece, 0, str(spool))
    with pytest.raises(RuntimeError, match=r"^cannot write /dev/full: No space left on device$"):
        tdask._task("check", options).run(piece, 0, "/dev/full")
