"""Agreement with the command line on generated corpora: many rules, many traces, many score
records (bench/gen_traces.cpp, the benchmark's generator)."""
import json
import os
import subprocess

import pytest

import trajcheck
from trajcheck import _native
from conftest import SOURCE, cli_jsonl

GEN = os.environ.get("TRAJCHECK_GEN")
pytestmark = pytest.mark.skipif(not GEN, reason="TRAJCHECK_GEN (the trace generator) is not set")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("generated")
    subprocess.run([GEN, "native", "-o", d / "native.jsonl", "--bytes", "3M", "--seed", "5"], check=True,
                   capture_output=True)
    subprocess.run([GEN, "rules", "-o", d / "many.rules", "--count", "96", "--seed", "9"], check=True,
                   capture_output=True)
    subprocess.run([GEN, "agentevals", "-o", d / "score.jsonl", "--records", "400", "--calls", "12", "--seed", "4"],
                   check=True, capture_output=True)
    return d


def test_generated_corpus_checks_like_the_cli(corpus):
    native, rules_path = corpus / "native.jsonl", corpus / "many.rules"
    expected = cli_jsonl("check", "--format", "jsonl", "-j", "2", "-r", rules_path, "-r", SOURCE / "bench" / "bench.rules", native)
    rules = trajcheck.load_rules(str(rules_path), str(SOURCE / "bench" / "bench.rules"))
    assert len(rules.rules) > 100
    run = rules.check_file(str(native), jobs=2)
    got = [json.loads(r.to_json()) for r in run]
    assert len(got) == len(expected) > 200
    assert got == expected
    # Field by field from the reports' own attributes, per trace through rules.check; the line's
    # json.loads (written as JSON text by the package's own writer) reads as the line does.
    lines = native.read_text().splitlines()
    violated = 0
    for line, e in zip(lines[:400], expected):
        rep = rules.check(line)
        as_dict = json.loads(line)
        assert _native.dumps(as_dict) == json.dumps(as_dict, separators=(",", ":"), ensure_ascii=False).encode()
        assert rules.check(as_dict).to_json() == rep.to_json()
        assert rep.trace_id == e["trace_id"]
        assert ("pass" if rep.passed else "fail") == e["status"]
        assert len(rep.results) == len(e["results"])
        for r, er in zip(rep.results, e["results"]):
            assert (r.rule, r.severity, r.status, r.steps, r.source) == (
                er["rule"], er["severity"], er["status"], er["steps"], er["source"])
            assert r.binding == er.get("binding", {})
            assert r.message == er.get("message", "")
            violated += r.status == "violated"
    assert violated > 100
    s = run.summary
    assert (s["records"], s["traces"], s["rejected"]) == (len(expected), len(expected), 0)


def test_generated_score_records_score_like_the_cli(corpus):
    path = corpus / "score.jsonl"
    for options, flags in [({}, []),
                           ({"tool_args": "ignore", "selection": "f1"}, ["--tool-args", "ignore", "--selection", "f1"]),
                           ({"multiset": True, "weights": (0.5, 0.5), "min_order_length": 3},
                            ["--multiset", "--weights", "0.5,0.5", "--min-order-length", "3"])]:
        expected = cli_jsonl("score", "--format", "jsonl", *flags, path)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(records) == len(expected) == 400
        for rec, e in zip(records, expected):
            got = trajcheck.score(expected=rec.get("expected", rec.get("reference_outputs")),
                                  actual=rec.get("actual", rec.get("outputs")), id=rec.get("id"), **options)
            assert got == e

