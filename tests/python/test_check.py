"""Rules.check and Rules.check_file: the same verdicts, text and errors as `trajcheck check`."""
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import trajcheck
from trajcheck import _native
from conftest import SOURCE, cli_jsonl, run_cli

REFUNDS = SOURCE / "examples" / "rules" / "refunds.rules"
VIOLATIONS = SOURCE / "examples" / "traces" / "refund_violations.jsonl"


@pytest.fixture(scope="module")
def refunds():
    return trajcheck.load_rules(str(REFUNDS))


def report_record(rep):
    """A report as the fields of its `check --format jsonl` line, built from its attributes."""
    if rep.rejected:
        return {"record": rep.record, "error": rep.error.split(": error: ", 1)[1]}
    results = []
    for r in rep.results:
        d = {"rule": r.rule, "severity": r.severity, "status": r.status, "steps": r.steps}
        if r.bindings_dropped:
            d["bindings_dropped"] = r.bindings_dropped
        if r.message:
            d["message"] = r.message
        d["source"] = r.source
        if r.binding:
            d["binding"] = r.binding
        results.append(d)
    return {"trace_id": rep.trace_id, "status": "pass" if rep.passed else "fail", "results": results}


def without_catalog(record):
    record = dict(record)
    record.pop("catalog", None)
    return record


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def test_check_dict_list_str_bytes_agree(refunds):
    line = lines_of(VIOLATIONS)[0]
    as_dict = json.loads(line)
    reports = [refunds.check(as_dict), refunds.check(line), refunds.check(line.encode()),
               refunds.check(bytearray(line.encode()))]
    assert {r.trace_id for r in reports} == {"refund_without_approval"}
    assert len({r.to_json() for r in reports}) == 1
    assert not reports[0].passed and not reports[0]
    names = [r.rule for r in reports[0].violations]
    assert names == ["approval precedes refund_order", "refund_needs_approval"]
    v = reports[0].violations[1]
    assert (v.severity, v.status, v.steps) == ("critical", "violated", [4])
    assert v.message.startswith("refund issued without an approved approval")
    assert v.source.startswith(str(REFUNDS) + ":")


def test_chat_and_tool_list_shapes(refunds):
    chat = [{"role": "user", "content": "delete my account"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "Delete_Customer", "arguments": "{\"id\": 3}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "done"}]
    rep = refunds.check(chat)
    assert [r.rule for r in rep.violations] == ["forbid delete_*", "order_lookup_path"]
    assert rep.violations[0].steps == [1]
    assert rep.describe_step(1) == 'delete_customer {"id":3}'
    assert refunds.check(["customer_get", "order_get", "order_get"]).violations[0].rule == "order_get at most 1"


def test_text_equals_check_text_output(refunds):
    _, out, _ = run_cli("check", "-r", REFUNDS.relative_to(SOURCE), VIOLATIONS.relative_to(SOURCE), "--color", "never")
    cli_blocks = out.split("\n\n")[0]  # the traces part, before the rule table
    ours = "".join(str(r) for r in refunds.check_file(str(VIOLATIONS)))
    # The CLI ran with relative paths, the package with absolute ones.
    assert ours.replace(str(SOURCE) + "/", "") == cli_blocks + "\n"


def test_passing_and_fail_on(refunds):
    ok = json.loads(lines_of(SOURCE / "examples" / "traces" / "refund_ok.jsonl")[0])
    rep = refunds.check(ok)
    assert rep.passed and bool(rep) and rep.violations == []
    assert str(rep).startswith("PASS refund_ok_by_customer  (<trace>:1, 8 steps)")
    assert all(r.status in ("satisfied", "vacuous") for r in rep.results)
    assert len(rep.results) == len(refunds.rules) == 6
    third = json.loads(lines_of(VIOLATIONS)[2])  # error and warning violations
    assert not refunds.check(third).passed
    assert not refunds.check(third, fail_on="warning").passed
    assert refunds.check(third, fail_on="critical").passed
    assert refunds.check(third, fail_on="never").passed
    assert str(refunds.check(third, fail_on="critical")).startswith("WARN ")
    with pytest.raises(trajcheck.OptionError, match="unknown fail_on 'fatal'"):
        refunds.check(third, fail_on="fatal")


@pytest.mark.parametrize("text, reason", [
    ('{"trace_id": "t", "steps": [', "1:"),
    ('{"role": "user", "content": "hi"}', "1:1"),
    ('42', "1:1"),
    ('[{"role": "user", "content": "x"}, 7]', "1:"),
])
def test_bad_trace_raises_with_the_cli_message(refunds, tmp_path, text, reason):
    with pytest.raises(trajcheck.TraceError) as info:
        refunds.check(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err).startswith("<trace>:" + reason)
    assert err.file == "<trace>" and err.line == 1 and err.reason
    # The command line says the same of the same record in a file.
    f = tmp_path / "bad.json"
    f.write_text(text)
    status, _, stderr = run_cli("check", "-r", REFUNDS, f)
    assert status == 2
    assert str(err).replace("<trace>", str(f)) in stderr


def test_empty_text_is_rejected(refunds):
    with pytest.raises(trajcheck.TraceError, match="^<trace>:1:1: error: "):
        refunds.check("")
    with pytest.raises(trajcheck.TraceError, match="expected one trajectory, found 2"):
        refunds.check((SOURCE / "tests" / "data" / "formats" / "otel.json").read_bytes())


def test_not_json_types_raise_type_error(refunds):
    with pytest.raises(TypeError):
        refunds.check(42)
    with pytest.raises(TypeError):
        refunds.check({"steps": [object()]})
    with pytest.raises(ValueError):
        refunds.check({"steps": [{"type": "tool_call", "tool": "x", "latency_ms": float("nan")}]})


def test_check_file_agrees_with_cli_on_examples_and_test_data(refunds):
    inputs = ["examples/traces", "tests/data/formats", "tests/data/bad"]
    for rules in [["examples/rules/refunds.rules"], ["rules/guardrails.rules", "examples/rules/refunds.rules"]]:
        args = [a for r in rules for a in ("-r", SOURCE / r)]
        expected = cli_jsonl("check", *args, "--format", "jsonl", "-j", "1", *[SOURCE / i for i in inputs])
        loaded = trajcheck.load_rules(*[str(SOURCE / r) for r in rules])
        run = loaded.check_file(*[str(SOURCE / i) for i in inputs], jobs=2)
        got = [report_record(r) for r in run]
        assert len(got) == len(expected) > 40
        for g, e in zip(got, expected):
            e = without_catalog(e)
            assert g == e
        rejected = sum("record" in e for e in expected)
        assert run.summary["rejected"] == rejected > 0
        assert run.summary["traces"] == len(expected) - rejected


def test_check_per_trace_agrees_with_check_file(refunds):
    path = SOURCE / "examples" / "traces" / "native.jsonl"
    from_file = [r.to_json() for r in refunds.check_file(str(path))]
    per_line = [refunds.check(line).to_json() for line in lines_of(path)]
    assert len(from_file) == len(per_line) > 0
    strip = lambda s: {k: v for k, v in json.loads(s).items() if k != "trace_id"}
    assert [strip(s) for s in from_file] == [strip(s) for s in per_line]


def test_check_file_summary_and_early_stop(refunds):
    run = refunds.check_file(str(VIOLATIONS), jobs=1)
    assert run.summary is None
    reports = list(run)
    assert [r.trace_id for r in reports] == ["refund_without_approval", "refund_denied_but_issued",
                                             "refund_deletes_customer"]
    s = run.summary
    assert (s["records"], s["traces"], s["failed"], s["rejected"]) == (3, 3, 3, 0)
    # Leaving a run before its end stops it without losing anything else.
    for _ in range(5):
        it = refunds.check_file(str(SOURCE / "examples" / "traces"), jobs=2)
        next(it)
        del it


def test_check_file_missing_input_is_a_rejected_record(refunds, tmp_path):
    reports = list(refunds.check_file(str(tmp_path / "nope.jsonl")))
    assert len(reports) == 1 and reports[0].rejected and not reports[0].passed
    assert "nope.jsonl" in reports[0].error
    with pytest.raises(trajcheck.OptionError):
        refunds.check_file(str(VIOLATIONS), jobs=-1)


def test_threads_share_one_rules_object(refunds):
    lines = lines_of(SOURCE / "examples" / "traces" / "native.jsonl") + lines_of(VIOLATIONS)
    expected = [refunds.check(line).to_json() for line in lines]
    work = lines * 50
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda line: refunds.check(line).to_json(), work))
    assert got == expected * 50


def test_gil_is_released_while_checking(refunds):
    # Another thread counts as fast as it can. While a long trace is checked it must keep a good
    # part of its free-running rate: a call that held the GIL would stop it (json.loads of the
    # same text, which holds it, leaves it under a tenth).
    import time
    steps = [{"type": "tool_call", "tool": "order_get" if i % 2 else "customer_get"} for i in range(300000)]
    text = json.dumps({"trace_id": "long", "steps": steps})
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())

    def rate(start, end):
        margin = (end - start) / 10
        return sum(start + margin < x < end - margin for x in ticks) / (end - start - 2 * margin)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        start = time.perf_counter()
        time.sleep(0.2)
        free = rate(start, time.perf_counter())
        start = time.perf_counter()
        refunds.check(text)
        checking = rate(start, time.perf_counter())
    finally:
        done.set()
        t.join()
    # Held, the rate drops under a tenth; released, it stays near free even on a busy machine.
    assert checking > 0.15 * free, (checking, free)


def test_rules_properties(refunds):
    assert refunds.files == [str(REFUNDS)]
    assert refunds.rules[0] == "forbid delete_*"
    assert "6 rules" in repr(refunds)
    assert repr(refunds.check(["notify"])).startswith("<trajcheck.Report ")


def test_dict_traces_are_encoded_as_json_dumps_encodes_them():
    from trajcheck import _native
    values = [
        {"a": [1, -2, 10**30, 1.0, 1e-7, 2.5e300, -0.0, True, False, None], "b": {"c": "d"}},
        {"text": "quote \" backslash \\ newline \n tab \t ctrl \x01 \x1f del \x7f é 😀"},
        {1: "int key", 2.5: "float key", False: "bool key", None: "none key"},
        [(), [], {}, ""],
        "plain",
    ]
    # Every ASCII character at every offset, so the escaper's eight-byte scan meets each one.
    every = "".join(map(chr, range(0x80))) + "é😀"
    values += [every[k:] + every[:k] for k in range(len(every))]
    for v in values:
        assert _native.dumps(v).decode() == json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    with pytest.raises(TypeError, match="keys must be"):
        _native.dumps({(1, 2): 3})
    with pytest.raises(TypeError, match="not JSON serializable"):
        _native.dumps({"x": {1, 2}})
    with pytest.raises(ValueError):
        _native.dumps([float("inf")])
    deep = []
    for _ in range(1100):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        _native.dumps(deep)


def test_session_log_check_file_and_lines_agree_with_cli():
    """A coding-agent session log: check_file reads the file whole (one trace per session), as
    `trajcheck check` does, and check() takes the list of its lines as one session."""
    rules_path = SOURCE / "rules" / "coding-agent.rules"
    log = SOURCE / "examples" / "traces" / "coding-agent-session.jsonl"
    rules = trajcheck.load_rules(str(rules_path))
    reports = list(rules.check_file(str(log)))
    assert [(r.trace_id, r.passed) for r in reports] == [
        ("3f9c1e52-8a7d-4b21-9c3e-5d0f7a1b2c40", True), ("7f3c2a9e-5b1d-4c8e-9a6f-2d4b8e1c3a70", False)]
    assert [v.rule for v in reports[1].violations] == [
        "no_recursive_force_delete", "no_force_push", "tests_before_commit", "no_writes_outside_project"]
    assert [json.loads(r.to_json()) for r in reports] == cli_jsonl("check", "-r", rules_path, "--format", "jsonl", log)
    lines = [json.loads(l) for l in log.read_text().splitlines()]
    b = [l for l in lines if l.get("sessionId") == "7f3c2a9e-5b1d-4c8e-9a6f-2d4b8e1c3a70"]
    one = rules.check(b)
    assert one.trace_id == "7f3c2a9e-5b1d-4c8e-9a6f-2d4b8e1c3a70"
    assert [v.steps for v in one.violations] == [[1], [5], [4], [3]]
    with pytest.raises(trajcheck.TraceError, match="a single line of a coding-agent session log"):
        rules.check(b[0])


def test_check_file_joins_otlp_traces_exported_in_batches():
    # What the OpenTelemetry JS SDK's batch processor wrote: 2 traces over 6 export requests.
    rules = trajcheck.load_rules(str(SOURCE / "tests/golden/check/otlp-batched/case.rules"))
    data = SOURCE / "tests/data/producers/otel"
    batched = list(rules.check_file(str(data / "batched.jsonl"), jobs=2))
    whole = list(rules.check_file(str(SOURCE / "tests/golden/check/otlp-one-request/one-request.json")))
    assert len(batched) == 2
    assert sorted(r.passed for r in batched) == [False, True]
    assert [(r.trace_id, r.passed) for r in batched] == [(r.trace_id, r.passed) for r in whole]


# Text of every width CPython stores (one, two and four bytes a character), with the characters
# JSON escapes: a str, its UTF-8 and the dict it is the JSON of are the same trace.
WIDE = ["plain", "caf\u00e9 \u00ff", "dash \u2014 \u4e2d\u6587", "emoji \U0001F600 \u00e9 \u2014",
        "quote \" back \\ nl \n tab \t cr \r bell \x07 del \x7f nul \x00"]


@pytest.mark.parametrize("text", WIDE)
def test_str_of_any_width_reads_as_its_utf8(refunds, text):
    trace = {"trace_id": "w", "steps": [
        {"type": "user_message", "content": text},
        {"type": "tool_call", "tool": "refund_order", "arguments": {"note": text, text: 1}},
    ]}
    line = json.dumps(trace, ensure_ascii=False)
    reports = [refunds.check(line), refunds.check(line.encode("utf-8")), refunds.check(trace)]
    assert len({r.to_json() for r in reports}) == 1
    assert _native.dumps(trace) == json.dumps(trace, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def test_lone_surrogate_raises_as_utf8_encoding_does(refunds):
    with pytest.raises(UnicodeEncodeError):
        refunds.check('{"steps": [{"type": "user_message", "content": "\ud800"}]}')
    with pytest.raises(UnicodeEncodeError):
        refunds.check({"steps": [{"type": "user_message", "content": "a\udfff\u2014"}]})


# A str is encoded to UTF-8 by the package itself (eight ASCII characters at a time): every width
# of storage, every boundary of the UTF-8 lengths, a non-ASCII character at every place in a run of
# eight, and a surrogate anywhere must give what the str's own UTF-8 gives.
EDGES = ["\x7f", "\x80", "\xff", "\u0100", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000",
         "\U0010ffff"]


@pytest.mark.parametrize("edge", EDGES)
def test_str_encoding_matches_utf8_at_every_offset(refunds, edge):
    for offset in range(17):
        text = "a" * offset + edge + "b" * (offset % 9)
        line = json.dumps({"trace_id": text, "steps": [{"type": "user_message", "content": text}]},
                          ensure_ascii=False)
        assert refunds.check(line).to_json() == refunds.check(line.encode("utf-8")).to_json()


def test_str_with_a_surrogate_after_an_ascii_run_raises(refunds):
    for offset in range(17):
        with pytest.raises(UnicodeEncodeError):
            refunds.check('{"steps": [{"type": "user_message", "content": "' + "x" * offset + '\u00e9\udc80"}]}')


def test_every_example_trace_reads_the_same_as_str_and_as_bytes(refunds):
    files = sorted(p for p in (SOURCE / "examples" / "traces").rglob("*") if p.suffix in (".json", ".jsonl"))
    assert files
    for path in files:
        data = path.read_bytes()
        records = data.splitlines() if path.suffix == ".jsonl" else [data]
        for raw in records:
            if not raw.strip():
                continue
            outcomes = []
            for value in (raw.decode("utf-8"), raw):
                try:
                    outcomes.append(refunds.check(value).to_json())
                except trajcheck.TraceError as e:
                    outcomes.append(str(e))
            assert outcomes[0] == outcomes[1], path


# A dict's strings are encoded and escaped in one pass from CPython's storage: every width, every
# character JSON escapes, at every offset of a block of sixteen, of the word of eight after it and
# across the 512-character pieces a long str is written in, in values and in keys, must give
# json.dumps' text.
ESCAPED = ['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f"]


def dumps_py(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


@pytest.mark.parametrize("wide", ["", "\u00e9", "\u2014", "\U0001F600"])
def test_dict_strings_of_every_width_with_escapes_at_every_offset(wide):
    for special in ESCAPED + EDGES:
        for offset in range(41):
            text = "a" * offset + special + wide + "b" * (offset % 17) + special
            v = {text: [text, {"k": text}], "n": offset}
            assert _native.dumps(v) == dumps_py(v), (special, offset)


def test_dict_ascii_strings_of_every_length_with_a_stop_anywhere():
    # ASCII strs are read sixteen characters at a time, then eight, the last word the one that ends
    # the str: every length up to three blocks, with no character to escape and with one at every
    # place, as values and as keys.
    for n in range(50):
        texts = ["x" * n] + ["x" * at + stop + "y" * (n - at) for at in range(n + 1) for stop in ('"', "\\", "\n", "\x1f")]
        for text in texts:
            v = {text: text, "v": [text, text + "!"]}
            assert _native.dumps(v) == dumps_py(v), (n, text)


@pytest.mark.parametrize("wide", ["x", "\u00e9", "\u2014", "\U0001F600"])
def test_dict_long_strings_across_pieces(wide):
    for n in (511, 512, 513, 1023, 1024, 1030, 4097):
        for text in (wide * n, "a" * (n - 1) + wide + '"' * 3, "\n" * n, ("q\u00e9\"" * n)[:n] + wide):
            v = {"s": text, text: 1}
            assert _native.dumps(v) == dumps_py(v)


def test_dict_surrogates_raise_anywhere():
    for text in ["\ud800", "a\udfff", "x" * 9 + "\ud83d", "\u00e9" * 5000 + "\udc80", "\U0001F600\ud800"]:
        for v in ({"s": text}, {text: 1}, [1, [text]]):
            with pytest.raises(UnicodeEncodeError):
                _native.dumps(v)


def test_dict_numbers_and_non_str_keys_as_json_dumps():
    v = {"ints": [0, -1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**40, -10**40, True, False],
         "floats": [0.0, -0.0, 1.5, 1e16, 1e-7, 123456789012345680.0, 5e-324, 1.7976931348623157e308, 0.1 + 0.2],
         1: "a", -2**70: "b", 2.5: "c", True: "d", None: "e", 1e22: "f"}
    assert _native.dumps(v) == dumps_py(v)
    for bad in ({"x": float("nan")}, [float("-inf")], {float("inf"): 1}):
        with pytest.raises(ValueError, match="not JSON compliant"):
            _native.dumps(bad)


def test_dict_errors_leave_the_next_call_whole(refunds):
    deep = {}
    for _ in range(1100):
        deep = {"d": [deep]}
    trace = {"trace_id": "after", "steps": [{"type": "tool_call", "tool": "refund_order", "arguments": {"n": "\u00e9" * 5000}}]}
    want = refunds.check(json.dumps(trace, ensure_ascii=False)).to_json()
    for bad in (dict(trace, x=deep), dict(trace, x="\ud800"), dict(trace, x={1, 2}), dict(trace, x={(1,): 2})):
        with pytest.raises((ValueError, TypeError)):
            refunds.check(bad)
        assert refunds.check(trace).to_json() == want


def test_dict_floats_are_spelled_as_repr():
    # Shortest digits by std::to_chars, laid out as float.__repr__: random bit patterns (every
    # exponent), the places where repr switches between positional and exponent spelling, and
    # integral values of every length up to 17 digits.
    import random
    import struct
    rng = random.Random(44)
    floats = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(20000)]
    floats = [f for f in floats if f == f and abs(f) != float("inf")]
    floats += [rng.uniform(-1e6, 1e6) for _ in range(5000)] + [rng.random() for _ in range(5000)]
    for e in range(-8, 20):
        for m in (1, 1.5, 9.999999999999999, 1.2345678901234567):
            floats += [m * 10.0 ** e, -m * 10.0 ** e]
    floats += [float(10 ** k) for k in range(18)] + [float(10 ** k - 1) for k in range(1, 18)]
    floats += [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, 2 / 3]
    assert _native.dumps(floats) == dumps_py(floats)


def test_dict_keys_written_again_from_the_text():
    # The writer keeps where each str key went and copies it for the key's next occurrence (by
    # address): the same key object many times, in nested dicts, many distinct keys (more than the
    # table holds, so slots are taken over), keys that need escaping, long keys and str subclasses.
    class Key(str):
        pass

    shared = ["type", "tool", "arguments", 'q"uote', "caf\u00e9", "\U0001F600" * 3, "k" * 70, Key("sub"), "a", ""]
    shared += ["l" * n for n in (12, 13, 14, 15, 16, 17, 28, 29, 30, 44, 45, 46, 59, 60, 61, 62)]  # "key": up to 64
    steps = [{k: {k: i, "n": [i, {k: k}]} for k in shared} for i in range(5)]
    many = {f"key{i}\u00e9" * (i % 3 + 1): {f"key{j}": j for j in range(i % 7)} for i in range(300)}
    nested = {"a": {"a": {"a": [{"a": 1, "": {"": 2}}]}}}  # a key again a few bytes after itself
    for v in ({"steps": steps}, many, [many, steps, many], json.loads(json.dumps({"steps": steps, "m": many})), nested):
        assert _native.dumps(v) == dumps_py(v)
