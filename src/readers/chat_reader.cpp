// Chat transcripts: OpenAI chat messages (tool_calls, role "tool", legacy function_call) and
// Anthropic messages (content blocks text / tool_use / tool_result) share one reader, since
// both are lists of role-tagged messages and real logs mix their conventions.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "readers/chat_formats.hpp"
#include "readers/chat_roles.hpp"
#include "readers/chat_shared.hpp"
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
bool peek_string(ParseCtx& c, TapeObject& o, std::string_view key, std::string_view* out, const char*) {
  *out = {};
  bool ok = true;
  for_tape_fields(o, [&](std::string_view, const TapeValue& v) {
    std::string_view raw = trim_ws(v.doc()->token(v.token_index() - 2));
    if (raw.size() != key.size() + 2 || raw.substr(1, key.size()) != key) return true;
    if (v.type().value_unsafe() != od::json_type::string)
      ok = c.fail(location_of(v), fmt::format("\"{}\" must be a string", key));
    else
      *out = v.get_string().value_unsafe();
    return false;
  });
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

// The call's fields and then its result's: a result field whose key the call already has (a
// message id, LangChain's metadata of both messages) is kept as "result_<key>", so that no
// key appears twice in the step.
Slice merge_result_extra(ParseCtx& c, Slice call, std::string_view result) {
  if (call.len <= 2) return c.merge_extra(call, result);
  std::string_view have = c.t.text(call);
  auto has_key = [&](std::string_view key) {
    // Keys of a minified object we wrote: search for ,"key": or {"key": at depth one.
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < have.size(); ++i) {
      char ch = have[i];
      if (in_string) {
        if (ch == '\\') ++i;
        else if (ch == '"') in_string = false;
        continue;
      }
      if (ch == '"') {
        if (depth == 1 && (have[i - 1] == '{' || have[i - 1] == ',')) {
          std::size_t end = i + 1;
          while (end < have.size() && have[end] != '"') end += have[end] == '\\' ? 2 : 1;
          if (have.substr(i + 1, end - i - 1) == key && end + 1 < have.size() && have[end + 1] == ':') return true;
        }
        in_string = true;
      } else if (ch == '{' || ch == '[') {
        ++depth;
      } else if (ch == '}' || ch == ']') {
        --depth;
      }
    }
    return false;
  };
  std::string out;
  ObjectWriter w(out);
  od::document doc;
  od::object o;
  c.s.inner_padded.assign(result);
  c.s.inner_padded.append(simdjson::SIMDJSON_PADDING, ' ');
  if (c.s.inner_parser.iterate(c.s.inner_padded.data(), result.size(), c.s.inner_padded.size()).get(doc) ||
      doc.get_object().get(o))
    return c.merge_extra(call, result);
  json::MemberNames names;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key) || !names.insert(key)) return c.merge_extra(call, result);
    std::string& slot = w.key(has_key(key) ? fmt::format("result_{}", key) : std::string(key));
    JsonFailure f;
    if (!write_value(field.value(), slot, f)) return c.merge_extra(call, result);
  }
  return c.merge_extra(call, w.finish());
}

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
  c.s.joined.push_back(static_cast<std::uint32_t>(found));
  Step& st = steps[found];
  st.result = r.result;
  st.status = r.error ? StepStatus::error : StepStatus::ok;
  if (!r.extra.empty()) st.extra = merge_result_extra(c, st.extra, c.t.text(r.extra));
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
    return c.fail(where, expect(e, "a tool call must be a JSON object"));
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
      if (key == "name" && !has_name) {
        std::string_view name;
        if (!c.get_string(v, &name, "function \"name\"")) return false;
        c.set_tool(st, name);
        has_name = true;
        return true;
      }
      if (key == "arguments" && !has_args && st.arguments.empty()) {
        od::json_type type;
        if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
        if (type != od::json_type::string) return c.set_arguments_value(st, v);
        args_where = location_of(v);
        return c.get_string(v, &args_text, "function \"arguments\"") && (has_args = true);
      }
      return c.write_member(extra, key, v);
    });
  };
  if (legacy) {
    if (!read_function(o)) return false;
  } else {
    bool ok = for_fields(c, o, [&](std::string_view key, V v) {
      bool null = false;
      if (!c.is_null(v, &null)) return false;
      if (null) return true;  // AgentDojo writes "id": null for calls without one
      if (key == "id") return c.get_id(v, &st.id, "tool call \"id\"");
      if (key == "type") {
        std::string_view type;
        if (!c.get_string(v, &type, "tool call \"type\"")) return false;
        // "tool_call" is LangChain's tag for the same thing.
        if (type != "function" && type != "tool_call") append_json_string(extra.key("call_type"), type);
        return true;
      }
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      // The name as a string beside the arguments: AgentDojo and Inspect write
      // {"function": "<name>", "args" | "arguments": {…}}, LangChain {"name", "args"}.
      if ((key == "function" || key == "name") && type == od::json_type::string && !has_name) {
        std::string_view name;
        if (!c.get_string(v, &name, "tool call name")) return false;
        c.set_tool(st, name);
        return has_name = true;
      }
      if ((key == "args" || key == "arguments") && !has_args && st.arguments.empty()) {
        if (type != od::json_type::string) return c.set_arguments_value(st, v);
        args_where = location_of(v);
        return c.get_string(v, &args_text, "tool call arguments") && (has_args = true);
      }
      if (key == "function") {
        const char* fwhere = location_of(v);
        Object fo;
        if (auto e = v.get_object().get(fo))
          return c.fail(fwhere, expect(e, "\"function\" must be an object or a name"));
        return read_function(fo);
      }
      return c.write_member(extra, key, v);
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

// A call given as an object with an id, a name and its input: Anthropic's tool_use block
// {id, name, input} (its "type" already read), Bedrock's toolUse {toolUseId, name, input},
// Gemini's functionCall {id, name, args}. `what` names it in messages.
template <class Object>
bool read_call_object(ParseCtx& c, Object& o, const char* where, std::uint32_t turn, std::string_view what) {
  Step st;
  st.type = StepType::tool_call;
  st.status = StepStatus::ok;
  st.turn = turn;
  ObjectWriter extra(c.s.call_extra);
  bool has_name = false;
  // What messages call the fields; spelled out for Anthropic's blocks, so that reading them
  // builds no string per call.
  const bool anthropic = what == "tool_use";
  std::string id_what = anthropic ? std::string() : fmt::format("{} id", what);
  std::string name_what = anthropic ? std::string() : fmt::format("{} \"name\"", what);
  bool ok = for_fields(c, o, [&](std::string_view key, auto v) {
    if (key == "type") return c.skip_value(v);  // read ahead, and read again: see consume_string
    if (key == "id" || key == "toolUseId") return c.get_id(v, &st.id, anthropic ? "tool_use \"id\"" : id_what);
    if (key == "name" && !has_name) {
      std::string_view name;
      if (!c.get_string(v, &name, anthropic ? "tool_use \"name\"" : name_what)) return false;
      c.set_tool(st, name);
      return has_name = true;
    }
    if ((key == "input" || key == "args") && st.arguments.empty()) return c.set_arguments_value(st, v);
    return c.write_member(extra, key, v);
  });
  if (!ok) return false;
  if (!has_name) return c.fail(where, fmt::format("{} has no \"name\"", what == "tool_use" ? "tool_use block" : what));
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
    if (key == "type") return c.skip_value(v);  // read ahead, and read again: see consume_string
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
    return c.write_member(extra, key, v);
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
bool write_block(ParseCtx&, TapeObject& o, std::string& out) {
  write_tape_value(o.value(), out);
  return true;
}

// Whether object `o` has member `key` (looked up ahead of the in-order pass, as peek_string).
bool peek_has(ParseCtx& c, od::object& o, std::string_view key, bool* found, const char* where) {
  od::value v;
  auto e = o.find_field_unordered(key).get(v);
  if (e && e != simdjson::NO_SUCH_FIELD) return c.fail(c.here(), json_error_message(e));
  *found = e == simdjson::SUCCESS;
  if (auto r = o.reset().error()) return c.fail(where, json_error_message(r));
  return true;
}
bool peek_has(ParseCtx&, TapeObject& o, std::string_view key, bool* found, const char*) {
  *found = false;
  o.value().doc()->for_keys(o.value().token_index(), [&](std::string_view k) { return !(*found = k == key); });
  return true;
}

template <class V>
bool read_keyed_call(ParseCtx& c, V v, std::string_view what, std::uint32_t turn) {
  typename JsonOf<V>::object o;
  const char* where = location_of(v);
  if (auto e = v.get_object().get(o)) return c.fail(where, expect(e, fmt::format("\"{}\" must be an object", what)));
  return read_call_object(c, o, where, turn, what);
}

// A Bedrock toolResult {toolUseId, content: [{text} | {json} | …], status} or a Gemini
// functionResponse {name, response, id}.
template <class V>
bool read_keyed_result(ParseCtx& c, V v, std::string_view what, std::uint32_t turn) {
  typename JsonOf<V>::object o;
  const char* where = location_of(v);
  if (auto e = v.get_object().get(o)) return c.fail(where, expect(e, fmt::format("\"{}\" must be an object", what)));
  PendingResult r;
  r.where = where;
  ObjectWriter extra(c.s.result_extra);
  std::string text, json, blocks;  // Bedrock content: text blocks, json blocks, the others
  std::size_t json_count = 0;
  bool has_content = false, has_response = false;
  bool ok = for_fields(c, o, [&](std::string_view key, V fv) {
    if (key == "toolUseId" || key == "id") return c.get_id(fv, &r.id, fmt::format("{} \"{}\"", what, key));
    if (key == "name") {
      std::string_view name;
      if (!c.get_string(fv, &name, fmt::format("{} \"name\"", what))) return false;
      r.name = c.t.store(name);
      return true;
    }
    if (key == "status") {
      std::string_view status;
      if (!c.get_string(fv, &status, fmt::format("{} \"status\"", what))) return false;
      if (status_is_error(status)) r.error = true;
      else if (!status_is_ok(status)) append_json_string(extra.key("result_status"), status);
      return true;
    }
    if (key == "response" && !has_response) {  // Gemini: {"output": …} or {"error": …}
      has_response = true;
      bool pattern = false;
      if (!c.store_json_result(fv, &r.result, &pattern)) return false;
      r.error |= pattern;
      if (json_has_member(c.s.inner_parser, c.s.inner_padded, c.t.text(r.result), "error")) r.error = true;
      return true;
    }
    if (key == "content" && !has_content) {
      has_content = true;
      typename JsonOf<V>::array a;
      if (auto e = fv.get_array().get(a)) return c.fail(location_of(fv), expect(e, fmt::format("{} \"content\" must be an array", what)));
      return for_each_element(c, a, [&](V bv) {
        typename JsonOf<V>::object bo;
        if (auto e = bv.get_object().get(bo)) return c.fail(location_of(bv), expect(e, "a content block must be an object"));
        return for_fields(c, bo, [&](std::string_view bkey, V bval) {
          if (bkey == "text") {
            std::string_view t;
            if (!c.get_string(bval, &t, "text block \"text\"")) return false;
            append_text(text, t);
            return true;
          }
          if (bkey == "json") {
            if (json_count++) json.push_back(',');
            return c.write_value(bval, json);
          }
          if (!known_block_key(bkey))
            c.warn(location_of(bval), fmt::format("{} content block \"{}\" is not a known kind; kept under content_blocks", what, bkey));
          if (!blocks.empty()) blocks.push_back(',');
          blocks.push_back('{');
          append_json_string(blocks, bkey);
          blocks.push_back(':');
          if (!c.write_value(bval, blocks)) return false;
          blocks.push_back('}');
          return true;
        });
      });
    }
    return c.write_value(fv, extra.key(key));
  });
  if (!ok) return false;
  if (has_content) {
    bool pattern = false;
    if (!text.empty() || json_count == 0) {
      r.result = c.store_text_result(text, &pattern);
      if (json_count) {
        std::string& j = extra.key("json");
        if (json_count > 1) j.push_back('[');
        j.append(json);
        if (json_count > 1) j.push_back(']');
      }
    } else {
      if (json_count > 1) json = "[" + json + "]";
      r.result = c.t.store(json);
      pattern = c.matches_error_pattern(json);
    }
    r.error |= pattern;
  }
  if (!blocks.empty()) {
    std::string& b = extra.key("content_blocks");
    b.push_back('[');
    b.append(blocks);
    b.push_back(']');
  }
  (void)turn;
  std::string_view x = extra.finish();
  if (!x.empty()) r.extra = c.t.store(x);
  c.s.results.push_back(r);
  return true;
}

// A content block without "type", named by its one member: Bedrock Converse ({"text"},
// {"toolUse"}, {"toolResult"}, {"image"}, …) and Gemini parts ({"text"}, {"functionCall"},
// {"functionResponse"}, {"inlineData"}, …).
template <class Object>
bool read_keyed_block(ParseCtx& c, Object& o, const char* where, BlockSink& sink) {
  bool thought = false;  // a Gemini thought summary {"text", "thought": true}: not the message text
  if (!peek_has(c, o, "thought", &thought, where)) return false;
  enum { none, text, call, result } kind = none;
  std::string rest;  // the block's other members, as an object's members
  bool known = true;  // every other member is a known kind of block
  std::size_t calls = c.s.pending.size(), results = c.s.results.size();
  bool ok = for_fields(c, o, [&](std::string_view key, auto v) {
    if (kind == none && !thought) {
      if (key == "text") {
        std::string_view t;
        if (!c.get_string(v, &t, "text block \"text\"")) return false;
        append_text(*sink.text, t);
        kind = text;
        return true;
      }
      if (sink.allow_tools && (key == "toolUse" || key == "functionCall" || key == "function_call")) {
        kind = call;
        return read_keyed_call(c, v, key, sink.turn);
      }
      if (sink.allow_tools && (key == "toolResult" || key == "functionResponse" || key == "function_response")) {
        kind = result;
        return read_keyed_result(c, v, key, sink.turn);
      }
    }
    known = known && known_block_key(key);
    if (!rest.empty()) rest.push_back(',');
    append_json_string(rest, key);
    rest.push_back(':');
    return c.write_value(v, rest);
  });
  if (!ok) return false;
  if (kind == none) {
    if ((!known || rest.empty()) && !thought)
      c.warn(where, rest.empty() ? std::string("content block has no \"type\" and no member; kept under content_blocks")
                                 : "content block of no known kind; kept under content_blocks");
    if (!sink.blocks->empty()) sink.blocks->push_back(',');
    sink.blocks->push_back('{');
    sink.blocks->append(rest);
    sink.blocks->push_back('}');
    return true;
  }
  if (rest.empty()) return true;
  std::string members = "{" + rest + "}";
  if (kind == text) sink.extra->append_members(members);
  else if (kind == call && c.s.pending.size() > calls) c.s.pending.back().extra = c.merge_extra(c.s.pending.back().extra, members);
  else if (kind == result && c.s.results.size() > results) c.s.results.back().extra = c.merge_extra(c.s.results.back().extra, members);
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
    if (btype.empty()) return read_keyed_block(c, o, where, sink);
    BlockKind kind = classify_block_type(btype);
    if (kind == BlockKind::text) {
      bool has_text = false;
      bool ok = for_fields(c, o, [&](std::string_view key, V v) {
        if (key == "type") return c.skip_value(v);  // read ahead, and read again: see consume_string
        // AgentDojo writes {"type": "text", "content": "…"}.
        if (key == "text" || (key == "content" && !has_text)) {
          od::json_type vt;
          if (auto e = v.type().get(vt)) return c.fail(location_of(v), json_error_message(e));
          if (key == "text" || vt == od::json_type::string) {
            std::string_view text;
            if (!c.get_string(v, &text, "text block \"text\"")) return false;
            append_text(*sink.text, text);
            return has_text = true;
          }
        }
        return c.write_member(*sink.extra, key, v);
      });
      if (!ok) return false;
    } else if (sink.allow_tools && kind == BlockKind::tool_use) {
      if (!read_call_object(c, o, where, sink.turn, "tool_use")) return false;
    } else if (sink.allow_tools && kind == BlockKind::tool_result) {
      if (!read_tool_result_block(c, o, where, sink.turn)) return false;
    } else {
      // Images, thinking, documents…: kept whole under "content_blocks".
      if (kind == BlockKind::unknown)
        c.warn(where, fmt::format("content block of type '{}' is not a known kind; kept under content_blocks", btype));
      if (!sink.blocks->empty()) sink.blocks->push_back(',');
      if (!write_block(c, o, *sink.blocks)) return false;
    }
    return true;
  });
}

template <class V>
bool read_call_copy(ParseCtx& c, V v, Slice* id, Slice* name) {
  typename JsonOf<V>::object o;
  if (auto e = v.get_object().get(o)) return c.fail(location_of(v), expect(e, "\"tool_call\" must be an object"));
  return for_fields(c, o, [&](std::string_view key, V fv) {
    od::json_type type;
    if (auto e = fv.type().get(type)) return c.fail(location_of(fv), json_error_message(e));
    if (key == "id" && (type == od::json_type::string || type == od::json_type::number))
      return c.get_id(fv, id, "tool call \"id\"");
    if (key == "function" && type == od::json_type::string) {
      std::string_view n;
      if (!c.get_string(fv, &n, "tool call \"function\"")) return false;
      *name = c.t.store(n);
      return true;
    }
    return c.skip_value(fv);
  });
}

template <class V>
bool read_message_body(ParseCtx& c, typename JsonOf<V>::object& m, const char* where, std::string_view role_name,
                       std::uint32_t index);

// The chat role of a serialized LangChain message class (the last element of its "id"), or
// empty.
std::string_view langchain_class_role(std::string_view cls) {
  constexpr std::string_view chunk = "Chunk";
  if (cls.size() > chunk.size() && cls.substr(cls.size() - chunk.size()) == chunk) cls.remove_suffix(chunk.size());
  if (cls == "HumanMessage") return "user";
  if (cls == "AIMessage") return "assistant";
  if (cls == "ToolMessage") return "tool";
  if (cls == "SystemMessage") return "system";
  if (cls == "FunctionMessage") return "function";
  if (cls == "ChatMessage") return "chat";
  return {};
}

// A LangChain message serialized by its own toJSON (JSON.stringify) or dumpd: {"lc": 1,
// "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"], "kwargs": {the
// message's fields}}. The class (the id's last element, which comes before "kwargs" as both
// serializers write it) gives the role; kwargs is read as the message. A class that is not
// a message is skipped with a warning.
template <class V>
bool read_langchain_serialized(ParseCtx& c, typename JsonOf<V>::object& m, const char* where, std::uint32_t index) {
  std::string cls;
  bool read = false, warned = false;
  bool ok = for_fields(c, m, [&](std::string_view key, V v) {
    if (key == "id") {
      typename JsonOf<V>::array a;
      if (auto e = v.get_array().get(a))
        return c.fail(location_of(v), expect(e, "a serialized LangChain object's \"id\" must be an array of strings"));
      return for_each_element(c, a, [&](V ev) {
        std::string_view part;
        if (!c.get_string(ev, &part, "a serialized LangChain object's \"id\" element")) return false;
        cls.assign(part);
        return true;
      });
    }
    if (key != "kwargs") return c.skip_value(v);  // "lc" (the format's version), "type"
    const char* kwhere = location_of(v);
    if (cls.empty()) return c.fail(kwhere, "a serialized LangChain object has no \"id\" (its class) before \"kwargs\"");
    std::string_view role = langchain_class_role(cls);
    if (role.empty()) {
      if (!warned) c.warn(where, fmt::format("serialized LangChain object of class '{}' is not a message; skipped", cls));
      warned = true;
      return c.skip_value(v);
    }
    if (read) return c.fail(kwhere, "a serialized LangChain message has \"kwargs\" twice");
    read = true;
    typename JsonOf<V>::object d;
    if (auto e = v.get_object().get(d)) return c.fail(kwhere, expect(e, "a serialized LangChain message's \"kwargs\" must be an object"));
    std::string_view own_role;
    if (role == "chat" && (!peek_string(c, d, "role", &own_role, kwhere) || own_role.empty()))
      return own_role.empty() ? c.fail(kwhere, "LangChain chat message has no \"role\"") : false;
    return read_message_body<V>(c, d, kwhere, role == "chat" ? own_role : role, index);
  });
  if (!ok) return false;
  if (read || warned) return true;
  if (cls.empty()) return c.fail(where, "a serialized LangChain object has no \"id\" (its class)");
  if (langchain_class_role(cls).empty()) {
    c.warn(where, fmt::format("serialized LangChain object of class '{}' is not a message; skipped", cls));
    return true;
  }
  return c.fail(where, "a serialized LangChain message has no \"kwargs\"");
}

// One element of a message list: a role-tagged message; a LangChain message, tagged by
// "type" (model_dump: {"type": "ai", "content", "tool_calls"}; messages_to_dict: {"type":
// "ai", "data": {…}}); or an OpenAI Responses item ({"type": "function_call", …}).
template <class V>
bool read_message(ParseCtx& c, V mv, std::uint32_t index) {
  const char* where = location_of(mv);
  typename JsonOf<V>::object m;
  if (auto e = mv.get_object().get(m))
    return c.fail(where, expect(e, "a message must be a JSON object"));
  std::string_view role_name;
  if (!peek_string(c, m, "role", &role_name, where)) return false;
  if (!role_name.empty()) return read_message_body<V>(c, m, where, role_name, index);
  std::string_view type;
  if (!peek_string(c, m, "type", &type, where)) return false;
  if (is_responses_item(type)) return read_responses_item(c, m, type, where, index);
  if (type == "constructor") return read_langchain_serialized<V>(c, m, where, index);
  std::string_view role = langchain_role(type);
  if (role.empty()) return c.fail(where, "message has no \"role\"");
  bool wrapped = false;
  if (!peek_has(c, m, "data", &wrapped, where)) return false;
  if (!wrapped) return read_message_body<V>(c, m, where, role, index);
  // messages_to_dict: the message is "data"; a ChatMessage names its role there.
  bool read = false;
  bool ok = for_fields(c, m, [&](std::string_view key, V v) {
    if (key != "data" || read) {
      if (key != "type") c.warn(location_of(v), fmt::format("LangChain message field \"{}\" beside \"data\" is not read", key));
      return c.skip_value(v);
    }
    read = true;
    typename JsonOf<V>::object d;
    const char* dwhere = location_of(v);
    if (auto e = v.get_object().get(d)) return c.fail(dwhere, expect(e, "LangChain message \"data\" must be an object"));
    std::string_view own_role;
    if (role == "chat" && (!peek_string(c, d, "role", &own_role, dwhere) || own_role.empty()))
      return own_role.empty() ? c.fail(dwhere, "LangChain chat message has no \"role\"") : false;
    return read_message_body<V>(c, d, dwhere, role == "chat" ? own_role : role, index);
  });
  return ok;
}

template <class V>
bool read_message_body(ParseCtx& c, typename JsonOf<V>::object& m, const char* where, std::string_view role_name,
                       std::uint32_t index) {
  Role role = classify_chat_role(role_name);
  if (role == Role::other)
    c.warn(where, fmt::format("message role '{}' is not a known role; kept as a step of type '{}'", role_name, role_name));
  Scratch& s = c.s;
  s.text.clear();
  s.blocks.clear();
  s.pending.clear();
  s.results.clear();
  s.joined.clear();
  ObjectWriter extra(s.msg_extra);
  BlockSink sink{&s.text, &s.blocks, &extra, role != Role::tool, index};
  PendingResult own;  // the result a role "tool" message carries
  own.where = where;
  Slice copy_id, copy_name;  // from AgentDojo's copy of the call
  bool has_content = false, has_parts = false;
  bool ok = for_fields(c, m, [&](std::string_view key, V v) {
    if (key == "role") return c.skip_value(v);  // the same
    if (key == "content") {
      has_content = true;
      return read_content(c, v, sink);
    }
    if (key == "parts") {  // Gemini: text, functionCall and functionResponse parts, in any role
      has_parts = true;
      BlockSink parts = sink;
      parts.allow_tools = true;
      return read_content(c, v, parts);
    }
    if (key == "type") {  // the Responses API's "message", or the LangChain type the role came from
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      if (type == od::json_type::string) {
        std::string_view tag;
        if (!c.get_string(v, &tag, "message \"type\"")) return false;
        if (tag != "message" && langchain_role(tag).empty()) append_json_string(extra.key(key), tag);
        return true;
      }
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
      bool null = false;
      if (!c.is_null(v, &null)) return false;
      if (null) return true;
      if (key == "tool_call_id") return c.get_id(v, &own.id, "\"tool_call_id\"");
      // Inspect names the tool in "function"; AgentDojo repeats the whole call in "tool_call".
      if (key == "name" || key == "function") {
        std::string_view name;
        if (!c.get_string(v, &name, fmt::format("tool message \"{}\"", key))) return false;
        own.name = c.t.store(name);
        return true;
      }
      if (key == "tool_call") return read_call_copy(c, v, &copy_id, &copy_name);
      if (key == "is_error") {
        bool b = false;
        if (v.get_bool().get(b)) return c.fail(location_of(v), "\"is_error\" must be true or false");
        own.error |= b;
        return true;
      }
      if (key == "status") {  // LangChain: "success" | "error"
        od::json_type type;
        if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
        if (type == od::json_type::string) {
          std::string_view status;
          if (!c.get_string(v, &status, "\"status\"")) return false;
          if (status_is_error(status)) return own.error = true;
          if (!status_is_ok(status)) append_json_string(extra.key("message_status"), status);
          return true;
        }
      }
      if (key == "error") {
        od::json_type type;
        if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
        if (type == od::json_type::boolean) {
          bool b = false;
          if (auto e = v.get_bool().get(b)) return c.fail(location_of(v), json_error_message(e));
          own.error |= b;
        } else {
          own.error = true;
          return keep_error(c, v, extra);
        }
      }
    }
    bool null = false;
    if (!c.is_null(v, &null)) return false;
    if (null) return true;
    // A message's own id and status (Inspect, LangChain, the Responses API) are not those of
    // the step that keeps them (a call has its own id and status).
    if (key == "id" || key == "status") return c.write_value(v, extra.key(key == "id" ? "message_id" : "message_status"));
    return c.write_member(extra, key, v);
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
  const std::size_t before = steps.size();  // steps of earlier messages
  std::size_t first = steps.size();
  std::size_t holder = SIZE_MAX;  // step that receives the message's extra fields
  // A Gemini function turn carries its results as functionResponse parts, not as its own.
  if (role == Role::tool && !(has_parts && !has_content && own.id.empty() && !s.results.empty())) {
    if (own.id.empty()) own.id = copy_id;
    if (own.name.empty()) own.name = copy_name;
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
  // A tool message's fields go to the call it answers, which has fields of its own.
  if (!x.empty() && holder != SIZE_MAX)
    steps[holder].extra = holder < before ? merge_result_extra(c, steps[holder].extra, x) : c.merge_extra(steps[holder].extra, x);
  return true;
}

}  // namespace

namespace {

template <class Array>
bool read_messages(ParseCtx& c, Array& messages) {
  t_calls.clear();
  c.s.joined.clear();
  std::uint32_t index = 0;
  return for_each_element(c, messages, [&](auto mv) { return read_message(c, mv, index++); });
}

// A JSON number of seconds as milliseconds, shifting the decimal point of its text (so that
// 4.317574 s is 4317.574 ms, without binary rounding); through a double for an exponent.
std::string seconds_to_ms(std::string_view s) {
  std::size_t dot = s.find('.');
  bool plain = s.find_first_of("eE-") == std::string_view::npos;
  if (!plain) return fmt::format("{}", std::strtod(std::string(s).c_str(), nullptr) * 1000.0);
  std::string digits(s.substr(0, dot));
  std::string frac(dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1));
  frac.resize(std::max<std::size_t>(frac.size(), 3), '0');
  digits += frac.substr(0, 3);
  std::string rest = frac.substr(3);
  while (!rest.empty() && rest.back() == '0') rest.pop_back();
  std::size_t lead = 0;
  while (lead + 1 < digits.size() && digits[lead] == '0') ++lead;
  digits.erase(0, lead);
  return rest.empty() ? digits : digits + "." + rest;
}

// Timing of the calls from an Inspect sample's tool events ({"event": "tool", "id",
// "timestamp", "completed", "working_time"}): latency_ms, started_at and completed_at of
// the call with that id. The other events repeat the messages and are not kept.
template <class V>
bool read_tool_timing(ParseCtx& c, V events) {
  typename JsonOf<V>::array a;
  if (auto e = events.get_array().get(a)) return c.fail(location_of(events), expect(e, "\"events\" must be an array"));
  return for_each_element(c, a, [&](V ev) {
    typename JsonOf<V>::object o;
    if (ev.get_object().get(o)) return c.skip_value(ev);
    bool tool = false;
    Slice id, started, completed;  // arena slices: a string_view into the arena would move
    std::string_view working;     // into the record's text
    bool ok = for_fields(c, o, [&](std::string_view key, V v) {
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      if (type == od::json_type::string && (key == "event" || key == "id" || key == "timestamp" || key == "completed")) {
        std::string_view text;
        if (!c.get_string(v, &text, key)) return false;
        if (key == "event") tool = text == "tool";
        else if (key == "id") id = c.t.store(text);
        else (key == "timestamp" ? started : completed) = c.t.store(text);
        return true;
      }
      if (key == "working_time" && type == od::json_type::number) {
        working = trim_ws(v.raw_json_token());
        return c.skip_value(v);
      }
      return c.skip_value(v);
    });
    if (!ok) return false;
    if (!tool || id.empty()) return true;
    auto& steps = c.t.steps();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].type != StepType::tool_call || c.t.text(steps[i].id) != c.t.text(id)) continue;
      std::string timing;
      ObjectWriter w(timing);
      if (!working.empty()) w.key("latency_ms").append(seconds_to_ms(working));
      if (!started.empty()) append_json_string(w.key("started_at"), c.t.text(started));
      if (!completed.empty()) append_json_string(w.key("completed_at"), c.t.text(completed));
      std::string_view x = w.finish();
      if (!x.empty()) steps[i].extra = c.merge_extra(steps[i].extra, x);
      break;
    }
    return true;
  });
}

template <class Object>
bool read_chat_record(ParseCtx& c, Object& record, const InspectSample* sample = nullptr) {
  ObjectWriter meta(c.s.meta);
  ParseCtx::Wrapper w;
  w.meta = &meta;
  bool has_messages = false;
  Slice epoch;
  // An AgentDojo run names itself by pipeline, suite, user task, attack and injection task.
  constexpr std::string_view kRunKeys[] = {"pipeline_name", "suite_name", "user_task_id", "attack_type", "injection_task_id"};
  Slice run[std::size(kRunKeys)];
  bool ok = for_fields(c, record, [&](std::string_view key, auto v) {
    if ((key == "messages" || key == "traj" || key == "contents") && !has_messages) {
      const char* where = location_of(v);
      typename JsonOf<decltype(v)>::array a;
      if (auto e = v.get_array().get(a))
        return c.fail(where, expect(e, fmt::format("\"{}\" must be an array of messages", key)));
      has_messages = true;
      return read_messages(c, a);
    }
    // Anthropic puts the system prompt beside the messages; system prompts are not steps.
    // Gemini's is "systemInstruction".
    if (key == "system" || key == "systemInstruction" || key == "system_instruction") return c.skip_value(v);
    if (sample) {
      // An Inspect sample's input and output repeat its messages; attachments hold the
      // events' long texts.
      if (key == "input" || key == "output" || key == "attachments") return c.skip_value(v);
      if (key == "events") return read_tool_timing(c, v);
      od::json_type vt;
      if (key == "epoch" && !v.type().get(vt) && (vt == od::json_type::number || vt == od::json_type::string)) {
        if (!c.get_id(v, &epoch, "\"epoch\"")) return false;
        w.meta->key("epoch").append(c.t.text(epoch));
        return true;
      }
    }
    for (std::size_t i = 0; i < std::size(kRunKeys); ++i)
      if (od::json_type vt; key == kRunKeys[i] && !v.type().get(vt) && vt == od::json_type::string) {
        std::string_view text;
        if (!c.get_string(v, &text, key)) return false;
        run[i] = c.t.store(text);
        append_json_string(w.meta->key(key), c.t.text(run[i]));
        return true;
      }
    return c.wrapper_field(w, key, v);
  });
  if (!ok) return false;
  if (!has_messages) return c.fail(c.text.data(), "chat record has no \"messages\" (or \"traj\") array");
  if (w.trace_id.empty() && w.id.empty() && w.task_id.empty() && w.case_id.empty() && !run[1].empty() && !run[2].empty()) {
    std::string& id = c.s.value;
    id.clear();
    for (const Slice& part : run)
      if (!part.empty()) {
        if (!id.empty()) id.push_back('/');
        id.append(c.t.text(part));
      }
    w.trace_id = c.t.store(id);
  }
  if (sample) {
    // One trace per sample and epoch, named as Inspect names its sample files.
    if (!sample->log_meta.empty()) w.meta->append_members(sample->log_meta);
    if (w.trace_id.empty() && !w.id.empty()) {
      std::string& id = c.s.value;
      id.assign(c.t.text(w.id));
      if (!epoch.empty()) id.append("_epoch_").append(c.t.text(epoch));
      w.trace_id = c.t.store(id);
    }
  }
  c.finish_wrapper(w);
  return true;
}

}  // namespace

void begin_chat(ParseCtx& c) {
  t_calls.clear();
  c.s.joined.clear();
}
Slice merge_result_fields(ParseCtx& c, Slice call, std::string_view result) { return merge_result_extra(c, call, result); }
void add_chat_call(ParseCtx& c, const Step& call) {
  c.t.steps().push_back(call);
  t_calls.add(c.t, static_cast<std::uint32_t>(c.t.steps().size() - 1));
}
std::uint32_t join_chat_result(ParseCtx& c, const PendingResult& r, std::uint32_t turn) { return join_result(c, r, turn); }
bool read_chat_element(ParseCtx& c, od::value v, std::uint32_t index) { return read_message(c, v, index); }
bool read_chat_element(ParseCtx& c, TapeValue v, std::uint32_t index) { return read_message(c, v, index); }

bool read_chat_array(ParseCtx& c, od::array messages) { return read_messages(c, messages); }
bool read_chat_array(ParseCtx& c, TapeArray messages) { return read_messages(c, messages); }
bool read_chat_object(ParseCtx& c, od::object record) { return read_chat_record(c, record); }
bool read_chat_object(ParseCtx& c, TapeObject record) { return read_chat_record(c, record); }
bool read_inspect_sample(ParseCtx& c, od::object sample, const InspectSample& log) { return read_chat_record(c, sample, &log); }

}  // namespace trajcheck::detail
