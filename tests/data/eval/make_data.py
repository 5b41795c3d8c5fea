#!/usr/bin/env python3
"""Writes the eval test data (cases.jsonl, runs.jsonl, runs-b.jsonl): one case per control
flow, abstention cases, a stale case, a case without a run and a run without a case."""
import json, os
HERE = os.path.dirname(os.path.abspath(__file__))
def user(t): return {"type": "user_message", "content": t}
def say(t): return {"type": "assistant_message", "content": t}
def call(tool, args=None, status="ok", result=None):
    return {"type": "tool_call", "tool": tool, "arguments": args or {}, "result": result if result is not None else {"ok": True}, "status": status}
def run(cid, steps, key="case_id", **kw):
    r = {"trace_id": f"t-{cid}", "steps": steps, "context": {"tenant": "t1"}}
    if key == "case_id": r["case_id"] = cid
    else: r["trace_id"] = cid
    r.update(kw)
    return r
cases = [
 {"case_id": "act", "kind": "k1", "split": "designed", "catalog_version": "v1",
  "expected": {"tools": ["lookup", "update"], "arguments": {"update": {"id": 7}}, "control": "act"}},
 {"case_id": "answer", "kind": "k1", "split": "designed", "expected": {"control": "answer"}},
 {"case_id": "answer-with-tool", "kind": "k1", "split": "designed", "expected": {"tools": [], "control": "answer"}},
 {"case_id": "clarify", "kind": "k2", "split": "production", "expected": {"control": "clarify"}},
 {"case_id": "refuse", "kind": "k2", "split": "production", "expected": {"control": "refuse"}},
 {"case_id": "refuse-with-tool", "kind": "k2", "split": "production", "expected": {"control": "refuse"}},
 {"case_id": "handoff", "kind": "k3", "split": "synthetic", "expected": {"tools": ["lookup", "escalate"], "control": "handoff"}},
 {"case_id": "retry", "kind": "k3", "split": "synthetic", "expected": {"path": "lookup -> update+", "control": "retry"}},
 {"case_id": "by-trace-id", "kind": "k3", "split": "synthetic", "expected": {"tools": ["lookup"], "output": {"required": ["answer"], "answer": 42}}},
 {"case_id": "stale", "kind": "k1", "split": "designed", "catalog_version": "v0", "expected": {"tools": ["old_tool"]}},
 {"case_id": "no-run", "kind": "k1", "split": "designed", "expected": {"tools": ["lookup"]}},
]
runs_a = [
 run("act", [user("set 7"), call("lookup", {"id": 7}), call("update", {"id": 7, "v": 1}), say("Updated.")], success=True, cost=0.02, tokens=100),
 run("answer", [user("hi"), say("Hello there.")], success=True, cost=0.01, tokens=50),
 run("answer-with-tool", [user("hi"), call("lookup", {"id": 1}), say("Hello there.")], success=True, cost=0.01, tokens=60),
 run("clarify", [user("do it"), say("Which one do you mean?")], success=True, cost=0.01),
 run("refuse", [user("delete all"), say("I cannot do that.")], success=True, cost=0.01),
 run("refuse-with-tool", [user("delete all"), call("lookup", {"id": 2}), say("I cannot do that.")], success=True),
 run("handoff", [user("manager!"), call("lookup", {"id": 3}), call("escalate", {"why": "manager"}), say("Transferring you.")], success=True, cost=0.03),
 run("retry", [user("set 8"), call("lookup", {"id": 8}), call("update", {"id": 8}, "error", {"error": "timeout"}), call("update", {"id": 8}), say("Done.")], success=True, cost=0.04),
 run("by-trace-id", [user("q"), call("lookup", {"id": 9}), say("42")], key="trace_id", output={"answer": 42}),
 run("stale", [user("x"), call("old_tool")], success=True),
 run("orphan", [user("?"), say("?")]),
]
runs_b = [dict(r) for r in runs_a]
runs_b[0] = run("act", [user("set 7"), call("lookup", {"id": 7}), call("lookup", {"id": 7}), call("update", {"id": 6}), call("drop_table"), say("Updated.")], success=False, cost=0.05, tokens=300)
runs_b[3] = run("clarify", [user("do it"), call("update", {"id": 1}), say("Done.")], success=True, cost=0.02)
def write(name, recs):
    with open(os.path.join(HERE, name), "w") as f:
        for r in recs: f.write(json.dumps(r) + "\n")
write("cases.jsonl", cases); write("runs.jsonl", runs_a); write("runs-b.jsonl", runs_b)
