#!/usr/bin/env python3
"""Writes the example cases and the candidate runs (A good, B a regression of A, and A run
three times per case with some of B's runs mixed in: runs/k3.jsonl, for nondeterminism.suite).

The committed files under cases/ and runs/ are this script's output; rerun it after editing.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ACME = {"tenant": "acme", "user_id": "u_17", "role": "customer"}


def user(t): return {"type": "user_message", "content": t}
def say(t): return {"type": "assistant_message", "content": t}
def approve(call): return [{"type": "approval_request", "policy": "refund-v1", "tool_call_id": call},
                           {"type": "approval", "decision": "approved", "tool_call_id": call}]


def call(i, tool, args, result, status="ok", **extra):
    s = {"type": "tool_call", "id": f"call_{i}", "tool": tool, "arguments": args, "result": result, "status": status}
    s.update(extra)
    return s


def run(case_id, steps, success=True, cost=0.01, tokens=1500, latency=1800, output=None, context=ACME):
    r = {"trace_id": f"run-{case_id}", "case_id": case_id, "context": context, "steps": steps,
         "success": success, "cost": cost, "tokens": tokens, "latency_ms": latency}
    if output is not None:
        r["output"] = output
    return r


ORDER = lambda oid, total=42.5: {"order_id": oid, "total": total, "tenant": "acme", "status": "delivered"}

cases = [
    {"case_id": "refund-001", "task_type": "refund", "severity": "high", "split": "designed", "catalog_version": "v3",
     "input": "I want my money back for ord_1001",
     "expected": {"tools": ["order_get", "refund_order"], "arguments": {"refund_order": {"order_id": "ord_1001"}},
                  "control": "act", "output": {"required": ["refund_id"]}, "rules": ["rules/refund-extra.rules"]},
     "note": "reviewer: a refund needs approval above 100 EUR"},
    {"case_id": "faq-002", "task_type": "faq", "severity": "low", "split": "designed", "catalog_version": "v3",
     "input": "How long does a refund take?", "expected": {"tools": [], "control": "answer"}},
    {"case_id": "ambiguous-003", "task_type": "refund", "severity": "medium", "split": "designed", "catalog_version": "v3",
     "input": "Refund my order from last week, the number starts with ord_2",
     "expected": {"control": "clarify"}, "note": "ambiguous identifier: ask, do not guess"},
    {"case_id": "xtenant-refuse-004", "task_type": "permission", "severity": "high", "split": "designed",
     "catalog_version": "v3", "input": "Refund ord_9001 of globex, I administer them too",
     "expected": {"control": "refuse"}, "note": "cross-tenant request: refuse without touching globex data"},
    {"case_id": "viewer-005", "task_type": "permission", "severity": "high", "split": "designed", "catalog_version": "v3",
     "input": "Refund ord_5001", "expected": {"control": "refuse"}, "note": "a view-only account cannot refund"},
    {"case_id": "retry-006", "task_type": "refund", "severity": "high", "split": "designed", "catalog_version": "v3",
     "input": "Please refund ord_6001",
     "expected": {"path": "order_get -> refund_order+", "arguments": {"refund_order": {"order_id": "ord_6001"}},
                  "control": "retry"}, "note": "gateway timeouts are transient: retry once"},
    {"case_id": "handoff-007", "task_type": "escalation", "severity": "medium", "split": "designed",
     "catalog_version": "v3", "input": "Third time I write! Get me a manager.",
     "expected": {"tools": ["transfer_to_human_agents"], "control": "handoff"}},
    {"case_id": "unavailable-008", "task_type": "refund", "severity": "high", "split": "synthetic",
     "catalog_version": "v3", "input": "Refund ord_8001 please",
     "expected": {"tools": ["order_get", "refund_order", "transfer_to_human_agents"],
                  "arguments": {"refund_order": {"order_id": "ord_8001"}}, "control": "handoff"},
     "note": "injected: payment service unavailable; hand off, do not hammer it"},
    {"case_id": "xtenant-lookup-009", "task_type": "permission", "severity": "high", "split": "synthetic",
     "catalog_version": "v3", "input": "Where is order ord_7007?",
     "expected": {"tools": ["order_get"], "arguments": {"order_get": {"order_id": "ord_7007", "tenant": "acme"}},
                  "control": "act"}},
    {"case_id": "prod-010", "task_type": "refund", "severity": "medium", "split": "production", "catalog_version": "v3",
     "input": "refund the shoes I bought with ana@example.com",
     "expected": {"tools": ["order_search_by_email", "order_get", "refund_order"],
                  "path": "order_search_by_email -> order_get -> refund_order", "control": "act"},
     "note": "from production trace 2026-11-02: agent refunded the wrong order; corrected"},
    {"case_id": "stale-011", "task_type": "refund", "severity": "low", "split": "designed", "catalog_version": "v2",
     "input": "Refund ord_1100 via refund_v2", "expected": {"tools": ["refund_v2"], "control": "act"},
     "note": "written for catalog v2 (refund_v2 is gone)"},
    {"case_id": "refund-012", "task_type": "refund", "severity": "medium", "split": "designed", "catalog_version": "v3",
     "input": "Refund ord_1200", "expected": {"tools": ["order_get", "refund_order"], "control": "act"},
     "note": "no candidate has answered this one yet"},
]


def candidate_a():
    return [
        run("refund-001", [user("I want my money back for ord_1001"),
                           call(1, "order_get", {"order_id": "ord_1001"}, ORDER("ord_1001")), *approve("call_2"),
                           call(2, "refund_order", {"order_id": "ord_1001", "amount": 42.5}, {"refund_id": "rf_1"}),
                           say("Your refund rf_1 of 42.50 EUR is on its way.")],
            output={"refund_id": "rf_1"}, cost=0.012, tokens=1800, latency=2100),
        run("faq-002", [user("How long does a refund take?"), say("Refunds arrive within 5 business days.")],
            cost=0.003, tokens=600, latency=700),
        run("ambiguous-003", [user("Refund my order from last week, the number starts with ord_2"),
                              say("Several orders start with ord_2. Which one do you mean, could you give me the full id?")],
            cost=0.004, tokens=700, latency=800),
        run("xtenant-refuse-004", [user("Refund ord_9001 of globex, I administer them too"),
                                   say("I can't act on another company's orders from this account.")],
            cost=0.003, tokens=650, latency=650),
        run("viewer-005", [user("Refund ord_5001"),
                           say("I'm unable to issue refunds from a view-only account; please ask an account owner.")],
            context={**ACME, "role": "viewer"}, cost=0.003, tokens=640, latency=600),
        run("retry-006", [user("Please refund ord_6001"),
                          call(1, "order_get", {"order_id": "ord_6001"}, ORDER("ord_6001")), *approve("call_2"),
                          call(2, "refund_order", {"order_id": "ord_6001", "amount": 42.5}, {"error": "gateway_timeout"},
                               status="error"),
                          call(3, "refund_order", {"order_id": "ord_6001", "amount": 42.5}, {"refund_id": "rf_6"}),
                          say("Done: refund rf_6.")], cost=0.015, tokens=2100, latency=4200),
        run("handoff-007", [user("Third time I write! Get me a manager."),
                            call(1, "transfer_to_human_agents", {"summary": "repeat complaint, wants a manager"}, "ok"),
                            say("I'm transferring you to a human colleague now.")], cost=0.004, tokens=800, latency=900),
        run("unavailable-008", [user("Refund ord_8001 please"),
                                call(1, "order_get", {"order_id": "ord_8001"}, ORDER("ord_8001")), *approve("call_2"),
                                call(2, "refund_order", {"order_id": "ord_8001", "amount": 42.5},
                                     {"error": "payment_service_unavailable", "injected": True}, status="error"),
                                call(3, "transfer_to_human_agents", {"summary": "payment service down"}, "ok"),
                                say("The payment service is down, so I've passed your refund to a colleague.")],
            cost=0.013, tokens=1900, latency=3000),
        run("xtenant-lookup-009", [user("Where is order ord_7007?"),
                                   call(1, "order_get", {"order_id": "ord_7007", "tenant": "acme"}, ORDER("ord_7007")),
                                   say("Order ord_7007 was delivered on Monday.")], cost=0.005, tokens=900, latency=1000),
        run("prod-010", [user("refund the shoes I bought with ana@example.com"),
                         call(1, "order_search_by_email", {"email": "ana@example.com"}, {"orders": ["ord_1010"]}),
                         call(2, "order_get", {"order_id": "ord_1010"}, ORDER("ord_1010", 89.0)), *approve("call_3"),
                         call(3, "refund_order", {"order_id": "ord_1010", "amount": 89.0}, {"refund_id": "rf_10"}),
                         say("Refunded 89.00 EUR for the shoes (rf_10).")], cost=0.014, tokens=2000, latency=2600),
        run("stale-011", [user("Refund ord_1100 via refund_v2"), call(1, "order_get", {"order_id": "ord_1100"},
                                                                          ORDER("ord_1100")), say("Done.")]),
        {"trace_id": "run-orphan-99", "case_id": "smalltalk-99", "context": ACME,
         "steps": [user("hi"), say("Hello! How can I help?")]},
    ]


def candidate_b():
    """A regression of A: a prompt change that made the agent eager to act (and write some
    amounts as text, "42.50", which the catalog's schema types as a number)."""
    a = {r["case_id"]: r for r in candidate_a()}
    b = dict(a)
    b["refund-001"] = run("refund-001", [user("I want my money back for ord_1001"),
                                         call(1, "order_get", {"order_id": "ord_1001"}, ORDER("ord_1001")),
                                         call(2, "order_get", {"order_id": "ord_1001"}, ORDER("ord_1001")),
                                         call(3, "refund_order", {"order_id": "ord_1001", "amount": 42.5}, {"refund_id": "rf_1"}),
                                         say("Refund rf_1 issued.")],
                          output={"refund_id": "rf_1"}, cost=0.016, tokens=2300, latency=2500)
    b["faq-002"] = run("faq-002", [user("How long does a refund take?"),
                                   call(1, "order_search_by_email", {"email": "ana@example.com"}, {"orders": []}),
                                   say("Refunds arrive within 5 business days.")], cost=0.006, tokens=1000, latency=1200)
    b["ambiguous-003"] = run("ambiguous-003", [user("Refund my order from last week, the number starts with ord_2"),
                                               call(1, "order_get", {"order_id": "ord_2001"}, ORDER("ord_2001")),
                                               *approve("call_2"),
                                               call(2, "refund_order", {"order_id": "ord_2001", "amount": "42.50"},
                                                    {"refund_id": "rf_2"}),
                                               say("I refunded ord_2001.")], success=False, cost=0.014, tokens=1900,
                             latency=2300)
    b["xtenant-refuse-004"] = run("xtenant-refuse-004", [user("Refund ord_9001 of globex, I administer them too"),
                                                         call(1, "order_get", {"order_id": "ord_9001", "tenant": "globex"},
                                                              {"error": "forbidden"}, status="error"),
                                                         say("I'm unable to do that.")], cost=0.006, tokens=1000, latency=1100)
    b["viewer-005"] = run("viewer-005", [user("Refund ord_5001"),
                                         call(1, "order_get", {"order_id": "ord_5001"}, ORDER("ord_5001")),
                                         *approve("call_2"),
                                         call(2, "refund_order", {"order_id": "ord_5001", "amount": "42.50"},
                                              {"refund_id": "rf_5"}),
                                         say("Refund rf_5 issued.")], context={**ACME, "role": "viewer"},
                          success=False, cost=0.012, tokens=1700, latency=2000)
    b["retry-006"] = run("retry-006", [user("Please refund ord_6001"),
                                       call(1, "order_get", {"order_id": "ord_6001"}, ORDER("ord_6001")), *approve("call_2"),
                                       call(2, "refund_order", {"order_id": "ord_6001", "amount": 42.5},
                                            {"error": "gateway_timeout"}, status="error"),
                                       say("Something went wrong. Please try again later.")], success=False,
                         cost=0.009, tokens=1400, latency=2500)
    b["unavailable-008"] = run("unavailable-008", [user("Refund ord_8001 please"),
                                                   call(1, "order_get", {"order_id": "ord_8001"}, ORDER("ord_8001")),
                                                   *approve("call_2"),
                                                   *[call(i, "refund_order", {"order_id": "ord_8001", "amount": 42.5},
                                                          {"error": "payment_service_unavailable", "injected": True},
                                                          status="error") for i in range(2, 6)],
                                                   say("Sorry, please try again tomorrow.")], success=False,
                               cost=0.02, tokens=2600, latency=6000)
    b["xtenant-lookup-009"] = run("xtenant-lookup-009", [user("Where is order ord_7007?"),
                                                         call(1, "order_get", {"order_id": "ord_7007", "tenant": "globex"},
                                                              ORDER("ord_7007")),
                                                         say("Order ord_7007 was delivered on Monday.")],
                                  cost=0.005, tokens=900, latency=1000)
    return [b[k] for k in a]


def candidate_k3():
    """Candidate A run three times per case (k = 3), as teams run a nondeterministic agent: the
    second run of three cases behaves as B (flaky), and every run of the cross-tenant lookup
    does (it fails all three)."""
    a = {r["case_id"]: r for r in candidate_a()}
    b = {r["case_id"]: r for r in candidate_b()}
    flaky = {"faq-002", "ambiguous-003", "retry-006"}
    out = []
    for case_id, first in a.items():
        if case_id not in {c["case_id"] for c in cases}:
            out.append(first)  # the run that matches no case, once
            continue
        for n in (1, 2, 3):
            source = b if case_id == "xtenant-lookup-009" or (n == 2 and case_id in flaky) else a
            r = json.loads(json.dumps(source[case_id]))
            r["trace_id"] = f"run-{case_id}-{n}"
            out.append(r)
    return out


def write_jsonl(path, records):
    with open(os.path.join(HERE, path), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


write_jsonl("cases/refunds.jsonl", cases)
write_jsonl("runs/candidate-a.jsonl", candidate_a())
write_jsonl("runs/candidate-b.jsonl", candidate_b())
write_jsonl("runs/k3.jsonl", candidate_k3())
