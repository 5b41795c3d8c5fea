#!/usr/bin/env python3
"""Builds the tau-bench retail eval slice from the shared data (100 trajectories, MIT, Sierra).

Cases come from each trajectory's info.task (expected tools and path from info.task.actions,
arguments of the state-changing actions from their kwargs); runs are the trajectories themselves,
tagged with the case_id. Usage: build_suite.py [DATA_DIR] [--count N]
DATA_DIR defaults to ../shared/data/tau-bench-retail from the repository root, then
/work/shared/data/tau-bench-retail. Writes cases/tau-retail.jsonl, runs/tau-retail.jsonl, LICENSE.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRITES = ("cancel_", "modify_", "return_", "exchange_")


def find_data(arg):
    for d in ([arg] if arg else []) + [os.path.join(ROOT, "..", "shared", "data", "tau-bench-retail"),
                                       "/work/shared/data/tau-bench-retail"]:
        if d and os.path.exists(os.path.join(d, "trajectories.json")):
            return d
    sys.exit("build_suite.py: tau-bench retail data not found (pass its directory)")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    count = 16
    if "--count" in sys.argv:
        count = int(sys.argv[sys.argv.index("--count") + 1])
    data = find_data(args[0] if args else None)
    trajs = json.load(open(os.path.join(data, "trajectories.json")))
    # A deterministic slice with both rewards: the first `count` by task_id, then trial.
    trajs = sorted(trajs, key=lambda t: (t["task_id"], t.get("trial", 0)))[:count]
    cases, runs = [], []
    for t in trajs:
        task = t["info"]["task"]
        cid = f"tau-retail-{t['task_id']}-{t.get('trial', 0)}"
        actions = task.get("actions", [])
        names = [a["name"] for a in actions]
        writes = [n for n in names if n.startswith(WRITES)]
        expected = {"tools": names, "path": " -> ".join(names),
                    "control": "handoff" if "transfer_to_human_agents" in names else "act"}
        args_by_tool = {a["name"]: a["kwargs"] for a in actions if a["name"].startswith(WRITES)}
        if args_by_tool:
            expected["arguments"] = args_by_tool
        cases.append({"case_id": cid, "task_type": writes[0] if writes else "lookup",
                      "split": "designed", "input": task.get("instruction", ""), "expected": expected,
                      "note": f"tau-bench retail task {t['task_id']} (user {task.get('user_id', '?')})"})
        runs.append({"case_id": cid, "task_id": t["task_id"], "trial": t.get("trial", 0),
                     "reward": t["reward"], "traj": t["traj"]})
    os.makedirs(os.path.join(HERE, "cases"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "runs"), exist_ok=True)
    with open(os.path.join(HERE, "cases", "tau-retail.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    with open(os.path.join(HERE, "runs", "tau-retail.jsonl"), "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")
    shutil.copy(os.path.join(data, "LICENSE"), os.path.join(HERE, "LICENSE"))
    print(f"wrote {len(cases)} cases and runs from {data}")


if __name__ == "__main__":
    main()
