// Hostile bytes through `trajcheck guard` to the reference filesystem server: every message a
// client could use to smuggle a forbidden call past the rules (tests/mcp/guard.rules forbids
// write_file) must be refused or denied, and the server must never write the file. The client
// here writes raw bytes (the SDK would not send such messages); the answers are read back.
//   node hostile.mjs TRAJCHECK WORKDIR
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const here = dirname(fileURLToPath(import.meta.url));
const [trajcheck, work] = process.argv.slice(2);
const rules = join(here, "guard.rules");
const server = join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const files = join(work, "hostile-files");
mkdirSync(files, { recursive: true });
writeFileSync(join(files, "notes.txt"), "hello\n");
const trace = join(work, "hostile.jsonl");
const decisions = join(work, "decisions.jsonl");

// `--no-warnings` after `--` is the server's (node's) own flag.
const guard = spawn(trajcheck, ["guard", "-r", rules, "--trace-out", trace, "--decision-log", decisions,
                                "--", process.execPath, "--no-warnings", server, files],
                    { stdio: ["pipe", "pipe", "pipe"] });
let log = "";
guard.stderr.on("data", (d) => { log += d; });
const answers = new Map();
let pending = "";
guard.stdout.on("data", (d) => {
  pending += d;
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      const key = JSON.stringify(m.id ?? null);
      if (!answers.has(key)) answers.set(key, []);
      answers.get(key).push(m);
    }
  }
});
const exited = new Promise((resolve) => guard.on("exit", (code, signal) => resolve({ code, signal })));
const send = (bytes) => guard.stdin.write(typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function answerTo(id, count = 1) {
  const key = JSON.stringify(id);
  for (let i = 0; i < 2400; ++i) {  // up to 60 s: a loaded CI machine starts node slowly
    if ((answers.get(key) ?? []).length >= count) return answers.get(key);
    await sleep(25);
  }
  assert.fail(`no answer to id ${key}; log:\n${log}`);
}
const text = (m) => (m.result?.content ?? []).map((c) => c.text ?? "").join("");

send(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize",
                      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "hostile", version: "1" } } }) + "\n");
await answerTo(0);
send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");

const write = (id, name, file, extra = "") =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"path":${JSON.stringify(join(files, file))},"content":"x"${extra}}}}`;
const smuggled = [];
function attempt(file) { smuggled.push(file); return file; }

// Bytes the guard cannot read: refused with a JSON-RPC error (id null: it could not read the id).
send(write(1, "write_file", attempt("surrogate.txt"), ',"c":"hi\\ud800"') + "\n");
const [ffHead, ffTail] = write(2, "write_file", attempt("ff.txt"), ',"c":"hi@@"').split("@@");
send(Buffer.concat([Buffer.from(ffHead), Buffer.from([0xff]), Buffer.from(ffTail + "\n")]));
send(Buffer.concat([Buffer.from([0xff]), Buffer.from('\n')]));
send(write(3, "write_file", attempt("big.txt"), ',"n":1e400') + "\n");
send(write(4, "write_file", attempt("deep.txt"), `,"d":${"[".repeat(600)}${"]".repeat(600)}`) + "\n");
// A key twice: node's JSON.parse (the server) takes the last name.
send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_directory","name":"write_file","arguments":{"path":${JSON.stringify(join(files, attempt("dup.txt")))},"content":"x"}}}\n`);
// Calls the guard cannot decide.
send(write(6, "write_file", attempt("noid.txt")).replace('"id":6,', "") + "\n");
send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["write_file"]}\n`);
send(write(8, "write_file\\u0000", attempt("nul.txt")) + "\n");
send(write(9, "write\\u005ffile", attempt("escaped.txt")) + "\n");
send(write(10, "Write_File", attempt("case.txt")) + "\n");
send(`[${write(11, "write_file", attempt("batch.txt"))}]\n`);
// Framing: a lone \r ends a message for servers built on the Python SDK.
send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":${JSON.stringify(files)}}}}\r${write(13, "write_file", attempt("cr.txt"))}\n`);
for (const id of [7, 8, 9, 10, 11, 12, 13]) await answerTo(id);
await answerTo(null, 6);  // surrogate, 0xff (twice), 1e400, depth, the key twice: no id could be read
assert.equal(answers.get("12")[0].result?.isError, undefined, JSON.stringify(answers.get("12")));
assert.equal(text(answers.get("13")[0]), "this agent may not change files");
assert.equal(text(answers.get("9")[0]), "this agent may not change files");

// Three reads in one write under `read_text_file at most 1`: only the first runs.
const read = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":${JSON.stringify(join(files, "notes.txt"))}}}}`;
send(read(20) + "\n" + read(21) + "\n" + read(22) + "\n");
const [r20, r21, r22] = [(await answerTo(20))[0], (await answerTo(21))[0], (await answerTo(22))[0]];
assert.match(text(r20), /hello/);
assert.equal(text(r21), "one read is enough");
assert.equal(text(r22), "one read is enough");

// Two calls in flight with one id: the second is refused, the first recorded.
const list = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_directory","arguments":{"path":${JSON.stringify(files)}}}}`;
send(list(30) + "\n" + list(30) + "\n");
const r30 = await answerTo(30, 2);
assert.ok(r30.some((m) => m.error && /already used by a request still in flight/.test(m.error.message)), JSON.stringify(r30));
assert.ok(r30.some((m) => m.result && /notes\.txt/.test(text(m))), JSON.stringify(r30));

// SIGTERM: the guard stops the server and leaves the trace complete.
guard.kill("SIGTERM");
const { code, signal } = await exited;
assert.ok(code === 143 || signal === "SIGTERM", `exit ${code} ${signal}`);

for (const f of smuggled) assert.ok(!existsSync(join(files, f)), `a forbidden write reached the server: ${f}\n${log}`);
assert.match(log, /guard: 12 tool calls, 5 denied, 3 results recorded, 0 never answered/);
// The trace: one complete record, readable by check, holding the calls that ran.
const lines = readFileSync(trace, "utf8").split("\n").filter((l) => l);
assert.equal(lines.length, 1);
const steps = JSON.parse(lines[0]).steps;
assert.deepEqual(steps.filter((s) => s.type === "tool_call").map((s) => s.tool), ["list_directory", "read_text_file", "list_directory"]);
assert.deepEqual(steps.filter((s) => s.type === "denied_call").map((s) => s.id), ["9", "10", "13", "21", "22"]);
execFileSync(trajcheck, ["check", "-r", rules, "--quiet", trace]);
// One decision line per call decided.
const decided = readFileSync(decisions, "utf8").trim().split("\n").map((l) => JSON.parse(l));
assert.ok(decided.some((d) => d.verdict === "deny" && d.rule === "no_writes" && d.forwarded === false));
assert.ok(decided.every((d) => d.rules_digest.startsWith("sha256:") && d.decision_id && d.time));
console.log("guard hostile: ok");
