#!/usr/bin/env python3
"""Copies a JSON or JSONL file a producer wrote, made small and stable: WORKDIR (the temporary
directory the producer ran in) written as /work, strings over 240 characters cut to 240 and
arrays over 8 elements to 8. Every line and every key stays.

    trim.py WORKDIR SRC DST
"""
import json
import sys

WORK, SRC, DST = sys.argv[1:4]


def trim(v):
    if isinstance(v, str):
        v = v.replace(WORK, "/work")
        return v[:240]
    if isinstance(v, list):
        return [trim(x) for x in v[:8]]
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    return v


with open(SRC) as f, open(DST, "w") as out:
    if SRC.endswith(".jsonl"):
        for line in f:
            if line.strip():
                out.write(json.dumps(trim(json.loads(line)), ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        json.dump(trim(json.load(f)), out, ensure_ascii=False, indent=1)
        out.write("\n")
