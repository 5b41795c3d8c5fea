// The OpenAI Responses API: a response object, or a list of its input/output items, where
// messages ({"type": "message", "role", "content"}, read by the chat reader) mix with
// function calls, their outputs and the built-in tools' calls. Also the response records of
// Bedrock Converse and Gemini, which hold one message beside the request's metadata.
#include <fmt/format.h>

#include "readers/chat_formats.hpp"
#include "readers/chat_shared.hpp"

namespace trajcheck::detail {

namespace {

// The tool a built-in call item names: its type without "_call" ("web_search_call" →
// web_search). Function, custom and MCP calls carry their own "name".
std::string_view builtin_tool(std::string_view type) {
  constexpr std::string_view suffix = "_call";
  if (type.size() > suffix.size() && type.substr(type.size() - suffix.size()) == suffix)
    return type.substr(0, type.size() - suffix.size());
  return type;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Members of a call item that are its input (the rest is kept as it is).
bool argument_member(std::string_view key) {
  return key == "action" || key == "actions" || key == "queries" || key == "code" || key == "container_id" ||
         key == "operation" || key == "commands";
}
// Members that are its output.
bool result_member(std::string_view key) { return key == "output" || key == "results" || key == "outputs" || key == "result"; }

// The text of an Agents SDK tool output given as a content part ({"type": "text", "text": …}),
// from its minified JSON; false for any other value.
bool output_part_text(ParseCtx& c, std::string_view json, std::string* text) {
  if (json.empty() || json.front() != '{') return false;
  std::string& padded = c.s.inner_padded;
  padded.assign(json);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  od::object o;
  if (c.s.inner_parser.iterate(padded.data(), json.size(), padded.size()).get(doc) || doc.get_object().get(o)) return false;
  std::string_view type, t;
  bool typed = false, has_text = false;
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "type" && !field.value().get_string().get(type)) typed = type == "text" || type == "input_text" || type == "output_text";
    else if (key == "text" && !field.value().get_string().get(t)) { text->assign(t); has_text = true; }
    else if (key != "providerData") return false;
  }
  return typed && has_text;
}

// The input members of the Responses item an Agents SDK hosted_tool_call keeps as its
// providerData (minified JSON), written to `args`.
void hosted_arguments(std::string_view json, ObjectWriter& args) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(json.data(), json.size()).get_object().get(o)) return;
  for (auto field : o)
    if (argument_member(field.key)) args.key(field.key).append(simdjson::minify(field.value));
}

template <class Object>
bool read_item(ParseCtx& c, Object& o, std::string_view type, const char* where, std::uint32_t index) {
  // The Agents SDK names outputs "*_result" (function_call_result) and built-in calls
  // hosted_tool_call {"name": "web_search_call", …}.
  const bool output = ends_with(type, "_output") || ends_with(type, "_result");
  const bool hosted = type == "hosted_tool_call";
  const bool call = !output && (ends_with(type, "_call") || type == "mcp_approval_request");
  Scratch& s = c.s;
  Step st;
  st.turn = index;
  st.type = StepType::tool_call;
  st.status = StepStatus::ok;
  PendingResult r;
  r.where = where;
  ObjectWriter extra(call ? s.call_extra : s.result_extra);
  ObjectWriter args(s.text);  // input members of a built-in call
  Slice item_id, call_id, name;
  std::string_view args_text;
  const char* args_where = nullptr;
  bool has_args_text = false, has_result = false, custom_input = false;
  std::string provider;  // a hosted_tool_call's providerData (the Responses item it stands for)
  bool ok = for_fields(c, o, [&](std::string_view key, auto v) {
    bool null = false;
    if (!c.is_null(v, &null)) return false;
    if (null || key == "type") return true;
    if (key == "id") return c.get_id(v, &item_id, "item \"id\"");
    if (key == "call_id" || key == "callId" || key == "approval_request_id") return c.get_id(v, &call_id, fmt::format("item \"{}\"", key));
    if (key == "name") {
      std::string_view n;
      if (!c.get_string(v, &n, "item \"name\"")) return false;
      name = c.t.store(n);
      return true;
    }
    if (key == "arguments" || (key == "input" && type == "custom_tool_call")) {
      od::json_type vt;
      if (auto e = v.type().get(vt)) return c.fail(location_of(v), json_error_message(e));
      if (vt != od::json_type::string) return c.set_arguments_value(st, v);
      args_where = location_of(v);
      custom_input = key == "input";
      return c.get_string(v, &args_text, fmt::format("item \"{}\"", key)) && (has_args_text = true);
    }
    if (call && argument_member(key)) return c.write_member(args, key, v);
    if (hosted && key == "providerData") {
      if (!c.write_value(v, provider)) return false;
      extra.key(key).append(provider);
      return true;
    }
    if (result_member(key) && !has_result) {
      has_result = true;
      bool pattern = false;
      if (output && type == "function_call_result") {  // the Agents SDK: {"type": "text", "text": …}
        s.value.clear();
        if (!c.write_value(v, s.value)) return false;
        std::string text;
        if (output_part_text(c, s.value, &text)) {
          r.result = c.store_text_result(text, &pattern);
        } else {
          r.result = c.t.store(s.value);
          pattern = c.matches_error_pattern(s.value);
        }
        r.error |= pattern;
        return true;
      }
      if (!c.store_json_result(v, &r.result, &pattern)) return false;
      r.error |= pattern;
      return true;
    }
    if (key == "status") {
      std::string_view status;
      if (!c.get_string(v, &status, "item \"status\"")) return false;
      if (status_is_error(status)) r.error = true;
      else if (!status_is_ok(status)) append_json_string(extra.key("item_status"), status);
      return true;
    }
    if (key == "error") {  // mcp_call: a string, null when the call succeeded
      r.error = true;
      return keep_error(c, v, extra);
    }
    if (key == "approve" && type == "mcp_approval_response") {
      bool approve = false;
      if (v.get_bool().get(approve)) return c.fail(location_of(v), "\"approve\" must be true or false");
      append_json_string(extra.key("decision"), approve ? "approved" : "denied");
      return true;
    }
    return c.write_member(extra, key, v);
  });
  if (!ok) return false;

  auto finish_extra = [&](Step& step) {
    if (!item_id.empty() && !call_id.empty()) append_json_string(extra.key("item_id"), c.t.text(item_id));
    std::string_view x = extra.finish();
    if (!x.empty()) step.extra = c.t.store(x);
  };
  if (output) {
    // function_call_output, computer_call_output, …: joined to its call by call_id.
    r.id = !call_id.empty() ? call_id : item_id;
    if (!has_result) r.result = c.t.store("null");
    if (!item_id.empty() && !call_id.empty()) append_json_string(extra.key("item_id"), c.t.text(item_id));
    std::string_view x = extra.finish();
    if (!x.empty()) r.extra = c.t.store(x);
    join_chat_result(c, r, index);
    return true;
  }
  if (type == "mcp_approval_request" || type == "mcp_approval_response") {
    bool request = type == "mcp_approval_request";
    Step& step = c.t.add_step(request ? StepType::approval_request : StepType::approval);
    step.turn = index;
    if (!item_id.empty()) step.id = item_id;
    if (request) {
      if (!name.empty()) append_json_string(extra.key("tool"), c.t.text(name));
      if (has_args_text) append_json_string(extra.key("arguments"), args_text);
      else if (!st.arguments.empty()) extra.key("arguments").append(c.t.text(st.arguments));
    } else {
      if (!call_id.empty()) append_json_string(extra.key("tool_call_id"), c.t.text(call_id));
    }
    std::string_view x = extra.finish();
    if (!x.empty()) step.extra = c.t.store(x);
    return true;
  }
  if (!call) {
    // reasoning, mcp_list_tools, item_reference: kept as a step of their own kind.
    Step& step = c.t.add_step(StepType::other);
    step.turn = index;
    step.type_name = c.t.store(type);
    if (!item_id.empty()) step.id = item_id;
    if (has_result) extra.key("result").append(c.t.text(r.result));
    finish_extra(step);
    return true;
  }
  st.id = !call_id.empty() ? call_id : item_id;
  c.set_tool(st, !name.empty() ? (hosted ? builtin_tool(c.t.text(name)) : c.t.text(name)) : builtin_tool(type));
  if (has_args_text) {
    if (custom_input) {  // free text, not JSON
      s.value.clear();
      append_json_string(s.value, args_text);
      st.arguments = c.t.store(s.value);
    } else {
      c.set_arguments_text(st, args_text, args_where);
    }
  } else if (st.arguments.empty() && args.empty() && !provider.empty()) {
    // A hosted call's input is in the Responses item it stands for ({"action": …}).
    hosted_arguments(provider, args);
    if (!args.empty()) st.arguments = c.t.store(args.finish());
  } else if (st.arguments.empty() && !args.empty()) {
    // A built-in call's input members ({"action": …} of web_search_call, {"queries"} of file_search_call).
    std::string_view a = args.finish();
    st.arguments = c.t.store(a);
  }
  if (has_result) st.result = r.result;
  st.status = r.error ? StepStatus::error : StepStatus::ok;
  finish_extra(st);
  add_chat_call(c, st);
  return true;
}

}  // namespace

bool read_responses_item(ParseCtx& c, od::object& item, std::string_view type, const char* where, std::uint32_t index) {
  return read_item(c, item, type, where, index);
}
bool read_responses_item(ParseCtx& c, TapeObject& item, std::string_view type, const char* where, std::uint32_t index) {
  return read_item(c, item, type, where, index);
}

bool read_response_object(ParseCtx& c, od::object record) {
  ObjectWriter meta(c.s.meta);
  ParseCtx::Wrapper w;
  w.meta = &meta;
  begin_chat(c);
  std::uint32_t index = 0;
  bool has_body = false;
  auto items = [&](od::value v, std::string_view key) {
    od::json_type type;
    if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
    if (type == od::json_type::string) {  // "input": "the user's text"
      std::string_view text;
      if (!c.get_string(v, &text, key)) return false;
      Step& st = c.t.add_step(StepType::user_message);
      st.content = c.t.store(text);
      st.turn = index++;
      return true;
    }
    od::array a;
    if (auto e = v.get_array().get(a)) return c.fail(location_of(v), expect(e, fmt::format("\"{}\" must be an array of items", key)));
    return for_each_element(c, a, [&](od::value ev) { return read_chat_element(c, ev, index++); });
  };
  // The request's input comes before the answer, wherever the record lists it.
  {
    od::value v;
    auto e = record.find_field_unordered("input").get(v);
    if (e == simdjson::SUCCESS) {
      if (!items(v, "input")) return false;
      has_body = true;
    } else if (e != simdjson::NO_SUCH_FIELD) {
      return c.fail(c.here(), json_error_message(e));
    }
    if (auto r = record.reset().error()) return c.fail(c.here(), json_error_message(r));
  }
  bool ok = for_fields(c, record, [&](std::string_view key, od::value v) {
    if (key == "input") return c.skip_value(v);
    if (key == "instructions" || key == "system" || key == "systemInstruction") return c.skip_value(v);  // system prompts
    if (key == "output") {
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
      has_body = true;
      if (type == od::json_type::array) return items(v, "output");
      // Bedrock Converse: {"output": {"message": {...}}}
      od::object o;
      if (v.get_object().get(o)) return c.fail(location_of(v), "\"output\" must be an array of items or {\"message\": …}");
      bool found = false;
      bool fine = for_fields(c, o, [&](std::string_view k, od::value mv) {
        if (k == "message" && !found) return (found = true) && read_chat_element(c, mv, index++);
        return c.write_value(mv, w.meta->key(k));
      });
      return fine && (found || c.fail(location_of(v), "\"output\" has no \"message\""));
    }
    if (key == "candidates") {  // Gemini: the first candidate's content is the answer
      od::array a;
      if (auto e = v.get_array().get(a)) return c.fail(location_of(v), expect(e, "\"candidates\" must be an array"));
      has_body = true;
      std::string& rest = w.meta->key("candidates");
      rest.push_back('[');
      bool first = true, read = false;
      bool fine = for_each_element(c, a, [&](od::value cv) {
        od::object co;
        if (auto e = cv.get_object().get(co)) return c.fail(location_of(cv), expect(e, "a candidate must be an object"));
        if (!first) rest.push_back(',');
        first = false;
        ObjectWriter other(c.s.result_blocks);
        bool inner = for_fields(c, co, [&](std::string_view k, od::value mv) {
          if (k == "content" && !read) return (read = true) && read_chat_element(c, mv, index++);
          return c.write_value(mv, other.key(k));
        });
        std::string_view x = other.finish();
        rest.append(x.empty() ? std::string_view("{}") : x);
        return inner;
      });
      rest.push_back(']');
      return fine;
    }
    return c.wrapper_field(w, key, v);
  });
  if (!ok) return false;
  if (!has_body) return c.fail(c.text.data(), "response record has no \"output\", \"input\" or \"candidates\"");
  c.finish_wrapper(w);
  return true;
}

}  // namespace trajcheck::detail
