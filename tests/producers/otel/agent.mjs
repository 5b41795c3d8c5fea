// Two runs of a refund agent traced with the OpenTelemetry JS SDK's GenAI spans (semantic
// conventions v1.36: execute_tool spans with gen_ai.tool.name, gen_ai.tool.call.id,
// gen_ai.tool.call.arguments and gen_ai.tool.call.result; chat spans with gen_ai.usage.*),
// exported by a BatchSpanProcessor through the OTLP/HTTP exporter in batches of 2 spans, so
// that each trace reaches the receiver in several requests. One run looks the order up before
// refunding it; the other refunds first. Writes OUT_DIR/batched.jsonl (one export request per
// line, as the Collector's file exporter writes them) and OUT_DIR/one-request.json (the same
// spans as one request).
import fs from 'node:fs';
import path from 'node:path';
import { trace, context, SpanStatusCode } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startReceiver } from './receiver.mjs';

const outDir = process.argv[2] ?? '.';
// tests/serve: the same spans exported to `trajcheck serve` as well — OTLP/HTTP JSON, and
// protobuf plain and gzip-compressed (each to a server of its own).
const serveExporters = [];
if (process.env.TRAJCHECK_SERVE_TRACES_URL)
  serveExporters.push(new OTLPTraceExporter({ url: process.env.TRAJCHECK_SERVE_TRACES_URL }));
if (process.env.TRAJCHECK_SERVE_PROTO_URL || process.env.TRAJCHECK_SERVE_PROTO_GZIP_URL) {
  const { OTLPTraceExporter: OTLPProtoExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  if (process.env.TRAJCHECK_SERVE_PROTO_URL)
    serveExporters.push(new OTLPProtoExporter({ url: process.env.TRAJCHECK_SERVE_PROTO_URL }));
  if (process.env.TRAJCHECK_SERVE_PROTO_GZIP_URL)
    serveExporters.push(new OTLPProtoExporter({ url: process.env.TRAJCHECK_SERVE_PROTO_GZIP_URL, compression: 'gzip' }));
}
const receiver = await startReceiver(path.join(outDir, 'batched.jsonl'));
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'refund-agent' }),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.url }), {
      maxExportBatchSize: 2,
      scheduledDelayMillis: 20,
    }),
    ...serveExporters.map((exporter) => new BatchSpanProcessor(exporter, {
      maxExportBatchSize: 2,
      scheduledDelayMillis: 20,
    })),
  ],
});
provider.register();
const tracer = trace.getTracer('refund-agent', '1.0.0');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function span(name, attributes, fn) {
  return tracer.startActiveSpan(name, { attributes }, async (s) => {
    try {
      return await fn(s);
    } finally {
      s.end();
    }
  });
}

async function chat(turn) {
  await span('chat gpt-4o-mini', { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini' },
    async (s) => {
      await sleep(30);
      s.setAttributes({ 'gen_ai.usage.input_tokens': 120 + 10 * turn, 'gen_ai.usage.output_tokens': 20 });
    });
}

async function tool(name, id, args, result, { error = false } = {}) {
  await span(`execute_tool ${name}`, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': id,
    'gen_ai.tool.call.arguments': JSON.stringify(args),
  }, async (s) => {
    await sleep(15);
    s.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
    if (error) s.setStatus({ code: SpanStatusCode.ERROR, message: 'refund refused' });
  });
}

async function run(agentName, calls) {
  await span(`invoke_agent ${agentName}`, { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentName },
    async () => {
      let turn = 0;
      for (const c of calls) {
        await chat(turn++);
        await tool(...c);
        await sleep(25);  // lets the batch processor export what has ended
      }
      await chat(turn);
    });
}

// Passes: the order is looked up before the refund.
await run('refunds', [
  ['get_order_details', 'call_a1', { order_id: 'ord_81' }, { status: 'delivered', total: 40 }],
  ['refund_order', 'call_a2', { order_id: 'ord_81', amount: 40 }, { refunded: true }],
]);
// Violates: the refund comes first, and it fails.
await run('refunds', [
  ['refund_order', 'call_b1', { order_id: 'ord_92', amount: 15 }, { error: 'order not found' }, { error: true }],
  ['get_order_details', 'call_b2', { order_id: 'ord_92' }, { status: 'unknown' }],
]);
await provider.shutdown();
fs.writeFileSync(path.join(outDir, 'one-request.json'), JSON.stringify(receiver.combined()) + '\n');
console.error(`agent.mjs: ${receiver.requests()} export requests`);
await receiver.close();
