#!/usr/bin/env python3
"""A deterministic stand-in for a semantic grader: was the agent's last message helpful?
Reads {"grader", "case", "run", "fixture"} on standard input and writes one line
{"score", "pass", "reason"}. Half a point for naming the order the customer asked about,
half a point for saying what happens next. (docs/eval.md shows how to put an LLM judge here.)"""
import json
import re
import sys

doc = json.load(sys.stdin)
asked = set(re.findall(r"ord_\d+", doc["case"].get("input", "")))
last = ""
for step in doc["run"]["steps"]:
    if step.get("type") in ("assistant_message", "final_answer"):
        last = step.get("content", "")
score, why = 0.0, []
if asked & set(re.findall(r"ord_\d+", last)):
    score += 0.5
    why.append("names the order")
if re.search(r"on its way|will contact you|is (delivered|shipped)", last):
    score += 0.5
    why.append("says what happens next")
print(json.dumps({"score": score, "pass": score >= 0.5, "reason": ", ".join(why) or "neither names the order nor says what is next"}))
