#!/usr/bin/env python3
"""Writes runs/candidate.jsonl: the runs of a toy refund agent on every case of the suite
(cases/*.jsonl and the synthetic cases/synthetic/*.jsonl that `trajcheck case vary` wrote),
in an environment built from each case's fixture and injected failures — a stand-in for a
real harness. Deterministic: the same cases give the same bytes.

The agent has one bug that only a synthetic variation reveals: after a third failed attempt
of a refund it makes up a new idempotency key. The harness has one too: it drops the
injection of lookup-105 (and that run meets a real upstream error instead), so eval lists
that injection as not observed."""
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def load_cases():
    cases = []
    for pattern in ("cases/*.jsonl", "cases/synthetic/*.jsonl"):
        for path in sorted(glob.glob(os.path.join(HERE, pattern))):
            with open(path, encoding="utf-8") as f:
                cases += [json.loads(line) for line in f if line.strip()]
    return cases


class Environment:
    def __init__(self, case):
        with open(os.path.join(HERE, case["fixture"]), encoding="utf-8") as f:
            self.fixture = json.load(f)
        self.inject = {} if case["case_id"] == "lookup-105" else {
            (i["tool"], i.get("attempt", 1)): i["error"] for i in case.get("inject", [])}
        self.attempts = {}
        self.upstream_502 = case["case_id"] == "lookup-105"

    def call(self, tool, args):
        """(result, failed) of a call, after the injections."""
        n = self.attempts[tool] = self.attempts.get(tool, 0) + 1
        if (tool, n) in self.inject:
            cls = self.inject[(tool, n)]["class"]
            return {"error_class": cls, "message": f"{tool} failed: {cls}"}, True
        if self.upstream_502 and tool == "order_get" and n == 1:
            return {"error_class": "upstream_502", "message": "bad gateway"}, True
        if tool == "order_get":
            oid = args["order_id"]
            if oid not in self.fixture["customer"]["orders"]:
                return {"error_class": "not_found", "message": f"no order {oid}"}, True
            return dict(order_id=oid, **self.fixture.get("orders", {}).get(oid, {"total": 0, "status": "unknown"})), False
        if tool == "refund_order":
            return {"refund_id": "rf_" + args["order_id"][4:]}, False
        return {"ticket": "t_1"}, False


def run(case):
    env = Environment(case)
    steps = [{"type": "user_message", "content": case["input"]}]
    output = None

    def call(tool, args):
        result, failed = env.call(tool, args)
        steps.append({"type": "tool_call", "id": f"call_{len(steps)}", "tool": tool, "arguments": args,
                      "result": result, "status": "error" if failed else "ok"})
        return result, failed

    def say(text):
        steps.append({"type": "assistant_message", "content": text})

    oid = re.search(r"ord_\d+", case["input"]).group(0)
    if oid not in env.fixture["customer"]["orders"]:
        say(f"I cannot refund {oid}: it is not one of your orders.")
    else:
        for attempt in range(4):  # a read is retried while the error is retryable
            order, failed = call("order_get", {"order_id": oid})
            if not failed or order["error_class"] not in ("rate_limited", "upstream_502"):
                break
        if failed:
            say(f"I cannot find {oid} right now.")
        elif case["task_type"] == "lookup":
            say(f"Your order {oid} is {order['status']}.")
        else:
            key = "rk-" + case["case_id"].split("--")[0]
            for attempt in range(1, 5):
                if attempt == 4:
                    key += "-retry"  # the bug: a new key after three failures
                refund, failed = call("refund_order", {"order_id": oid, "amount": order["total"], "idempotency_key": key})
                if not failed:
                    output = {"refund_id": refund["refund_id"]}
                    say(f"Your refund {refund['refund_id']} for {oid} is on its way.")
                    break
                if refund["error_class"] != "timeout":
                    call("transfer_to_human_agents", {"summary": f"refund of {oid} failed: {refund['error_class']}"})
                    say("I have handed this to a colleague, who will contact you.")
                    break
    record = {"trace_id": "run-" + case["case_id"], "case_id": case["case_id"],
              "context": {"customer_id": env.fixture["customer"]["id"]}, "steps": steps}
    if output:
        record["output"] = output
    return record


def main():
    with open(os.path.join(HERE, "runs", "candidate.jsonl"), "w", encoding="utf-8") as f:
        for case in load_cases():
            f.write(json.dumps(run(case)) + "\n")


if __name__ == "__main__":
    main()
