#!/usr/bin/env python3
# Compares per-record verdicts of `trajcheck score --format jsonl` with the Node peers' verdicts
# (bench/node/driver.mjs) and writes a Markdown section listing disagreements with record ids.
import argparse
import json
import sys

MODES = ("strict", "unordered", "subset", "superset")
SHOW = 15  # ids listed per disagreement kind


def load(path, key):
    rows = {}
    if not path:
        return rows
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            if "id" in rec:
                rows[str(rec["id"])] = rec
            else:  # a rejected record: {"record": "file:line", "error": …}
                rows.setdefault("__rejected__", []).append(rec)
    return rows


def trajcheck_views(rec):
    """trajcheck's verdicts under the peers' names (promptfoo's are approximations)."""
    match = rec.get("match") or {}
    views = {m: match.get(m) for m in MODES}
    # promptfoo tool-used: every expected tool name occurs among the actual calls.
    views["tool_used"] = not rec.get("missing")
    # promptfoo tool-sequence (in order): the expected names are a subsequence of the actual
    # ones, i.e. LCS(expected, actual) = len(expected): ordering 1.0.
    ordering = rec.get("ordering")
    views["tool_sequence"] = None if ordering is None else abs(ordering - 1.0) < 1e-9
    # promptfoo tool-args-match (exact), one assertion per expected call, all must pass: every
    # expected call has an actual call with the same name and equal arguments (not necessarily
    # distinct) — closest to superset with exact arguments.
    views["tool_args_match"] = match.get("superset")
    return views


def compare(tc, peer, keys, title, out):
    ids = [i for i in peer if i != "__rejected__"]
    out.append(f"### trajcheck score vs {title}\n")
    out.append(f"{len(ids)} records judged by {title}; {len([i for i in ids if i in tc])} also scored by trajcheck.\n")
    out.append("| verdict | agree | trajcheck true, peer false | trajcheck false, peer true | missing on one side | example ids |")
    out.append("|---|---|---|---|---|---|")
    total_dis = 0
    for key, label in keys:
        agree = tf = ft = missing = 0
        examples = []
        for i in ids:
            p = peer[i].get(key)
            t = trajcheck_views(tc[i]).get(label) if i in tc else None
            if p is None or t is None:
                missing += 1
            elif bool(p) == bool(t):
                agree += 1
            else:
                if t:
                    tf += 1
                else:
                    ft += 1
                if len(examples) < SHOW:
                    examples.append(i)
        total_dis += tf + ft
        name = key if key == label else f"{key} ~ {label}"
        out.append(f"| {name} | {agree} | {tf} | {ft} | {missing} | {', '.join(examples)} |")
    out.append("")
    return total_dis


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trajcheck")
    ap.add_argument("--agentevals")
    ap.add_argument("--promptfoo")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    tc = load(a.trajcheck, "id")
    ae = load(a.agentevals, "id")
    pf = load(a.promptfoo, "id")
    out = ["## Verdict agreement\n"]
    if not tc:
        out.append("No `trajcheck score` output in this run (the command is not available yet), so the peers' "
                   "verdicts could not be compared. Peer verdict counts:\n")
        for name, rows in (("agentevals", ae), ("promptfoo", pf)):
            ids = [i for i in rows if i != "__rejected__"]
            if not ids:
                continue
            keys = [k for k in rows[ids[0]] if k != "id"]
            counts = ", ".join(f"{k} {sum(1 for i in ids if rows[i].get(k) is True)}/{len(ids)}" for k in keys)
            out.append(f"- {name}: {counts}")
        out.append("")
    else:
        rejected = tc.pop("__rejected__", [])
        if rejected:
            out.append(f"trajcheck rejected {len(rejected)} records (first: {rejected[0]}).\n")
        if ae:
            compare(tc, ae, [(m, m) for m in MODES], "agentevals (toolArgsMatchMode exact)", out)
            out.append("Same definitions on both sides, except that trajcheck pairs calls optimally where agentevals "
                       "pairs greedily, and agentevals' strict mode also compares the message list (roles, number "
                       "of messages), where trajcheck compares tool calls only.\n")
        if pf:
            compare(tc, pf, [("tool_used", "tool_used"), ("tool_sequence", "tool_sequence"),
                             ("tool_args_match", "tool_args_match")], "promptfoo", out)
            out.append("promptfoo's assertions are not the same measures: tool-used ~ no `missing` tool; "
                       "tool-sequence (in order) ~ `ordering` = 1; tool-args-match ~ `match.superset` (promptfoo "
                       "lets one actual call satisfy several expected calls).\n")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main())
