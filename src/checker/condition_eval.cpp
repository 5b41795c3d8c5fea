// Evaluation of compiled conditions on one step: path lookup in the lazily parsed raw
// JSON (simdjson DOM, buffers reused), typed comparison, RE2 partial match.
#include "checker/condition_eval.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <functional>

#include <fmt/format.h>
#include <re2/re2.h>

#include "compiler/regex_prefilter.hpp"
#include "json/text.hpp"
#include "trajcheck/catalog.hpp"
#include "util/find_bytes.hpp"

namespace trajcheck::detail {

Value value_of(const ir::Literal& lit) {
  Value v;
  switch (lit.kind) {
    case ir::Literal::Kind::null: v.kind = Value::Kind::null; break;
    case ir::Literal::Kind::boolean: v.kind = Value::Kind::boolean; v.boolean = lit.boolean; break;
    case ir::Literal::Kind::number: v.kind = Value::Kind::number; v.number = lit.number; break;
    case ir::Literal::Kind::string: v.kind = Value::Kind::string; v.string = lit.string; break;
  }
  return v;
}

Value value_of(simdjson::dom::element el) {
  Value v;
  switch (el.type()) {
    case simdjson::dom::element_type::ARRAY: v.kind = Value::Kind::array; v.element = el; break;
    case simdjson::dom::element_type::OBJECT: v.kind = Value::Kind::object; v.element = el; break;
    case simdjson::dom::element_type::INT64:
      v.kind = Value::Kind::number; v.number = static_cast<double>(int64_t(el)); break;
    case simdjson::dom::element_type::UINT64:
      v.kind = Value::Kind::number; v.number = static_cast<double>(uint64_t(el)); break;
    case simdjson::dom::element_type::DOUBLE: v.kind = Value::Kind::number; v.number = double(el); break;
    case simdjson::dom::element_type::STRING: v.kind = Value::Kind::string; v.string = std::string_view(el); break;
    case simdjson::dom::element_type::BOOL: v.kind = Value::Kind::boolean; v.boolean = bool(el); break;
    case simdjson::dom::element_type::NULL_VALUE: v.kind = Value::Kind::null; break;
  }
  return v;
}

namespace {
bool is_scalar(const Value& v) {
  return v.kind == Value::Kind::boolean || v.kind == Value::Kind::number ||
         v.kind == Value::Kind::string;
}
}  // namespace

bool scalar_equal(const Value& x, const Value& y) {
  if (!is_scalar(x) || x.kind != y.kind) return false;
  switch (x.kind) {
    case Value::Kind::boolean: return x.boolean == y.boolean;
    case Value::Kind::number: return x.number == y.number;
    case Value::Kind::string: return x.string == y.string;
    default: return false;
  }
}

bool compare_values(const Value& x, const Value& y, ir::CompareOp op) {
  if (!is_scalar(x) || !is_scalar(y)) return false;
  if (x.kind != y.kind) return op == ir::CompareOp::ne;
  int c = 0;  // three-way result
  switch (x.kind) {
    case Value::Kind::number: c = x.number < y.number ? -1 : (x.number > y.number ? 1 : 0); break;
    case Value::Kind::string: c = x.string.compare(y.string); c = c < 0 ? -1 : (c > 0 ? 1 : 0); break;
    case Value::Kind::boolean:
      // Booleans have equality only: an ordering on them would be a silent surprise.
      if (op == ir::CompareOp::eq) return x.boolean == y.boolean;
      if (op == ir::CompareOp::ne) return x.boolean != y.boolean;
      return false;
    default: return false;
  }
  switch (op) {
    case ir::CompareOp::eq: return c == 0;
    case ir::CompareOp::ne: return c != 0;
    case ir::CompareOp::lt: return c < 0;
    case ir::CompareOp::le: return c <= 0;
    case ir::CompareOp::gt: return c > 0;
    case ir::CompareOp::ge: return c >= 0;
  }
  return false;
}

bool contains_value(const Value& x, const Value& y) {
  if (x.kind == Value::Kind::string)
    return y.kind == Value::Kind::string && x.string.find(y.string) != std::string_view::npos;
  if (x.kind == Value::Kind::array) {
    if (!is_scalar(y)) return false;
    for (simdjson::dom::element e : simdjson::dom::array(x.element))
      if (scalar_equal(value_of(e), y)) return true;
  }
  return false;
}

bool contains_key(const Value& x, std::string_view key, std::string& scratch) {
  if (key.empty()) return false;
  if (x.kind == Value::Kind::string)
    return key[0] == 's' && x.string.find(key.substr(1)) != std::string_view::npos;
  if (x.kind == Value::Kind::array)
    for (simdjson::dom::element e : simdjson::dom::array(x.element)) {
      value_key(value_of(e), scratch);
      if (scratch == key) return true;
    }
  return false;
}

void append_number(std::string& out, double x) {
  // Whole numbers below 10^15 (ids, amounts, counts: most numbers keys are made of) are
  // fmt's digits exactly, written without the shortest-double search; -0 keeps its sign there.
  if (x > -1e15 && x < 1e15 && x != 0 && x == static_cast<double>(static_cast<long long>(x))) {
    const fmt::format_int digits(static_cast<long long>(x));
    out.append(digits.data(), digits.size());
    return;
  }
  char buf[64];  // the longest shortest double, "-2.2250738585072014e-308", is 24 characters
  const char* end = fmt::format_to(buf, "{}", x);
  out.append(buf, static_cast<std::size_t>(end - buf));
}

void value_key(const Value& v, std::string& out) {
  out.clear();
  switch (v.kind) {
    case Value::Kind::string: out += 's'; out += v.string; break;
    case Value::Kind::number: out += 'n'; append_number(out, v.number); break;
    case Value::Kind::boolean: out += v.boolean ? "b1" : "b0"; break;
    default: break;
  }
}

void KeySet::clear() {
  count_ = 0;
  arena_.clear();
  if (++gen_ == 0) {  // wrapped: old stamps could look occupied
    for (Slot& s : slots_) s.gen = 0;
    gen_ = 1;
  }
}

std::size_t KeySet::find_slot(std::string_view key, std::uint64_t h) const {
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.gen != gen_) return i;
    if (s.hash == h && s.len == key.size() && std::memcmp(arena_.data() + s.off, key.data(), key.size()) == 0)
      return i;
  }
}

void KeySet::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  for (const Slot& s : old)
    if (s.gen == gen_) {
      std::size_t mask = slots_.size() - 1;
      std::size_t i = s.hash & mask;
      while (slots_[i].gen == gen_) i = (i + 1) & mask;
      slots_[i] = s;
    }
}

KeySet::Slot& KeySet::slot_for_insert(std::string_view key, bool* added) {
  if ((count_ + 1) * 2 > slots_.size()) grow();  // load factor <= 1/2
  std::uint64_t h = std::hash<std::string_view>{}(key);
  Slot& s = slots_[find_slot(key, h)];
  *added = s.gen != gen_;
  if (*added) {
    s = Slot{h, static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size()), gen_, 0};
    arena_.append(key);
    ++count_;
  }
  return s;
}

bool KeySet::insert(std::string_view key) {
  bool added = false;
  slot_for_insert(key, &added);
  return added;
}

std::uint32_t KeySet::exchange(std::string_view key, std::uint32_t value) {
  bool added = false;
  Slot& s = slot_for_insert(key, &added);
  const std::uint32_t before = added ? kNoId : s.value;
  s.value = value;
  return before;
}

std::uint32_t KeySet::get(std::string_view key) const {
  if (slots_.empty()) return kNoId;
  const Slot& s = slots_[find_slot(key, std::hash<std::string_view>{}(key))];
  return s.gen == gen_ ? s.value : kNoId;
}

bool KeySet::contains(std::string_view key) const {
  if (slots_.empty()) return false;
  return slots_[find_slot(key, std::hash<std::string_view>{}(key))].gen == gen_;
}

void Provenance::clear() {
  leaves_.clear();
  context_leaves_.clear();
  user_text_.clear();
}

void Provenance::add_leaves(simdjson::dom::element el, bool context) {
  switch (el.type()) {
    case simdjson::dom::element_type::OBJECT:
      for (auto field : simdjson::dom::object(el)) add_leaves(field.value, context);
      return;
    case simdjson::dom::element_type::ARRAY:
      for (simdjson::dom::element e : simdjson::dom::array(el)) add_leaves(e, context);
      return;
    case simdjson::dom::element_type::NULL_VALUE: return;
    default:
      value_key(value_of(el), scratch_);
      (context ? context_leaves_ : leaves_).insert(scratch_);
  }
}

void Provenance::add_user_text(std::string_view text) {
  user_text_.append(text);
  user_text_.append(std::string_view("\0", 1));  // a value never matches across two messages
}

bool seen_elements(const Value& v, const std::function<bool(const Value&)>& seen_scalar) {
  bool any = false;
  for (simdjson::dom::element e : simdjson::dom::array(v.element)) {
    const Value x = value_of(e);
    if (x.kind == Value::Kind::object || x.kind == Value::Kind::array || x.kind == Value::Kind::null) return false;
    if (!seen_scalar(x)) return false;
    any = true;
  }
  return any;  // an empty array names nothing that was seen
}

bool Provenance::seen(const Value& v, std::uint8_t sources) {
  if (v.kind == Value::Kind::array) return seen_elements(v, [&](const Value& x) { return seen(x, sources); });
  value_key(v, scratch_);
  if (scratch_.empty()) return false;  // absent, null, object, array
  if ((sources & ir::kSeenResult) && leaves_.contains(scratch_)) return true;
  if ((sources & ir::kSeenContext) && context_leaves_.contains(scratch_)) return true;
  if (!(sources & ir::kSeenUser) || v.kind != Value::Kind::string || user_text_.empty()) return false;
  return user_text_.contains(v.string);
}

namespace {
std::atomic<std::uint64_t> g_steps_examined{0};

// A raw search may cost this many times the bytes it would index before the steps are
// indexed instead; a parse to confirm a hit counts kParseWeight times its bytes.
constexpr std::uint64_t kRawBudget = 3;
constexpr std::uint64_t kParseWeight = 8;

bool has_string_leaf(simdjson::dom::element el, std::string_view s) {
  switch (el.type()) {
    case simdjson::dom::element_type::OBJECT:
      for (auto field : simdjson::dom::object(el))
        if (has_string_leaf(field.value, s)) return true;
      return false;
    case simdjson::dom::element_type::ARRAY:
      for (simdjson::dom::element e : simdjson::dom::array(el))
        if (has_string_leaf(e, s)) return true;
      return false;
    case simdjson::dom::element_type::STRING: return std::string_view(el.get_string().value_unsafe()) == s;
    default: return false;
  }
}

// A string whose JSON encoding needs no escape: in JSON text without a backslash, a string
// leaf equal to it is its bytes between two quotes.
bool plain(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == '"' || c == '\\') return false;
  return true;
}

bool contains(std::string_view text, std::string_view s) { return find_bytes(text, s) != std::string_view::npos; }

// Whether `json`, valid JSON text without a backslash, has a string leaf equal to `quoted`'s
// inside (`quoted` is a plain string between two quotes). Without escapes every quote delimits
// a string, so an occurrence of `quoted` after an even number of quotes is a whole string; it
// is a member name when a colon follows it (blanks between), a leaf otherwise.
bool has_quoted_leaf(std::string_view json, std::string_view quoted) {
  std::size_t from = 0;  // where the next search starts: an even number of quotes before it
  for (std::size_t at; (at = find_bytes(json, quoted, from)) != std::string_view::npos;) {
    if (std::count(json.begin() + from, json.begin() + at, '"') % 2 != 0) {
      from = at + 1;  // the match's first quote closes a string: one more quote, even again
      continue;
    }
    from = at + quoted.size();  // a whole string: its two quotes keep the count even
    const std::string_view after = json::trim_ws(json.substr(from));
    if (after.empty() || after.front() != ':') return true;  // not a member name: a leaf
  }
  return false;
}
}  // namespace

std::uint64_t Provenance::steps_examined() { return g_steps_examined.load(std::memory_order_relaxed); }
void Provenance::count_examined(std::uint64_t steps) { g_steps_examined.fetch_add(steps, std::memory_order_relaxed); }

void StepDocs::begin_trace(const Trajectory& trace) {
  trace_ = &trace;
  context_.parsed = false;
  if (provenance_open_) provenance_.clear();
  provenance_open_ = false;
  indexed_ = sized_ = 0;
  unindexed_bytes_ = raw_cost_ = 0;
}

void StepDocs::begin_step(const Step& step, std::uint32_t index) {
  step_ = &step;
  index_ = index;
  arguments_.parsed = result_.parsed = extra_.parsed = false;
  flat_arguments_.state = flat_extra_.state = Flat::State::unread;
}

bool StepDocs::read_flat(Flat& f, std::string_view text) {
  f.size = 0;
  bool fits = true;
  // An integer past 15 digits anywhere leaves the whole text to the parse (load), which reads
  // every number as a double.
  const bool flat = json::scan_flat_object(text, [&](std::string_view name, std::string_view value, bool number) {
    if (f.size == Flat::kMax || (number && value.size() - (value[0] == '-') > 15)) fits = false;
    else f.members[f.size++] = {name, value, number};
  });
  f.state = flat && fits ? Flat::State::flat : Flat::State::other;
  return f.state == Flat::State::flat;
}

bool StepDocs::flat_member(ir::FieldPath::Root r, std::string_view key, Value* out) {
  Flat* f = nullptr;
  Slice text;
  if (r == ir::FieldPath::Root::arguments) {
    f = &flat_arguments_;
    text = step_->arguments;
  } else if (r == ir::FieldPath::Root::step) {
    f = &flat_extra_;
    text = step_->extra;
  } else {
    return false;
  }
  if (f->state == Flat::State::unread) read_flat(*f, trace_->text(text));
  if (f->state != Flat::State::flat) return false;
  const Flat::Member* found = nullptr;
  for (std::size_t i = 0; i < f->size; ++i) {
    if (f->members[i].name != key) continue;
    if (found != nullptr) return false;  // a name twice: which value a parse keeps is the parser's
    found = &f->members[i];
  }
  *out = Value{};
  if (found == nullptr) return true;
  if (!found->number) {
    out->kind = Value::Kind::string;  // a plain string: its text is its value
    out->string = found->value;
    return true;
  }
  // An integer of at most 15 digits (read_flat) is exact as a double, as the parse reads it;
  // -0 is left to the parse.
  const std::string_view digits = found->value;
  if (digits == "-0") return false;
  std::int64_t n = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), n);
  out->kind = Value::Kind::number;
  out->number = static_cast<double>(n);
  return true;
}

void StepDocs::index_earlier() {
  Provenance::count_examined(index_ - indexed_);
  for (; indexed_ < index_; ++indexed_) {
    const Step& s = trace_->steps()[indexed_];
    if (s.type == StepType::tool_call) {
      earlier_.parsed = false;
      if (const simdjson::dom::element* r = load(earlier_, trace_->text(s.result))) provenance_.add_leaves(*r);
    } else if (s.type == StepType::user_message) {
      provenance_.add_user_text(trace_->text(s.content));
    }
  }
  sized_ = indexed_;
  unindexed_bytes_ = raw_cost_ = 0;
}

// Searches the unindexed steps [indexed_, index_) for the plain string `s`; false when the
// search would exceed its budget (nothing decided: index instead).
bool StepDocs::seen_raw(std::string_view s, std::uint8_t sources, bool* found) {
  const auto& steps = trace_->steps();
  // A step with no text to search (a call without a result, an assistant message) still costs
  // a step of the walk: counted as a byte, so that many of them get indexed too.
  for (; sized_ < index_; ++sized_) {
    const Step& st = steps[sized_];
    unindexed_bytes_ += 1;
    if (st.type == StepType::tool_call) unindexed_bytes_ += st.result.len;
    else if (st.type == StepType::user_message) unindexed_bytes_ += st.content.len;
  }
  if (raw_cost_ + unindexed_bytes_ > (kRawBudget + 1) * unindexed_bytes_) return false;
  Provenance::count_examined(index_ - indexed_);
  needle_.assign(1, '"').append(s) += '"';
  *found = false;
  for (std::uint32_t i = index_; i-- > indexed_ && !*found;) {  // the latest first: where a value usually is
    const Step& st = steps[i];
    raw_cost_ += 1;
    if (st.type == StepType::user_message && (sources & ir::kSeenUser)) {
      const std::string_view text = trace_->text(st.content);
      raw_cost_ += text.size();
      *found = contains(text, s);
    } else if (st.type == StepType::tool_call && !st.result.empty() && (sources & ir::kSeenResult)) {
      const std::string_view text = trace_->text(st.result);
      raw_cost_ += text.size();
      if (text.find('\\') == std::string_view::npos) {  // every quote delimits a string
        *found = has_quoted_leaf(text, needle_);
        continue;
      }
      // Escapes (any letter may be written as one): the parsed leaves decide.
      raw_cost_ += kParseWeight * text.size();
      earlier_.parsed = false;
      if (const simdjson::dom::element* r = load(earlier_, text)) *found = has_string_leaf(*r, s);
    }
  }
  return true;
}

bool StepDocs::seen(const Value& v, std::uint8_t sources) {
  if (v.kind == Value::Kind::array) return seen_elements(v, [&](const Value& x) { return seen(x, sources); });
  if (!provenance_open_) {
    provenance_open_ = true;
    if (const simdjson::dom::element* ctx = root(ir::FieldPath::Root::context)) provenance_.add_leaves(*ctx, true);
  }
  if (provenance_.seen(v, sources)) return true;  // the context and the steps indexed so far
  if (indexed_ >= index_ || !(sources & (ir::kSeenUser | ir::kSeenResult))) return false;
  bool found = false;
  if (v.kind == Value::Kind::string && plain(v.string) && seen_raw(v.string, sources, &found)) return found;
  index_earlier();
  return provenance_.seen(v, sources);
}

const simdjson::dom::element* StepDocs::load(Doc& d, std::string_view text) {
  if (!d.parsed) {
    d.parsed = true;
    // (An empty text matches an empty buffer: neither parses.)
    if (d.size == text.size() && std::memcmp(d.buffer.data(), text.data(), text.size()) == 0)
      return d.ok ? &d.element : nullptr;
    d.ok = false;
    d.size = text.size();
    if (!text.empty()) {
      // `s` into the padded buffer, parsed. resize only grows the buffer: no allocation once it
      // has reached the largest field.
      auto parse = [&d](std::string_view s) {
        if (d.buffer.size() < s.size() + simdjson::SIMDJSON_PADDING) d.buffer.resize(s.size() + simdjson::SIMDJSON_PADDING);
        std::memcpy(d.buffer.data(), s.data(), s.size());
        std::memset(d.buffer.data() + s.size(), 0, simdjson::SIMDJSON_PADDING);
        return d.parser.parse(reinterpret_cast<const uint8_t*>(d.buffer.data()), s.size(), false);
      };
      auto r = parse(text);
      // A number the DOM refuses (an integer beyond 64 bits, a double out of range) would fail
      // the whole document and hide every member from the rules: it is read as the double it
      // stands for, as numbers compare.
      if (r.error() == simdjson::NUMBER_ERROR && json::write_wide_numbers_as_doubles(text, d.wide)) {
        d.size = std::string::npos;  // the buffer no longer holds `text`: never reused
        r = parse(d.wide);
      }
      if (!r.error()) {
        d.element = r.value_unsafe();
        d.ok = true;
      }
    }
  }
  return d.ok ? &d.element : nullptr;
}

const simdjson::dom::element* StepDocs::root(ir::FieldPath::Root r) {
  switch (r) {
    case ir::FieldPath::Root::arguments: return load(arguments_, trace_->text(step_->arguments));
    case ir::FieldPath::Root::result: return load(result_, trace_->text(step_->result));
    case ir::FieldPath::Root::context: return load(context_, trace_->context());
    case ir::FieldPath::Root::fixture: return load(fixture_, fixture_text_);
    case ir::FieldPath::Root::step: return extra();
  }
  return nullptr;
}

const simdjson::dom::element* StepDocs::extra() { return load(extra_, trace_->text(step_->extra)); }

namespace {

Value navigate(const simdjson::dom::element* root, const std::vector<ir::PathSegment>& segs,
               std::size_t from) {
  if (root == nullptr) return {};
  simdjson::dom::element cur = *root;
  for (std::size_t i = from; i < segs.size(); ++i) {
    const ir::PathSegment& s = segs[i];
    if (s.index >= 0) {
      simdjson::dom::array arr;
      if (cur.get_array().get(arr)) return {};
      if (arr.at(static_cast<std::size_t>(s.index)).get(cur)) return {};
    } else {
      simdjson::dom::object obj;
      if (cur.get_object().get(obj)) return {};
      if (obj.at_key(s.key).get(cur)) return {};
    }
  }
  return value_of(cur);
}

Value text_value(std::string_view s) {
  Value v;
  v.kind = Value::Kind::string;
  v.string = s;
  return v;
}

}  // namespace

Value eval_operand(const CondOperand& op, StepDocs& docs) {
  switch (op.kind) {
    case CondOperand::Kind::none:
    case CondOperand::Kind::list: return {};
    case CondOperand::Kind::literal: return value_of(op.literal);
    case CondOperand::Kind::path: break;
  }
  // One member of flat arguments or step fields is read from the text itself.
  const bool one_key = op.segments.size() == 1 && op.segments[0].index < 0;
  Value flat;
  if (op.root != ir::FieldPath::Root::step) {
    if (one_key && docs.flat_member(op.root, op.segments[0].key, &flat)) return flat;
    return navigate(docs.root(op.root), op.segments, 0);
  }
  const Step& s = docs.step();
  const Trajectory& t = docs.trace();
  // Core fields are strings (or the turn number) with nothing below them.
  bool leaf = op.segments.size() <= 1;
  switch (op.field) {
    case StepField::type:
      if (!leaf) return {};
      return text_value(s.type == StepType::other ? t.text(s.type_name) : to_string(s.type));
    case StepField::tool:
      if (!leaf || s.type != StepType::tool_call) return {};
      return text_value(t.text(s.tool_name));
    case StepField::raw_tool:
      if (!leaf || s.type != StepType::tool_call) return {};
      return text_value(t.text(s.raw_tool));
    case StepField::status:
      if (!leaf || s.status == StepStatus::none) return {};
      return text_value(to_string(s.status));
    case StepField::id:
      if (!leaf || s.id.empty()) return {};
      return text_value(t.text(s.id));
    case StepField::content:
      if (!leaf || s.content.empty()) return {};
      return text_value(t.text(s.content));
    case StepField::turn: {
      if (!leaf) return {};
      Value v;
      v.kind = Value::Kind::number;
      v.number = s.turn;
      return v;
    }
    case StepField::extra: break;
  }
  if (one_key && docs.flat_member(ir::FieldPath::Root::step, op.segments[0].key, &flat)) return flat;
  return navigate(docs.extra(), op.segments, 0);
}

bool eval_cond(const std::vector<CondNode>& conds, std::uint32_t id, StepDocs& docs) {
  const CondNode& c = conds[id];
  switch (c.kind) {
    case ir::Cond::Kind::and_: return eval_cond(conds, c.a, docs) && eval_cond(conds, c.b, docs);
    case ir::Cond::Kind::or_: return eval_cond(conds, c.a, docs) || eval_cond(conds, c.b, docs);
    case ir::Cond::Kind::not_: return !eval_cond(conds, c.a, docs);
    case ir::Cond::Kind::compare:
      return compare_values(eval_operand(c.lhs, docs), eval_operand(c.rhs, docs), c.op);
    case ir::Cond::Kind::matches: {
      Value v = eval_operand(c.lhs, docs);
      if (v.kind != Value::Kind::string || !c.regex) return false;
      if (c.prefilter && !c.prefilter->may_match(v.string)) return false;
      return RE2::PartialMatch(re2::StringPiece(v.string.data(), v.string.size()), *c.regex);
    }
    case ir::Cond::Kind::contains:
      return contains_value(eval_operand(c.lhs, docs), eval_operand(c.rhs, docs));
    case ir::Cond::Kind::in: {
      Value v = eval_operand(c.lhs, docs);
      if (c.rhs.kind == CondOperand::Kind::path) {  // `x in PATH`: an element of the array at PATH
        Value array = eval_operand(c.rhs, docs);
        return array.kind == Value::Kind::array && contains_value(array, v);
      }
      for (const ir::Literal& lit : c.rhs.list)
        if (scalar_equal(v, value_of(lit))) return true;
      return false;
    }
    case ir::Cond::Kind::exists: return eval_operand(c.lhs, docs).kind != Value::Kind::absent;
    case ir::Cond::Kind::seen: return docs.seen(eval_operand(c.lhs, docs), c.sources);
    case ir::Cond::Kind::valid:
      return docs.catalog() != nullptr &&
             catalog_valid(*docs.catalog(), docs.aliases(), docs.trace(), docs.step(),
                           c.lhs.root == ir::FieldPath::Root::arguments, nullptr);
  }
  return false;
}

bool catalog_valid(const Catalog& catalog, const std::vector<std::pair<std::string, std::string>>* aliases,
                   const Trajectory& trace, const Step& step, bool arguments, std::vector<ArgumentError>* errors) {
  if (step.type != StepType::tool_call) return false;
  std::string_view name = trace.text(step.tool_name);
  if (aliases != nullptr)
    for (const auto& [observed, canonical] : *aliases)
      if (observed == name) name = canonical;
  if (!arguments) {
    if (catalog.find(name) != nullptr) return true;
    if (errors) errors->push_back({"", fmt::format("'{}' is not a tool of catalog {}", name, catalog.version())});
    return false;
  }
  return catalog.validate(name, trace.text(step.arguments), errors);
}

std::string catalog_detail(const Catalog& catalog, const std::vector<std::pair<std::string, std::string>>* aliases,
                           const Trajectory& trace, const Step& step) {
  std::vector<ArgumentError> errors;
  if (step.type != StepType::tool_call || catalog_valid(catalog, aliases, trace, step, true, &errors)) return "";
  std::string out;
  for (const ArgumentError& e : errors) {
    if (!out.empty()) out += "; ";
    out += e.path.empty() ? e.reason : e.path + ": " + e.reason;
  }
  return out;
}

}  // namespace trajcheck::detail
