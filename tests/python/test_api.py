"""The package's surface: every public name documented and typed in the stubs, score's sides
keyword-only, and the package importable from anywhere."""
import ast
import json
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import trajcheck
import trajcheck.pytest_plugin
from conftest import SOURCE, cli_jsonl


def test_every_public_name_has_a_docstring_and_a_stub():
    stub = ast.parse((Path(trajcheck.__file__).parent / "__init__.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    # The value and error types are re-exported from the annotated module that defines them
    # (`from ._types import X as X`, the form type checkers take as a re-export).
    for n in stub.body:
        if isinstance(n, ast.ImportFrom) and n.module == "_types" and n.level == 1:
            for a in n.names:
                assert a.asname == a.name, a.name
                assert getattr(trajcheck._types, a.name) is getattr(trajcheck, a.name), a.name
                stubbed.add(a.name)
    for name in trajcheck.__all__:
        obj = getattr(trajcheck, name)
        assert inspect.getdoc(obj), name
        assert name in stubbed, name
    for cls in (trajcheck.Rules, trajcheck.Report, trajcheck.FileRun):
        for attr, member in vars(cls).items():
            if not attr.startswith("_") and (callable(member) or isinstance(member, property)):
                assert inspect.getdoc(member), f"{cls.__name__}.{attr}"
    assert inspect.getdoc(trajcheck.pytest_plugin.trajcheck_rules)


def test_score_sides_are_keyword_only():
    with pytest.raises(TypeError):
        trajcheck.score(["a"], ["b"])
    s = trajcheck.score(expected=["a", "b"], actual=["a"])
    assert s["missing"] == ["b"] and s["extra"] == []
    swapped = trajcheck.score(expected=["a"], actual=["a", "b"])
    assert swapped["extra"] == ["b"] and swapped["missing"] == []


def test_score_paths_ids_options_and_errors():
    s = trajcheck.score(expected="a -> {b, c}", actual=["a", "c", "b"], id="case_1")
    assert s["id"] == "case_1" and s["ordering"] == 1
    assert trajcheck.score(expected=b'["a"]', actual=b'["a"]')["overall"] == 1
    with pytest.raises(trajcheck.TraceError, match="expected PATH 1:7"):
        trajcheck.score(expected="a -> (", actual=["a"])
    with pytest.raises(trajcheck.OptionError, match="unknown selection"):
        trajcheck.score(expected=["a"], actual=["a"], selection="dice")
    with pytest.raises(trajcheck.OptionError, match="weights"):
        trajcheck.score(expected=["a"], actual=["a"], weights=(0, 0))
    with pytest.raises(trajcheck.OptionError, match="tool_args_for"):
        trajcheck.score(expected=["a"], actual=["a"], tool_args_for={"a": "fuzzy"})
    with pytest.raises(TypeError):
        trajcheck.score(expected=42, actual=["a"])


def test_import_from_any_directory(tmp_path):
    p = subprocess.run([sys.executable, "-c", "import trajcheck; print(trajcheck.__version__)"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == trajcheck.__version__


def test_score_records_of_the_test_data_score_like_the_cli():
    for name in ["records.jsonl", "shapes.jsonl", "agentevals.jsonl"]:
        path = SOURCE / "tests" / "data" / "score" / name
        expected = cli_jsonl("score", "--format", "jsonl", path)
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        assert len(records) == len(expected)
        for rec, e in zip(records, expected):
            if "record" in e:  # rejected by the CLI: rejected here too
                continue
            exp = rec.get("expected", rec.get("reference_outputs"))
            act = rec.get("actual", rec.get("outputs"))
            got = trajcheck.score(expected=exp, actual=act, id=rec.get("id", e["id"]))
            assert got == e


def test_eval_suite_equals_eval_json():
    suite = SOURCE / "examples" / "eval" / "support.suite"
    _, out, _ = __import__("conftest").run_cli("eval", suite, "--format", "json")
    assert trajcheck.eval_suite(str(suite)) == json.loads(out)
    with pytest.raises(trajcheck.SuiteError):
        trajcheck.eval_suite(str(SOURCE / "examples" / "eval" / "missing.suite"))


def test_eval_suite_datasets_has_recovery_tables_and_grader_dimensions(tmp_path):
    """Fixtures, injected failures, synthetic cases and a grader reach the Python report."""
    suite = SOURCE / "examples" / "datasets" / "datasets.suite"
    report = trajcheck.eval_suite(str(suite), grader_cache="-")
    _, out, _ = __import__("conftest").run_cli("eval", suite, "--format", "json", "--grader-cache", "-")
    assert report == json.loads(out)
    by_class = {row["error_class"]: row for row in report["recovery"]["by_class"]}
    assert by_class["timeout"]["injected"] == by_class["timeout"]["failures"] > by_class["timeout"]["recovered"]
    assert report["recovery"]["injections_not_observed"][0].startswith("lookup-105: order_get attempt 1")
    assert report["recovery"]["unknown_errors"] == [{"error": "order_get: upstream_502", "cases": ["lookup-105"]}]
    helpfulness = report["overall"]["graders"]["helpfulness"]
    assert helpfulness["errors"] == 0 and helpfulness["pass_share"] == 1.0
    splits = {row["value"]: row for row in report["splits"]}
    assert splits["synthetic"]["recovery"] < splits["designed"]["recovery"]
    cases = {c["case_id"]: c for c in report["cases"]}
    assert cases["old-104"]["status"] == "stale"
    assert cases["refund-101"]["fixture"] == "fixtures/refund-101.json"
    assert cases["refund-101"]["graders"][0]["grader"] == "helpfulness"
    # The cache: a second run answers from it.
    first = trajcheck.eval_suite(str(suite), grader_cache=str(tmp_path))
    second = trajcheck.eval_suite(str(suite), grader_cache=str(tmp_path))
    assert not first["cases"][0]["graders"][0]["cached"]
    assert second["cases"][0]["graders"][0]["cached"]


def test_eval_suite_that_judged_nothing_fails(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    report = trajcheck.eval_suite(str(SOURCE / "examples" / "eval" / "support.suite"), runs=[str(empty)])
    assert report["status"] == "fail"
    assert report["reason"].startswith("no case was judged: 12 cases, 12 without a run")
    # A gate without data fails (the suite writes none with `if data`).
    assert {g["gate"]: g["status"] for g in report["gates"]}["selection >= 95%"] == "fail"


def test_check_over_no_trace_is_not_a_pass(tmp_path):
    """The package's runner shares the run layer: its exit status for a run over nothing is 2."""
    from trajcheck import _native
    rules = trajcheck.load_rules(str(SOURCE / "examples" / "rules" / "refunds.rules"))
    (tmp_path / "empty.jsonl").write_text("\n")
    run = rules.check_file(str(tmp_path))
    assert list(run) == []
    assert run.summary["traces"] == 0
    if hasattr(_native, "_check_exit_status"):  # the Dask driver's status (built with Dask support)
        assert _native._check_exit_status(json.dumps(run.summary)) == 2


def test_a_path_with_a_nul_byte_is_refused_not_cut_short(tmp_path):
    """The file system stops at a NUL: 'x.rules\\0.txt' must not load x.rules."""
    (tmp_path / "x.rules").write_text("forbid delete_*\n")
    real = str(tmp_path / "x.rules")
    cut = real + "\0.txt"
    message = cut.replace("\0", "\\x00") + ": the path contains a NUL byte"
    with pytest.raises(ValueError) as e:
        trajcheck.load_rules(cut)
    assert str(e.value) == message
    with pytest.raises(ValueError, match="contains a NUL byte"):
        trajcheck.load_rules(real, catalog=str(tmp_path / "c.json") + "\0")
    with pytest.raises(ValueError, match="contains a NUL byte"):
        trajcheck.compile("forbid x\n", catalog="c\0.json")
    rules = trajcheck.load_rules(real)
    (tmp_path / "t.jsonl").write_text('{"steps": []}\n')
    with pytest.raises(ValueError, match="contains a NUL byte"):
        rules.check_file(str(tmp_path / "t.jsonl") + "\0.gz")
    suite = str(SOURCE / "examples" / "eval" / "support.suite")
    for kwargs in ({"runs": [str(tmp_path / "t.jsonl") + "\0"]}, {"baseline": "b\0.json"},
                   {"grader_cache": "cache\0"}):
        with pytest.raises(ValueError, match="contains a NUL byte"):
            trajcheck.eval_suite(suite, **kwargs)
    with pytest.raises(ValueError, match="contains a NUL byte"):
        trajcheck.eval_suite(suite + "\0.x")
