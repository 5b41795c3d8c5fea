#!/usr/bin/env python3
"""Splits a rules file into one file per rule, for bench/run.sh's per-rule cost figures.

    python3 bench/split_rules.py RULES OUTDIR      # writes OUTDIR/rule-K.rules, prints "K<TAB>label"

A rule is a top-level statement, or a block (`rule NAME:` or a scope line ending in `:`) with
its indented lines. Each file keeps the `workflow` and `group` lines, so every rule compiles on
its own; OUTDIR/rule-0.rules is the trivial rule (`forbid` of a tool no trace calls), the
baseline whose time is the reading cost the other rules are measured against.
"""
import os
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    header, rules, cur = [], [], None
    for line in open(src, encoding="utf-8"):
        text = line.rstrip("\n")
        bare = text.strip()
        if not bare or bare.startswith("#"):
            continue
        if text[0] in " \t":
            if cur is not None:
                cur.append(text)
            continue
        if bare.startswith(("workflow ", "group ", "catalog ")):
            header.append(text)
            cur = None
            continue
        cur = [text]
        rules.append(cur)
    with open(os.path.join(out, "rule-0.rules"), "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n\nforbid no_such_tool_in_any_trace\n")
    print("0\t(trivial: forbid a tool no trace calls)")
    for k, body in enumerate(rules, 1):
        with open(os.path.join(out, f"rule-{k}.rules"), "w", encoding="utf-8") as f:
            f.write("\n".join(header) + "\n\n" + "\n".join(body) + "\n")
        first = body[0].strip()
        label = first if not first.endswith(":") or len(body) == 1 else f"{first} {body[1].strip()}"
        print(f"{k}\t{label}")


if __name__ == "__main__":
    main()
