// The native format: {"trace_id", "context", "steps": [...]} as docs/traces.md shows it, which is
// also what `trajcheck normalize` prints (so normalized output reads back unchanged).
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "readers/chat_formats.hpp"
#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

namespace {

// The step fields read_step knows, told apart by a member name's length first: one comparison
// of its bytes, not one per field. Inlined into read_step's dispatch, which then branches once
// per member (called, it cost a tenth of building a validated record).
enum class StepField : std::uint8_t {
  other, type, tool, raw_tool, id, arguments, arguments_invalid, result, content, status, is_error, error, turn
};
// `key`, whose size the caller checked to be N - 1, is `name`: its bytes alone are compared.
template <std::size_t N>
[[gnu::always_inline]] inline bool named(std::string_view key, const char (&name)[N]) {
  return std::memcmp(key.data(), name, N - 1) == 0;
}
[[gnu::always_inline]] inline StepField step_field(std::string_view key) {
  switch (key.size()) {
    case 2: return named(key, "id") ? StepField::id : StepField::other;
    case 4:
      return named(key, "type")   ? StepField::type
             : named(key, "tool") ? StepField::tool
             : named(key, "turn") ? StepField::turn
                                  : StepField::other;
    case 5: return named(key, "error") ? StepField::error : StepField::other;
    case 6:
      return named(key, "result")   ? StepField::result
             : named(key, "status") ? StepField::status
                                    : StepField::other;
    case 7: return named(key, "content") ? StepField::content : StepField::other;
    case 8:
      return named(key, "raw_tool")   ? StepField::raw_tool
             : named(key, "is_error") ? StepField::is_error
                                      : StepField::other;
    case 9: return named(key, "arguments") ? StepField::arguments : StepField::other;
    case 17: return named(key, "arguments_invalid") ? StepField::arguments_invalid : StepField::other;
    default: return StepField::other;
  }
}

// A step's extra members (the fields read_step does not know), written as a JSON object after
// the extras of the steps before it in one buffer for the record: read_native_record stores that
// buffer once, when every step is read, rather than each step's object on its own through a
// scratch string (a copy and an arena append a step: building the trace of 5 MB of bench data
// took 8.8 M instructions that way, 8.3 M this way).
class StepExtra {
 public:
  explicit StepExtra(std::string& out) : out_(out), start_(out.size()) {}
  // Opens member `k`; its value is to be appended to the string returned. (Out of line: the
  // members written this way are few, and inlined it kept the member loop from inlining more.)
  [[gnu::noinline]] std::string& key(std::string_view k) {
    open();
    append_json_string(out_, k);
    out_.push_back(':');
    return out_;
  }
  // Appends one member given as its JSON text (`"name":value`).
  void append_member(std::string_view member) {
    open();
    out_.append(member);
  }
  // Closes the object; where it lies in the buffer (empty when no member was written).
  Slice finish() {
    if (out_.size() == start_) return {};
    out_.push_back('}');
    return Slice{static_cast<std::uint32_t>(start_), static_cast<std::uint32_t>(out_.size() - start_)};
  }

 private:
  void open() { out_.push_back(out_.size() == start_ ? '{' : ','); }
  std::string& out_;
  std::size_t start_;
};

// Writes the member `key`: `v` minified (ParseCtx::write_member for a StepExtra).
bool write_extra_member(ParseCtx& c, StepExtra& w, std::string_view key, const od::value& v) {
  return c.write_value(v, w.key(key));
}
[[gnu::noinline]] bool write_written_member(ParseCtx& c, StepExtra& w, std::string_view key, const TapeValue& v) {
  return c.write_value(v, w.key(key));
}
inline bool write_extra_member(ParseCtx& c, StepExtra& w, std::string_view key, const TapeValue& v) {
  if (std::string_view m = canonical_tape_member(v); !m.empty()) {
    w.append_member(m);
    return true;
  }
  return write_written_member(c, w, key, v);
}

// V is od::value, or TapeValue for a record the DOM parser has validated. The step's extra
// object is appended to `extras`, and Step::extra is left holding its place there.
template <class V>
bool read_step(ParseCtx& c, V sv, std::uint32_t index, std::string& extras) {
  const char* where = location_of(sv);
  typename JsonOf<V>::object o;
  if (auto e = sv.get_object().get(o)) {
    return c.fail(where, expect(e, "a step must be a JSON object"));
  }
  // Built where it is kept (a step the record fails on is dropped with the record).
  Step& st = c.t.steps().emplace_back();
  st.turn = index;
  StepExtra extra(extras);
  bool has_type = false, has_tool = false, error = false, status_ok = false;
  std::string_view raw_tool_field;
  bool has_raw_tool = false;
  // The per-member function is inlined into the member loop: called once per member, its entry
  // and exit cost more than most members' reading.
  bool fields_ok = for_fields(c, o, [&](std::string_view key, V v) __attribute__((always_inline)) {
    const StepField field = step_field(key);
    if (field == StepField::type) {
      std::string_view type;
      if (!c.get_string(v, &type, "step \"type\"")) return false;
      st.type = step_type_from_string(type);
      if (st.type == StepType::other) st.type_name = c.t.store(type);
      has_type = true;
    } else if (field == StepField::tool) {
      std::string_view name;
      if (!c.get_string(v, &name, "step \"tool\"")) return false;
      c.set_tool(st, name);  // raw_tool is fixed below if the record carries one
      has_tool = true;
    } else if (field == StepField::raw_tool) {
      if (!c.get_string(v, &raw_tool_field, "step \"raw_tool\"")) return false;
      has_raw_tool = true;
    } else if (field == StepField::id) {
      if (!c.get_id(v, &st.id, "step \"id\"")) return false;
    } else if (field == StepField::arguments) {
      if (!c.store_value(v, &st.arguments)) return false;
    } else if (field == StepField::arguments_invalid) {
      bool b = false;
      if (v.get_bool().get(b)) return c.fail(location_of(v), "\"arguments_invalid\" must be true or false");
      st.arguments_invalid = b;
    } else if (field == StepField::result) {
      bool pattern = false;
      if (!c.store_json_result(v, &st.result, &pattern)) return false;
      error |= pattern;
    } else if (field == StepField::content) {
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      if (type == od::json_type::string) {
        std::string_view text;
        if (!c.get_string(v, &text, "step \"content\"")) return false;
        st.content = c.t.store(text);
      } else {
        bool null = false;
        if (!c.is_null(v, &null)) return false;
        if (!null) return c.fail(location_of(v), "step \"content\" must be a string");
      }
    } else if (field == StepField::status) {
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      std::string_view status;
      if (type == od::json_type::string) {
        if (!c.get_string(v, &status, "step \"status\"")) return false;
        if (status_is_error(status)) error = true;
        else if (status_is_ok(status)) status_ok = true;
        else append_json_string(extra.key("source_status"), status);
      } else {
        bool null = false;
        if (!c.is_null(v, &null)) return false;
        if (!null && !c.write_value(v, extra.key("source_status"))) return false;
      }
    } else if (field == StepField::is_error) {
      bool b = false;
      if (v.get_bool().get(b)) return c.fail(location_of(v), "\"is_error\" must be true or false");
      error |= b;
    } else if (field == StepField::error) {
      // Any error value but null/false marks the call failed; the value stays readable.
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      if (type == od::json_type::null) {
        bool null = false;
        if (!c.is_null(v, &null)) return false;
        return true;
      }
      if (type == od::json_type::boolean) {
        bool b = false;
        if (auto e = v.get_bool().get(b)) return c.fail(location_of(v), json_error_message(e));
        error |= b;
        if (b) extra.key(key) += "true";
        return true;
      }
      error = true;
      if (!write_extra_member(c, extra, key, v)) return false;
    } else {
      if (field == StepField::turn) {  // a whole number: the step's turn (written back by normalize)
        std::string_view raw = trim_ws(v.raw_json_token());
        std::uint64_t n = 0;
        if (is_json_number(raw) && raw.size() < 10 && raw.find_first_of(".eE-") == std::string_view::npos) {
          for (char ch : raw) n = n * 10 + static_cast<std::uint64_t>(ch - '0');
          st.turn = static_cast<std::uint32_t>(n);
          return true;
        }
      }
      if (!write_extra_member(c, extra, key, v)) return false;
    }
    return true;
  });
  if (!fields_ok) return false;
  if (!has_type) {
    if (!has_tool) return c.fail(where, "step has no \"type\" (and no \"tool\" to make it a tool_call)");
    st.type = StepType::tool_call;
  }
  if (st.type == StepType::tool_call) {
    if (!has_tool) return c.fail(where, "tool_call step has no \"tool\"");
    if (has_raw_tool) st.raw_tool = c.t.store(raw_tool_field);
    st.status = error ? StepStatus::error : StepStatus::ok;
    (void)status_ok;
  } else {
    if (has_tool) {
      // A tool name on a step that is not a call (e.g. an approval naming the tool) is data.
      append_json_string(extra.key("tool"), c.t.text(st.raw_tool));
      st.tool = kNoTool;
      st.tool_name = st.raw_tool = Slice{};
    }
    if (has_raw_tool) append_json_string(extra.key("raw_tool"), raw_tool_field);
    if (error) st.status = StepStatus::error;
  }
  st.extra = extra.finish();
  return true;
}

// A wrapped `steps` array may be a tool list (docs/traces.md): its first entry is a tool name or an
// object naming a tool ("name" / "function" / "tool_name") without a step's "type" or "tool".
// The array is rewound after the look; a JSON error found here is left to the reader.
bool steps_are_tool_list(od::array& steps) {
  bool list = false;
  for (auto element : steps) {
    od::value v;
    od::json_type type;
    if (element.get(v) || v.type().get(type)) break;
    if (type == od::json_type::string) {
      list = true;
    } else if (type == od::json_type::object) {
      od::object o;
      if (v.get_object().get(o)) break;
      bool named = false, step = false;
      for (auto field : o) {
        std::string_view key;
        if (field.unescaped_key().get(key)) break;
        named = named || key == "name" || key == "function" || key == "tool_name";
        step = step || key == "type" || key == "tool";
      }
      list = named && !step;
    }
    break;
  }
  bool rewound = false;
  return !steps.reset().get(rewound) && list;
}
// A record the DOM path validated is read by it only when its steps are steps; the other
// shape is read the ondemand way (read_step declines it).
bool steps_are_tool_list(TapeArray&) { return false; }

template <class Object>
bool read_native_record(ParseCtx& c, Object& record) {
  ObjectWriter meta(c.s.meta);
  ParseCtx::Wrapper w;
  w.meta = &meta;
  bool has_steps = false;
  // The steps' extra objects, one after the other (read_step); a tool list's reading, the
  // other way to read "steps", does not touch it.
  std::string& extras = c.s.call_extra;
  extras.clear();
  const std::size_t first_step = c.t.steps().size();
  bool fields_ok = for_fields(c, record, [&](std::string_view key, auto v) {
    if (key == "steps") {
      const char* where = location_of(v);
      typename JsonOf<decltype(v)>::array steps;
      if (auto e = v.get_array().get(steps))
        return c.fail(where, expect(e, "\"steps\" must be an array"));
      std::uint32_t i = 0;
      if (steps_are_tool_list(steps)) {
        if constexpr (std::is_same_v<decltype(steps), od::array>) {
          if (!read_list_array(c, steps)) return false;
        }
      } else if (!for_each_element(c, steps, [&](auto sv) { return read_step(c, sv, i++, extras); })) {
        return false;
      }
      has_steps = true;
      return true;
    }
    return c.wrapper_field(w, key, v);
  });
  if (!fields_ok) return false;
  if (!has_steps) return c.fail(c.text.data(), "native record has no \"steps\" array");
  if (!extras.empty()) {  // each step's extra lies in the buffer: at the buffer's place in the arena, now
    const Slice all = c.t.store(extras);
    std::vector<Step>& steps = c.t.steps();
    for (std::size_t i = first_step; i < steps.size(); ++i)
      if (!steps[i].extra.empty()) steps[i].extra.off += all.off;
  }
  c.finish_wrapper(w);
  return true;
}

}  // namespace

bool read_native(ParseCtx& c, od::object record) { return read_native_record(c, record); }
bool read_native(ParseCtx& c, TapeObject record) { return read_native_record(c, record); }

}  // namespace trajcheck::detail
