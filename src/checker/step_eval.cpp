// Run-time step classification: memoized pattern evaluation and the per-tool column cache.
#include "checker/step_eval.hpp"

namespace trajcheck::detail {

StepEval::StepEval(const ProgramImpl& program)
    : program_(program), stamp_(program.patterns.size(), 0), value_(program.patterns.size(), 0) {}

void StepEval::begin_trace(const Trajectory& trace) {
  trace_ = &trace;
  docs_.begin_trace(trace);
  if (trace.tools() != table_) {
    // Ids of another table mean other names: forget the id cache, keep the name cache.
    table_ = trace.tools();
    by_table_id_.clear();
  }
}

void StepEval::begin_step(const Step& step, std::uint32_t index) {
  step_ = &step;
  index_ = index;
  if (++epoch_ == 0) {  // wrapped: stale stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
  docs_.begin_step(step);
  tool_ = step.type == StepType::tool_call ? local_tool(*trace_, step) : kNoId;
}

std::uint32_t StepEval::intern(std::string_view name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  std::string_view effective = name;
  for (const auto& [observed, canonical] : program_.aliases)
    if (observed == name) effective = canonical;
  auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(effective);
  by_name_.emplace(std::string(name), id);
  for (const ToolColumn& c : program_.columns)
    columns_.push_back(c.glob ? glob_match(c.text, effective) : c.text == effective);
  return id;
}

std::uint32_t StepEval::local_tool(const Trajectory& trace, const Step& step) {
  if (program_.case_sensitive) {
    std::string_view raw = trace.text(step.raw_tool);
    if (raw.empty()) raw = trace.text(step.tool_name);
    while (!raw.empty() && (raw.front() == ' ' || raw.front() == '\t')) raw.remove_prefix(1);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
    return intern(raw);
  }
  if (table_ == nullptr || step.tool == kNoTool) return intern(trace.text(step.tool_name));
  if (step.tool >= by_table_id_.size()) by_table_id_.resize(step.tool + 1, kNoId);
  std::uint32_t& slot = by_table_id_[step.tool];
  if (slot == kNoId) slot = intern(trace.text(step.tool_name));
  return slot;
}

bool StepEval::compute(std::uint32_t id) {
  const PatternNode& p = program_.patterns[id];
  const Step& s = *step_;
  switch (p.kind) {
    case ir::Pattern::Kind::tool:
    case ir::Pattern::Kind::glob:
      return tool_ != kNoId && columns_[std::size_t(tool_) * program_.columns.size() + p.column];
    case ir::Pattern::Kind::any_tool: return s.type == StepType::tool_call;
    case ir::Pattern::Kind::any_step: return true;
    case ir::Pattern::Kind::step_type: return s.type == p.step_type;
    case ir::Pattern::Kind::or_: return match(p.a) || match(p.b);
    case ir::Pattern::Kind::not_: return !match(p.a);
    case ir::Pattern::Kind::failed:
      return s.type == StepType::tool_call && s.status == StepStatus::error && match(p.a);
    case ir::Pattern::Kind::where: return match(p.a) && eval_cond(program_.conds, p.b, docs_);
    case ir::Pattern::Kind::write: return false;  // rejected at compile time (E104)
  }
  return false;
}

}  // namespace trajcheck::detail
