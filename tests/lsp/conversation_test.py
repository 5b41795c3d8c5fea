#!/usr/bin/python3
"""A conversation with the real `trajcheck lsp`, as an editor would hold it.

usage: conversation_test.py TRAJCHECK_BINARY

Starts the server on pipes, speaks LSP (Content-Length framed JSON-RPC), and checks every
answer: lifecycle, diagnostics as the document is edited (debounced), completion, hover,
definition, references, document symbols, formatting, a suite naming broken rules, and
malformed input (bad JSON, bad headers, unknown methods, bad params) that must be answered
without the server stopping. Python 3 standard library only.
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BIN = None
TIMEOUT = float(os.environ.get("TRAJCHECK_LSP_TIMEOUT", "10"))  # seconds per awaited answer


def uri_of(path):
    return "file://" + path


class Client:
    def __init__(self, *args, cwd=None):
        self.proc = subprocess.Popen([BIN, "lsp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd)
        self.messages = queue.Queue()
        self.pending = []  # messages received but not yet consumed
        self.next_id = 1
        self.stderr = b""
        self.reader_thread = threading.Thread(target=self._read, daemon=True)
        self.reader_thread.start()
        self.stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_thread.start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message):
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, id=None):
        if id is None:
            id = self.next_id
            self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == id and "method" not in m)

    def wait(self, predicate, timeout=TIMEOUT):
        for i, m in enumerate(self.pending):
            if predicate(m):
                return self.pending.pop(i)
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("timed out waiting for a message; pending: %r" % self.pending[-5:])
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise AssertionError("the server closed its output")
            if predicate(m):
                return m
            self.pending.append(m)

    def diagnostics(self, uri, version=None, timeout=TIMEOUT):
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri
                      and (version is None or m["params"].get("version") == version), timeout)
        return m["params"]["diagnostics"]

    def drain_diagnostics(self, uri, wait=0.5):
        """Every publication for `uri` that arrives within `wait` seconds (and those pending)."""
        got = [m for m in self.pending if m.get("method") == "textDocument/publishDiagnostics"
               and m["params"]["uri"] == uri]
        self.pending = [m for m in self.pending if m not in got]
        end = time.time() + wait
        while time.time() < end:
            try:
                m = self.messages.get(timeout=max(0.01, end - time.time()))
            except queue.Empty:
                break
            if m is None:
                break
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                got.append(m)
            else:
                self.pending.append(m)
        return got

    def initialize(self, **options):
        r = self.request("initialize", {
            "processId": os.getpid(), "rootUri": options.pop("root_uri", None),
            "capabilities": {"textDocument": {"completion": {"completionItem": {"snippetSupport": True}}}},
            "initializationOptions": options})
        self.notify("initialized", {})
        return r

    def finish(self):
        """Closes our end of the input, waits for the server and returns its exit status."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        status = self.proc.wait(timeout=TIMEOUT)
        self.stderr_thread.join(TIMEOUT)
        self.reader_thread.join(TIMEOUT)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return status


def pos(text, needle, delta=0, nth=0):
    """The LSP position (UTF-16) of the nth occurrence of `needle` in `text`, plus delta characters."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += delta
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return {"line": line, "character": len(text[start:at].encode("utf-16-le")) // 2}


CATALOG = {"version": "v3", "tools": [
    {"name": "customer_get", "effect": "read",
     "arguments": {"type": "object", "properties": {"customer_id": {"type": "string"}}}},
    {"name": "order_get", "effect": "read",
     "arguments": {"type": "object", "properties": {"order_id": {"type": "string"}, "tenant": {"type": "string"}}}},
    {"name": "order_list", "effect": "read"},
    {"name": "refund_order", "effect": "write",
     "arguments": {"type": "object", "properties": {
         "order_id": {"type": "string", "description": "the order to refund"},
         "amount": {"type": "number"},
         "items": {"type": "array", "items": {"type": "object", "properties": {"item_id": {"type": "string"}}}}},
         "required": ["order_id"]}},
]}

RULES = """# refunds — a rules file as a person writes it
catalog "tools.json"
group lookup = customer_get | order_get   # reads before writes
alias fetch_order = order_get
group unused = order_list

rule refund_needs_lookup [critical]:
    lookup precedes refund_order
    message "refund without a lookup"

forbid refund_order where arguments.amount > 1000
after lokup: forbid refund_order
"""


class Conversation(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="trajcheck-lsp-")
        with open(os.path.join(self.dir, "tools.json"), "w") as f:
            json.dump(CATALOG, f, indent=1)
        self.rules_path = os.path.join(self.dir, "refunds.rules")
        with open(self.rules_path, "w") as f:
            f.write(RULES)
        self.uri = uri_of(self.rules_path)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def open(self, c, text, uri=None, version=1, language="trajcheck-rules"):
        c.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri or self.uri, "languageId": language, "version": version, "text": text}})

    def test_lifecycle_and_errors(self):
        c = Client("--debounce-ms", "50")
        # Before initialize: requests are refused with ServerNotInitialized.
        r = c.request("textDocument/hover", {"textDocument": {"uri": self.uri}, "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32002)
        r = c.initialize()
        caps = r["result"]["capabilities"]
        for cap in ("hoverProvider", "definitionProvider", "referencesProvider", "documentSymbolProvider",
                    "documentFormattingProvider", "completionProvider"):
            self.assertIn(cap, caps)
        self.assertEqual(caps["textDocumentSync"]["change"], 2)
        self.assertEqual(caps["positionEncoding"], "utf-16")
        # Malformed JSON with a recoverable id: a parse error for that id.
        body = b'{"jsonrpc": "2.0", "id": 77, "method": "textDocument/hover", "params": {'
        c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        r = c.wait(lambda m: m.get("id") == 77)
        self.assertEqual(r["error"]["code"], -32700)
        # Malformed JSON without an id: a parse error with id null.
        body = b"not json at all"
        c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        r = c.wait(lambda m: "error" in m and m.get("id") is None)
        self.assertEqual(r["error"]["code"], -32700)
        # A header block without Content-Length: skipped, the next message still answered.
        c.send_raw(b"Content-Type: application/json\r\n\r\n")
        # A malformed Content-Length: its body (of unknown length) is skipped up to the next
        # header, answered with a parse error under its id, and the messages after it still answered.
        # (Where that body ends is known when the next header arrives: the answer comes then.)
        body = b'{"jsonrpc": "2.0", "id": 78, "method": "textDocument/hover", "params": {}}'
        c.send_raw(b"Content-Length: 7x\r\n\r\n" + body)
        r = c.request("textDocument/frobnicate", {}, id=79)
        self.assertEqual(r["error"]["code"], -32601)
        r = c.wait(lambda m: m.get("id") == 78)
        self.assertEqual(r["error"]["code"], -32700)
        # Valid JSON that is not a request object.
        c.send({"jsonrpc": "2.0", "id": 5})
        r = c.wait(lambda m: m.get("id") == 5)
        self.assertEqual(r["error"]["code"], -32600)
        c.send([1, 2])
        r = c.wait(lambda m: "error" in m and m.get("id") is None and m["error"]["code"] == -32600)
        # Unknown method, missing params, wrong types.
        r = c.request("textDocument/frobnicate", {})
        self.assertEqual(r["error"]["code"], -32601)
        r = c.request("textDocument/hover", {"position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32602)
        r = c.request("textDocument/hover", {"textDocument": {"uri": 7}, "position": {}})
        self.assertEqual(r["error"]["code"], -32602)
        for bad in ({"line": -1, "character": 0}, {"line": 0.5, "character": 0}, {"line": 1e30, "character": 0},
                    {"line": "0", "character": 0}):
            self.open(c, "forbid a\n", uri="untitled:p.rules")
            r = c.request("textDocument/hover", {"textDocument": {"uri": "untitled:p.rules"}, "position": bad})
            self.assertEqual(r["error"]["code"], -32602, bad)
        # A request for a document that is not open: an empty answer, not an error.
        r = c.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.rules"},
                                             "position": {"line": 0, "character": 0}})
        self.assertIsNone(r["result"])
        # Unknown notifications and a bad didOpen are ignored (logged), the server goes on.
        c.notify("workspace/somethingNew", {"x": 1})
        c.notify("textDocument/didOpen", {"textDocument": {"uri": self.uri}})
        c.notify("textDocument/didChange", {"textDocument": {"uri": "file:///not-open.rules"}, "contentChanges": []})
        r = c.request("shutdown", None)
        self.assertIn("result", r)
        self.assertIsNone(r["result"])
        r = c.request("textDocument/hover", {"textDocument": {"uri": self.uri}, "position": {"line": 0, "character": 0}})
        self.assertEqual(r["error"]["code"], -32600)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)
        self.assertIn(b"unreadable message: a message without a Content-Length header", c.stderr)
        self.assertIn(b"ignored notification workspace/somethingNew", c.stderr)

    def test_exit_without_shutdown(self):
        c = Client()
        c.initialize()
        c.notify("exit", None)
        self.assertEqual(c.finish(), 1)
        c = Client()
        c.initialize()
        self.assertEqual(c.finish(), 1)  # the input ended without shutdown

    def test_editing_session(self):
        c = Client("--debounce-ms", "300")
        c.initialize()
        text = RULES
        self.open(c, text)
        diags = c.diagnostics(self.uri, 1)
        by_code = {d["code"]: d for d in diags}
        self.assertIn("E002", by_code, diags)  # unknown group 'lokup'
        e002 = by_code["E002"]
        self.assertEqual(e002["severity"], 1)
        self.assertEqual(e002["range"]["start"], pos(text, "lokup"))
        self.assertEqual(e002["range"]["end"], pos(text, "lokup", 5))
        self.assertTrue(any(r["message"].startswith("did you mean") for r in e002.get("relatedInformation", [])), e002)
        self.assertEqual(by_code["W002"]["severity"], 2)  # the group no rule uses

        # Mid-edit: a half-typed statement is an E001 at its line; the rest still has symbols.
        half = text + "approval precedes \n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 2},
                                            "contentChanges": [{"text": half}]})
        diags = c.diagnostics(self.uri, 2)
        e001 = [d for d in diags if d["code"] == "E001"]
        self.assertEqual(len(e001), 1, diags)
        self.assertEqual(e001[0]["range"]["start"]["line"], half.count("\n") - 1)
        syms = c.request("textDocument/documentSymbol", {"textDocument": {"uri": self.uri}})["result"]
        names = [s["name"] for s in syms]
        self.assertIn("refund_needs_lookup", names)
        self.assertIn("group lookup", names)
        rule = next(s for s in syms if s["name"] == "refund_needs_lookup")
        self.assertEqual(rule["detail"], "critical")
        self.assertEqual([k["name"] for k in rule["children"]], ["lookup precedes refund_order"])

        # Debounce: a burst of incremental edits publishes once, for the last version.
        edits = ["a", "p", "p"]
        line = half.count("\n") - 1
        col = len("approval precedes ")
        burst = b""  # one write, as an editor's client sends queued changes
        for i, ch in enumerate(edits):
            body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": self.uri, "version": 3 + i},
                "contentChanges": [{"range": {"start": {"line": line, "character": col + i},
                                              "end": {"line": line, "character": col + i}}, "text": ch}]}}).encode()
            burst += b"Content-Length: %d\r\n\r\n" % len(body) + body
        c.send_raw(burst)
        got = c.drain_diagnostics(self.uri, wait=1.5)
        self.assertEqual([m["params"]["version"] for m in got], [5], got)
        text = half.replace("approval precedes \n", "approval precedes app\n")
        self.assertFalse(any(d["code"] == "E001" for d in got[0]["params"]["diagnostics"]))

        # Fix the typo with an incremental edit: E002 is gone.
        start = pos(text, "lokup")
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 6}, "contentChanges": [
            {"range": {"start": start, "end": pos(text, "lokup", 5)}, "text": "lookup"}]})
        text = text.replace("lokup", "lookup")
        diags = c.diagnostics(self.uri, 6)
        self.assertNotIn("E002", [d["code"] for d in diags])

        doc = {"uri": self.uri}
        # Completion: argument paths from the catalog schema after `arguments.`.
        probe = text + "forbid refund_order where arguments.\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 7},
                                            "contentChanges": [{"text": probe}]})
        at = pos(probe, "where arguments.", len("where arguments."), 0)
        at = pos(probe, "arguments.\n", len("arguments."))
        items = c.request("textDocument/completion", {"textDocument": doc, "position": at})["result"]
        labels = {i["label"] for i in items}
        self.assertEqual(labels, {"order_id", "amount", "items"}, labels)
        # …and nested: arguments.items[0].
        probe2 = text + "forbid refund_order where arguments.items[0].\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 8},
                                            "contentChanges": [{"text": probe2}]})
        items = c.request("textDocument/completion", {"textDocument": doc,
                                                      "position": pos(probe2, "[0].\n", 4)})["result"]
        self.assertEqual({i["label"] for i in items}, {"item_id"})
        # At the start of a line: statement templates (snippets), tools, groups, aliases.
        probe3 = text + "fo\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 9},
                                            "contentChanges": [{"text": probe3}]})
        items = c.request("textDocument/completion", {"textDocument": doc,
                                                      "position": pos(probe3, "fo\n", 2)})["result"]
        by_label = {i["label"]: i for i in items}
        self.assertEqual(by_label["forbid"]["insertTextFormat"], 2)
        self.assertEqual(by_label["forbid"]["insertText"], "forbid ${1:pattern}")
        self.assertIn("refund_order", by_label)
        self.assertIn("write", by_label["refund_order"]["detail"])
        self.assertIn("lookup", by_label)
        self.assertIn("fetch_order", by_label)
        self.assertIn("order_*", by_label)  # a glob over catalog tools
        # Mid-line: the statement keywords.
        probe4 = text + "lookup pre\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 10},
                                            "contentChanges": [{"text": probe4}]})
        items = c.request("textDocument/completion", {"textDocument": doc,
                                                      "position": pos(probe4, "lookup pre\n", 10)})["result"]
        self.assertIn("precedes", {i["label"] for i in items})
        self.assertIn("is never followed by", {i["label"] for i in items})
        # After `contains $`: the variables the line binds (a mention looks for one of them).
        probe5 = text + "order_get where result.id == $o is never followed by notify where arguments.body contains $\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 11},
                                            "contentChanges": [{"text": probe5}]})
        items = c.request("textDocument/completion", {"textDocument": doc,
                                                      "position": pos(probe5, "contains $\n", 10)})["result"]
        self.assertEqual({i["label"] for i in items}, {"$o"})
        # In seen(PATH, …) after the comma and after `|`: the sources.
        probe6 = text + "forbid refund_order where not seen(arguments.order_id, user | \n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 12},
                                            "contentChanges": [{"text": probe6}]})
        for needle in ("order_id, ", "user | "):
            items = c.request("textDocument/completion", {"textDocument": doc,
                                                          "position": pos(probe6, needle, len(needle))})["result"]
            self.assertEqual({i["label"] for i in items}, {"user", "result", "context"}, needle)
        # Hover on seen(…): where it looks, as written.
        probe7 = text + "forbid refund_order where not seen(arguments.order_id, user | context)\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 13},
                                            "contentChanges": [{"text": probe7}]})
        c.diagnostics(self.uri, 13)
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(probe7, "seen(arguments.order_id, user", 2)})["result"]
        value = h["contents"]["value"]
        self.assertIn("**seen**", value)
        self.assertIn("`user`", value)
        self.assertIn("`context`", value)
        self.assertNotIn("`result`", value)
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 14},
                                            "contentChanges": [{"text": text}]})

        # Hover: a tool (catalog entry), a statement (its meaning), a group (its definition).
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(text, "refund_order", 2)})["result"]
        value = h["contents"]["value"]
        self.assertIn("effect: write", value)
        self.assertIn("arguments.order_id", value)
        self.assertIn("the order to refund", value)
        self.assertEqual(h["range"]["start"], pos(text, "refund_order"))
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(text, "precedes", 2)})["result"]
        self.assertIn("violated when some `refund_order` has no `lookup` anywhere before it", h["contents"]["value"])
        self.assertIn("Vacuous", h["contents"]["value"])
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(text, "lookup precedes", 1)})["result"]
        self.assertIn("**group** `lookup` = `customer_get | order_get`", h["contents"]["value"])
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(text, "after lookup", 1)})["result"]
        self.assertIn("first `lookup`", h["contents"]["value"])
        h = c.request("textDocument/hover", {"textDocument": doc, "position": pos(text, "fetch_order", 1)})["result"]
        self.assertIn("**alias** `fetch_order` = `order_get`", h["contents"]["value"])
        h = c.request("textDocument/hover", {"textDocument": doc, "position": {"line": 0, "character": 3}})["result"]
        self.assertIsNone(h)  # a comment

        # Definition: a group use -> its declaration; a tool -> its catalog entry; the catalog line -> the file.
        r = c.request("textDocument/definition", {"textDocument": doc, "position": pos(text, "lookup precedes", 1)})["result"]
        self.assertEqual(r, [{"uri": self.uri, "range": {"start": pos(text, "lookup"), "end": pos(text, "lookup", 6)}}])
        r = c.request("textDocument/definition", {"textDocument": doc, "position": pos(text, "refund_order", 1)})["result"]
        catalog_uri = uri_of(os.path.join(self.dir, "tools.json"))
        self.assertEqual(r[0]["uri"], catalog_uri)
        with open(os.path.join(self.dir, "tools.json")) as f:
            catalog_text = f.read()
        self.assertEqual(r[0]["range"]["start"], pos(catalog_text, '"refund_order"'))
        r = c.request("textDocument/definition", {"textDocument": doc, "position": pos(text, "tools.json", 1)})["result"]
        self.assertEqual(r[0]["uri"], catalog_uri)
        # References: the declaration and every use.
        r = c.request("textDocument/references", {"textDocument": doc, "position": pos(text, "lookup", 0),
                                                  "context": {"includeDeclaration": True}})["result"]
        self.assertEqual([x["range"]["start"] for x in r], [pos(text, "lookup"), pos(text, "lookup precedes"), pos(text, "after lookup", 6)])
        r = c.request("textDocument/references", {"textDocument": doc, "position": pos(text, "lookup", 0),
                                                  "context": {"includeDeclaration": False}})["result"]
        self.assertEqual(len(r), 2)
        r = c.request("textDocument/references", {"textDocument": doc, "position": pos(text, "refund_order", 0),
                                                  "context": {"includeDeclaration": True}})["result"]
        self.assertEqual(len(r), 3)

        # Formatting: the same text as `trajcheck fmt`.
        messy = text.replace("lookup precedes refund_order", "lookup   precedes    refund_order") + "never  order_list\n"
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 15},
                                            "contentChanges": [{"text": messy}]})
        edits = c.request("textDocument/formatting", {"textDocument": doc,
                                                      "options": {"tabSize": 4, "insertSpaces": True}})["result"]
        with open(self.rules_path, "w") as f:
            f.write(messy)
        expected = subprocess.run([BIN, "fmt", self.rules_path], capture_output=True, text=True, check=True).stdout
        self.assertEqual(len(edits), 1)
        self.assertEqual(edits[0]["newText"], expected)
        self.assertIn("forbid order_list", expected)
        self.assertEqual(edits[0]["range"]["start"], {"line": 0, "character": 0})
        # A file with errors is left alone.
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 16},
                                            "contentChanges": [{"text": messy + "forbid (\n"}]})
        edits = c.request("textDocument/formatting", {"textDocument": doc, "options": {}})["result"]
        self.assertEqual(edits, [])

        c.notify("textDocument/didClose", {"textDocument": doc})
        closed = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == self.uri and "version" not in m["params"])
        self.assertEqual(closed["params"]["diagnostics"], [])
        self.assertIsNone(c.request("shutdown", None)["result"])
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)

    def test_utf16_positions(self):
        c = Client("--debounce-ms", "0")
        c.initialize()
        text = 'workflow "réfunds 🚀"  # ünïcode\nforbid "dé🚀lete" | lokup\ngroup lookup = a\n'
        self.open(c, text)
        diags = c.diagnostics(self.uri, 1)
        e = next(d for d in diags if d["code"] == "E002")
        self.assertEqual(e["range"]["start"], pos(text, "lokup"))  # UTF-16 columns
        h = c.request("textDocument/hover", {"textDocument": {"uri": self.uri},
                                             "position": pos(text, "lokup", 2)})
        self.assertIsNotNone(h["result"])
        # An edit after the emoji, in UTF-16 units.
        start = pos(text, "lokup")
        c.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": 2}, "contentChanges": [
            {"range": {"start": start, "end": pos(text, "lokup", 5)}, "text": "lookup"}]})
        diags = c.diagnostics(self.uri, 2)
        self.assertNotIn("E002", [d["code"] for d in diags])
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)
        # A client that offers UTF-8 positions gets them: columns in bytes.
        c = Client("--debounce-ms", "0")
        r = c.request("initialize", {"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}})
        self.assertEqual(r["result"]["capabilities"]["positionEncoding"], "utf-8")
        self.open(c, text)
        e = next(d for d in c.diagnostics(self.uri, 1) if d["code"] == "E002")
        line = text.split("\n")[1]
        self.assertEqual(e["range"]["start"], {"line": 1, "character": len(line[:line.index("lokup")].encode())})
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)

    def test_suite_violation_names(self):
        """violations[NAME] names a rule or a tag of the suite's rules files: completed, and a
        name that is neither is a warning with the closest one (eval makes it an error)."""
        with open(os.path.join(self.dir, "t.rules"), "w") as f:
            f.write("rule no_cross_tenant [critical]:\n    forbid tool_call where arguments.tenant == \"x\"\n"
                    "    tag tenancy\n")
        with open(os.path.join(self.dir, "c.jsonl"), "w") as f:
            f.write('{"case_id": "a"}\n')
        suite = ('cases "c.jsonl"\nrules "t.rules"\ngate violations[no_cross_tenat] == 0\n'
                 'gate violations[tenancy] == 0\ngate violations[no_cross_tenant] == 0\ngate violations[')
        suite_uri = uri_of(os.path.join(self.dir, "v.suite"))
        c = Client("--debounce-ms", "50")
        c.initialize()
        self.open(c, suite, uri=suite_uri, language="trajcheck-suite")
        diags = [d for d in c.diagnostics(suite_uri, 1) if d["code"] == "S006"]
        self.assertEqual(len(diags), 1, diags)
        self.assertEqual(diags[0]["severity"], 2)  # a warning: a case's rules file may have it
        self.assertEqual(diags[0]["range"]["start"], pos(suite, "no_cross_tenat"))
        self.assertIn("did you mean 'no_cross_tenant'?", diags[0]["message"])
        items = c.request("textDocument/completion", {"textDocument": {"uri": suite_uri},
                                                      "position": pos(suite, "violations[", 11, nth=3)})["result"]
        labels = {i["label"] for i in items}
        self.assertTrue({"critical", "no_cross_tenant", "tenancy"} <= labels, labels)
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)

    def test_suite(self):
        rules_dir = os.path.join(self.dir, "rules")
        os.mkdir(rules_dir)
        broken = os.path.join(rules_dir, "broken.rules")
        with open(broken, "w") as f:
            f.write("rule r:\n    order_get at mostt 1\n")
        os.mkdir(os.path.join(self.dir, "cases"))
        with open(os.path.join(self.dir, "cases", "a.jsonl"), "w") as f:
            f.write('{"case_id": "a"}\n')
        suite = ('suite "s"\ncases "cases/*.jsonl"\nrules "rules/*.rules", "missing/*.rules"\n'
                 'catalog "tools.json"\ngate selection >= 95%\ngate bogus >= 1\n')
        suite_uri = uri_of(os.path.join(self.dir, "s.suite"))
        c = Client("--debounce-ms", "50")
        c.initialize()
        self.open(c, suite, uri=suite_uri, language="trajcheck-suite")
        diags = c.diagnostics(suite_uri, 1)
        codes = sorted(d["code"] for d in diags)
        self.assertEqual(codes, ["E001", "S005", "S011"], diags)
        e001 = next(d for d in diags if d["code"] == "E001")
        self.assertEqual(e001["range"]["start"], pos(suite, '"rules/*.rules"'))
        rel = e001["relatedInformation"][0]["location"]
        self.assertEqual(rel["uri"], uri_of(broken))
        self.assertEqual(rel["range"]["start"], {"line": 1, "character": 17})
        # The editor's text of an open rules file counts, saved or not: fix it there.
        self.open(c, "rule r:\n    order_get at most 1\n", uri=uri_of(broken))
        c.diagnostics(uri_of(broken), 1)
        diags = c.diagnostics(suite_uri, 1)
        self.assertEqual(sorted(d["code"] for d in diags), ["S005", "S011"], diags)
        # Completion of rules files inside the string, gate metrics after `gate`.
        items = c.request("textDocument/completion", {"textDocument": {"uri": suite_uri},
                                                      "position": pos(suite, 'rules/*', 1)})["result"]
        self.assertIn("rules/broken.rules", {i["label"] for i in items})
        items = c.request("textDocument/completion", {"textDocument": {"uri": suite_uri},
                                                      "position": pos(suite, "selection", 3)})["result"]
        labels = {i["label"] for i in items}
        self.assertIn("calls_per_success", labels)
        # Every gate metric of the suite parser's table, the newest ones included.
        for m in ("argument_validity", "unused_read_share", "read_volume_per_success", "duplicates_per_100_calls",
                  "pass_at_k", "pass_all_k", "pass_rate"):
            self.assertIn(m, labels)
        h = c.request("textDocument/hover", {"textDocument": {"uri": suite_uri},
                                             "position": pos(suite, "selection", 2)})["result"]
        self.assertIn("tool selection score", h["contents"]["value"])
        r = c.request("textDocument/definition", {"textDocument": {"uri": suite_uri},
                                                  "position": pos(suite, "rules/*", 2)})["result"]
        self.assertEqual([x["uri"] for x in r], [uri_of(broken)])
        syms = c.request("textDocument/documentSymbol", {"textDocument": {"uri": suite_uri}})["result"]
        self.assertIn('suite "s"', [s["name"] for s in syms])
        self.assertIn("gate selection >= 95%", [s["name"] for s in syms])
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)

    def test_unknown_names(self):
        # With a catalog: a name the catalog lacks is E202 with a suggestion. Without one (and
        # no default catalog), nothing is known to exist: no name is reported, and the server
        # keeps answering.
        c = Client("--debounce-ms", "0")
        c.initialize()
        text = 'catalog "tools.json"\nforbid refund_ordr\nforbid refund_order | order_gte\n'
        self.open(c, text)
        diags = c.diagnostics(self.uri, 1)
        e202 = [d for d in diags if d["code"] == "E202"]
        self.assertEqual(len(e202), 2, diags)
        self.assertEqual(e202[0]["severity"], 1)
        self.assertEqual(e202[0]["range"]["start"], pos(text, "refund_ordr"))
        self.assertTrue(e202[0]["message"].endswith("did you mean 'refund_order'?"), e202[0])
        self.assertTrue(e202[1]["message"].endswith("did you mean 'order_get'?"), e202[1])
        other = uri_of(os.path.join(self.dir, "nocatalog.rules"))
        # The traps are warned with or without a catalog, each once, at its place.
        trap_text = "forbid refund_ordr\nforbid a | b where amount > 1\nexpect search_* -> b\n"
        self.open(c, trap_text, uri=other)
        diags = c.diagnostics(other, 1)
        self.assertEqual(sorted(d["code"] for d in diags), ["W009", "W010", "W011"], diags)
        for d in diags:
            self.assertEqual(d["severity"], 2)
        by_code = {d["code"]: d for d in diags}
        self.assertEqual(by_code["W011"]["range"]["start"], pos(trap_text, "amount"))
        self.assertIn("did you mean 'arguments.amount'?", by_code["W011"]["message"])
        self.assertEqual(by_code["W010"]["range"]["start"], pos(trap_text, "where"))
        self.assertEqual(by_code["W009"]["range"]["start"], pos(trap_text, "search_*"))
        self.open(c, "forbid refund_ordr\nforbid order_gte\n", uri=uri_of(os.path.join(self.dir, "clean.rules")))
        self.assertEqual(c.diagnostics(uri_of(os.path.join(self.dir, "clean.rules")), 1), [])
        r = c.request("textDocument/hover", {"textDocument": {"uri": other}, "position": {"line": 0, "character": 9}})
        self.assertIn("result", r)
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)

    def test_workspace_traces(self):
        traces = os.path.join(self.dir, "traces.jsonl")
        with open(traces, "w") as f:
            f.write(json.dumps({"trace_id": "t1", "steps": [
                {"type": "tool_call", "tool": "lookup_weather", "arguments": {"city": "Paris", "opts": {"units": "c"}}}]}) + "\n")
        c = Client("--debounce-ms", "0")
        c.initialize(root_uri=uri_of(self.dir), traces=["*.jsonl"])
        text = "forbid lookup_weather where arguments.opts.\nfo\n"
        uri = uri_of(os.path.join(self.dir, "w.rules"))
        self.open(c, text, uri=uri)
        c.diagnostics(uri, 1)
        items = c.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                      "position": pos(text, "fo\n", 2)})["result"]
        self.assertIn("lookup_weather", {i["label"] for i in items})
        items = c.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                      "position": pos(text, "opts.", 5)})["result"]
        self.assertEqual({i["label"] for i in items}, {"units"})
        c.request("shutdown", None)
        c.notify("exit", None)
        self.assertEqual(c.finish(), 0)


if __name__ == "__main__":
    BIN = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
