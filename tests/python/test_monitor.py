"""Guard mode from Python: a monitor's decisions, obligations and final report, a guarded
tool function, and the exactness of check against observe and of finish against check."""
import json
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
rule notified: refund_order followed by notify
  message "the customer was not told"
rule vip_only: forbid refund_order where context.tier == "basic"
  message "basic customers get no refunds"
"""


@pytest.fixture(scope="module")
def rules():
    return trajcheck.compile(RULES, "guard.rules")


def call(tool, result=None, status=None, **arguments):
    step = {"type": "tool_call", "tool": tool, "arguments": arguments}
    if result is not None:
        step["result"] = result
    if status:
        step["status"] = status
    return step


def test_a_call_is_denied_with_the_rules_message(rules):
    mon = rules.monitor()
    assert mon.check_call("order_get", {"order_id": "o1"}).allowed
    assert mon.observe(call("order_get", {"status": "delivered"}, order_id="o1")) == []
    d = mon.check_call("order_get", {"order_id": "o1"})
    assert not d.allowed and not d
    assert d.message == "one read of the order is enough"
    (v,) = d.violations
    assert (v.rule, v.severity, v.steps, v.binding) == ("one_read", "error", [1], {})
    assert v.source.startswith("guard.rules:")
    d = mon.check_call("Delete_User", {})  # names are read as traces read them
    assert [v.rule for v in d.violations] == ["no_delete"] and d.violations[0].severity == "critical"
    assert mon.steps == 1  # questions take no step


def test_parametric_decisions_are_per_value(rules):
    mon = rules.monitor()
    mon.observe({"type": "approval", "order_id": "o1"})
    assert mon.check_call("refund_order", {"order_id": "o1"}).allowed
    (v,) = mon.check_call("refund_order", {"order_id": "o2"}).violations
    assert v.rule == "approved" and v.binding == {"o": "o2"} and v.steps == [1]


def test_context_is_the_traces(rules):
    assert not rules.monitor(context={"tier": "basic"}).check_call("refund_order", {}).allowed
    assert "vip_only" not in [v.rule for v in rules.monitor(context={"tier": "gold"}).check_call("refund_order", {}).violations]


def test_obligations_are_pending_until_discharged(rules):
    mon = rules.monitor()
    mon.observe({"type": "approval", "order_id": "o1"})
    mon.observe(call("refund_order", "ok", order_id="o1"))
    (o,) = mon.pending()
    assert (o.rule, o.steps, o.message, o.statement) == ("notified", [1], "the customer was not told", 0)
    mon.observe(call("notify", "sent"))
    assert mon.pending() == []
    report = mon.finish()
    assert report.passed and report.steps == 3
    with pytest.raises(ValueError):
        mon.observe(call("notify"))


def test_observe_reports_what_a_step_made_final(rules):
    mon = rules.monitor()
    (v,) = mon.observe(call("delete_user", "ok", id=1))
    assert v.rule == "no_delete" and v.steps == [0] and v.message == "nothing may be deleted"
    assert mon.observe(call("notify")) == []
    report = mon.finish(fail_on="critical")
    assert not report.passed and [r.rule for r in report.violations] == ["no_delete"]


def test_a_guarded_function_raises_blocked_and_is_recorded(rules):
    mon = rules.monitor()
    calls = []

    @mon.guard
    def order_get(order_id, verbose=False):
        calls.append(order_id)
        return {"order_id": order_id, "status": "delivered"}

    def delete_order(order_id):
        raise RuntimeError("gateway down")

    assert order_get("o1") == {"order_id": "o1", "status": "delivered"}
    with pytest.raises(trajcheck.Blocked, match="one read of the order is enough") as err:
        order_get(order_id="o1")
    assert err.value.tool == "order_get" and err.value.arguments == {"order_id": "o1", "verbose": False}
    assert [v.rule for v in err.value.violations] == ["one_read"]
    assert calls == ["o1"]  # the denied call did not run
    with pytest.raises(trajcheck.Blocked, match="nothing may be deleted"):
        mon.guard(delete_order)("o1")
    failing = mon.guard(delete_order, tool="cancel_order")
    with pytest.raises(RuntimeError, match="gateway down"):
        failing("o1")
    report = mon.finish()
    assert report.steps == 2
    assert "cancel_order" in report.describe_step(1)
    normalized = trajcheck.normalize({"trace_id": "x", "steps": [call("cancel_order", status="error", order_id="o1")]})
    assert normalized["steps"][0]["status"] == "error"


def test_bad_steps_are_errors_not_crashes(rules):
    mon = rules.monitor()
    with pytest.raises(trajcheck.TraceError):
        mon.observe("{not json")
    with pytest.raises(TypeError):
        mon.observe(42)
    assert mon.steps == 0
    assert mon.check_call("order_get", {"id": 1}).allowed


TOOLS = ["order_get", "refund_order", "notify", "delete_user", "search"]


def random_step(rng):
    k = rng.randrange(6)
    if k == 0:
        return {"type": "approval", "order_id": rng.choice(["o1", "o2"])}
    if k == 1:
        return {"type": "user_message", "content": "hi"}
    return call(rng.choice(TOOLS), rng.choice([None, "ok", {"ok": True}]), rng.choice([None, "error"]),
                order_id=rng.choice(["o1", "o2", "o3"]))


def test_check_and_observe_agree_and_finish_equals_check(rules):
    rng = random.Random(7)
    denied = 0
    for _ in range(200):
        context = {"tier": rng.choice(["basic", "gold"])}
        mon = rules.monitor(context=context)
        steps = [random_step(rng) for _ in range(rng.randrange(12))]
        for step in steps:
            mon.check(random_step(rng))  # a question never observed changes nothing
            asked = mon.check(step).violations
            seen = mon.observe(step)
            assert asked == seen, json.dumps(steps)
            denied += bool(seen)
        trace = {"trace_id": "guard", "context": context, "steps": steps}
        got = [tuple(r) for r in mon.finish().results]
        want = [tuple(r) for r in rules.check(trace).results]
        assert got == want, json.dumps(trace)
    assert denied > 50
