"""Range cutting: whatever the cuts, every record of a JSONL file is read exactly once, by the
range its line starts in, with the line and column RecordSource gives it."""
import os
import random

from trajcheck import _native
from trajcheck.dask import plan

WS = b" \t\r\n"


def expected(data: bytes):
    """RecordSource's records of a JSONL file: (line, column, text)."""
    out = []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    for i, text in enumerate(lines):
        col = 1
        if i == 0 and text.startswith(b"\xef\xbb\xbf"):
            text, col = text[3:], 4
        if text.endswith(b"\r"):
            text = text[:-1]
        if text.strip(WS) == b"":
            continue
        out.append((i + 1, col, text))
    return out


def random_file(rng: random.Random) -> bytes:
    parts = []
    if rng.random() < 0.2:
        parts.append(b"\xef\xbb\xbf")
    for _ in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.15:
            parts.append(b"")  # empty line
        elif kind < 0.25:
            parts.append(rng.choice([b"  ", b"\t", b" \r"]))  # blank
        else:
            n = rng.choice([1, 2, 5, 30, 200, 3000]) if rng.random() < 0.1 else rng.randint(1, 60)
            parts.append(bytes(rng.choices(b"abcdef{}\":, \xc3\xa9", k=n)))
        parts.append(b"\r\n" if rng.random() < 0.3 else b"\n")
    data = b"".join(parts)
    if data and rng.random() < 0.4:
        data = data.rstrip(b"\n") + b"x"  # a last line without a newline
    return data


def newlines_before(data: bytes, start: int) -> int:
    return data.count(b"\n", 0, start)


def test_random_cuts_read_every_record_once(tmp_path):
    rng = random.Random(1234)
    path = str(tmp_path / "t.jsonl")
    for trial in range(200):
        data = random_file(rng)
        with open(path, "wb") as f:
            f.write(data)
        size = len(data)
        cuts = sorted(set([0, size] + [rng.randint(0, size) for _ in range(rng.randint(0, 12))]))
        if rng.random() < 0.3:  # ranges smaller than a line
            step = rng.randint(1, 7) if size < 5000 else rng.randint(50, 300)
            cuts = sorted(set(list(range(0, size, step)) + [size]))
        got = []
        for s, e in zip(cuts, cuts[1:]):
            got.extend(_native._read_range(path, s, e, newlines_before(data, s)))
        if size == 0:
            got = list(_native._read_range(path, 0, 0, 0))
        assert [tuple(r) for r in got] == expected(data), f"trial {trial}: cuts {cuts}"


def test_plan_counts_lines_across_ranges(tmp_path):
    rng = random.Random(99)
    data = random_file(rng) * 50
    path = str(tmp_path / "big.jsonl")
    with open(path, "wb") as f:
        f.write(data)
    small = str(tmp_path / "small.jsonl")
    with open(small, "wb") as f:
        f.write(b'{"a":1}\n')
    for partition in (9, 64, 1000, len(data) + 1):
        pieces = plan([small, path, small], partition)
        got = []
        for p, s, e, before in pieces:
            if p == path:
                assert s >= 0 or partition > len(data)
                got.extend(_native._read_range(p, max(s, 0), e if s >= 0 else len(data), before))
        assert [tuple(r) for r in got] == expected(data)
        assert pieces[0] == (small, -1, 0, 0) and pieces[-1] == (small, -1, 0, 0)


def test_unreadable_file_reported_once(tmp_path):
    missing = str(tmp_path / "gone.jsonl")
    assert [r[2][:20] for r in _native._read_range(missing, 0, 10, 0)] == [b"error: cannot open f"]
    assert list(_native._read_range(missing, 10, 20, 3)) == []


def test_session_log_is_one_piece(tmp_path):
    """A coding-agent session log is read whole (its lines are one record): never cut, however
    small the partitions; other JSONL is; `--input-format session` keeps any JSONL whole."""
    session = tmp_path / "session.jsonl"
    session.write_bytes(b'{"type":"summary","summary":"s","leafUuid":"u1"}\n'
                        + b''.join(b'{"sessionId":"s","uuid":"u%d","parentUuid":null,"type":"user",'
                                   b'"message":{"role":"user","content":"hi"}}\n' % i for i in range(20)))
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"trace_id":"t","steps":[]}\n' * 20)
    assert plan([str(session)], 64) == [(str(session), -1, 0, 0)]
    assert len(plan([str(other)], 64)) > 1
    assert plan([str(other)], 64, input_format="session") == [(str(other), -1, 0, 0)]
