// Two runs of a refund agent written with the Vercel AI SDK (generateText with tools that
// execute), its telemetry recorded by @ai-sdk/otel — `legacy`: the LegacyOpenTelemetry
// integration (ai.generateText / ai.toolCall spans); `genai`: the OpenTelemetry integration
// (GenAI semantic conventions: invoke_agent / chat / execute_tool spans, gen_ai.input.messages
// and gen_ai.output.messages) — exported by a BatchSpanProcessor through the OTLP/HTTP exporter
// in batches of 3 spans to a receiver that writes each request as one line
// (OUT_DIR/vercel-MODE.jsonl). The model is a mock of OpenAI's chat completions API on
// 127.0.0.1 that asks for get_order_details and refund_order (in that order, or the other way
// round) and then answers.
import http from 'node:http';
import path from 'node:path';
import { trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { generateText, tool, stepCountIs } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { OpenTelemetry, LegacyOpenTelemetry } from '@ai-sdk/otel';
import { z } from 'zod';
import { startReceiver } from './receiver.mjs';

const outDir = process.argv[2] ?? '.';
const mode = process.argv[3] ?? 'legacy';
if (mode !== 'legacy' && mode !== 'genai') throw new Error(`unknown mode ${mode}`);

// The mock model: the plan of the run named in the system prompt, one tool call per turn.
const plans = {
  lookup_first: [['get_order_details', { order_id: 'ord_81' }], ['refund_order', { order_id: 'ord_81', amount: 40 }]],
  refund_first: [['refund_order', { order_id: 'ord_92', amount: 15 }], ['get_order_details', { order_id: 'ord_92' }]],
};
let completionId = 0;
const model = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
    const plan = plans[system.includes('refund_first') ? 'refund_first' : 'lookup_first'];
    const done = body.messages.filter((m) => m.role === 'tool').length;
    const message = done < plan.length
      ? { role: 'assistant', content: null, tool_calls: [{
          id: `call_${system.includes('refund_first') ? 'b' : 'a'}${done + 1}`, type: 'function',
          function: { name: plan[done][0], arguments: JSON.stringify(plan[done][1]) } }] }
      : { role: 'assistant', content: 'Done: the order was handled.' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: `chatcmpl-${++completionId}`, object: 'chat.completion', created: 1764950000, model: 'gpt-4o-mini',
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: 100 + 10 * done, completion_tokens: 12, total_tokens: 112 + 10 * done },
    }));
  });
});
await new Promise((r) => model.listen(0, '127.0.0.1', r));

const receiver = await startReceiver(path.join(outDir, `vercel-${mode}.jsonl`));
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'refund-agent-ai-sdk' }),
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.url }), { maxExportBatchSize: 3, scheduledDelayMillis: 20 }),
  ],
});
provider.register();
const tracer = trace.getTracer('ai');
const integration = mode === 'legacy' ? new LegacyOpenTelemetry({ tracer }) : new OpenTelemetry({ tracer });

const openai = createOpenAI({ baseURL: `http://127.0.0.1:${model.address().port}/v1`, apiKey: 'test-key' });
const orders = { ord_81: { status: 'delivered', total: 40 } };
const tools = {
  get_order_details: tool({
    description: 'Look an order up',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => orders[order_id] ?? { status: 'unknown' },
  }),
  refund_order: tool({
    description: 'Refund an order',
    inputSchema: z.object({ order_id: z.string(), amount: z.number() }),
    execute: async ({ order_id, amount }) => {
      if (!orders[order_id]) throw new Error(`order ${order_id} not found`);
      return { refunded: true, amount };
    },
  }),
};

for (const plan of ['lookup_first', 'refund_first']) {
  const result = await generateText({
    model: openai.chat('gpt-4o-mini'),
    system: `You handle refunds (${plan}).`,
    prompt: 'Please refund my order.',
    tools,
    stopWhen: stepCountIs(5),
    telemetry: { functionId: `refunds-${plan}`, integrations: [integration] },
  });
  console.error(`vercel.mjs ${mode} ${plan}: ${result.steps.length} steps, "${result.text}"`);
}
await provider.shutdown();
console.error(`vercel.mjs ${mode}: ${receiver.requests()} export requests`);
await receiver.close();
await new Promise((r) => model.close(r));
