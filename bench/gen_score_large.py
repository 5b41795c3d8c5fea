#!/usr/bin/env python3
"""One score record of N actual x N expected tool calls (agentevals' shape: OpenAI chat
messages, arguments as JSON strings), for the unlimited-size scoring figure (bench/score_large.sh).

The expected side is N calls over 50 tools in assistant turns of one to three parallel calls;
the actual side is the same run with changes spread over the whole record, so neither a common
prefix nor a common suffix shortens the ordering's work: about 5% of neighbouring turns
exchanged, 2% of calls dropped, 2% extra calls, 3% of calls with a changed argument. Seeded and
deterministic (Python's own random.Random).

    python3 bench/gen_score_large.py --calls 100000 -o bench/out/score_large.jsonl
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=44)
    args = ap.parse_args()
    r = random.Random(args.seed)
    tools = [f"tool_{k:02d}" for k in range(50)]
    weights = [1.0 / (k + 1) for k in range(50)]  # a few tools carry most calls

    def call():
        t = r.choices(tools, weights)[0]
        return [t, {"id": f"o{r.randrange(5000)}", "n": r.randrange(10)}]

    ref, n = [], 0
    while n < args.calls:
        size = 1 if r.random() < 0.7 else r.randint(2, 3)
        size = min(size, args.calls - n)
        ref.append([call() for _ in range(size)])
        n += size
    act = [[[c[0], dict(c[1])] for c in turn] for turn in ref]
    for k in range(len(act) - 1):
        if r.random() < 0.05:
            act[k], act[k + 1] = act[k + 1], act[k]
    out = []
    for turn in act:
        kept = [c for c in turn if r.random() >= 0.02]
        for c in kept:
            if r.random() < 0.03:
                c[1]["n"] += 1
        if kept:
            out.append(kept)
        if r.random() < 0.02 * len(turn):
            out.append([call()])

    def messages(turns):
        msgs = [{"role": "user", "content": "Process the batch."}]
        cid = 0
        for turn in turns:
            calls = []
            for name, a in turn:
                cid += 1
                calls.append({"id": f"c{cid}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(a, separators=(",", ":"))}})
            msgs.append({"role": "assistant", "content": "", "tool_calls": calls})
        msgs.append({"role": "assistant", "content": "Done."})
        return msgs

    record = {"id": "large", "outputs": messages(out), "reference_outputs": messages(ref)}
    with open(args.output, "w") as f:
        f.write(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"gen_score_large: {sum(map(len, out))} actual x {sum(map(len, ref))} expected calls -> {args.output}")


if __name__ == "__main__":
    main()
