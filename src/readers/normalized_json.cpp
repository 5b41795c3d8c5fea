// Input-format names, tool-name normalization, and the normalized JSON form of docs/traces.md
// that `trajcheck normalize` prints.
#include "readers/json_util.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck {

namespace {
constexpr std::string_view kFormatNames[] = {"auto",      "native",  "openai",  "anthropic", "otel",   "list",
                                             "agentdojo", "inspect", "bedrock", "responses", "gemini", "langchain",
                                             "session"};

// Appends the members of a raw JSON object (without its braces) after a comma.
void append_members(std::string& out, std::string_view object) {
  object = detail::trim_ws(object);
  if (object.size() < 2 || object.front() != '{') return;
  std::string_view inner = detail::trim_ws(object.substr(1, object.size() - 2));
  if (inner.empty()) return;
  out.push_back(',');
  out.append(inner);
}
}  // namespace

std::string_view to_string(InputFormat f) { return kFormatNames[static_cast<int>(f)]; }

bool parse_input_format(std::string_view name, InputFormat* out) {
  for (std::size_t i = 0; i < std::size(kFormatNames); ++i)
    if (kFormatNames[i] == name) {
      *out = static_cast<InputFormat>(i);
      return true;
    }
  return false;
}

const std::vector<std::string>& input_format_names() {
  static const std::vector<std::string> names(std::begin(kFormatNames), std::end(kFormatNames));
  return names;
}

void write_normalized_json(const Trajectory& t, std::string& out) {
  out += "{\"trace_id\":";
  append_json_string(out, t.trace_id());
  if (!t.context().empty()) {
    out += ",\"context\":";
    out += t.context();
  }
  if (!t.metadata().empty()) {
    out += ",\"metadata\":";
    out += t.metadata();
  }
  out += ",\"steps\":[";
  // Turns are written when a step's differs from its index (what the native reader gives a
  // step without one), so that steps sharing a turn read back sharing it.
  bool turns = false;
  for (std::size_t i = 0; i < t.steps().size() && !turns; ++i) turns = t.steps()[i].turn != i;
  bool first = true;
  for (const Step& s : t.steps()) {
    if (!first) out.push_back(',');
    first = false;
    out += "{\"type\":";
    append_json_string(out, s.type == StepType::other ? t.text(s.type_name) : to_string(s.type));
    if (!s.id.empty()) {
      out += ",\"id\":";
      append_json_string(out, t.text(s.id));
    }
    if (s.type == StepType::tool_call) {
      out += ",\"tool\":";
      append_json_string(out, t.text(s.tool_name));
      std::string_view raw = t.text(s.raw_tool);
      if (!s.raw_tool.empty() && raw != t.text(s.tool_name)) {
        out += ",\"raw_tool\":";
        append_json_string(out, raw);
      }
    }
    if (!s.arguments.empty()) {
      out += ",\"arguments\":";
      out += t.text(s.arguments);
    }
    if (s.arguments_invalid) out += ",\"arguments_invalid\":true";
    if (!s.result.empty()) {
      out += ",\"result\":";
      out += t.text(s.result);
    }
    if (s.status != StepStatus::none) {
      out += ",\"status\":\"";
      out += to_string(s.status);
      out.push_back('"');
    }
    bool message = s.type == StepType::user_message || s.type == StepType::assistant_message ||
                   s.type == StepType::system_message || s.type == StepType::final_answer;
    if (message || !s.content.empty()) {
      out += ",\"content\":";
      append_json_string(out, t.text(s.content));
    }
    if (turns) {
      out += ",\"turn\":";
      out += std::to_string(s.turn);
    }
    append_members(out, t.text(s.extra));
    out.push_back('}');
  }
  out += "]}";
}

}  // namespace trajcheck
