// Run-time step classification: memoized pattern evaluation and the per-tool column cache.
#include "checker/step_eval.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "json/text.hpp"
#include "trajcheck/json_string.hpp"
#include "util/glob.hpp"

namespace trajcheck::detail {

StepEval::StepEval(const ProgramImpl& program)
    : program_(program),
      stamp_(program.patterns.size(), 0),
      value_(program.patterns.size(), 0),
      parametric_(program.patterns.size(), 0),
      bind_stamp_(program.patterns.size(), 0),
      bind_value_(program.patterns.size(), 0),
      keys_(program.patterns.size()),
      mentioned_(program.patterns.size()),
      columns_(program.columns.size(), 0) {
  for (std::size_t i = 0; i < program.patterns.size(); ++i) parametric_[i] = program.patterns[i].parametric;
  docs_.set_catalog(program.catalog.get(), &program.aliases);
  // About 32 MiB of rows, between 64 and 4096 of them.
  const std::size_t n = std::max<std::size_t>(1, program.patterns.size());
  slot_capacity_ = static_cast<std::uint32_t>(std::clamp<std::size_t>((std::size_t(32) << 20) / n, 64, 4096));
}

void binding_json(std::string_view key, std::string& out) {
  out.clear();
  if (key.empty()) {
    out = "null";
    return;
  }
  std::string_view rest = key.substr(1);
  if (key[0] == 'n') out = rest;
  else if (key[0] == 'b') out = rest == "1" ? "true" : "false";
  else append_json_string(out, rest);
}

std::string binding_json(std::string_view key) {
  std::string out;
  binding_json(key, out);
  return out;
}

bool StepEval::binds(std::uint32_t b) {
  const PatternNode& p = program_.patterns[b];
  if (p.mention) return false;  // looks for values, binds none
  if (bind_stamp_[b] == epoch_) return bind_value_[b] != 0;
  bool v = match(p.a) && (p.b == kNoId || eval_cond(program_.conds, p.b, docs_));
  if (v) {
    value_key(eval_operand(p.bind, docs_), keys_[b]);
    v = !keys_[b].empty();  // absent, null, object, array: binds nothing
  }
  bind_stamp_[b] = epoch_;
  bind_value_[b] = v;
  return v;
}

bool StepEval::mentions(std::uint32_t b, std::string_view key) {
  const PatternNode& p = program_.patterns[b];
  if (bind_stamp_[b] != epoch_) {  // P, the rest of the condition and the value, once per step
    bool v = match(p.a) && (p.b == kNoId || eval_cond(program_.conds, p.b, docs_));
    mentioned_[b] = v ? eval_operand(p.bind, docs_) : Value{};
    bind_stamp_[b] = epoch_;
    bind_value_[b] = v && mentioned_[b].kind != Value::Kind::absent;
  }
  return bind_value_[b] != 0 && contains_key(mentioned_[b], key, scratch_);
}

void StepEval::begin_trace(const Trajectory& trace) {
  trace_ = &trace;
  groups_.clear();
  docs_.begin_trace(trace);
  const std::uint64_t serial = trace.tools() ? trace.tools()->serial() : 0;
  if (serial != table_serial_) {
    // Ids of another table mean other names: forget the id cache, keep the name cache.
    table_serial_ = serial;
    by_table_id_.clear();
  }
}

void StepEval::begin_step(const Step& step, std::uint32_t index) {
  step_ = &step;
  index_ = index;
  group_ = index > 0 && index <= groups_.size() && same_turn(trace_->steps()[index - 1], step) ? groups_[index - 1] : index;
  groups_.resize(index);  // a step asked about (Monitor::check) is taken again with its index
  groups_.push_back(group_);
  if (++epoch_ == 0) {  // wrapped: stale stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(bind_stamp_.begin(), bind_stamp_.end(), 0);
    key_epoch_ = 0;
    epoch_ = 1;
  }
  docs_.begin_step(step, index);
  const bool call = step.type == StepType::tool_call;
  // The id cache of the trace's tool table (local_tool) answers a known tool without a call.
  if (!call) tool_ = kNoId;
  else if (!program_.case_sensitive && table_serial_ != 0 && step.tool < by_table_id_.size() && by_table_id_[step.tool] != kNoId)
    tool_ = by_table_id_[step.tool];
  else tool_ = local_tool(*trace_, step);
  const bool failed = call && step.status == StepStatus::error;
  class_ = call ? kStepTypeCount + 2 * tool_ + (failed ? 1 : 0) : static_cast<std::uint32_t>(step.type);
  if (class_ >= slot_of_class_.size())
    // Classes come in tool order: grow geometrically so a new tool costs amortized O(1).
    slot_of_class_.resize(std::max<std::size_t>(class_ + 1, slot_of_class_.size() * 2), kNoId);
  if (slot_of_class_[class_] == kNoId) {
    if (slots_used_ == slot_capacity_) {
      std::fill(slot_of_class_.begin(), slot_of_class_.end(), kNoId);
      slots_used_ = 0;
      ++row_generation_;
    }
    slot_of_class_[class_] = slots_used_++;
    build_row(slot_of_class_[class_], step.type, failed, tool_);
  }
  slot_ = slot_of_class_[class_];
  row_ = rows_.data() + std::size_t(slot_) * program_.patterns.size();
}

void StepEval::build_row(std::uint32_t slot, StepType type, bool failed, std::uint32_t tool) {
  const std::size_t n = program_.patterns.size();
  if (rows_.size() < (std::size_t(slot) + 1) * n)
    rows_.resize(std::min<std::size_t>(slot_capacity_, std::max<std::size_t>(slot + 1, 2 * rows_.size() / std::max<std::size_t>(n, 1))) * n);
  if (type == StepType::tool_call) {
    std::string_view effective = names_[tool];
    for (std::size_t c = 0; c < program_.columns.size(); ++c) {
      const ToolColumn& col = program_.columns[c];
      columns_[c] = col.write  ? std::binary_search(program_.write_tools.begin(), program_.write_tools.end(), effective)
                    : col.glob ? glob_match(col.text, effective)
                               : col.text == effective;
    }
  }
  std::uint8_t* row = rows_.data() + std::size_t(slot) * n;
  constexpr std::uint8_t kUnknown = 3;
  std::fill(row, row + n, kUnknown);
  for (std::uint32_t p = 0; p < n; ++p) classify(p, row, type, failed, tool);
}

std::uint8_t StepEval::classify(std::uint32_t id, std::uint8_t* row, StepType type, bool failed,
                                std::uint32_t tool) const {
  if (row[id] <= kDepends) return row[id];
  const PatternNode& p = program_.patterns[id];
  const bool call = type == StepType::tool_call;
  auto sub = [&](std::uint32_t child) { return classify(child, row, type, failed, tool); };
  std::uint8_t v = kDepends;
  switch (p.kind) {
    case ir::Pattern::Kind::tool:
    case ir::Pattern::Kind::glob:
    case ir::Pattern::Kind::write:
      v = call && columns_[p.column];
      break;
    case ir::Pattern::Kind::any_tool: v = call; break;
    case ir::Pattern::Kind::any_step: v = 1; break;
    case ir::Pattern::Kind::step_type: v = type == p.step_type; break;
    case ir::Pattern::Kind::or_: {
      const std::uint8_t a = sub(p.a), b = sub(p.b);
      v = a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : kDepends;
      break;
    }
    case ir::Pattern::Kind::not_: {
      const std::uint8_t a = sub(p.a);
      v = a == kDepends ? kDepends : !a;
      break;
    }
    case ir::Pattern::Kind::failed: v = call && failed ? sub(p.a) : 0; break;
    case ir::Pattern::Kind::where:
      // A condition (or a binder, whose truth also depends on the slice) decides, unless the
      // pattern it filters is already false.
      v = sub(p.a) == 0 ? 0 : kDepends;
      break;
  }
  row[id] = v;
  return v;
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
  if (table_serial_ == 0 || step.tool == kNoTool) return intern(trace.text(step.tool_name));
  if (step.tool >= by_table_id_.size()) by_table_id_.resize(step.tool + 1, kNoId);
  // The id cache holds for the table whose serial begin_trace saw (ToolTable::serial).
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
    case ir::Pattern::Kind::write:
    case ir::Pattern::Kind::any_tool:
    case ir::Pattern::Kind::any_step:
    case ir::Pattern::Kind::step_type:
      return row_[id] == 1;  // always decided by the class; match() does not get here
    case ir::Pattern::Kind::or_: return match(p.a) || match(p.b);
    case ir::Pattern::Kind::not_: return !match(p.a);
    case ir::Pattern::Kind::failed:
      return s.type == StepType::tool_call && s.status == StepStatus::error && match(p.a);
    case ir::Pattern::Kind::where:
      if (p.mention) return has_binding_ && mentions(id, binding_);
      if (p.binder) return has_binding_ && binds(id) && keys_[id] == binding_;
      return match(p.a) && eval_cond(program_.conds, p.b, docs_);
  }
  return false;
}

namespace {
void append_size(std::string& out, std::uint64_t n) {
  const fmt::format_int digits(n);
  out.append(digits.data(), digits.size());
}

}  // namespace

// The arguments most calls carry — an object of plain strings and integers written minified
// ({"order_id":"ord_1","amount":120}) — have the text append_canonical gives their parse
// without a parse: members sorted by name here as there. Taken by the parse
// instead: more than 16 members, a name twice (which of its values a parse keeps is the
// parser's), an integer of more than 15 digits or -0 (append_number writes those through the
// shortest-double search, "1e+15", and a parse may read -0 as 0).
bool append_flat_canonical(std::string& out, std::string_view text) {
  struct Member {
    std::string_view name, value;
    bool number;
  };
  constexpr std::size_t kMaxMembers = 16;
  std::array<Member, kMaxMembers> members;
  std::size_t n = 0;
  bool fits = true;
  const bool flat = json::scan_flat_object(text, [&](std::string_view name, std::string_view value, bool number) {
    if (n == kMaxMembers) {
      fits = false;
      return;
    }
    if (number && (value.size() - (value[0] == '-') > 15 || value == "-0")) fits = false;
    members[n++] = {name, value, number};
  });
  if (!flat || !fits) return false;
  for (std::size_t i = 1; i < n; ++i) {  // insertion sort: the members are few, mostly in order
    const Member m = members[i];
    std::size_t j = i;
    for (; j > 0 && m.name < members[j - 1].name; --j) members[j] = members[j - 1];
    members[j] = m;
  }
  for (std::size_t i = 1; i < n; ++i)
    if (members[i].name == members[i - 1].name) return false;
  // Written in place, the size bounded first: each member's text here is at most its JSON text
  // plus two sizes of at most 20 digits, so one resize and no check per piece.
  auto put = [](char* p, std::string_view piece) {
    std::memcpy(p, piece.data(), piece.size());
    return p + piece.size();
  };
  auto put_size = [&](char* p, std::size_t size) {
    const fmt::format_int digits(size);
    return put(p, {digits.data(), digits.size()});
  };
  const std::size_t at = out.size();
  out.resize(at + text.size() + 40 * n + 2);
  char* p = out.data() + at;
  *p++ = '{';
  for (std::size_t i = 0; i < n; ++i) {
    const Member& m = members[i];
    p = put_size(p, m.name.size());
    *p++ = ':';
    p = put(p, m.name);
    if (m.number) {
      *p++ = 'n';
      p = put(p, m.value);  // the integer's digits are append_number's for its value
      *p++ = ';';
    } else {
      *p++ = 's';
      p = put_size(p, m.value.size());
      *p++ = ':';
      p = put(p, m.value);
    }
  }
  *p++ = '}';
  out.resize(static_cast<std::size_t>(p - out.data()));
  return true;
}

std::string_view StepEval::canonical_arguments() {
  if (key_epoch_ == epoch_) return key_;
  const std::string_view arguments = docs_.trace().text(step_->arguments);
  if (key_tool_ == tool_ && key_tool_ != kNoId && arguments == key_arguments_) {
    key_epoch_ = epoch_;
    return key_;
  }
  key_epoch_ = epoch_;
  key_tool_ = tool_;
  key_arguments_.assign(arguments);
  key_.clear();
  append_size(key_, tool_);
  key_ += '|';
  if (arguments.empty()) {
    key_ += "{}";  // absent arguments equal {}
    return key_;
  }
  if (append_flat_canonical(key_, arguments)) return key_;
  const simdjson::dom::element* root = docs_.root(ir::FieldPath::Root::arguments);
  if (root == nullptr) {
    key_ += "r";
    key_ += arguments;
    return key_;
  }
  members_.clear();
  append_canonical(key_, *root, members_);
  return key_;
}

void append_canonical(std::string& out, simdjson::dom::element el, CanonicalMembers& members) {
  switch (el.type()) {
    case simdjson::dom::element_type::OBJECT: {
      std::size_t begin = members.size();
      for (auto field : simdjson::dom::object(el)) members.emplace_back(field.key, field.value);
      std::size_t end = members.size();
      std::sort(members.begin() + begin, members.begin() + end,
                [](const auto& x, const auto& y) { return x.first < y.first; });
      out += '{';
      for (std::size_t i = begin; i < end; ++i) {
        // members may grow (and move) in the recursive call: copy this entry first.
        auto [key, value] = members[i];
        append_size(out, key.size());
        out += ':';
        out += key;
        append_canonical(out, value, members);
      }
      out += '}';
      members.resize(begin);
      break;
    }
    case simdjson::dom::element_type::ARRAY:
      out += '[';
      for (simdjson::dom::element e : simdjson::dom::array(el)) {
        append_canonical(out, e, members);
        out += ',';
      }
      out += ']';
      break;
    case simdjson::dom::element_type::STRING: {
      std::string_view sv(el);
      out += 's';
      append_size(out, sv.size());
      out += ':';
      out += sv;
      break;
    }
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
      out += 'n';
      append_number(out, value_of(el).number);
      out += ';';
      break;
    case simdjson::dom::element_type::BOOL: out += bool(el) ? "T" : "F"; break;
    case simdjson::dom::element_type::NULL_VALUE: out += "N"; break;
  }
}

}  // namespace trajcheck::detail
