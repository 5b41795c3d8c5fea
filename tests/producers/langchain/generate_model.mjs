// A LangChain JS tool-calling loop with a real model call: ChatOpenAI (@langchain/openai, the
// Responses API) against the mock at OPENAI_BASE_URL, two tools (refund_order fails, its
// ToolMessage marked status "error"), the conversation saved with JSON.stringify to argv[2].
import { writeFileSync } from "node:fs";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const getOrder = tool(async ({ order_id }) => JSON.stringify({ order_id, status: "shipped" }), {
  name: "get_order",
  description: "Look an order up by its id.",
  schema: z.object({ order_id: z.string() }),
});
const refundOrder = tool(async ({ order_id }) => { throw new Error(`order ${order_id} has shipped`); }, {
  name: "refund_order",
  description: "Refund an order.",
  schema: z.object({ order_id: z.string() }),
});
const tools = { get_order: getOrder, refund_order: refundOrder };

const model = new ChatOpenAI({
  model: "gpt-mock",
  apiKey: process.env.OPENAI_API_KEY,
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  useResponsesApi: true,
}).bindTools(Object.values(tools));

const messages = [new HumanMessage("Please refund order A-1001.")];
for (let turn = 0; turn < 5; ++turn) {
  const ai = await model.invoke(messages);
  messages.push(ai);
  if (!ai.tool_calls?.length) break;
  for (const call of ai.tool_calls) {
    try {
      messages.push(new ToolMessage({ content: await tools[call.name].invoke(call.args), tool_call_id: call.id, name: call.name }));
    } catch (e) {
      messages.push(new ToolMessage({ content: `Error: ${e.message}`, tool_call_id: call.id, name: call.name, status: "error" }));
    }
  }
}
writeFileSync(process.argv[2], JSON.stringify(messages, null, 1) + "\n");
