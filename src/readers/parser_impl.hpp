// Internals of TraceParser shared by the per-format readers (native, chat, OTel, list):
// the per-record context (arena stores, errors with positions, tool naming, status rules)
// and the per-thread scratch memory that makes steady-state parsing allocation-free.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <re2/re2.h>

#include "json/member_names.hpp"
#include "readers/json_util.hpp"
#include "readers/tape_value.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::detail {

// NormalizeOptions prepared once: aliases normalized, patterns compiled (RE2 objects are
// thread-safe for matching, so one set serves every thread).
struct CompiledOptions {
  NormalizeOptions options;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> aliases;
  std::vector<std::unique_ptr<RE2>> error_patterns;
  std::string error;  // first invalid option
  // Tells one set of options from another (a thread's tool-name cache is kept for one).
  std::uint64_t serial = next_serial();

  static std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> n{0};
    return ++n;
  }
};

// A raw tool name as set_tool last normalized it under one set of options: its normalized
// name (aliases applied) and the id the ToolTable of serial `table` gave that name (an id
// holds for that serial only: ToolTable::serial), so any table may be used with it.
struct ToolCacheEntry {
  bool valid = false;
  bool same = false;  // the normalized name is the raw name
  ToolId id = kNoTool;
  std::uint64_t table = 0;
  std::string raw, canonical;
};

// A tool result waiting to be joined to its call.
struct PendingResult {
  Slice id;    // call id it answers; empty when the source gave none
  Slice name;  // raw tool name given with the result; empty if none
  Slice result;
  bool error = false;
  Slice extra;
  const char* where = nullptr;
};

// An OTel span staged before its trace is assembled.
struct StagedSpan {
  Slice trace_id;
  SpanInfo info;
  // gen_ai.input.messages / gen_ai.output.messages (the latest GenAI conventions), decoded, in
  // the staging trajectory; where the span starts in the record.
  Slice input_messages, output_messages;
  const char* where = nullptr;
  std::uint64_t start = 0;
  std::uint32_t step = 0;      // index in the staging trajectory
  std::uint32_t resource = 0;  // index into Scratch::resources
};

// Working memory of one parse call; pooled per thread and reused.
struct Scratch {
  TapeScratch tape;         // the record, validated whole (native and chat records; TapeDoc)
  od::parser parser;        // the record itself
  od::parser inner_parser;  // JSON embedded in strings (arguments, results)
  od::parser line_parser;   // a session log's lines, read again in parentUuid order
  std::string padded, inner_padded;
  std::string value, name, text, result_text;
  std::string meta, msg_extra, call_extra, result_extra, blocks, result_blocks, merged;
  std::vector<Step> pending;
  std::vector<PendingResult> results;
  std::vector<std::uint32_t> joined;  // steps the results of the current message joined
  // Tool names seen lately (a trace names a few tools many times), for CompiledOptions::serial:
  // a name is looked for in two neighbouring entries (ParseCtx::set_tool).
  std::array<ToolCacheEntry, 256> tools;
  std::uint64_t tools_serial = 0;
  // OTel
  Trajectory staging;
  std::vector<StagedSpan> spans;
  std::vector<SpanInfo> span_infos;  // of the trace being emitted
  std::vector<Slice> resources;  // in `staging`
  std::string otel_meta;  // top-level fields beside resourceSpans
};

// Builds a JSON object's text member by member into a reused string.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_.clear(); }
  std::string& key(std::string_view k) {
    out_.push_back(first_ ? '{' : ',');
    first_ = false;
    append_json_string(out_, k);
    out_.push_back(':');
    return out_;
  }
  bool empty() const { return first_; }
  // Appends the members of a raw JSON object text ("{...}").
  void append_members(std::string_view object) {
    object = trim_ws(object);
    if (object.size() <= 2) return;
    out_.push_back(first_ ? '{' : ',');
    first_ = false;
    out_.append(object.substr(1, object.size() - 2));
  }
  // Appends one member given as its JSON text (`"name":value`).
  void append_member(std::string_view member) {
    out_.push_back(first_ ? '{' : ',');
    first_ = false;
    out_.append(member);
  }
  // The object text, or empty when no member was written.
  std::string_view finish() {
    if (first_) return {};
    if (!closed_) out_.push_back('}');
    closed_ = true;
    return out_;
  }

 private:
  std::string& out_;
  bool first_ = true;
  bool closed_ = false;
};

class ParseCtx {
 public:
  ParseCtx(const CompiledOptions& opts, std::string_view text, const RecordOrigin& origin,
           Trajectory& t, Scratch& s, ParseOutcome& outcome)
      : opts(opts), text(text), origin(origin), t(t), s(s), outcome(outcome) {}

  const CompiledOptions& opts;
  std::string_view text;  // the record, inside Scratch::padded (simdjson pointers point here)
  RecordOrigin origin;
  mutable LineIndex lines;  // where() of many warnings
  Trajectory& t;
  Scratch& s;
  ParseOutcome& outcome;
  Slice context;  // the record's "context" object, if any
  od::document* doc = nullptr;

  // Where the document's iterator stands (for errors met while iterating an object or
  // array, which cannot report their own position); null when unknown.
  const char* here() const {
    const char* p = nullptr;
    if (!doc || doc->current_location().get(p)) return nullptr;
    return p;
  }

  // Position of a pointer into `text` (the record start when null or outside).
  RecordOrigin where(const char* p) const;
  // Rejects the record; always returns false so readers can `return ctx.fail(…)`.
  bool fail(const char* p, std::string message);  // RecordErrorKind::content
  bool fail(const char* p, ReadError e);
  bool fail(const JsonFailure& f);
  void warn(const char* p, const std::string& message);

  // Validating minified copy of a value into the arena / into `out` / nowhere.
  bool store_value(od::value v, Slice* out);
  bool write_value(od::value v, std::string& out);
  bool skip_value(od::value v);
  // The same for a value of a validated record (nothing to validate: always true).
  bool store_value(const TapeValue& v, Slice* out) {
    if (std::string_view text = canonical_tape_text(v); !text.empty()) {
      *out = t.store(text);
      return true;
    }
    return store_written(v, out);
  }
  bool write_value(const TapeValue& v, std::string& out) {
    write_tape_value(v, out);
    return true;
  }
  bool skip_value(const TapeValue&) { return true; }
  // Writes the member `key`: `v` of the object being read into `w`, minified (the source's
  // member text as it is when it is minified already).
  bool write_member(ObjectWriter& w, std::string_view key, const od::value& v) { return write_value(v, w.key(key)); }
  bool write_member(ObjectWriter& w, std::string_view key, const TapeValue& v) {
    if (std::string_view m = canonical_tape_member(v); !m.empty()) {
      w.append_member(m);
      return true;
    }
    return write_value(v, w.key(key));
  }
  // A string value, decoded (valid until the record is done).
  template <class V>
  bool get_string(V v, std::string_view* out, std::string_view what);
  // The same for a value of a validated record: nothing to check but its type.
  bool get_string(const TapeValue& v, std::string_view* out, std::string_view what) {
    if (v.doc()->at(v.token_index()) != '"') return fail(location_of(v), fmt::format("{} must be a string", what));
    *out = v.doc()->string_at(v.token_index());
    return true;
  }
  // A string or number as text (ids); false with an error for other types.
  template <class V>
  bool get_id(V v, Slice* out, std::string_view what);
  // The same for a value of a validated record: nothing to check but its type.
  bool get_id(const TapeValue& v, Slice* out, std::string_view what) {
    const TapeDoc& d = *v.doc();
    const std::uint32_t k = v.token_index();
    const char c = d.at(k);
    if (c == '"') {
      *out = t.store(d.string_at(k));
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      *out = t.store(trim_ws(d.token(k)));
      return true;
    }
    return fail(location_of(v), fmt::format("{} must be a string or a number", what));
  }
  template <class V>
  bool is_null(V v, bool* null);

  // A result given as text: JSON object/array text is stored parsed, other text as a
  // JSON string literal. Sets *error when an error pattern matches the text.
  Slice store_text_result(std::string_view text, bool* error);
  // A result given as a JSON value: a string as store_text_result stores text; anything else
  // stored as is, patterns running over its JSON text.
  template <class V>
  bool store_json_result(V v, Slice* out, bool* error);
  // Arguments given as a JSON string (OpenAI function.arguments): parsed when valid; if
  // not, kept as a string literal, flagged, and warned about.
  void set_arguments_text(Step& step, std::string_view text, const char* where);
  // Arguments given as any JSON value; a string is treated as set_arguments_text does.
  template <class V>
  bool set_arguments_value(Step& step, V v);
  // Names a step's tool from the name the source gives: raw_tool, tool_name (aliases applied)
  // and the ToolTable id. A name named lately under these options (Scratch::tools) is not
  // normalized or interned again: that lookup is inline, the rest is name_tool.
  void set_tool(Step& step, std::string_view raw);
  bool matches_error_pattern(std::string_view text) const {
    return !opts.error_patterns.empty() && matches_any_error_pattern(text);
  }
  // Concatenates the members of two raw JSON objects into a new arena slice.
  Slice merge_extra(Slice a, std::string_view b);

  // Wrapper fields common to every object record: trace ids, context, metadata.
  struct Wrapper {
    Slice trace_id, id, task_id, case_id;
    ObjectWriter* meta = nullptr;
  };
  // Handles one wrapper field that is not the record's body; false on error.
  template <class V>
  bool wrapper_field(Wrapper& w, std::string_view key, V v);
  void finish_wrapper(Wrapper& w);
  // The trace id of a record whose source gives none: "<file>:<line>", stored in the arena.
  Slice origin_id();

 private:
  // set_tool for a name not found in Scratch::tools: normalized, interned, and remembered in
  // one of the two entries from `slot` on. `raw` is the stored step.raw_tool.
  void name_tool(Step& step, std::string_view raw, std::size_t slot);
  // store_value of a value that is not canonical: written minified, then stored.
  bool store_written(const TapeValue& v, Slice* out);
  bool matches_any_error_pattern(std::string_view text) const;
};

// The entry of Scratch::tools a raw tool name is looked for in first (then the next one): its
// length and three of its bytes tell most names of a vocabulary apart.
inline std::size_t tool_cache_slot(std::string_view raw, std::size_t entries) {
  std::size_t h = raw.size();
  if (!raw.empty()) {
    auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(raw[i])); };
    h = (h * 31 + byte(0) * 7 + byte(raw.size() - 1)) * 131 + byte(raw.size() / 2) * 17 + byte(raw.size() / 3);
  }
  return h % entries;
}

inline void ParseCtx::set_tool(Step& step, std::string_view raw) {
  step.raw_tool = t.store(raw);
  // `raw` may point into the arena (a result kept as a call of its own is named from its
  // stored name), which the store may just have moved: read the stored copy.
  raw = t.text(step.raw_tool);
  const std::size_t slot = tool_cache_slot(raw, s.tools.size());
  if (const ToolTable* table = t.tools(); table && s.tools_serial == opts.serial) {
    for (std::size_t i : {slot, (slot + 1) % s.tools.size()}) {
      const ToolCacheEntry& e = s.tools[i];
      if (e.valid && e.table == table->serial() && e.raw == raw) {
        step.tool_name = e.same ? step.raw_tool : t.store(e.canonical);
        step.tool = e.id;
        return;
      }
    }
  }
  name_tool(step, raw, slot);
}

// Calls fn(key, value) for each member of `o` in order; false (the record rejected) on
// malformed JSON or when fn returns false.
// A member named twice rejects the record (json::MemberNames).
template <class Fn>
bool for_fields(ParseCtx& c, od::object& o, Fn&& fn) {
  json::MemberNames names;
  for (auto field : o) {
    od::field f;
    if (auto e = std::move(field).get(f)) return c.fail(c.here(), json_error_message(e));
    const char* quote = f.key().raw() - 1;  // before unescaped_key(), which consumes the key
    std::string_view key;
    if (auto e = f.unescaped_key().get(key)) return c.fail(c.here(), json_error_message(e));
    if (!names.insert(key)) return c.fail(quote, json::duplicate_member_message(key));
    if (!fn(key, f.value())) return false;
  }
  return true;
}
// (A validated document with a member named twice never reaches the tape readers:
// TapeDoc::parse declines it, and the ondemand reader reports it.)
template <class Fn>
bool for_fields(ParseCtx&, TapeObject& o, Fn&& fn) {
  return for_tape_fields(o, std::forward<Fn>(fn));
}

// Calls fn(element) for each element of `a` in order; false as for_fields.
template <class Fn>
bool for_each_element(ParseCtx& c, od::array& a, Fn&& fn) {
  for (auto element : a) {
    od::value v;
    if (auto e = element.get(v)) return c.fail(c.here(), json_error_message(e));
    if (!fn(v)) return false;
  }
  return true;
}
template <class Fn>
bool for_each_element(ParseCtx&, TapeArray& a, Fn&& fn) {
  return for_tape_elements(a, std::forward<Fn>(fn));
}

// The object and array types that go with a value type.
template <class V>
struct JsonOf;
template <>
struct JsonOf<od::value> {
  using object = od::object;
  using array = od::array;
};
template <>
struct JsonOf<TapeValue> {
  using object = TapeObject;
  using array = TapeArray;
};

// Whether a string's canonical source text (between its quotes) may decode to text that
// store_text_result parses as JSON.
bool may_hold_json(std::string_view raw);

template <class V>
bool ParseCtx::get_string(V v, std::string_view* out, std::string_view what) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
  if (type != od::json_type::string) return fail(location_of(v), fmt::format("{} must be a string", what));
  const char* at = v.raw_json_token().data();
  if (auto e = v.get_string().get(*out)) return fail(at, json_error_message(e));
  return true;
}

template <class V>
bool ParseCtx::get_id(V v, Slice* out, std::string_view what) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
  if (type == od::json_type::string) {
    const char* at = v.raw_json_token().data();
    std::string_view sv;
    if (auto e = v.get_string().get(sv)) return fail(at, json_error_message(e));
    *out = t.store(sv);
    return true;
  }
  if (type == od::json_type::number) {
    std::string_view raw = trim_ws(v.raw_json_token());
    if (!is_json_number(raw)) return fail(raw.data(), json_error_message(simdjson::NUMBER_ERROR));
    *out = t.store(raw);
    return true;
  }
  return fail(location_of(v), fmt::format("{} must be a string or a number", what));
}

template <class V>
bool ParseCtx::is_null(V v, bool* null) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
  *null = false;
  if (type != od::json_type::null) return true;
  if (auto e = v.is_null().get(*null)) return fail(location_of(v), json_error_message(e));
  if (!*null) return fail(location_of(v), json_error_message(simdjson::N_ATOM_ERROR));
  return true;
}

// canonical_string_size of a string value's token (raw_json_token()).
inline std::size_t string_token_size(const od::value&, std::string_view raw) { return canonical_string_size(raw); }
inline std::size_t string_token_size(const TapeValue& v, std::string_view) { return canonical_string_size(v); }

template <class V>
bool ParseCtx::store_json_result(V v, Slice* out, bool* error) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
  if (type == od::json_type::string) {
    // Fast path for the common long text result: canonical source text that cannot be JSON
    // (see store_text_result) is stored as it is, without decoding and re-escaping it.
    std::string_view raw = v.raw_json_token();
    if (opts.error_patterns.empty())
      if (std::size_t size = string_token_size(v, raw); size && !may_hold_json(raw.substr(1, size - 2))) {
        if (JsonFailure f; !consume_string(v, f)) return fail(f);
        *out = t.store(raw.substr(0, size));
        *error = false;
        return true;
      }
    std::string_view sv;
    if (auto e = v.get_string().get(sv)) return fail(location_of(v), json_error_message(e));
    *out = store_text_result(sv, error);
    return true;
  }
  if (!store_value(v, out)) return false;
  *error = matches_error_pattern(t.text(*out));
  return true;
}

template <class V>
bool ParseCtx::set_arguments_value(Step& step, V v) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
  if (type == od::json_type::string) {
    const char* where = location_of(v);
    std::string_view sv;
    if (auto e = v.get_string().get(sv)) return fail(where, json_error_message(e));
    set_arguments_text(step, sv, where);
    return true;
  }
  return store_value(v, &step.arguments);
}

template <class V>
bool ParseCtx::wrapper_field(Wrapper& w, std::string_view key, V v) {
  if (key == "context") return store_value(v, &context);
  if (key == "metadata") {
    // A record's own metadata object (as `normalize` prints it) joins the wrapper fields.
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
    if (type == od::json_type::object) {
      s.value.clear();
      if (!write_value(v, s.value)) return false;
      w.meta->append_members(s.value);
      return true;
    }
  }
  Slice* id_slot = key == "trace_id" ? &w.trace_id
                   : key == "id"     ? &w.id
                   : key == "task_id" ? &w.task_id
                   : key == "case_id" ? &w.case_id
                                      : nullptr;
  if (id_slot) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(location_of(v), json_error_message(e));
    if (type == od::json_type::string || type == od::json_type::number) {
      if (!get_id(v, id_slot, key)) return false;
      if (id_slot == &w.trace_id) return true;
      std::string& m = w.meta->key(key);
      if (type == od::json_type::string) append_json_string(m, t.text(*id_slot));
      else m.append(t.text(*id_slot));
      return true;
    }
  }
  bool null = false;
  if (!is_null(v, &null)) return false;
  if (null) return true;
  return write_member(*w.meta, key, v);
}

// `record` is a native trace (ondemand, or a validated record read off its tape).
bool read_native(ParseCtx& c, od::object record);
bool read_native(ParseCtx& c, TapeObject record);
bool read_chat_object(ParseCtx& c, od::object record);
bool read_chat_object(ParseCtx& c, TapeObject record);
bool read_chat_array(ParseCtx& c, od::array messages);
bool read_chat_array(ParseCtx& c, TapeArray messages);
bool read_list_object(ParseCtx& c, od::object record);
bool read_list_array(ParseCtx& c, od::array entries);
// Stages every span (in Scratch::staging); emit_otel then emits one trajectory per traceId,
// using `c.t` for each — only once the whole record is known to be valid.
bool read_otel(ParseCtx& c, od::object record);
void emit_otel(ParseCtx& c, const TraceParser::Emit& emit);
// Writes a trace's totals from its spans into `out`: `latency_ms` (the root span's duration),
// `tokens`, `input_tokens`, `output_tokens` (the model calls' usage), each unless the object
// text `given` already has that member.
void append_span_totals(const std::vector<SpanInfo>& spans, std::string_view given, ObjectWriter& out);
// Calls fn(part) for each part of type `type` of the messages of the latest GenAI conventions
// (`[{"role": …, "parts": [{"type": "tool_call", …}]}]`, the text of gen_ai.*.messages); text
// that is not such JSON gives none.
template <class Fn>
void for_message_parts(std::string_view json, std::string_view type, Fn&& fn) {
  if (json.empty()) return;
  static thread_local simdjson::dom::parser parser;
  simdjson::dom::array messages;
  if (parser.parse(json.data(), json.size()).get_array().get(messages)) return;
  for (simdjson::dom::element message : messages) {
    simdjson::dom::array parts;
    if (message["parts"].get_array().get(parts)) continue;
    for (simdjson::dom::element part : parts) {
      simdjson::dom::object o;
      std::string_view part_type;
      if (part.get_object().get(o) || o["type"].get_string().get(part_type) || part_type != type) continue;
      fn(o);
    }
  }
}
// Whether the JSON object text `object` has a top-level member `key`.
bool has_member(std::string_view object, std::string_view key);

}  // namespace trajcheck::detail
