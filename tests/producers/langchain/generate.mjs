// Writes LangChain JS message state as applications save it: a conversation with tool calls
// (one failing, one answered in a streamed chunk) built from @langchain/core's message
// classes, and JSON.stringify of it (each message serializes itself as
// {"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}). argv[2]: the output
// directory; writes messages.json (the list) and state.jsonl (one {"messages": [...]} state
// per line, as a LangGraph checkpoint holds it).
import { writeFileSync } from "node:fs";
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

const conversation = [
  new SystemMessage("You are a support agent."),
  new HumanMessage("Refund order A-1001."),
  new AIMessage({
    content: "",
    id: "run-mock-1",
    tool_calls: [{ id: "call_get", name: "get_order", args: { order_id: "A-1001" }, type: "tool_call" }],
    usage_metadata: { input_tokens: 50, output_tokens: 12, total_tokens: 62 },
  }),
  new ToolMessage({ content: '{"status": "shipped"}', tool_call_id: "call_get", name: "get_order" }),
  new AIMessage({
    content: [{ type: "text", text: "Trying the refund." }],
    id: "run-mock-2",
    tool_calls: [{ id: "call_refund", name: "refund_order", args: { order_id: "A-1001" }, type: "tool_call" }],
    usage_metadata: { input_tokens: 70, output_tokens: 15, total_tokens: 85 },
  }),
  new ToolMessage({ content: "Error: the order has shipped", tool_call_id: "call_refund", name: "refund_order", status: "error" }),
];
const chunk = new AIMessageChunk({
  content: "",
  id: "run-mock-3",
  tool_call_chunks: [{ id: "call_notify", name: "notify_customer", args: '{"order_id": "A-1001"}', index: 0 }],
});
const final = [
  chunk,
  new ToolMessage({ content: "sent", tool_call_id: "call_notify" }),
  new AIMessage("The order has shipped, so it cannot be refunded; I let the customer know."),
];
const all = [...conversation, ...final];
writeFileSync(`${process.argv[2]}/messages.json`, JSON.stringify(all, null, 1) + "\n");
writeFileSync(`${process.argv[2]}/state.jsonl`,
  [conversation, all].map((messages) => JSON.stringify({ messages })).join("\n") + "\n");
