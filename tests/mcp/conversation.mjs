// The MCP conversation test of `trajcheck guard`: the protocol's own client SDK talks to the
// reference filesystem server through the proxy. An allowed call goes through; a denied call
// returns the rule's message and never reaches the server; the recorded trace checks the
// same as the live decisions (in warn mode the call goes through and the trace fails).
//   node conversation.mjs TRAJCHECK WORKDIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const here = dirname(fileURLToPath(import.meta.url));
const [trajcheck, work] = process.argv.slice(2);
const rules = join(here, "guard.rules");
const server = join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const files = join(work, "files");
mkdirSync(files, { recursive: true });
writeFileSync(join(files, "notes.txt"), "hello from the guarded server\n");

async function session(mode, traceOut, body) {
  const transport = new StdioClientTransport({
    command: trajcheck,
    args: ["guard", "-r", rules, "--on-violation", mode, "--trace-out", traceOut, "--", process.execPath, server, files],
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (d) => { log += d; });
  const client = new Client({ name: "guard-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await body(client);
  } finally {
    await client.close();
  }
  await new Promise((r) => setTimeout(r, 200));  // the proxy writes its trace and summary as it ends
  return log;
}

const text = (result) => result.content.map((c) => c.text ?? "").join("");
const note = join(files, "notes.txt");

// deny: a read before a listing and any write are answered by the proxy.
const denyTrace = join(work, "deny.jsonl");
const denyLog = await session("deny", denyTrace, async (client) => {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.includes("read_text_file") && tools.includes("write_file"), tools.join(" "));
  let r = await client.callTool({ name: "read_text_file", arguments: { path: note } });
  assert.equal(r.isError, true);
  assert.equal(text(r), "list the directory before reading a file");
  r = await client.callTool({ name: "list_directory", arguments: { path: files } });
  assert.notEqual(r.isError, true, text(r));
  assert.match(text(r), /notes\.txt/);
  r = await client.callTool({ name: "read_text_file", arguments: { path: note } });
  assert.notEqual(r.isError, true, text(r));
  assert.match(text(r), /hello from the guarded server/);
  r = await client.callTool({ name: "read_text_file", arguments: { path: note } });
  assert.equal(text(r), "one read is enough");
  r = await client.callTool({ name: "write_file", arguments: { path: join(files, "new.txt"), content: "x" } });
  assert.equal(r.isError, true);
  assert.equal(text(r), "this agent may not change files");
});
assert.ok(!existsSync(join(files, "new.txt")), "a denied write reached the server");
assert.match(denyLog, /guard: 5 tool calls, 3 denied, 2 results recorded/);
const denied = readFileSync(denyTrace, "utf8").trim().split("\n");
assert.equal(denied.length, 1);
const steps = JSON.parse(denied[0]).steps;
// The calls that ran, and the three attempts denied (steps of type denied_call, with the rule), in call order.
assert.deepEqual(steps.map((s) => s.tool ?? `denied ${s.denied_tool} by ${s.rule}`),
                 ["denied read_text_file by list_first", "list_directory", "read_text_file",
                  "denied read_text_file by one_read", "denied write_file by no_writes"]);
// The recorded trace satisfies the rules, as the live decisions said; a rule on the attempts sees them.
execFileSync(trajcheck, ["check", "-r", rules, "--quiet", denyTrace]);
const attemptsRules = join(work, "attempts.rules");
writeFileSync(attemptsRules, 'rule no_attempts: forbid step where type == "denied_call" and denied_tool == "write_file"\n');
let attempts = 0;
try {
  execFileSync(trajcheck, ["check", "-r", attemptsRules, "--quiet", denyTrace]);
} catch (e) {
  attempts = e.status;
}
assert.equal(attempts, 1, "check must see the denied write attempt");

// warn: the write goes through, and the recorded trace fails the rule the proxy warned about.
const warnTrace = join(work, "warn.jsonl");
const warnLog = await session("warn", warnTrace, async (client) => {
  const r = await client.callTool({ name: "write_file", arguments: { path: join(files, "new.txt"), content: "x" } });
  assert.notEqual(r.isError, true, text(r));
});
assert.ok(existsSync(join(files, "new.txt")), "warn mode must forward the write");
assert.match(warnLog, /guard: warn write_file: rule no_writes \[critical\]/);
let status = 0;
try {
  execFileSync(trajcheck, ["check", "-r", rules, "--quiet", warnTrace]);
} catch (e) {
  status = e.status;
  assert.match(e.stdout.toString(), /no_writes/);
}
assert.equal(status, 1, "the recorded trace must fail no_writes");
console.log("guard conversation: ok");
