// Vocabulary of the chat-shaped formats beside OpenAI and Anthropic that the chat reader
// understands (AgentDojo, Inspect, Bedrock Converse, Gemini, the OpenAI Responses API,
// LangChain): content block kinds, error classes, status words.
#pragma once

#include <string>
#include <string_view>

#include "readers/json_util.hpp"

namespace trajcheck::detail {

// What a content block with a "type" is.
enum class BlockKind {
  text,         // "text", and the Responses API's "input_text" / "output_text"
  tool_use,     // Anthropic "tool_use", "server_tool_use", "mcp_tool_use"
  tool_result,  // Anthropic "tool_result", "mcp_tool_result"
  known,        // images, documents, thinking, …: kept whole, silently
  unknown,      // kept whole, with a warning
};
BlockKind classify_block_type(std::string_view type);

// Whether a key names a known member of a content block that has no "type" (Bedrock
// Converse blocks {"image": …}, Gemini parts {"inlineData": …}), kept whole silently.
bool known_block_key(std::string_view key);

// Status words of tool results (LangChain "error" / "success", Bedrock, native), told without
// case or surrounding blanks ("ERROR", "Failed ").
bool status_is_error(std::string_view s);
bool status_is_ok(std::string_view s);

// The error class an `error` value names, from its minified JSON text: the "type" (or
// "error_class", "code") string of an object (Inspect's {"type", "message"}), or the
// exception class a string starts with ("ValueError: No emails found." → ValueError, as
// AgentDojo writes them). False when it names none.
bool error_class(od::parser& parser, std::string& padded, std::string_view json, std::string* out);

// Whether a message list element without "role" tagged with this "type" is an item of the
// OpenAI Responses API ("function_call", "function_call_output", "web_search_call", …).
bool is_responses_item(std::string_view type);
// The chat role of a LangChain message type ("human" → user, "ai" → assistant, "tool",
// "system", "function"; "chat" when the message names its own role), or empty.
std::string_view langchain_role(std::string_view type);

// Whether the JSON object text `json` has a member `key` (false for any other value).
bool json_has_member(od::parser& parser, std::string& padded, std::string_view json, std::string_view key);

}  // namespace trajcheck::detail
