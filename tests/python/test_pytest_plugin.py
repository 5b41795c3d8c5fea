"""The pytest plugin: the fixture factory, and failure messages that show the violations as
`trajcheck check` prints them."""
import pytest

import trajcheck
from trajcheck.pytest_plugin import assert_satisfies, assert_violates

RULES = "forbid delete_*\norder_get at most 1\n"


def test_assert_helpers_pass_and_return_the_report():
    rules = trajcheck.compile(RULES, name="inline.rules")
    assert assert_satisfies(["order_get"], rules).passed
    rep = assert_violates(["order_get", "order_get"], rules, "order_get at most 1")
    assert rep.violations[0].steps == [1]


def test_assert_satisfies_message_lists_violations_with_witnesses():
    rules = trajcheck.compile(RULES, name="inline.rules")
    with pytest.raises(AssertionError) as info:
        assert_satisfies({"trace_id": "t9", "steps": ["customer_get", "delete_customer"]}, rules)
    assert str(info.value) == (
        "trace t9 violates forbid delete_*\n"
        "FAIL t9  (<trace>:1, 2 steps)\n"
        "  error forbid delete_*  inline.rules:1:1\n"
        "      #0 customer_get\n"
        "    > #1 delete_customer\n")


def test_assert_satisfies_default_fails_on_any_severity():
    rules = trajcheck.compile("rule r [info]: forbid x\n")
    with pytest.raises(AssertionError):
        assert_satisfies(["x"], rules)
    assert_satisfies(["x"], rules, fail_on="error")


def test_assert_violates_messages():
    rules = trajcheck.compile(RULES, name="inline.rules")
    with pytest.raises(AssertionError) as info:
        assert_violates({"trace_id": "t1", "steps": ["order_get", "delete_x"]}, rules, "order_get at most 1")
    assert str(info.value) == (
        "rule 'order_get at most 1' is satisfied on trace t1 (2 steps):\n"
        "    #0 order_get\n"
        "    #1 delete_x\n"
        "other rules it violates:\n"
        "FAIL t1  (<trace>:1, 2 steps)\n"
        "  error forbid delete_*  inline.rules:1:1\n"
        "      #0 order_get\n"
        "    > #1 delete_x\n")
    with pytest.raises(AssertionError, match="no rule named 'nope'; the rules are: 'forbid delete_\\*', "):
        assert_violates([], rules, "nope")
    with pytest.raises(AssertionError, match="is vacuous"):
        assert_violates([], trajcheck.compile("approval precedes refund_order\n"), "approval precedes refund_order")


def test_fixture_and_failure_output_in_a_real_session(pytester):
    pytester.makefile(".rules", policy="workflow \"p\"\nforbid delete_*\n")
    pytester.makepyfile(test_agent="""
        from trajcheck.pytest_plugin import assert_satisfies

        def test_clean(trajcheck_rules):
            assert_satisfies(["lookup"], trajcheck_rules("policy.rules"))

        def test_same_object(trajcheck_rules):
            assert trajcheck_rules("policy.rules") is trajcheck_rules("policy.rules")
            assert trajcheck_rules(text="forbid x", name="x.rules").files == ["x.rules"]

        def test_dirty(trajcheck_rules):
            assert_satisfies({"trace_id": "run7", "steps": ["lookup", "delete_user"]},
                             trajcheck_rules("policy.rules"))

        def test_bad_rules(trajcheck_rules):
            trajcheck_rules(text="forbid", name="broken.rules")
    """)
    result = pytester.runpytest_subprocess("-p", "trajcheck.pytest_plugin")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*AssertionError: trace run7 violates forbid delete_*",
        "*FAIL run7  (<trace>:1, 2 steps)",
        "*  error forbid delete_*  *policy.rules:2:1",
        "*      #0 lookup",
        "*    > #1 delete_user",
    ])
    result.stdout.fnmatch_lines(["*rules did not compile:", "broken.rules:1:*error*"])
    # The helper's own frame is hidden from the traceback.
    assert "report = rules.check(trace" not in result.stdout.str()


def test_plugin_loads_through_its_entry_point(pytester):
    pytester.makepyfile(test_x="""
        def test_fixture_is_there(trajcheck_rules):
            assert trajcheck_rules(text="forbid x").rules == ["forbid x"]
    """)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
