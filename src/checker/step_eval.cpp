// Run-time step classification: memoized pattern evaluation and the per-tool column cache.
#include "checker/step_eval.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "util/json_escape.hpp"

namespace trajcheck::detail {

StepEval::StepEval(const ProgramImpl& program)
    : program_(program),
      stamp_(program.patterns.size(), 0),
      value_(program.patterns.size(), 0),
      parametric_(program.patterns.size(), 0),
      bind_stamp_(program.patterns.size(), 0),
      bind_value_(program.patterns.size(), 0),
      keys_(program.patterns.size()) {
  for (std::size_t i = 0; i < program.patterns.size(); ++i) parametric_[i] = program.patterns[i].parametric;
}

void binding_key(const Value& v, std::string& out) {
  out.clear();
  switch (v.kind) {
    case Value::Kind::string: out += 's'; out += v.string; break;
    case Value::Kind::number: fmt::format_to(std::back_inserter(out), "n{}", v.number); break;
    case Value::Kind::boolean: out += v.boolean ? "b1" : "b0"; break;
    default: break;
  }
}

std::string binding_json(std::string_view key) {
  if (key.empty()) return "null";
  std::string_view rest = key.substr(1);
  if (key[0] == 'n') return std::string(rest);
  if (key[0] == 'b') return rest == "1" ? "true" : "false";
  std::string out;
  append_json_string(out, rest);
  return out;
}

bool StepEval::binds(std::uint32_t b) {
  if (bind_stamp_[b] == epoch_) return bind_value_[b] != 0;
  const PatternNode& p = program_.patterns[b];
  bool v = match(p.a) && (p.b == kNoId || eval_cond(program_.conds, p.b, docs_));
  if (v) {
    binding_key(eval_operand(p.bind, docs_), keys_[b]);
    v = !keys_[b].empty();  // absent, null, object, array: binds nothing
  }
  bind_stamp_[b] = epoch_;
  bind_value_[b] = v;
  return v;
}

void StepEval::begin_trace(const Trajectory& trace) {
  trace_ = &trace;
  docs_.begin_trace(trace);
  if (trace.tools() != table_) {
    // Ids of another table mean other names: forget the id cache, keep the name cache.
    table_ = trace.tools();
    by_table_id_.clear();
  }
  if (program_.uses_seen)
    if (const simdjson::dom::element* ctx = docs_.root(ir::FieldPath::Root::context))
      docs_.provenance().add_leaves(*ctx);
}

void StepEval::end_step() {
  if (!program_.uses_seen) return;
  if (step_->type == StepType::tool_call) {
    if (const simdjson::dom::element* r = docs_.root(ir::FieldPath::Root::result))
      docs_.provenance().add_leaves(*r);
  } else if (step_->type == StepType::user_message) {
    docs_.provenance().add_user_text(trace_->text(step_->content));
  }
}

void StepEval::begin_step(const Step& step, std::uint32_t index) {
  step_ = &step;
  index_ = index;
  if (++epoch_ == 0) {  // wrapped: stale stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(bind_stamp_.begin(), bind_stamp_.end(), 0);
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
  source_names_.emplace_back(name);
  by_name_.emplace(std::string(name), id);
  for (const ToolColumn& c : program_.columns)
    columns_.push_back(c.write ? std::binary_search(program_.write_tools.begin(), program_.write_tools.end(), effective)
                       : c.glob ? glob_match(c.text, effective)
                                : c.text == effective);
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
  std::string_view name = trace.text(step.tool_name);
  // The id cache is keyed by table address, which a new table may reuse: confirm the name.
  if (slot == kNoId || source_names_[slot] != name) slot = intern(name);
  return slot;
}

bool StepEval::compute(std::uint32_t id) {
  const PatternNode& p = program_.patterns[id];
  const Step& s = *step_;
  switch (p.kind) {
    case ir::Pattern::Kind::tool:
    case ir::Pattern::Kind::glob:
    case ir::Pattern::Kind::write:
      return tool_ != kNoId && columns_[std::size_t(tool_) * program_.columns.size() + p.column];
    case ir::Pattern::Kind::any_tool: return s.type == StepType::tool_call;
    case ir::Pattern::Kind::any_step: return true;
    case ir::Pattern::Kind::step_type: return s.type == p.step_type;
    case ir::Pattern::Kind::or_: return match(p.a) || match(p.b);
    case ir::Pattern::Kind::not_: return !match(p.a);
    case ir::Pattern::Kind::failed:
      return s.type == StepType::tool_call && s.status == StepStatus::error && match(p.a);
    case ir::Pattern::Kind::where:
      if (p.binder) return has_binding_ && binds(id) && keys_[id] == binding_;
      return match(p.a) && eval_cond(program_.conds, p.b, docs_);
  }
  return false;
}

}  // namespace trajcheck::detail
