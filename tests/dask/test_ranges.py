"""Range cutting (the library's input layer, trajcheck/input.hpp): whatever the cuts, every
record of a JSONL file is read exactly once, by the range its line starts in, with the line and
column RecordSource gives it."""
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


def read_range(path, start, end, before):
    """(line, column, text) of the records of one byte range of a plain JSONL file."""
    return [r[1:] for r in _native._read_pieces([(path, 0, "", True, start, end, before)], "auto")]


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
            got.extend(read_range(path, s, e, newlines_before(data, s)))
        if size == 0:
            got = read_range(path, 0, 0, 0)
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
        for p in pieces:
            if p[0] == path:
                assert p[3] or partition > len(data)
                got.extend(r[1:] for r in _native._read_pieces([p], "auto"))
        assert [tuple(r) for r in got] == expected(data)
        assert pieces[0] == (small, 0, "", False, 0, 0, 0) and pieces[-1] == pieces[0]


def test_unreadable_file_reported_once(tmp_path):
    missing = str(tmp_path / "gone.jsonl")
    assert [r[2][:20] for r in read_range(missing, 0, 10, 0)] == [b"error: cannot open f"]
    assert read_range(missing, 10, 20, 3) == []


def test_session_log_is_one_piece(tmp_path):
    """A coding-agent session log is read whole (its lines are one record): never cut, however
    small the partitions; other JSONL is; `--input-format session` keeps any JSONL whole."""
    session = tmp_path / "session.jsonl"
    session.write_bytes(b'{"type":"summary","summary":"s","leafUuid":"u1"}\n'
                        + b''.join(b'{"sessionId":"s","uuid":"u%d","parentUuid":null,"type":"user",'
                                   b'"message":{"role":"user","content":"hi"}}\n' % i for i in range(20)))
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"trace_id":"t","steps":[]}\n' * 20)
    assert plan([str(session)], 64) == [(str(session), 0, "", False, 0, 0, 0)]
    assert len(plan([str(other)], 64)) > 1
    assert plan([str(other)], 64, input_format="session") == [(str(other), 0, "", False, 0, 0, 0)]


def test_compressed_jsonl_is_one_piece(tmp_path):
    """A gzip or zstd JSONL file (told by its first bytes, whatever its name) is read as one
    stream: byte ranges of its compressed bytes would not be text."""
    import gzip
    data = b''.join(b'{"trace_id":"t%d","steps":[]}\n' % i for i in range(200))
    for name in ("big.jsonl.gz", "disguised.jsonl"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(data, mtime=0))
        assert path.stat().st_size > 64
        assert plan([str(path)], 64) == [(str(path), 0, "", False, 0, 0, 0)]
        records = _native._read_pieces(plan([str(path)], 64), "auto")
        assert [r[1:] for r in records] == expected(data)


def test_directory_entries_keep_their_kind(tmp_path):
    """What a folder holds is listed once, by the library: unreadable and skipped entries travel
    in the pieces and read back as the command line reports them."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.jsonl").write_bytes(b'{"trace_id":"a","steps":[]}\n')
    (d / "b.ndjson.zst").write_bytes(b"")
    (d / "skip.txt").write_bytes(b"x")
    os.symlink(str(d / "nowhere.jsonl"), str(d / "c-dangling.jsonl"))
    os.mkfifo(str(d / "e.jsonl"))
    pieces = plan([str(d)], 1 << 20)
    assert [(os.path.basename(p[0]), p[1]) for p in pieces] == [
        ("a.jsonl", 0), ("b.ndjson.zst", 0), ("c-dangling.jsonl", 3), ("e.jsonl", 3)]
    got = [r[3].decode() for r in _native._read_pieces(pieces, "auto")]
    assert got[0] == '{"trace_id":"a","steps":[]}'
    assert got[1].startswith("warning: ") and got[1].endswith("c-dangling.jsonl:1:1: warning: dangling symbolic link, skipped")
    assert got[2].endswith("e.jsonl:1:1: warning: a FIFO, skipped")
