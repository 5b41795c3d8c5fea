#!/usr/bin/env python3
"""A stand-in for the Anthropic Messages API on 127.0.0.1, for driving the Claude Code CLI
without a network: the model it plays asks for the Bash commands given on the command line,
one per turn, then ends with a text answer. Every request is appended to the log file as one
JSON line (its path and body), so the test can see what the CLI sent back (the tool results).

    mock_anthropic.py PORT_FILE LOG_FILE [--subagent] COMMAND...

With --subagent the model first hands the work to a subagent (a call of the CLI's
subagent tool, `Agent` or `Task`, whichever the request offers); the subagent (a request
whose tools hold Bash but not that tool) asks for the commands, then reports back, and the
main conversation ends with a text answer once the subagent's result is in.

Binds an ephemeral port, writes it to PORT_FILE, and serves until killed (or 120 s pass).
Answers POST /v1/messages (streamed as server-sent events when the request asks for
`stream`, else one JSON message) and POST /v1/messages/count_tokens; anything else is 404.
A request without Bash among its tools (the CLI's side requests: titles, summaries) gets
a short text answer.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE, COMMANDS = sys.argv[1], sys.argv[2], sys.argv[3:]
SUBAGENT = bool(COMMANDS) and COMMANDS[0] == "--subagent"
if SUBAGENT:
    COMMANDS = COMMANDS[1:]
LOCK = threading.Lock()
SERIAL = [0]  # the number of the last message id handed out


def tool_results(body):
    """How many tool results the conversation holds so far."""
    n = 0
    for m in body.get("messages", []):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def first_message(body):
    """The text of the conversation's first message (a subagent's holds its prompt)."""
    for m in body.get("messages", [])[:1]:
        c = m.get("content")
        return c if isinstance(c, str) else json.dumps(c)
    return ""


SUBAGENT_PROMPT = "Run these shell commands, one at a time: "


def answer(body):
    """The content blocks and stop reason of the model's next message."""
    tools = [t.get("name") for t in body.get("tools") or []]
    if "Bash" not in tools:
        return [{"type": "text", "text": "ok"}], "end_turn"
    done = tool_results(body)
    delegate = next((t for t in ("Agent", "Task") if t in tools), None)
    if SUBAGENT and delegate and SUBAGENT_PROMPT not in first_message(body):  # the main conversation: one subagent call, then the answer
        if done == 0:
            call = {"type": "tool_use", "id": "toolu_mock_agent", "name": delegate,
                    "input": {"description": "Run the commands", "subagent_type": "general-purpose",
                              "prompt": SUBAGENT_PROMPT + "; ".join(COMMANDS), "run_in_background": False}}
            return [call], "tool_use"
        return [{"type": "text", "text": "The subagent ran the commands."}], "end_turn"
    if done < len(COMMANDS):
        call = {"type": "tool_use", "id": f"toolu_mock_{'sub_' if SUBAGENT else ''}{done:02d}", "name": "Bash",
                "input": {"command": COMMANDS[done], "description": "run a command"}}
        return [call], "tool_use"
    return [{"type": "text", "text": "Ran them all." if SUBAGENT else "Done."}], "end_turn"


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
        self.send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with LOCK, open(LOG_FILE, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
            SERIAL[0] += 1
            serial = SERIAL[0]
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            return self.send(200, {"input_tokens": 10})
        if path != "/v1/messages":
            return self.send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
        blocks, stop = answer(body)
        model = body.get("model", "claude-mock")
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {"id": f"msg_mock_{serial:03d}", "type": "message", "role": "assistant", "model": model, "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            message.update(content=blocks, stop_reason=stop)
            return self.send(200, message)
        events = [("message_start", {"type": "message_start", "message": message})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": dict(b, input={})}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(b["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        events.append(("message_stop", {"type": "message_stop"}))
        data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
        self.send(200, data, "text/event-stream")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    threading.Timer(120, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
