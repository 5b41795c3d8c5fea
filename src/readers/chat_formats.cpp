// Vocabulary of the chat-shaped formats (chat_formats.hpp).
#include "readers/chat_formats.hpp"


namespace trajcheck::detail {

namespace {

bool one_of(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (s == w) return true;
  return false;
}

bool ident_char(char ch, bool first) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_' || (!first && ((ch >= '0' && ch <= '9') || ch == '.'));
}

// "ValueError: …" → "ValueError": a dotted identifier whose last part starts with a capital
// letter (Python's class naming), followed by a colon.
std::string_view exception_class(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && ident_char(text[i], i == 0)) ++i;
  if (i == 0 || i >= text.size() || text[i] != ':') return {};
  std::string_view name = text.substr(0, i);
  std::size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (last.empty() || last.front() < 'A' || last.front() > 'Z') return {};
  return name;
}

}  // namespace

BlockKind classify_block_type(std::string_view type) {
  if (one_of(type, {"text", "input_text", "output_text"})) return BlockKind::text;
  if (one_of(type, {"tool_use", "server_tool_use", "mcp_tool_use"})) return BlockKind::tool_use;
  if (one_of(type, {"tool_result", "mcp_tool_result"})) return BlockKind::tool_result;
  // OpenAI chat parts, Anthropic blocks, Responses API parts, Inspect content.
  if (one_of(type, {"image", "image_url", "input_image", "input_audio", "input_file", "file", "audio", "video",
                    "document", "thinking", "redacted_thinking", "reasoning", "refusal", "data", "search_result",
                    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
                    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                    "container_upload", "summary_text"}))
    return BlockKind::known;
  return BlockKind::unknown;
}

bool known_block_key(std::string_view key) {
  return one_of(key, {// Bedrock Converse
                      "image", "document", "video", "reasoningContent", "cachePoint", "guardContent",
                      "citationsContent", "audio",
                      // Gemini (REST camelCase and the Python SDK's snake_case)
                      "inlineData", "inline_data", "fileData", "file_data", "executableCode", "executable_code",
                      "codeExecutionResult", "code_execution_result", "thought", "thoughtSignature",
                      "thought_signature", "videoMetadata", "video_metadata", "partMetadata", "part_metadata"});
}

bool is_responses_item(std::string_view type) {
  return one_of(type, {"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
                       "web_search_call", "file_search_call", "computer_call", "computer_call_output",
                       "code_interpreter_call", "image_generation_call", "local_shell_call", "local_shell_call_output",
                       "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_call",
                       "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "reasoning", "item_reference",
                       // the OpenAI Agents SDK's run items (result.history)
                       "function_call_result", "computer_call_result", "hosted_tool_call"});
}

std::string_view langchain_role(std::string_view type) {
  if (type == "human" || type == "HumanMessageChunk") return "user";
  if (type == "ai" || type == "AIMessageChunk") return "assistant";
  if (type == "tool" || type == "ToolMessageChunk") return "tool";
  if (type == "system" || type == "SystemMessageChunk") return "system";
  if (type == "function" || type == "FunctionMessageChunk") return "function";
  if (type == "chat" || type == "ChatMessageChunk") return "chat";
  return {};
}

namespace {
// `s` without surrounding blanks, in lower case, when it is short enough to be a status word.
bool status_word(std::string_view s, std::string& out) {
  s = json::trim_ws(s);
  if (s.size() > 16) return false;
  out.clear();
  for (char ch : s) out += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
  return true;
}
}  // namespace

bool status_is_error(std::string_view s) {
  std::string w;
  return status_word(s, w) && one_of(w, {"error", "failed", "failure", "fail"});
}
bool status_is_ok(std::string_view s) {
  std::string w;
  return status_word(s, w) && one_of(w, {"ok", "success", "succeeded", "completed"});
}

bool json_has_member(od::parser& parser, std::string& padded, std::string_view json, std::string_view key) {
  if (json.empty() || json.front() != '{') return false;
  padded.assign(json);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  od::object o;
  if (parser.iterate(padded.data(), json.size(), padded.size()).get(doc) || doc.get_object().get(o)) return false;
  od::value v;
  return o.find_field_unordered(key).get(v) == simdjson::SUCCESS;
}

bool error_class(od::parser& parser, std::string& padded, std::string_view json, std::string* out) {
  if (json.empty() || (json.front() != '"' && json.front() != '{')) return false;
  padded.assign(json);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (parser.iterate(padded.data(), json.size(), padded.size()).get(doc)) return false;
  std::string_view text;
  if (json.front() == '"') {
    if (doc.get_string().get(text)) return false;
    text = exception_class(text);
  } else {
    od::object o;
    if (doc.get_object().get(o)) return false;
    for (std::string_view key : {"type", "error_class", "code"}) {
      od::value v;
      if (o.find_field_unordered(key).get(v) == simdjson::SUCCESS && v.get_string().get(text) == simdjson::SUCCESS)
        break;
      text = {};
    }
  }
  if (text.empty()) return false;
  out->assign(text);
  return true;
}

}  // namespace trajcheck::detail
