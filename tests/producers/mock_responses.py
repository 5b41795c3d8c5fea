#!/usr/bin/env python3
"""A stand-in for the OpenAI Responses API on 127.0.0.1, for driving real agent software
(the Codex CLI, the OpenAI Agents SDK) without a network. The model it plays follows a
plan, a JSON file holding a list of turns, each a list of output items (as the API writes
them: `message`, `function_call`, `custom_tool_call`, `reasoning`, …): a request is answered
with the turn whose number is the count of tool outputs (`*_output` items) in its input, the
last turn once the plan runs out. Items get ids (and calls a `status`) when the plan gives
none; a function call whose "name" is a list takes the first name the request offers as a
tool. Every request is appended to the log file as one JSON line.

    mock_responses.py PORT_FILE LOG_FILE PLAN_FILE

Binds an ephemeral port, writes it to PORT_FILE, and serves until killed (or 300 s pass).
Answers POST …/responses (as server-sent events when the request asks for `stream`, else one
JSON response object); GET …/models gets an empty list; anything else is 404.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE, PLAN_FILE = sys.argv[1:4]
PLAN = json.load(open(PLAN_FILE))
LOCK = threading.Lock()
SERIAL = [0]


def outputs_so_far(body):
    items = body.get("input")
    if not isinstance(items, list):
        return 0
    return sum(1 for i in items if isinstance(i, dict) and str(i.get("type", "")).endswith("_output"))


def tool_names(body):
    names = []
    for t in body.get("tools") or []:
        names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))
    return names


def turn(body, serial):
    items = json.loads(json.dumps(PLAN[min(outputs_so_far(body), len(PLAN) - 1)]))
    offered = tool_names(body)
    for k, item in enumerate(items):
        item.setdefault("id", f"{item['type'][:2]}_mock_{serial:03d}_{k}")
        if isinstance(item.get("name"), list):
            item["name"] = next((n for n in item["name"] if n in offered), item["name"][0])
        if item["type"] in ("function_call", "custom_tool_call", "message"):
            item.setdefault("status", "completed")
    return items


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.split("?")[0].endswith("/models"):
            return self.send(200, {"object": "list", "data": [], "models": []})
        self.send(404, {"error": {"message": self.path}})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with LOCK, open(LOG_FILE, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
            SERIAL[0] += 1
            serial = SERIAL[0]
        if not self.path.split("?")[0].endswith("/responses"):
            return self.send(404, {"error": {"message": self.path}})
        items = turn(body, serial)
        usage = {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 30,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 150}
        response = {"id": f"resp_mock_{serial:03d}", "object": "response", "created_at": int(time.time()),
                    "status": "completed", "model": body.get("model", "gpt-mock"), "output": items, "usage": usage,
                    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
                    "incomplete_details": None, "instructions": None, "metadata": {}, "temperature": 1.0,
                    "top_p": 1.0, "text": {"format": {"type": "text"}}, "truncation": "disabled"}
        if not body.get("stream"):
            return self.send(200, response)
        events = [("response.created", {"type": "response.created", "response": dict(response, status="in_progress", output=[])})]
        for k, item in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": k, "item": item}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": k, "item": item}))
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        data = "".join(f"event: {e}\ndata: {json.dumps(dict(d, sequence_number=n))}\n\n"
                       for n, (e, d) in enumerate(events)).encode()
        self.send(200, data, "text/event-stream")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    threading.Timer(300, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
