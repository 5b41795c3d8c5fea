// Runs an OpenAI Agents SDK agent with two function tools (one of which fails) and the hosted
// web search tool against the mock Responses API at OPENAI_BASE_URL, then writes the run's
// history (`result.history`, the items the SDK keeps for the next turn) as JSON to argv[2].
import { writeFileSync } from "node:fs";
import { Agent, run, tool, webSearchTool, setTracingDisabled } from "@openai/agents";
import { z } from "zod";

setTracingDisabled(true);

const getOrder = tool({
  name: "get_order",
  description: "Look an order up by its id.",
  parameters: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => JSON.stringify({ order_id, status: "shipped", total: 42.5 }),
});

const refundOrder = tool({
  name: "refund_order",
  description: "Refund an order.",
  parameters: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => {
    throw new Error(`order ${order_id} has shipped and cannot be refunded`);
  },
});

const agent = new Agent({
  name: "Support",
  instructions: "Help the customer with their order.",
  model: "gpt-mock",
  tools: [getOrder, refundOrder, webSearchTool()],
});

const result = await run(agent, "Please refund order A-1001.");
writeFileSync(process.argv[2], JSON.stringify(result.history, null, 1) + "\n");
console.log(result.finalOutput);
