// The step classifier at run time: pattern truth values of the current step, each
// computed at most once (memo stamped by step), tool columns looked up once per distinct
// tool of the trace, JSON parsed lazily by StepDocs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/condition_eval.hpp"
#include "compiler/program.hpp"

namespace trajcheck::detail {

// The canonical text of a JSON value for deep equality (the key `no duplicate` compares):
// object members sorted by name, numbers by value (append_number), strings length-prefixed,
// so two values share a text exactly when they are equal. Appended to `out`; `members` is
// scratch, reused across calls.
using CanonicalMembers = std::vector<std::pair<std::string_view, simdjson::dom::element>>;
void append_canonical(std::string& out, simdjson::dom::element el, CanonicalMembers& members);
// The same text for the JSON text `text` without a parse when it is an object of plain strings
// and integers written minified (json::scan_flat_object), appended to `out`; false, and `out`
// as it was, for any other text (then parse it and call append_canonical).
bool append_flat_canonical(std::string& out, std::string_view text);

// The JSON text of a bound value from its key (value_key, checker/condition_eval.hpp),
// written over `out` (whose storage is reused) or returned.
void binding_json(std::string_view key, std::string& out);
std::string binding_json(std::string_view key);

// Whether adjacent steps a, b were made in one turn: both tool calls with one Step::turn.
inline bool same_turn(const Step& a, const Step& b) {
  return a.type == StepType::tool_call && b.type == StepType::tool_call && a.turn == b.turn;
}

class StepEval {
 public:
  explicit StepEval(const ProgramImpl& program);

  void begin_trace(const Trajectory& trace);
  void begin_step(const Step& step, std::uint32_t index);

  // A pattern's row entry: false, true, or decided by the step's fields (`where`, binders).
  static constexpr std::uint8_t kDepends = 2;

  bool match(std::uint32_t pattern) {
    const std::uint8_t known = row_[pattern];
    if (known != kDepends) return known != 0;
    if (stamp_[pattern] == epoch_) return value_[pattern] != 0;
    bool v = compute(pattern);
    if (!parametric_[pattern]) {  // parametric truth depends on the slice: not memoized
      stamp_[pattern] = epoch_;
      value_[pattern] = v;
    }
    return v;
  }
  // Parametric rules (§5): whether binder pattern `b` matches this step and binds a value,
  // whose canonical key bound_key(b) then gives (valid for the current step).
  bool binds(std::uint32_t b);
  std::string_view bound_key(std::uint32_t b) const { return keys_[b]; }
  // Mention `b` (PatternNode::mention): whether it would match this step in the slice of
  // the value whose key is `key` (P and the rest of its condition hold, and its PATH contains
  // the value). The value at PATH is looked up once per step.
  bool mentions(std::uint32_t b, std::string_view key);
  // The value of the slice being fed: binders match only steps that bind it.
  void set_binding(std::string_view key) {
    binding_ = key;
    has_binding_ = true;
  }
  void clear_binding() { has_binding_ = false; }
  bool has_binding() const { return has_binding_; }
  const Step& step() const { return *step_; }
  std::uint32_t index() const { return index_; }
  // The first step of the current step's turn: the maximal run of adjacent tool calls with
  // one Step::turn (calls issued together, in one assistant message); any other step is a
  // turn of its own. A step is ordered before step j only when it comes before j's group():
  // the calls of one turn are unordered among themselves.
  std::uint32_t group() const { return group_; }
  // Per step of the trace so far, its group() (read by the lazy slices' catch-up).
  const std::vector<std::uint32_t>& groups() const { return groups_; }
  // Whether the current step is known to be the last of its turn: the trace's next step is
  // there and of another turn, or the caller said (a Monitor's step with a turn of its own).
  bool turn_ends() const {
    if (turn_ends_) return *turn_ends_;
    if (step_->type != StepType::tool_call) return true;
    const std::vector<Step>& steps = trace_->steps();
    return index_ + 1 < steps.size() && !same_turn(*step_, steps[index_ + 1]);
  }
  // What turn_ends() says of the steps to come (none: look at the next step).
  void set_turn_ends(std::optional<bool> ends) { turn_ends_ = ends; }
  // Whether no step of the trace shares its turn with another (the Checker knows it per
  // trace; a Monitor's trace may always come to).
  bool lone_turns() const { return lone_turns_; }
  void set_lone_turns(bool lone) { lone_turns_ = lone; }
  bool is_tool_call() const { return step_->type == StepType::tool_call; }
  // Dense id of the step's (aliased) tool within this checker; kNoId for other steps.
  std::uint32_t tool() const { return tool_; }
  std::uint32_t tool_count() const { return static_cast<std::uint32_t>(names_.size()); }
  StepDocs& docs() { return docs_; }
  // The canonical (tool, arguments) key of the current step, for `no duplicate`: object
  // members sorted, numbers by value, strings length-prefixed, so equal keys mean deeply
  // equal arguments of one tool. Built once per step for every monitor that asks, and kept
  // while the next steps have the same tool and argument text (a call asked about, then
  // observed). Valid until it is built again.
  std::string_view canonical_arguments();

  // Step classes: a step's type, whether it failed and its tool decide every pattern that
  // has no `where` under it. Each class has a row of pattern values (0, 1 or kDepends),
  // built the first time the class occurs, so such patterns cost one load per step.
  // Class ids are dense and stable for the life of this StepEval. Rows live in a bounded
  // number of slots (row_slots()): when a new class finds them all taken, every row is
  // dropped and rebuilt on demand, so memory stays bounded however many distinct tools a
  // trace has (each costing only its name and a slot index).
  std::uint32_t step_class() const { return class_; }
  // The current step's row (indexed by pattern id).
  const std::uint8_t* row() const { return row_; }
  // The slot of the current step's row, below row_slots(), and the count of times the slots
  // were emptied: a cache keyed by slot is valid while the generation stays the same.
  std::uint32_t row_slot() const { return slot_; }
  std::uint32_t row_slots() const { return slot_capacity_; }
  std::uint64_t row_generation() const { return row_generation_; }

 private:
  bool compute(std::uint32_t pattern);
  void build_row(std::uint32_t slot, StepType type, bool failed, std::uint32_t tool);
  std::uint8_t classify(std::uint32_t pattern, std::uint8_t* row, StepType type, bool failed,
                        std::uint32_t tool) const;
  std::uint32_t local_tool(const Trajectory& trace, const Step& step);
  std::uint32_t intern(std::string_view name);

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const ProgramImpl& program_;
  StepDocs docs_;
  const Trajectory* trace_ = nullptr;
  const Step* step_ = nullptr;
  std::uint32_t index_ = 0;
  std::uint32_t group_ = 0;
  std::vector<std::uint32_t> groups_;
  std::optional<bool> turn_ends_;
  bool lone_turns_ = false;
  std::uint32_t tool_ = kNoId;
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint8_t> value_;
  std::vector<std::uint8_t> parametric_;
  std::vector<std::uint32_t> bind_stamp_;
  std::vector<std::uint8_t> bind_value_;
  std::vector<std::string> keys_;
  std::vector<Value> mentioned_;  // per mention: the value at its PATH (valid for the current step)
  std::string scratch_;
  // canonical_arguments(): the key, the tool and argument text it was built from, the step
  // (epoch) it was last checked for, and the members of the objects being sorted.
  std::string key_, key_arguments_;
  std::uint32_t key_tool_ = kNoId, key_epoch_ = 0;
  CanonicalMembers members_;
  std::string_view binding_;
  bool has_binding_ = false;
  // Tool-name columns per local tool id (tools × columns).
  std::uint64_t table_serial_ = 0;  // of the table by_table_id_ holds ids of (0: none)
  std::vector<std::uint32_t> by_table_id_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> by_name_;
  std::vector<std::string> names_;         // effective (aliased) name per local id
  // Whether the tool of the row being built matches each column (computed per row build).
  std::vector<std::uint8_t> columns_;
  // Class rows (slots × patterns), each class's slot (kNoId: none), the current class and row.
  std::vector<std::uint8_t> rows_;
  std::vector<std::uint32_t> slot_of_class_;
  std::uint32_t slots_used_ = 0, slot_capacity_ = 0, slot_ = 0;
  std::uint64_t row_generation_ = 0;
  std::uint32_t class_ = 0;
  const std::uint8_t* row_ = nullptr;
};

}  // namespace trajcheck::detail
