"""compile / load_rules errors and normalize: the same text and values as `trajcheck lint`
and `trajcheck normalize`."""
import json

import pytest

import trajcheck
from conftest import SOURCE, run_cli

BAD_RULES = "workflow \"w\"\ngroup lookup = a | b\nafter lokup: forbid refund_order\nforbid\n"


def test_compile_text_and_name():
    rules = trajcheck.compile("forbid delete_*\norder_get at most 1\n", name="inline.rules")
    assert rules.files == ["inline.rules"]
    assert rules.rules == ["forbid delete_*", "order_get at most 1"]
    r = rules.check(["delete_user"]).violations[0]
    assert r.source == "inline.rules:1:1"


def test_rules_error_equals_lint(tmp_path):
    f = tmp_path / "bad.rules"
    f.write_text(BAD_RULES)
    status, lint_out, _ = run_cli("lint", "--color", "never", f)
    assert status == 2
    with pytest.raises(trajcheck.RulesError) as info:
        trajcheck.load_rules(str(f))
    err = info.value
    assert str(err) + "\n" == lint_out
    assert err.diagnostics and all(isinstance(d, trajcheck.Diagnostic) for d in err.diagnostics)
    d = next(d for d in err.diagnostics if d.severity == "error")
    assert d.file == str(f)
    assert d.code.startswith("E") and d.line >= 1 and d.column >= 1 and d.message
    assert f"{f}:{d.line}:{d.column}: error[{d.code}]: {d.message}" in lint_out
    assert str(d) == f"{f}:{d.line}:{d.column}: error[{d.code}]: {d.message}"
    with pytest.raises(trajcheck.RulesError) as again:
        trajcheck.compile(BAD_RULES, name=str(f))
    assert str(again.value) == str(err)


def test_several_files_one_error_each(tmp_path):
    a, b = tmp_path / "a.rules", tmp_path / "b.rules"
    a.write_text("forbid\n")
    b.write_text("order_get at most\n")
    with pytest.raises(trajcheck.RulesError) as info:
        trajcheck.load_rules(str(a), str(b))
    assert {d.file for d in info.value.diagnostics} == {str(a), str(b)}


def test_unreadable_rules_file(tmp_path):
    with pytest.raises(trajcheck.RulesError) as info:
        trajcheck.load_rules(str(tmp_path / "missing.rules"))
    (d,) = info.value.diagnostics
    assert d.file == str(tmp_path / "missing.rules") and d.line == 0 and "missing.rules" in str(info.value)


def test_reading_options_are_the_cli_options(tmp_path):
    rules = trajcheck.compile("forbid refund_order\n", aliases={"issue_refund": "refund_order"})
    assert not rules.check(["Issue_Refund"]).passed
    rules = trajcheck.compile("forbid refund_order\n", aliases=["issue_refund=refund_order"])
    assert not rules.check(["issue_refund"]).passed
    # A rule naming the observed spelling means the canonical tool, as with a file's alias.
    observed = trajcheck.compile("forbid issue_refund\n", aliases={"issue_refund": "refund_order"})
    assert not observed.check(["issue_refund"]).passed
    assert not observed.check(["refund_order"]).passed
    with pytest.raises(trajcheck.OptionError, match="--alias"):
        trajcheck.compile("forbid x\n", aliases=["no-equals-sign"])
    with pytest.raises(trajcheck.OptionError):
        trajcheck.compile("forbid x\n", error_patterns=["(unclosed"])
    with pytest.raises(trajcheck.OptionError):
        trajcheck.compile("forbid x\n", input_format="yaml")
    failing = trajcheck.compile("rule r: forbid lookup where status == \"error\"\n", error_patterns=["^Error:"])
    trace = {"steps": [{"type": "tool_call", "tool": "lookup", "result": "Error: not found"}]}
    assert not failing.check(trace).passed
    ctx = trajcheck.compile("rule r: forbid refund_order where context.tier == \"free\"\n", context={"tier": "free"})
    assert not ctx.check(["refund_order"]).passed
    with pytest.raises(trajcheck.TraceError):
        trajcheck.compile("forbid x\n", input_format="list").check({"steps": []})


@pytest.mark.parametrize("path", ["examples/traces/native.jsonl", "tests/data/formats/openai.json",
                                  "tests/data/formats/anthropic.json", "tests/data/formats/list.jsonl",
                                  "examples/traces/tool-lists.jsonl"])
def test_normalize_equals_cli(path):
    _, out, _ = run_cli("normalize", path)
    expected = [json.loads(line) for line in out.splitlines()]
    records = []
    text = (SOURCE / path).read_text()
    if path.endswith(".jsonl"):
        records = [line for line in text.splitlines() if line.strip()]
    else:
        value = json.loads(text)
        records = value if isinstance(value, list) and value and isinstance(value[0], dict) and "role" not in value[0] else [value]
    got = [trajcheck.normalize(r) for r in records]
    # Records without a trace_id are named after their origin: the file there, `<trace>` here.
    for g, e in zip(got, expected):
        if g["trace_id"].startswith("<trace>:"):
            g["trace_id"] = e["trace_id"]
    assert got == expected


def test_normalize_options_and_errors():
    n = trajcheck.normalize([{"name": " Order_Get "}], aliases={"order_get": "lookup"})
    assert n["steps"][0]["tool"] == "lookup" and n["steps"][0]["raw_tool"] == " Order_Get "
    with pytest.raises(trajcheck.TraceError, match=r"^<trace>:1:2: error: invalid JSON"):
        trajcheck.normalize("{]")
    with pytest.raises(TypeError):
        trajcheck.normalize(None)
