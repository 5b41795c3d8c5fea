// The normalized trajectory: step-type names, tool-name interning and the per-trace arena.
#include "trajcheck/trace.hpp"

#include <stdexcept>

namespace trajcheck {

namespace {
constexpr std::string_view kStepTypeNames[kStepTypeCount] = {
    "tool_call", "user_message",   "assistant_message", "approval_request",
    "approval",  "final_answer",   "system_message",    "other"};
}

std::string_view to_string(StepType t) { return kStepTypeNames[static_cast<int>(t)]; }

StepType step_type_from_string(std::string_view name) {
  for (int i = 0; i < kStepTypeCount - 1; ++i)
    if (kStepTypeNames[i] == name) return static_cast<StepType>(i);
  return StepType::other;
}

std::string_view to_string(StepStatus s) {
  switch (s) {
    case StepStatus::ok: return "ok";
    case StepStatus::error: return "error";
    case StepStatus::none: break;
  }
  return "";
}

ToolId ToolTable::intern(std::string_view name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<ToolId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

ToolId ToolTable::find(std::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? kNoTool : it->second;
}

void Trajectory::clear() {
  arena_.clear();
  steps_.clear();
  trace_id_ = context_ = metadata_ = Slice{};
  warnings.clear();
  origin = RecordOrigin{};
}

Slice Trajectory::store(std::string_view bytes) {
  if (arena_.size() + bytes.size() > 0xffffffffu)
    throw std::length_error("trajectory text exceeds 4 GiB");
  Slice s{static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(bytes.size())};
  arena_.append(bytes);
  return s;
}

void normalize_tool_name(std::string_view raw, bool case_sensitive, std::string& out) {
  std::string_view s = raw;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  out.assign(s);
  if (!case_sensitive)
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
}

std::string normalize_tool_name(std::string_view raw, bool case_sensitive) {
  std::string out;
  normalize_tool_name(raw, case_sensitive, out);
  return out;
}

}  // namespace trajcheck
