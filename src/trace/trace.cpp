// The normalized trajectory: step-type names, tool-name interning and the per-trace arena.
#include "trajcheck/trace.hpp"

#include <atomic>
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

std::uint64_t ToolTable::next_serial() {
  static std::atomic<std::uint64_t> n{0};
  return ++n;
}

ToolTable::ToolTable(const ToolTable& other) : names_(other.names_), ids_(other.ids_) {}

ToolTable& ToolTable::operator=(const ToolTable& other) {
  if (this != &other) {
    names_ = other.names_;
    ids_ = other.ids_;
    serial_ = next_serial();
  }
  return *this;
}

ToolTable::ToolTable(ToolTable&& other) noexcept : names_(std::move(other.names_)), ids_(std::move(other.ids_)) {
  other.names_.clear();
  other.ids_.clear();
  other.serial_ = next_serial();
}

ToolTable& ToolTable::operator=(ToolTable&& other) noexcept {
  if (this != &other) {
    names_ = std::move(other.names_);
    ids_ = std::move(other.ids_);
    serial_ = next_serial();
    other.names_.clear();
    other.ids_.clear();
    other.serial_ = next_serial();
  }
  return *this;
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

Trajectory::Trajectory(const Trajectory& other) { *this = other; }

Trajectory& Trajectory::operator=(const Trajectory& other) {
  if (this == &other) return *this;
  origin = other.origin;
  warnings = other.warnings;
  spans = other.spans;
  tools_ = other.tools_;
  arena_ = other.arena_;
  steps_ = other.steps_;
  trace_id_ = other.trace_id_;
  context_ = other.context_;
  metadata_ = other.metadata_;
  source_ = other.source_;
  own();
  return *this;
}

Trajectory::Trajectory(Trajectory&& other) noexcept { *this = std::move(other); }

Trajectory& Trajectory::operator=(Trajectory&& other) noexcept {
  if (this == &other) return *this;
  origin = std::move(other.origin);
  warnings = std::move(other.warnings);
  spans = std::move(other.spans);
  tools_ = other.tools_;
  arena_ = std::move(other.arena_);
  steps_ = std::move(other.steps_);
  trace_id_ = other.trace_id_;
  context_ = other.context_;
  metadata_ = other.metadata_;
  source_ = other.source_;
  other.source_ = {};
  own();  // allocates only when `other` borrowed
  return *this;
}

void Trajectory::clear() {
  arena_.clear();
  steps_.clear();
  trace_id_ = context_ = metadata_ = Slice{};
  source_ = {};
  warnings.clear();
  spans.clear();
  origin = RecordOrigin{};
}

Slice Trajectory::append(std::string_view bytes) {
  if (arena_.size() + bytes.size() >= kBorrowed) throw std::length_error("trajectory text exceeds 2 GiB");
  Slice s{static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(bytes.size())};
  arena_.append(bytes);
  return s;
}

void Trajectory::borrow(std::string_view source) { source_ = source.size() < kBorrowed ? source : std::string_view{}; }

void Trajectory::own() {
  if (source_.empty()) return;
  const std::string_view source = source_;
  source_ = {};  // store() appends to the arena from here
  auto own_one = [&](Slice& s) {
    if (s.off & kBorrowed) s = store(source.substr(s.off & ~kBorrowed, s.len));
  };
  for (Step& st : steps_) st.for_each_slice(own_one);
  own_one(trace_id_);
  own_one(context_);
  own_one(metadata_);
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
