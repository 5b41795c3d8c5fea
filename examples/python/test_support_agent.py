"""The support agent's regression suite: every recorded transcript (OpenAI chat format) follows
the policy in support.rules, a known bad transcript stays caught, and the agent's tool use
stays close to the reference solutions.

    python3 -m pytest examples/python
"""
import json
from pathlib import Path

import pytest

import trajcheck
from trajcheck.pytest_plugin import assert_satisfies, assert_violates

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*.json"))
REFERENCE = json.loads((HERE / "reference.json").read_text())
MIN_OVERALL = 0.8


def transcript(path):
    return json.loads(Path(path).read_text())


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_transcript_follows_policy(path, trajcheck_rules):
    assert_satisfies(transcript(path), trajcheck_rules("support.rules"))


def test_refund_without_approval_is_caught(trajcheck_rules):
    rules = trajcheck_rules("support.rules")
    report = assert_violates(transcript(HERE / "known_bad" / "refund_without_approval.json"), rules,
                             "refund_needs_approval")
    (violation,) = report.violations
    assert violation.binding == {"o": "ord_5"}
    assert report.describe_step(violation.steps[-1]) == 'refund_order {"order_id":"ord_5"}'


@pytest.mark.parametrize("case", sorted(REFERENCE), ids=str)
def test_tool_use_matches_reference(case):
    # The expected side is a list of tool names or a PATH ("a -> {b, c}": b and c in any order).
    scores = trajcheck.score(expected=REFERENCE[case], actual=transcript(HERE / "transcripts" / f"{case}.json"),
                             tool_args="ignore")
    assert scores["overall"] >= MIN_OVERALL, scores["explanation"]
