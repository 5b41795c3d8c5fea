// Peer driver of bench/run.sh: runs agentevals' trajectory match evaluators or promptfoo's
// deterministic trajectory assertions over agentevals-format JSONL records
// ({"id", "outputs", "reference_outputs"}), one record at a time, end to end (reading and
// JSON parsing included), and writes each record's verdicts as JSONL for comparison with
// `trajcheck score --format jsonl`. run.sh copies this file into bench/peers/ (where the
// packages are installed) and runs it there.
//
//   node driver.mjs --peer agentevals|promptfoo --input FILE --out VERDICTS.jsonl
//                   [--args exact|ignore|subset|superset] [--modes strict,unordered,subset,superset]
//
// A summary line (JSON) goes to stderr: records, import and processing seconds.
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";

function parseArgs(argv) {
  const o = { peer: "", input: "", out: "", args: "exact", modes: "strict,unordered,subset,superset" };
  for (let i = 2; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in o) || i + 1 >= argv.length) {
      process.stderr.write(`driver: unknown or incomplete option ${argv[i]}\n`);
      process.exit(2);
    }
    o[k] = argv[i + 1];
  }
  if (!o.peer || !o.input || !o.out) {
    process.stderr.write("usage: node driver.mjs --peer agentevals|promptfoo --input FILE --out FILE\n");
    process.exit(2);
  }
  return o;
}

// The tool calls of an OpenAI message list, in order: [{name, args (string)}].
function toolCalls(messages) {
  const calls = [];
  for (const m of messages) {
    if (!Array.isArray(m.tool_calls)) continue;
    for (const c of m.tool_calls) calls.push({ name: c.function?.name ?? "", args: c.function?.arguments ?? "{}" });
  }
  return calls;
}

async function makeAgentevals(opt) {
  const { createTrajectoryMatchEvaluator } = await import("agentevals");
  const evaluators = opt.modes.split(",").map((mode) => [
    mode,
    createTrajectoryMatchEvaluator({ trajectoryMatchMode: mode, toolArgsMatchMode: opt.args }),
  ]);
  return async (rec) => {
    const v = { id: rec.id };
    for (const [mode, evaluate] of evaluators) {
      const r = await evaluate({ outputs: rec.outputs, referenceOutputs: rec.reference_outputs });
      v[mode] = r.score === true;
    }
    return v;
  };
}

// promptfoo's trajectory assertions read OpenTelemetry-like spans; each actual tool call
// becomes one `execute_tool` span with GenAI attributes, in order.
async function makePromptfoo(opt) {
  const { assertions } = await import("promptfoo");
  const argsMode = opt.args === "exact" ? "exact" : "partial";
  return async (rec) => {
    const actual = toolCalls(rec.outputs);
    const expected = toolCalls(rec.reference_outputs);
    const spans = actual.map((c, i) => ({
      spanId: `s${i}`,
      traceId: String(rec.id),
      name: `execute_tool ${c.name}`,
      startTime: 1000 + i * 10,
      endTime: 1005 + i * 10,
      statusCode: 0,
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": c.name,
                    "gen_ai.tool.call.arguments": c.args },
    }));
    const traceData = { traceId: String(rec.id), spans };
    const names = expected.map((c) => c.name);
    const run = (assertion) =>
      assertions.runAssertion({ assertion, test: { vars: {} }, providerResponse: { output: "" },
                                traceId: String(rec.id), traceData });
    const used = await run({ type: "trajectory:tool-used", value: [...new Set(names)] });
    const inOrder = await run({ type: "trajectory:tool-sequence", value: names });
    const exact = await run({ type: "trajectory:tool-sequence", value: { mode: "exact", steps: names } });
    let argsOk = true;
    for (const c of expected) {
      const r = await run({ type: "trajectory:tool-args-match",
                            value: { name: c.name, args: JSON.parse(c.args), mode: argsMode } });
      if (!r.pass) argsOk = false;  // every expected call must be matched (no early exit: fair timing)
    }
    return { id: rec.id, tool_used: used.pass, tool_sequence: inOrder.pass, tool_sequence_exact: exact.pass,
             tool_args_match: argsOk };
  };
}

const opt = parseArgs(process.argv);
const t0 = performance.now();
const judge = opt.peer === "agentevals" ? await makeAgentevals(opt)
            : opt.peer === "promptfoo" ? await makePromptfoo(opt)
            : (process.stderr.write(`driver: unknown peer ${opt.peer}\n`), process.exit(2));
const t1 = performance.now();
const out = createWriteStream(opt.out);
const lines = createInterface({ input: createReadStream(opt.input), crlfDelay: Infinity });
let records = 0;
let failed = 0;
let buffer = "";
for await (const line of lines) {
  if (!line) continue;
  const rec = JSON.parse(line);
  let v;
  try {
    v = await judge(rec);
  } catch (e) {
    failed++;
    v = { id: rec.id, error: String(e?.message ?? e) };
  }
  buffer += JSON.stringify(v) + "\n";
  if (buffer.length > 1 << 20) {
    if (!out.write(buffer)) await new Promise((r) => out.once("drain", r));
    buffer = "";
  }
  records++;
}
out.end(buffer);
await new Promise((r) => out.on("finish", r));
const t2 = performance.now();
process.stderr.write(JSON.stringify({ peer: opt.peer, args: opt.args, records, failed,
                                      import_s: (t1 - t0) / 1000, process_s: (t2 - t1) / 1000 }) + "\n");
process.exit(failed ? 1 : 0);
