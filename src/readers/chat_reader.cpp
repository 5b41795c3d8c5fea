// Chat transcripts: OpenAI chat messages (tool_calls, role "tool", legacy function_call) and
// Anthropic messages (content blocks text / tool_use / tool_result) share one reader, since
// both are lists of role-tagged messages and real logs mix their conventions.
#include <algorithm>

#include <fmt/format.h>

#include "readers/chat_roles.hpp"
#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

namespace {

using Role = ChatRole;

// The value of a string field looked up ahead of the in-order pass (e.g. a message's "role",
// which decides how its other fields are read). Empty view when absent.
bool peek_string(ParseCtx& c, od::object& o, std::string_view key, std::string_view* out, const char* where) {
  *out = {};
  od::value v;
  auto e = o.find_field_unordered(key).get(v);
  if (e == simdjson::NO_SUCH_FIELD) {
    if (auto r = o.reset().error()) return c.fail(where, json_error_message(r));
    return true;
  }
  if (e) return c.fail(c.here(), json_error_message(e));
  od::json_type type;
  if (auto te = v.type().get(type)) return c.fail(location_of(v), json_error_message(te));
  if (type != od::json_type::string) return c.fail(location_of(v), fmt::format("\"{}\" must be a string", key));
  if (auto ge = v.get_string().get(*out)) return c.fail(location_of(v), json_error_message(ge));
  if (auto r = o.reset().error()) return c.fail(where, json_error_message(r));
  return true;
}
// The same over a validated record: find_field_unordered compares keys as written (no
// unescaping) and takes the first match, and so does this scan.
bool peek_string(ParseCtx& c, TapeObject& o, std::string_view key, std::string_view* out, const char* where) {
  *out = {};
  bool found = false, ok = true;
  bool walked = for_tape_fields(o, [&](std::string_view, const TapeValue& v) {
    std::string_view raw = trim_ws(v.doc()->token(v.token_index() - 2));
    if (raw.size() != key.size() + 2 || raw.substr(1, key.size()) != key) return true;
    found = true;
    if (v.type().value_unsafe() != od::json_type::string)
      ok = c.fail(location_of(v), fmt::format("\"{}\" must be a string", key));
    else if (v.get_string().get(*out))
      ok = c.fail(location_of(v), "the record's two parse views disagree");
    return false;
  });
  if (!walked && !found) return c.fail(where, "the record's two parse views disagree");
  return ok;
}

// Tool results are joined to their calls through an index instead of a scan of the earlier
// steps, which was quadratic when many results come long after their calls. A result joins,
// with an id, the latest tool_call step with that id and no result
// yet; without, the first such step with the result's raw tool name (any, without a name).
// Steps never lose a result, so entries that got one are dropped lazily and each is passed
// over at most once.
class CallIndex {
 public:
  void clear() {
    calls_.clear();
    prev_id_.clear();
    next_name_.clear();
    ids_.clear();
    names_.clear();
    first_any_ = 0;
  }

  // Indexes a tool_call step (call it in step order).
  void add(const Trajectory& t, std::uint32_t step) {
    auto k = static_cast<std::uint32_t>(calls_.size());
    calls_.push_back(step);
    prev_id_.push_back(kNone);
    next_name_.push_back(kNone);
    const Step& st = t.steps()[step];
    if (!st.id.empty()) {
      Entry& e = ids_.find_or_add(t.text(st.id), [&](std::uint32_t c) { return t.text(t.steps()[calls_[c]].id); }, k);
      if (e.head != k) prev_id_[k] = e.head;  // a stack: the head is the latest call
      e.head = k;
    }
    Entry& n = names_.find_or_add(t.text(st.raw_tool), [&](std::uint32_t c) { return t.text(t.steps()[calls_[c]].raw_tool); }, k);
    if (n.tail != kNone && n.tail != k) next_name_[n.tail] = k;  // a queue: head is the first call
    if (n.head == kNone) n.head = k;
    n.tail = k;
  }

  // Step index of the call a result joins, or SIZE_MAX.
  std::size_t find(const Trajectory& t, std::string_view id, std::string_view name) {
    auto open = [&](std::uint32_t k) { return t.steps()[calls_[k]].result.empty(); };
    if (!id.empty()) {
      Entry* e = ids_.find(id, [&](std::uint32_t c) { return t.text(t.steps()[calls_[c]].id); });
      if (!e) return SIZE_MAX;
      while (e->head != kNone && !open(e->head)) e->head = prev_id_[e->head];
      return e->head == kNone ? SIZE_MAX : calls_[e->head];
    }
    if (name.empty()) {
      while (first_any_ < calls_.size() && !open(first_any_)) ++first_any_;
      return first_any_ < calls_.size() ? calls_[first_any_] : SIZE_MAX;
    }
    Entry* e = names_.find(name, [&](std::uint32_t c) { return t.text(t.steps()[calls_[c]].raw_tool); });
    if (!e) return SIZE_MAX;
    while (e->head != kNone && !open(e->head)) e->head = next_name_[e->head];
    return e->head == kNone ? SIZE_MAX : calls_[e->head];
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Entry {
    std::uint32_t key = kNone;  // a call whose text is the key
    std::uint32_t head = kNone, tail = kNone;
  };
  // Open addressing from a text (read through a call index) to an Entry; memory is reused.
  class Table {
   public:
    void clear() {
      entries_.clear();
      std::fill(slots_.begin(), slots_.end(), 0);
    }
    template <class TextOf>
    Entry* find(std::string_view key, TextOf&& text_of) {
      if (slots_.empty()) return nullptr;
      std::size_t mask = slots_.size() - 1;
      for (std::size_t h = hash(key) & mask;; h = (h + 1) & mask) {
        std::uint32_t s = slots_[h];
        if (s == 0) return nullptr;
        if (text_of(entries_[s - 1].key) == key) return &entries_[s - 1];
      }
    }
    template <class TextOf>
    Entry& find_or_add(std::string_view key, TextOf&& text_of, std::uint32_t call) {
      if (Entry* e = find(key, text_of)) return *e;
      if (2 * (entries_.size() + 1) > slots_.size()) grow(text_of);
      std::size_t mask = slots_.size() - 1, h = hash(key) & mask;
      while (slots_[h] != 0) h = (h + 1) & mask;
      entries_.push_back(Entry{call, kNone, kNone});
      slots_[h] = static_cast<std::uint32_t>(entries_.size());
      return entries_.back();
    }

   private:
    static std::size_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
    template <class TextOf>
    void grow(TextOf&& text_of) {
      slots_.assign(std::max<std::size_t>(16, slots_.size() * 2), 0);
      std::size_t mask = slots_.size() - 1;
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        std::size_t h = hash(text_of(entries_[i].key)) & mask;
        while (slots_[h] != 0) h = (h + 1) & mask;
        slots_[h] = static_cast<std::uint32_t>(i + 1);
      }
    }
    std::vector<std::uint32_t> slots_;
    std::vector<Entry> entries_;
  };

  std::vector<std::uint32_t> calls_;  // step indices of the indexed calls
  std::vector<std::uint32_t> prev_id_, next_name_;
  Table ids_, names_;
  std::uint32_t first_any_ = 0;
};

// One per thread: a chat trajectory is read start to end by one thread, without nesting.
thread_local CallIndex t_calls;

// Joins `r` to its call through the index, or keeps it as a call of its own (with a warning)
// when there is none. Returns the step index.
std::uint32_t join_result(ParseCtx& c, const PendingResult& r, std::uint32_t turn) {
  auto& steps = c.t.steps();
  std::size_t found = t_calls.find(c.t, c.t.text(r.id), c.t.text(r.name));
  if (found == SIZE_MAX) {
    c.warn(r.where, r.id.empty() ? std::string("tool result matches no earlier tool call; kept as a tool_call step without arguments")
                                 : fmt::format("tool result for call '{}' matches no earlier tool call; kept as a tool_call step without arguments",
                                               c.t.text(r.id)));
    Step& st = c.t.add_step(StepType::tool_call);
    st.id = r.id;
    st.turn = turn;
    c.set_tool(st, c.t.text(r.name));
    found = steps.size() - 1;
    t_calls.add(c.t, static_cast<std::uint32_t>(found));
  }
  Step& st = steps[found];
  st.result = r.result;
  st.status = r.error ? StepStatus::error : StepStatus::ok;
  if (!r.extra.empty()) st.extra = c.merge_extra(st.extra, c.t.text(r.extra));
  return static_cast<std::uint32_t>(found);
}

void append_text(std::string& text, std::string_view piece) {
  if (!text.empty() && !piece.empty()) text.push_back('\n');
  text.append(piece);
}

// One entry of OpenAI `tool_calls` (or a legacy `function_call` object when `legacy`).
template <class V>
bool read_openai_call(ParseCtx& c, V ev, std::uint32_t turn, bool legacy) {
  using Object = typename JsonOf<V>::object;
  const char* where = location_of(ev);
  Object o;
  if (auto e = ev.get_object().get(o))
    return c.fail(where, e == simdjson::INCORRECT_TYPE ? std::string("a tool call must be a JSON object") : json_error_message(e));
  Step st;
  st.type = StepType::tool_call;
  st.status = StepStatus::ok;
  st.turn = turn;
  ObjectWriter extra(c.s.call_extra);
  bool has_name = false, has_args = false;
  // Arguments may precede the name: string arguments are parsed after the loop, so that a
  // warning about them can name the tool.
  std::string_view args_text;
  const char* args_where = nullptr;
  auto read_function = [&](Object& fo) {
    return for_fields(c, fo, [&](std::string_view key, V v) {
      if (key == "name") {
        std::string_view name;
        if (!c.get_string(v, &name, "function \"name\"")) return false;
        c.set_tool(st, name);
        has_name = true;
        return true;
      }
      if (key == "arguments") {
        od::json_type type;
        if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
        if (type != od::json_type::string) return c.set_arguments_value(st, v);
        args_where = location_of(v);
        return c.get_string(v, &args_text, "function \"arguments\"") && (has_args = true);
      }
      return c.write_value(v, extra.key(key));
    });
  };
  if (legacy) {
    if (!read_function(o)) return false;
  } else {
    bool ok = for_fields(c, o, [&](std::string_view key, V v) {
      if (key == "id") return c.get_id(v, &st.id, "tool call \"id\"");
      if (key == "type") {
        std::string_view type;
        if (!c.get_string(v, &type, "tool call \"type\"")) return false;
        if (type != "function") append_json_string(extra.key("call_type"), type);
        return true;
      }
      if (key == "function") {
        const char* fwhere = location_of(v);
        Object fo;
        if (auto e = v.get_object().get(fo))
          return c.fail(fwhere, e == simdjson::INCORRECT_TYPE ? std::string("\"function\" must be an object") : json_error_message(e));
        return read_function(fo);
      }
      bool null = false;
      if (!c.is_null(v, &null)) return false;
      return null || c.write_value(v, extra.key(key));
    });
    if (!ok) return false;
  }
  if (!has_name) return c.fail(where, "tool call has no function name");
  if (has_args) c.set_arguments_text(st, args_text, args_where);
  std::string_view x = extra.finish();
  if (!x.empty()) st.extra = c.t.store(x);
  c.s.pending.push_back(st);
  return true;
}

// Anthropic tool_use block (the "type" was already read).
template <class Object>
bool read_tool_use(ParseCtx& c, Object& o, const char* where, std::uint32_t turn) {
  Step st;
  st.type = StepType::tool_call;
  st.status = StepStatus::ok;
  st.turn = turn;
  ObjectWriter extra(c.s.call_extra);
  bool has_name = false;
  bool ok = for_fields(c, o, [&](std::string_view key, auto v) {
    if (key == "type") return true;
    if (key == "id") return c.get_id(v, &st.id, "tool_use \"id\"");
    if (key == "name") {
      std::string_view name;
      if (!c.get_string(v, &name, "tool_use \"name\"")) return false;
      c.set_tool(st, name);
      has_name = true;
      return true;
    }
    if (key == "input") return c.set_arguments_value(st, v);
    return c.write_value(v, extra.key(key));
  });
  if (!ok) return false;
  if (!has_name) return c.fail(where, "tool_use block has no \"name\"");
  std::string_view x = extra.finish();
  if (!x.empty()) st.extra = c.t.store(x);
  c.s.pending.push_back(st);
  return true;
}

struct BlockSink {
  std::string* text;        // text blocks, joined by newlines
  std::string* blocks;      // other blocks, as comma-separated JSON values
  ObjectWriter* extra;      // extra fields of text blocks
  bool allow_tools;         // tool_use / tool_result blocks allowed (not inside a tool_result)
  std::uint32_t turn;
};

template <class Array>
bool read_blocks(ParseCtx& c, Array& a, BlockSink& sink);

// Content of a message or tool_result: a string, null, or an array of blocks.
template <class V>
bool read_content(ParseCtx& c, V v, BlockSink& sink) {
  od::json_type type;
  if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
  if (type == od::json_type::string) {
    std::string_view text;
    if (!c.get_string(v, &text, "content")) return false;
    append_text(*sink.text, text);
    return true;
  }
  if (type == od::json_type::array) {
    typename JsonOf<V>::array a;
    if (auto e = v.get_array().get(a)) return c.fail(location_of(v), json_error_message(e));
    return read_blocks(c, a, sink);
  }
  bool null = false;
  if (!c.is_null(v, &null)) return false;
  if (null) return true;
  return c.fail(location_of(v), "\"content\" must be a string, an array of content blocks, or null");
}

template <class Object>
bool read_tool_result_block(ParseCtx& c, Object& o, const char* where, std::uint32_t turn) {
  PendingResult r;
  r.where = where;
  ObjectWriter extra(c.s.result_extra);
  std::string& text = c.s.result_text;
  text.clear();
  c.s.result_blocks.clear();
  // The nested content writes text-block extras into the result's extra too.
  BlockSink sink{&text, &c.s.result_blocks, &extra, false, turn};
  bool has_content = false;
  bool ok = for_fields(c, o, [&](std::string_view key, auto v) {
    if (key == "type") return true;
    if (key == "tool_use_id" || key == "id") return c.get_id(v, &r.id, "tool_result \"tool_use_id\"");
    if (key == "is_error") {
      bool b = false;
      if (v.get_bool().get(b)) return c.fail(location_of(v), "\"is_error\" must be true or false");
      r.error |= b;
      return true;
    }
    if (key == "content") {
      has_content = true;
      return read_content(c, v, sink);
    }
    return c.write_value(v, extra.key(key));
  });
  if (!ok) return false;
  if (!c.s.result_blocks.empty()) {
    std::string& b = extra.key("content_blocks");
    b.push_back('[');
    b.append(c.s.result_blocks);
    b.push_back(']');
  }
  if (has_content) {
    // store_text_result reuses result_text as its buffer: copy the text out first.
    c.s.merged.assign(text);
    bool pattern = false;
    r.result = c.store_text_result(c.s.merged, &pattern);
    r.error |= pattern;
  }
  std::string_view x = extra.finish();
  if (!x.empty()) r.extra = c.t.store(x);
  c.s.results.push_back(r);
  return true;
}

// Writes a block kept whole (ondemand: validating it; a validated one: false only when it
// nests too deep, and the record is then read the ondemand way).
bool write_block(ParseCtx& c, od::object& o, std::string& out) {
  JsonFailure f;
  if (!write_object(o, out, f)) return c.fail(f);
  return true;
}
bool write_block(ParseCtx& c, TapeObject& o, std::string& out) {
  if (!write_tape_value(o.value(), out)) return c.fail(location_of(o.value()), "nested too deep");
  return true;
}

template <class Array>
bool read_blocks(ParseCtx& c, Array& a, BlockSink& sink) {
  return for_each_element(c, a, [&](auto ev) {
    using V = decltype(ev);
    const char* where = location_of(ev);
    od::json_type type;
    if (auto e = ev.type().get(type)) return c.fail(where, json_error_message(e));
    if (type == od::json_type::string) {  // some producers list plain strings
      std::string_view text;
      if (!c.get_string(ev, &text, "content")) return false;
      append_text(*sink.text, text);
      return true;
    }
    if (type != od::json_type::object) return c.fail(where, "a content block must be an object or a string");
    typename JsonOf<V>::object o;
    if (auto e = ev.get_object().get(o)) return c.fail(where, json_error_message(e));
    std::string_view btype;
    if (!peek_string(c, o, "type", &btype, where)) return false;
    if (btype == "text") {
      bool ok = for_fields(c, o, [&](std::string_view key, V v) {
        if (key == "type") return true;
        if (key == "text") {
          std::string_view text;
          if (!c.get_string(v, &text, "text block \"text\"")) return false;
          append_text(*sink.text, text);
          return true;
        }
        return c.write_value(v, sink.extra->key(key));
      });
      if (!ok) return false;
    } else if (sink.allow_tools && btype == "tool_use") {
      if (!read_tool_use(c, o, where, sink.turn)) return false;
    } else if (sink.allow_tools && btype == "tool_result") {
      if (!read_tool_result_block(c, o, where, sink.turn)) return false;
    } else {
      // Images, thinking, documents…: kept whole under "content_blocks".
      if (!sink.blocks->empty()) sink.blocks->push_back(',');
      if (!write_block(c, o, *sink.blocks)) return false;
    }
    return true;
  });
}

template <class V>
bool read_message(ParseCtx& c, V mv, std::uint32_t index) {
  const char* where = location_of(mv);
  typename JsonOf<V>::object m;
  if (auto e = mv.get_object().get(m))
    return c.fail(where, e == simdjson::INCORRECT_TYPE ? std::string("a message must be a JSON object") : json_error_message(e));
  std::string_view role_name;
  if (!peek_string(c, m, "role", &role_name, where)) return false;
  if (role_name.empty()) return c.fail(where, "message has no \"role\"");
  Role role = classify_chat_role(role_name);
  Scratch& s = c.s;
  s.text.clear();
  s.blocks.clear();
  s.pending.clear();
  s.results.clear();
  ObjectWriter extra(s.msg_extra);
  BlockSink sink{&s.text, &s.blocks, &extra, role != Role::tool, index};
  PendingResult own;  // the result a role "tool" message carries
  own.where = where;
  bool has_content = false;
  bool ok = for_fields(c, m, [&](std::string_view key, V v) {
    if (key == "role") return true;
    if (key == "content") {
      has_content = true;
      return read_content(c, v, sink);
    }
    if (key == "tool_calls") {
      bool null = false;
      if (!c.is_null(v, &null)) return false;
      if (null) return true;
      typename JsonOf<V>::array a;
      if (auto e = v.get_array().get(a)) return c.fail(location_of(v), expect(e, "\"tool_calls\" must be an array"));
      return for_each_element(c, a, [&](V ev) { return read_openai_call(c, ev, index, false); });
    }
    if (key == "function_call") {
      bool null = false;
      if (!c.is_null(v, &null)) return false;
      return null || read_openai_call(c, v, index, true);
    }
    if (role == Role::tool) {
      if (key == "tool_call_id") return c.get_id(v, &own.id, "\"tool_call_id\"");
      if (key == "name") {
        std::string_view name;
        if (!c.get_string(v, &name, "tool message \"name\"")) return false;
        own.name = c.t.store(name);
        return true;
      }
      if (key == "is_error") {
        bool b = false;
        if (v.get_bool().get(b)) return c.fail(location_of(v), "\"is_error\" must be true or false");
        own.error |= b;
        return true;
      }
      if (key == "error") {
        od::json_type type;
        if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
        if (type == od::json_type::boolean) {
          bool b = false;
          if (auto e = v.get_bool().get(b)) return c.fail(location_of(v), json_error_message(e));
          own.error |= b;
        } else if (type != od::json_type::null) {
          own.error = true;
        }
      }
    }
    bool null = false;
    if (!c.is_null(v, &null)) return false;
    return null || c.write_value(v, extra.key(key));
  });
  if (!ok) return false;
  if (!s.blocks.empty()) {
    std::string& b = extra.key("content_blocks");
    b.push_back('[');
    b.append(s.blocks);
    b.push_back(']');
  }
  if (role == Role::system) return true;  // system prompts are not steps (docs/traces.md)

  auto& steps = c.t.steps();
  std::size_t first = steps.size();
  std::size_t holder = SIZE_MAX;  // step that receives the message's extra fields
  if (role == Role::tool) {
    c.s.merged.assign(s.text);
    bool pattern = false;
    if (has_content) own.result = c.store_text_result(c.s.merged, &pattern);
    else own.result = c.t.store("null");
    own.error |= pattern;
    holder = join_result(c, own, index);
  } else {
    for (const PendingResult& r : s.results) {
      std::uint32_t at = join_result(c, r, index);
      if (holder == SIZE_MAX) holder = at;
    }
    first = steps.size();
    bool text = !s.text.empty();
    if (role == Role::assistant) {
      if (text || (s.pending.empty() && !extra.empty())) {
        Step& st = c.t.add_step(StepType::assistant_message);
        st.content = c.t.store(s.text);
        st.turn = index;
      }
    } else if (text || s.results.empty()) {
      Step& st = c.t.add_step(role == Role::user ? StepType::user_message : StepType::other);
      if (role == Role::other) st.type_name = c.t.store(role_name);
      st.content = c.t.store(s.text);
      st.turn = index;
    }
    for (const Step& p : s.pending) {
      steps.push_back(p);
      t_calls.add(c.t, static_cast<std::uint32_t>(steps.size() - 1));
    }
    if (steps.size() > first) holder = first;
  }
  std::string_view x = extra.finish();
  if (!x.empty() && holder != SIZE_MAX) steps[holder].extra = c.merge_extra(steps[holder].extra, x);
  return true;
}

}  // namespace

namespace {

template <class Array>
bool read_messages(ParseCtx& c, Array& messages) {
  t_calls.clear();
  std::uint32_t index = 0;
  return for_each_element(c, messages, [&](auto mv) { return read_message(c, mv, index++); });
}

template <class Object>
bool read_chat_record(ParseCtx& c, Object& record) {
  ObjectWriter meta(c.s.meta);
  ParseCtx::Wrapper w;
  w.meta = &meta;
  bool has_messages = false;
  bool ok = for_fields(c, record, [&](std::string_view key, auto v) {
    if ((key == "messages" || key == "traj") && !has_messages) {
      const char* where = location_of(v);
      typename JsonOf<decltype(v)>::array a;
      if (auto e = v.get_array().get(a))
        return c.fail(where, e == simdjson::INCORRECT_TYPE ? fmt::format("\"{}\" must be an array of messages", key)
                                                           : json_error_message(e));
      has_messages = true;
      return read_messages(c, a);
    }
    // Anthropic puts the system prompt beside the messages; system prompts are not steps.
    if (key == "system") return c.skip_value(v);
    return c.wrapper_field(w, key, v);
  });
  if (!ok) return false;
  if (!has_messages) return c.fail(c.text.data(), "chat record has no \"messages\" (or \"traj\") array");
  c.finish_wrapper(w);
  return true;
}

}  // namespace

bool read_chat_array(ParseCtx& c, od::array messages) { return read_messages(c, messages); }
bool read_chat_array(ParseCtx& c, TapeArray messages) { return read_messages(c, messages); }
bool read_chat_object(ParseCtx& c, od::object record) { return read_chat_record(c, record); }
bool read_chat_object(ParseCtx& c, TapeObject record) { return read_chat_record(c, record); }

}  // namespace trajcheck::detail
