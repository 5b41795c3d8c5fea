"""A deterministic stand-in for a paraphrasing model, for `case vary`'s variation commands.

Reads {"variation", "case", "seed"} on standard input and prints {"inputs": [...]}: two
rewordings of the case's input. Each run appends a line to calls.log in the current folder
(the test counts runs to see the cache at work). With --fail it fails like an unreachable model.
"""
import json
import sys

if "--fail" in sys.argv:
    print("model endpoint unreachable", file=sys.stderr)
    sys.exit(3)
doc = json.load(sys.stdin)
text = doc["case"]["input"]
with open("calls.log", "a") as log:
    log.write(doc["case"]["case_id"] + "\n")
print(json.dumps({"inputs": [text.lower().replace("i want", "could i have"), "Please help: " + text]}))
