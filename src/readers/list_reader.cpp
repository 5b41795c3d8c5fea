// Tool lists: ["a", "b"], [{"name": …}], [{"function": "…"}], [{"function": {"name", "arguments"}}]
// or {"tool_calls": [...]} — expected tool sequences and gold actions (tau-bench's
// {"name", "kwargs"}), read as tool_call steps without results.
#include <fmt/format.h>

#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

namespace {

bool is_arguments_key(std::string_view k) {
  return k == "arguments" || k == "args" || k == "kwargs" || k == "input" || k == "parameters";
}

// A name that normalizes to "" (set_tool trims these): no tool is called "".
bool blank(std::string_view name) {
  return name.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

// An entry without a usable name is no call: skipped, with a warning at the entry.
bool skip_nameless(ParseCtx& c, const char* where, bool has_name) {
  c.warn(where, has_name ? "tool list entry has a blank name; skipped"
                         : "tool list entry has no \"name\" or \"function\"; skipped");
  return true;
}

bool read_entry(ParseCtx& c, od::value ev, std::uint32_t index) {
  const char* where = location_of(ev);
  od::json_type type;
  if (auto e = ev.type().get(type)) return c.fail(where, json_error_message(e));
  Step st;
  st.type = StepType::tool_call;
  st.status = StepStatus::ok;
  st.turn = index;
  if (type == od::json_type::string) {
    std::string_view name;
    if (!c.get_string(ev, &name, "tool name")) return false;
    if (blank(name)) return skip_nameless(c, where, true);
    c.set_tool(st, name);
    c.t.steps().push_back(st);
    return true;
  }
  if (type != od::json_type::object)
    return c.fail(where, "a tool list entry must be a tool name or an object with \"name\" or \"function\"");
  od::object o;
  if (auto e = ev.get_object().get(o)) return c.fail(where, json_error_message(e));
  ObjectWriter extra(c.s.call_extra);
  bool has_name = false, blank_name = false, has_args = false, error = false;
  auto name_from = [&](od::value v, std::string_view what) {
    std::string_view name;
    if (!c.get_string(v, &name, what)) return false;
    if (has_name) {  // a second name field is data, not the call's name
      append_json_string(extra.key(what), name);
      return true;
    }
    if (blank(name)) {  // a later non-blank name field may still name the call
      blank_name = true;
      return true;
    }
    c.set_tool(st, name);
    has_name = true;
    return true;
  };
  auto args_from = [&](std::string_view key, od::value v) {
    if (has_args) return c.write_member(extra, key, v);
    has_args = true;
    return c.set_arguments_value(st, v);
  };
  bool fields_ok = for_fields(c, o, [&](std::string_view key, od::value v) {
    bool ok = true;
    if (key == "name" || key == "tool" || key == "tool_name") {
      ok = name_from(v, key);
    } else if (key == "function") {
      od::json_type ft;
      if (auto e = v.type().get(ft)) return c.fail(location_of(v), json_error_message(e));
      if (ft == od::json_type::string) {
        ok = name_from(v, key);
      } else {
        od::object fo;
        if (auto e = v.get_object().get(fo)) return c.fail(location_of(v), expect(e, "\"function\" must be a name or an object"));
        ok = for_fields(c, fo, [&](std::string_view fkey, od::value fv) {
          if (fkey == "name") return name_from(fv, "function.name");
          if (is_arguments_key(fkey)) return args_from(fkey, fv);
          return c.write_value(fv, extra.key(fkey));
        });
      }
    } else if (is_arguments_key(key)) {
      ok = args_from(key, v);
    } else if (key == "id") {
      ok = c.get_id(v, &st.id, "tool call \"id\"");
    } else if (key == "result" || key == "output") {
      bool pattern = false;
      ok = c.store_json_result(v, &st.result, &pattern);
      error |= pattern;
    } else if (key == "type") {
      std::string_view t;
      if (!c.get_string(v, &t, "\"type\"")) return false;
      if (t != "function" && t != "tool_call" && t != "tool_use") append_json_string(extra.key(key), t);
    } else {
      ok = c.write_member(extra, key, v);
    }
    return ok;
  });
  if (!fields_ok) return false;
  if (!has_name) return skip_nameless(c, where, blank_name);
  if (error) st.status = StepStatus::error;
  std::string_view x = extra.finish();
  if (!x.empty()) st.extra = c.t.store(x);
  c.t.steps().push_back(st);
  return true;
}

}  // namespace

bool read_list_array(ParseCtx& c, od::array entries) {
  std::uint32_t i = 0;
  for (auto element : entries) {
    od::value ev;
    if (auto e = element.get(ev)) return c.fail(c.here(), json_error_message(e));
    if (!read_entry(c, ev, i++)) return false;
  }
  return true;
}

bool read_list_object(ParseCtx& c, od::object record) {
  ObjectWriter meta(c.s.meta);
  ParseCtx::Wrapper w;
  w.meta = &meta;
  bool has_calls = false;
  bool fields_ok = for_fields(c, record, [&](std::string_view key, od::value v) {
    if (key == "tool_calls" && !has_calls) {
      od::array a;
      if (auto e = v.get_array().get(a)) return c.fail(location_of(v), expect(e, "\"tool_calls\" must be an array"));
      has_calls = true;
      return read_list_array(c, a);
    }
    return c.wrapper_field(w, key, v);
  });
  if (!fields_ok) return false;
  if (!has_calls) return c.fail(c.text.data(), "tool-list record has no \"tool_calls\" array");
  c.finish_wrapper(w);
  return true;
}

}  // namespace trajcheck::detail
