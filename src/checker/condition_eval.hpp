// Evaluating compiled `where` conditions on one step's raw JSON (docs/language.md: values
// and comparisons). Each of arguments/result/extra is parsed at most once per step, and only
// when a condition (or `no duplicate`) asks for it; the context at most once per trace.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "checker/substring_index.hpp"
#include "compiler/conditions.hpp"
#include "ir/ir.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {
class Catalog;
struct ArgumentError;
}

namespace trajcheck::detail {

// A JSON or step-field value seen by a condition. Views point into the trajectory or a
// parsed document; valid only while the step is current.
struct Value {
  enum class Kind : std::uint8_t { absent, null, boolean, number, string, object, array };
  Kind kind = Kind::absent;
  bool boolean = false;
  double number = 0;
  std::string_view string;
  simdjson::dom::element element;  // object / array
};

Value value_of(const ir::Literal& lit);
Value value_of(simdjson::dom::element el);
// Typed equality of two present scalars (numbers by value); false for object/array/null.
bool scalar_equal(const Value& x, const Value& y);
// Canonical key of a scalar, kind-tagged and numbers by value, so equal keys mean
// scalar_equal values; empty for absent, null, object and array. Keys the bindings of
// parametric rules and seen()'s index of earlier values.
void value_key(const Value& v, std::string& out);
// Appends `x` as fmt's "{}" writes it (the shortest text that reads back as `x`), straight
// into `out`: keys are built on every step, and a formatting buffer costs more than the digits.
void append_number(std::string& out, double x);
// `x op y` with the §4a rules: absent, null, object, array → false; `!=` across kinds → true.
bool compare_values(const Value& x, const Value& y, ir::CompareOp op);
// `x contains y`: substring on strings, typed element equality on arrays, else false.
bool contains_value(const Value& x, const Value& y);
// contains_value(x, y) for the y whose value_key is `key` (a bound value of a parametric
// rule); `scratch` is reused.
bool contains_key(const Value& x, std::string_view key, std::string& scratch);

// A set of byte strings in one arena with open addressing, each key with a 32-bit value:
// no allocation per insert, and clear() is O(1) (a generation bump) while keeping every
// buffer's capacity. Used for the canonical keys of `no duplicate`, the leaves of `seen()`
// and, with values, the last step that had each key (lazy parametric `no duplicate`).
class KeySet {
 public:
  void clear();
  // True when `key` was not in the set (it is then added, with value 0).
  bool insert(std::string_view key);
  bool contains(std::string_view key) const;
  // The value stored for `key` (kNoId when absent), replaced by `value` (added if absent).
  std::uint32_t exchange(std::string_view key, std::uint32_t value);
  // The value stored for `key`; kNoId when absent.
  std::uint32_t get(std::string_view key) const;
  std::size_t size() const { return count_; }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t off = 0, len = 0;
    std::uint32_t gen = 0;  // occupied when == gen_
    std::uint32_t value = 0;
  };
  Slot& slot_for_insert(std::string_view key, bool* added);
  std::size_t find_slot(std::string_view key, std::uint64_t h) const;
  void grow();
  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t count_ = 0;
  std::uint32_t gen_ = 1;
};

// seen(v) of an array `v`: it has an element, and every element is a scalar `seen_scalar`
// finds (an empty array, or one holding null, an object or an array, is not seen).
bool seen_elements(const Value& v, const std::function<bool(const Value&)>& seen_scalar);

// The provenance index of `seen(PATH)` (§4a): scalar leaves of earlier tool results and
// of the context, and the text of earlier user messages (substring search, strings only).
// Filled by StepDocs::seen() only as far as a question needs it.
class Provenance {
 public:
  void clear();
  // `context`: the leaves are the trace's context's (`seen(PATH, context)`), else a result's.
  void add_leaves(simdjson::dom::element el, bool context = false);
  void add_user_text(std::string_view text);
  // Whether v is in one of `sources` (ir::kSeen* bits) indexed so far; an array when every
  // element is (seen_elements).
  bool seen(const Value& v, std::uint8_t sources = ir::kSeenAll);
  // Earlier steps looked at for seen() by every StepDocs of the process so far, added to the
  // index or searched raw (for tests: a trace whose rules never ask looks at none).
  static std::uint64_t steps_examined();
  static void count_examined(std::uint64_t steps);

 private:
  KeySet leaves_;          // of results: kind-tagged keys, numbers by value
  KeySet context_leaves_;  // of the context, likewise
  SubstringIndex user_text_;                // messages separated by '\0'
  std::string scratch_;
};

// The lazily parsed JSON documents of the current step (and the trace's context).
class StepDocs {
 public:
  void begin_trace(const Trajectory& trace);
  // `index`: the step's position in the trace (the steps before it are "earlier" for seen()).
  void begin_step(const Step& step, std::uint32_t index);
  const Trajectory& trace() const { return *trace_; }
  const Step& step() const { return *step_; }
  // The parsed root, or nullptr when the field is absent or not valid JSON.
  const simdjson::dom::element* root(ir::FieldPath::Root r);
  const simdjson::dom::element* extra();
  // The member `key` of the arguments (Root::arguments) or of the step's other fields
  // (Root::step) into *out (absent when there is none), read from the raw text without a
  // parse when it is an object of plain strings and short integers written minified
  // (json::scan_flat_object: most arguments); false when the text is not such an object, or
  // the member is not such a value: then the parse decides (root(), extra()).
  bool flat_member(ir::FieldPath::Root r, std::string_view key, Value* out);
  // seen(v) at the current step (§4a): the context's leaves, earlier results' leaves and
  // earlier user text. Nothing is done before a step asks. The steps a question needs that
  // are not indexed yet are searched raw for a plain string (its quoted bytes in each result,
  // a leaf told from a member name by the quotes before it and the colon after it, a result
  // with an escape parsed instead; its bytes in user text)
  // until those searches have cost a few times what indexing the steps would; then the steps
  // are indexed (parsed once, every scalar leaf hashed, user text in the substring index).
  // So a few questions cost a scan, many cost one index: linear either way. `sources`
  // (ir::kSeen* bits) limits where it looks: `seen(PATH, user)` and the like.
  bool seen(const Value& v, std::uint8_t sources = ir::kSeenAll);
  // The tool catalog valid(…) checks against, with the program's aliases (observed ->
  // canonical) applied to the call's tool name first; null: no catalog.
  void set_catalog(const Catalog* catalog, const std::vector<std::pair<std::string, std::string>>* aliases) {
    catalog_ = catalog;
    aliases_ = aliases;
  }
  const Catalog* catalog() const { return catalog_; }
  // The case's environment fixture (`fixture.*`), parsed at most once per fixture set.
  void set_fixture(std::string_view fixture) {
    fixture_text_.assign(fixture);
    fixture_.parsed = false;
  }
  const std::vector<std::pair<std::string, std::string>>* aliases() const { return aliases_; }

 private:
  const Catalog* catalog_ = nullptr;
  const std::vector<std::pair<std::string, std::string>>* aliases_ = nullptr;
  struct Doc {
    simdjson::dom::parser parser;
    std::string buffer;  // padded copy: simdjson reads SIMDJSON_PADDING bytes past the end
    std::string wide;    // the text with numbers beyond the DOM's range rewritten, when it has any
    simdjson::dom::element element;
    bool parsed = false, ok = false;
    // The size of the text in `buffer`, parsed last: the same text again (guard mode asks
    // about a call, then observes it) reuses the parse.
    std::size_t size = 0;
  };
  const simdjson::dom::element* load(Doc& d, std::string_view text);
  // The members of a flat object (flat_member), read once per step.
  struct Flat {
    struct Member {
      std::string_view name, value;
      bool number;
    };
    static constexpr std::size_t kMax = 16;
    enum class State : std::uint8_t { unread, flat, other } state = State::unread;
    std::uint8_t size = 0;
    std::array<Member, kMax> members;
  };
  static bool read_flat(Flat& f, std::string_view text);
  Flat flat_arguments_, flat_extra_;
  const Trajectory* trace_ = nullptr;
  const Step* step_ = nullptr;
  std::uint32_t index_ = 0;
  Doc arguments_, result_, extra_, context_, fixture_;
  std::string fixture_text_;
  bool seen_raw(std::string_view s, std::uint8_t sources, bool* found);
  void index_earlier();
  Doc earlier_;                   // an earlier step's result, while it is indexed or searched
  Provenance provenance_;
  bool provenance_open_ = false;  // the context is in provenance_
  std::uint32_t indexed_ = 0;     // steps [0, indexed_) are in provenance_
  std::uint32_t sized_ = 0;       // steps [indexed_, sized_) hold unindexed_bytes_ of results and user text
  std::uint64_t unindexed_bytes_ = 0;
  std::uint64_t raw_cost_ = 0;    // bytes searched raw (parses weighted) since the last indexing
  std::string needle_;
};

Value eval_operand(const CondOperand& op, StepDocs& docs);
// valid(tool) (`arguments` false) / valid(arguments) of a step against `catalog`: a tool call
// of a catalog tool, whose arguments validate against its schema; why not in `errors` (may be
// null). The tool name is the trace's normalized one after `aliases`.
bool catalog_valid(const Catalog& catalog, const std::vector<std::pair<std::string, std::string>>* aliases,
                   const Trajectory& trace, const Step& step, bool arguments, std::vector<ArgumentError>* errors);
// A witness's detail for a rule using valid(…): the step's catalog errors ("path: reason; …"),
// empty when the call is valid (or the step is no tool call).
std::string catalog_detail(const Catalog& catalog, const std::vector<std::pair<std::string, std::string>>* aliases,
                           const Trajectory& trace, const Step& step);
bool eval_cond(const std::vector<CondNode>& conds, std::uint32_t id, StepDocs& docs);

}  // namespace trajcheck::detail
