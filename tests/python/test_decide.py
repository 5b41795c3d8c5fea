"""Rules.decide: allow or deny a tool call given the history so far, in any trace format, as
harnesses (OpenAI Agents SDK tool guardrails, Inspect approvers) ask it."""
import random

import pytest

import trajcheck

RULES = """
rule no_delete [critical]: forbid delete_*
  message "nothing may be deleted"
rule one_read: order_get at most 1
  message "one read of the order is enough"
rule approved: approval where order_id == $o precedes refund_order where arguments.order_id == $o
  message "refund without approval"
rule vip_only: forbid refund_order where context.tier == "basic"
  message "basic customers get no refunds"
rule no_rm: forbid bash where arguments.cmd contains "rm -rf"
  message "no recursive deletes"
"""


@pytest.fixture(scope="module")
def rules():
    return trajcheck.compile(RULES, "decide.rules")


def call(tool, result=None, **arguments):
    step = {"type": "tool_call", "tool": tool, "arguments": arguments}
    if result is not None:
        step["result"] = result
    return step


def test_a_per_call_rule_needs_no_history(rules):
    d = rules.decide("delete_user", {"id": 1})
    assert not d.allowed and d.message == "nothing may be deleted"
    assert [v.rule for v in d.violations] == ["no_delete"]
    assert rules.decide("order_get", {"order_id": "o1"}).allowed


def test_counts_and_orderings_see_the_history(rules):
    one_read = [call("order_get", {"ok": True}, order_id="o1")]
    d = rules.decide("order_get", {"order_id": "o1"}, history=one_read)
    assert not d.allowed and d.message == "one read of the order is enough"
    assert d.violations[0].steps == [1]  # the call decided is the step after the history
    assert rules.decide("order_get", {"order_id": "o1"}, history=[]).allowed

    approved = [{"type": "approval", "order_id": "o1"}]
    assert rules.decide("refund_order", {"order_id": "o1"}, history=approved).allowed
    d = rules.decide("refund_order", {"order_id": "o2"}, history=approved)
    assert [v.rule for v in d.violations] == ["approved"] and d.violations[0].binding == {"o": "o2"}
    assert not rules.decide("refund_order", {"order_id": "o1"}).allowed


def test_the_history_is_read_in_any_trace_format(rules):
    openai = [
        {"role": "user", "content": "read my order"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "order_get", "arguments": '{"order_id": "o1"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "delivered"}'},
    ]
    anthropic = [
        {"role": "user", "content": "read my order"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "order_get",
                                           "input": {"order_id": "o1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "delivered"}]},
    ]
    inspect_messages = [  # Inspect's ChatMessage.model_dump(): `function` is the name, arguments a dict
        {"role": "user", "content": "read my order"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "function": "order_get", "arguments": {"order_id": "o1"}, "type": "function"}]},
        {"role": "tool", "content": "delivered", "tool_call_id": "c1", "function": "order_get"},
    ]
    native = {"trace_id": "t", "steps": [call("order_get", "delivered", order_id="o1")]}
    for history in (openai, anthropic, inspect_messages, native):
        d = rules.decide("order_get", {"order_id": "o1"}, history=history)
        assert d.message == "one read of the order is enough", history


def test_the_context_is_the_historys_unless_given(rules):
    basic = {"trace_id": "t", "context": {"tier": "basic"}, "steps": []}
    assert not rules.decide("refund_order", {}, history=basic).allowed
    assert "vip_only" not in [v.rule for v in rules.decide("refund_order", {}, history=basic,
                                                           context={"tier": "gold"}).violations]
    assert not rules.decide("refund_order", {}, context={"tier": "basic"}).allowed


def test_a_history_that_cannot_be_read_is_an_error_not_an_allow(rules):
    with pytest.raises(trajcheck.TraceError):
        rules.decide("order_get", {}, history='{"trace_id": "t", "steps": [')
    with pytest.raises(trajcheck.TraceError):
        rules.decide("order_get", {}, history=[{"type": "tool_call"}])  # a call with no tool


def test_decide_is_what_a_monitor_that_saw_the_history_answers(rules):
    """On random traces, decide(step i, history = steps before i) denies exactly when a monitor
    that observed those steps would, with the same violations; and the rules the denied calls
    break are violated when the whole trace is checked."""
    rng = random.Random(40)
    tools = ["order_get", "refund_order", "delete_user", "bash", "notify"]
    for _ in range(60):
        steps = []
        for _ in range(rng.randint(1, 8)):
            if rng.random() < 0.2:
                steps.append({"type": "approval", "order_id": rng.choice(["o1", "o2"])})
            else:
                tool = rng.choice(tools)
                args = {"order_id": rng.choice(["o1", "o2"])} if tool != "bash" else {
                    "cmd": rng.choice(["ls", "rm -rf /tmp/x"])}
                steps.append(call(tool, "ok", **args))
        context = rng.choice([None, {"tier": "basic"}, {"tier": "gold"}])
        mon = rules.monitor(context=context)
        denied = set()
        for i, step in enumerate(steps):
            if step["type"] != "tool_call":
                mon.observe(step)
                continue
            d = rules.decide(step["tool"], step["arguments"], history=steps[:i], context=context)
            assert d.violations == mon.check_call(step["tool"], step["arguments"]).violations
            denied |= {v.rule for v in d.violations}
            mon.observe(step)
        trace = {"trace_id": "t", "steps": steps}
        if context:
            trace["context"] = context
        violated = {r.rule for r in rules.check(trace).violations}
        assert denied <= violated
