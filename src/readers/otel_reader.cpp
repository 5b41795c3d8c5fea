// OpenTelemetry GenAI traces in OTLP JSON: spans are staged in one pass (the file order is
// not the trace order), then grouped by traceId, ordered by start time and emitted as one
// trajectory per trace. Tool spans (gen_ai.operation.name = execute_tool) become tool_call
// steps; other spans are kept as steps of type `other` named after their operation.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include <fmt/format.h>

#include "readers/parser_impl.hpp"

namespace trajcheck::detail {

namespace {

template <class Fn>
bool for_elements(ParseCtx& c, od::value v, std::string_view what, Fn&& fn) {
  const char* where = location_of(v);
  od::array a;
  if (auto e = v.get_array().get(a)) return c.fail(where, expect(e, fmt::format("{} must be an array", what)));
  for (auto element : a) {
    od::value ev;
    if (auto e = element.get(ev)) return c.fail(c.here(), json_error_message(e));
    if (!fn(ev)) return false;
  }
  return true;
}

bool get_object(ParseCtx& c, od::value& v, od::object* o, std::string_view what) {
  const char* where = location_of(v);
  if (auto e = v.get_object().get(*o)) return c.fail(where, expect(e, fmt::format("{} must be an object", what)));
  return true;
}

// Looks a key up ahead of the in-order pass and rewinds the object.
template <class Fn>
bool peek_field(ParseCtx& c, od::object& o, std::string_view key, Fn&& fn) {
  od::value v;
  auto e = o.find_field_unordered(key).get(v);
  if (e && e != simdjson::NO_SUCH_FIELD) return c.fail(c.here(), json_error_message(e));
  if (!e && !fn(v)) return false;
  if (auto r = o.reset().error()) return c.fail(c.here(), json_error_message(r));
  return true;
}

// Writes an OTLP AnyValue ({"stringValue": …}, {"intValue": "12"}, {"arrayValue": {"values": …}},
// {"kvlistValue": {"values": [{key, value}]}}, …) as plain JSON. *str receives the decoded text
// of a stringValue.
bool write_any(ParseCtx& c, od::value v, std::string& out, std::string_view* str, int depth);

bool write_kvlist(ParseCtx& c, od::value values, std::string& out, int depth) {
  out.push_back('{');
  bool first = true;
  bool ok = for_elements(c, values, "kvlist values", [&](od::value kv) {
    od::object o;
    if (!get_object(c, kv, &o, "an attribute")) return false;
    std::string_view key;
    if (!peek_field(c, o, "key", [&](od::value k) { return c.get_string(k, &key, "attribute \"key\""); })) return false;
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, key);
    out.push_back(':');
    bool has_value = false;
    bool r = for_fields(c, o, [&](std::string_view k, od::value val) {
      if (k != "value") return k == "key" || c.skip_value(val);
      has_value = true;
      return write_any(c, val, out, nullptr, depth + 1);
    });
    if (r && !has_value) out += "null";
    return r;
  });
  out.push_back('}');
  return ok;
}

bool write_any(ParseCtx& c, od::value v, std::string& out, std::string_view* str, int depth) {
  if (depth >= kMaxJsonDepth) return c.fail(location_of(v), json_error_message(simdjson::DEPTH_ERROR));
  od::object o;
  if (!get_object(c, v, &o, "an attribute value")) return false;
  bool any = false;
  bool ok = for_fields(c, o, [&](std::string_view key, od::value val) {
    if (any) return c.skip_value(val);  // an AnyValue holds one member
    any = true;
    if (key == "stringValue" || key == "bytesValue") {
      std::string_view s;
      if (!c.get_string(val, &s, key)) return false;
      if (str && key == "stringValue") *str = s;
      append_json_string(out, s);
      return true;
    }
    if (key == "intValue") {
      // OTLP JSON writes 64-bit integers as strings.
      od::json_type type;
      if (auto e = val.type().get(type)) return c.fail(location_of(val), json_error_message(e));
      if (type == od::json_type::string) {
        std::string_view s;
        if (!c.get_string(val, &s, key)) return false;
        if (is_json_number(s)) out.append(s);
        else append_json_string(out, s);
        return true;
      }
      return c.write_value(val, out);
    }
    if (key == "arrayValue" || key == "kvlistValue") {
      od::object inner;
      if (!get_object(c, val, &inner, key)) return false;
      bool has_values = false;
      bool r = for_fields(c, inner, [&](std::string_view k, od::value vals) {
        if (k != "values") return c.skip_value(vals);
        has_values = true;
        if (key == "kvlistValue") return write_kvlist(c, vals, out, depth + 1);
        out.push_back('[');
        bool first = true;
        bool rr = for_elements(c, vals, "arrayValue values", [&](od::value item) {
          if (!first) out.push_back(',');
          first = false;
          return write_any(c, item, out, nullptr, depth + 1);
        });
        out.push_back(']');
        return rr;
      });
      if (r && !has_values) out += key == "kvlistValue" ? "{}" : "[]";
      return r;
    }
    return c.write_value(val, out);  // doubleValue, boolValue, or an unknown form kept as is
  });
  if (ok && !any) out += "null";
  return ok;
}

std::uint64_t parse_u64(std::string_view s) {
  std::uint64_t n = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return 0;
    n = n * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  return n;
}

// A time field: a decimal string (OTLP JSON) or a number. Returns its text.
bool time_text(ParseCtx& c, od::value v, std::string_view* out) {
  od::json_type type;
  if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
  if (type == od::json_type::string) return c.get_string(v, out, "span time");
  if (type == od::json_type::number) {
    *out = trim_ws(v.raw_json_token());
    if (!is_json_number(*out)) return c.fail(out->data(), json_error_message(simdjson::NUMBER_ERROR));
    return true;
  }
  return c.fail(location_of(v), "span time must be a string or a number");
}

// Where a usage attribute's count goes: GenAI's gen_ai.usage.*, the AI SDK's ai.usage.*.
std::int64_t* usage_slot(std::string_view key, SpanInfo& info) {
  if (key == "gen_ai.usage.input_tokens" || key == "ai.usage.promptTokens" || key == "ai.usage.inputTokens")
    return &info.input_tokens;
  if (key == "gen_ai.usage.output_tokens" || key == "ai.usage.completionTokens" || key == "ai.usage.outputTokens")
    return &info.output_tokens;
  return nullptr;
}

// A token count written as JSON (a number, or a string holding one); -1 when it is neither.
std::int64_t token_count(std::string_view json) {
  json = trim_ws(json);
  if (json.size() >= 2 && json.front() == '"') json = json.substr(1, json.size() - 2);
  double d = 0;
  auto [end, ec] = std::from_chars(json.data(), json.data() + json.size(), d);
  if (ec != std::errc() || end != json.data() + json.size() || !(d >= 0) || d > 9e15) return -1;
  return static_cast<std::int64_t>(d);
}

bool read_span(ParseCtx& c, od::value sv, std::uint32_t resource, Slice scope) {
  const char* where = location_of(sv);
  od::object o;
  if (!get_object(c, sv, &o, "a span")) return false;
  Scratch& s = c.s;
  ObjectWriter extra(s.call_extra);
  StagedSpan staged;
  staged.resource = resource;
  std::string_view op, ai_op, tool, call_id, args_text, result_text, span_name;
  bool has_args = false, has_result = false, error = false;
  std::string& args_json = s.text;
  std::string& result_json = s.result_blocks;
  args_json.clear();
  result_json.clear();
  std::uint64_t start = 0, end = 0;
  bool has_parent = false;
  std::string call_id_buf;
  bool ok = for_fields(c, o, [&](std::string_view key, od::value v) {
    if (key == "traceId") {
      std::string_view id;
      if (!c.get_string(v, &id, "\"traceId\"")) return false;
      // OTLP/JSON writes a trace id (16 bytes) as case-insensitive hex: one trace whatever case
      // each span used.
      std::string hex(id);
      if (json::is_hex_trace_id(hex))
        for (char& ch : hex) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      staged.trace_id = c.t.store(hex);
      return true;
    }
    if (key == "spanId" || key == "parentSpanId") {
      std::string_view id;
      if (!c.get_string(v, &id, key)) return false;
      if (!id.empty()) append_json_string(extra.key(key == "spanId" ? "span_id" : "parent_id"), id);
      if (key == "parentSpanId" && !id.empty()) has_parent = true;
      return true;
    }
    if (key == "name") {
      if (!c.get_string(v, &span_name, "span \"name\"")) return false;
      append_json_string(extra.key("span_name"), span_name);
      return true;
    }
    if (key == "startTimeUnixNano" || key == "endTimeUnixNano") {
      std::string_view text;
      if (!time_text(c, v, &text)) return false;
      (key == "startTimeUnixNano" ? start : end) = parse_u64(text);
      extra.key(key == "startTimeUnixNano" ? "start_time_unix_nano" : "end_time_unix_nano").append(
          is_json_number(text) ? text : "null");
      return true;
    }
    if (key == "status") {
      od::object so;
      if (!get_object(c, v, &so, "span \"status\"")) return false;
      return for_fields(c, so, [&](std::string_view k, od::value sv2) {
        if (k == "code") {
          od::json_type type;
          if (auto e = sv2.type().get(type)) return c.fail(location_of(sv2), json_error_message(e));
          if (type == od::json_type::string) {
            std::string_view code;
            if (!c.get_string(sv2, &code, "status code")) return false;
            error |= code == "STATUS_CODE_ERROR" || code == "2" || code == "ERROR";
            return true;
          }
          std::string_view raw = trim_ws(sv2.raw_json_token());
          if (!is_json_number(raw)) return c.fail(location_of(sv2), "status code must be a number or a name");
          error |= raw == "2";
          return true;
        }
        if (k == "message") {
          std::string_view msg;
          if (!c.get_string(sv2, &msg, "status message")) return false;
          if (!msg.empty()) append_json_string(extra.key("status_message"), msg);
          return true;
        }
        return c.write_value(sv2, extra.key(fmt::format("status.{}", k)));
      });
    }
    if (key == "attributes") {
      return for_elements(c, v, "\"attributes\"", [&](od::value av) {
        od::object ao;
        if (!get_object(c, av, &ao, "an attribute")) return false;
        std::string_view akey;
        if (!peek_field(c, ao, "key", [&](od::value k) { return c.get_string(k, &akey, "attribute \"key\""); }))
          return false;
        return for_fields(c, ao, [&](std::string_view k, od::value val) {
          if (k == "key") return true;
          if (k != "value") return c.skip_value(val);
          std::string_view str;
          if (std::int64_t* usage = usage_slot(akey, staged.info)) {
            std::string& out = extra.key(akey);
            std::size_t at = out.size();
            if (!write_any(c, val, out, &str, 0)) return false;
            *usage = token_count(std::string_view(out).substr(at));
            return true;
          }
          // GenAI's tool attributes, and the AI SDK's (ai.toolCall spans) that say the same.
          enum { none, operation, name, id, arguments, result } role = none;
          if (akey == "gen_ai.operation.name") role = operation;
          else if (akey == "gen_ai.tool.name" || akey == "ai.toolCall.name") role = name;
          else if (akey == "gen_ai.tool.call.id" || akey == "ai.toolCall.id") role = id;
          else if (akey == "gen_ai.tool.call.arguments" || akey == "ai.toolCall.args") role = arguments;
          else if (akey == "gen_ai.tool.call.result" || akey == "ai.toolCall.result") role = result;
          if (role == none) {
            if (!write_any(c, val, extra.key(akey), &str, 0)) return false;
            if (akey == "ai.operationId" && str.data()) ai_op = str;  // the AI SDK's span kind
            if (akey == "gen_ai.input.messages" && str.data()) staged.input_messages = c.t.store(str);
            if (akey == "gen_ai.output.messages" && str.data()) staged.output_messages = c.t.store(str);
            return true;
          }
          std::string& target = role == arguments ? args_json : role == result ? result_json : s.value;
          target.clear();
          if (!write_any(c, val, target, &str, 0)) return false;
          if (role == operation) op = str;
          else if (role == name) tool = str;
          else if (role == id) {
            if (str.data()) call_id = str;
            else call_id_buf.assign(trim_ws(s.value));  // a numeric id
          }
          else if (role == arguments) { has_args = true; args_text = str; }
          else { has_result = true; result_text = str; }
          return true;
        });
      });
    }
    return c.write_member(extra, key, v);
  });
  if (!ok) return false;
  if (start && end >= start) fmt::format_to(std::back_inserter(extra.key("latency_ms")), "{}", (end - start) / 1e6);
  if (!scope.empty()) extra.key("otel.scope").append(c.t.text(scope));

  if (call_id.empty() && !call_id_buf.empty()) call_id = call_id_buf;
  Step st;
  bool is_tool = op == "execute_tool" || (op.empty() && !tool.empty());
  if (is_tool) {
    st.type = StepType::tool_call;
    st.status = StepStatus::ok;
    std::string_view name = tool;
    if (name.empty() && span_name.substr(0, 13) == "execute_tool ") name = span_name.substr(13);
    if (name.empty()) return c.fail(where, "execute_tool span has no gen_ai.tool.name");
    c.set_tool(st, name);
    if (!call_id.empty()) st.id = c.t.store(call_id);
    if (has_args) {
      if (args_text.data()) c.set_arguments_text(st, args_text, where);
      else st.arguments = c.t.store(args_json);
    }
    if (has_result) {
      bool pattern = false;
      if (result_text.data()) {
        st.result = c.store_text_result(result_text, &pattern);
      } else {
        st.result = c.t.store(result_json);
        pattern = c.matches_error_pattern(result_json);
      }
      error |= pattern;
    }
    if (error) st.status = StepStatus::error;
  } else {
    // A span that says it is a tool call but names no tool is kept as it is, with a warning:
    // its call is not one the rules see.
    if (span_name == "ai.toolCall" || span_name.substr(0, 12) == "execute_tool" || !call_id.empty() || has_args)
      c.warn(where, fmt::format("span \"{}\" looks like a tool call but names no tool (gen_ai.tool.name, "
                                "ai.toolCall.name): kept as a step of type \"{}\", not a tool call",
                                span_name, op.empty() ? std::string_view("span") : op));
    st.type = StepType::other;
    st.type_name = c.t.store(!op.empty() ? op : !ai_op.empty() ? ai_op : std::string_view("span"));
    if (!tool.empty()) append_json_string(extra.key("gen_ai.tool.name"), tool);
    if (!call_id.empty()) append_json_string(extra.key("gen_ai.tool.call.id"), call_id);
    if (has_args) extra.key("gen_ai.tool.call.arguments").append(args_json);
    if (has_result) extra.key("gen_ai.tool.call.result").append(result_json);
    if (error) st.status = StepStatus::error;
  }
  std::string_view x = extra.finish();
  if (!x.empty()) st.extra = c.t.store(x);
  staged.start = start;
  staged.where = where;
  staged.info.start_ns = start;
  staged.info.end_ns = end;
  staged.info.root = !has_parent;
  staged.info.model_call = op == "chat" || op == "text_completion" || op == "generate_content" ||
                           span_name.find(".doGenerate") != std::string_view::npos ||
                           span_name.find(".doStream") != std::string_view::npos;
  staged.step = static_cast<std::uint32_t>(c.t.steps().size());
  c.t.steps().push_back(st);
  s.spans.push_back(staged);
  return true;
}

Slice copy_slice(const Trajectory& from, Trajectory& to, Slice s) {
  return s.empty() ? Slice{} : to.store(from.text(s));
}

}  // namespace

bool has_member(std::string_view object, std::string_view key) {
  object = trim_ws(object);
  if (object.size() <= 2) return false;
  simdjson::dom::parser p;
  simdjson::dom::object o;
  if (p.parse(object.data(), object.size()).get_object().get(o)) return false;
  for (auto field : o)
    if (field.key == key) return true;
  return false;
}

void append_span_totals(const std::vector<SpanInfo>& spans, std::string_view given, ObjectWriter& out) {
  if (spans.empty()) return;
  // Latency: the root span's duration (the first root to start); with no root span in the
  // trace, from the first start to the last end.
  const SpanInfo* root = nullptr;
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const SpanInfo& sp : spans) {
    if (sp.root && sp.start_ns && sp.end_ns >= sp.start_ns && (!root || sp.start_ns < root->start_ns)) root = &sp;
    if (sp.start_ns) first = std::min(first, sp.start_ns);
    last = std::max(last, sp.end_ns);
  }
  double latency = -1;
  if (root) latency = static_cast<double>(root->end_ns - root->start_ns) / 1e6;
  else if (first != UINT64_MAX && last >= first) latency = static_cast<double>(last - first) / 1e6;
  if (latency >= 0 && !has_member(given, "latency_ms")) fmt::format_to(std::back_inserter(out.key("latency_ms")), "{}", latency);
  // Tokens: the usage of the model-call spans; when none carries usage, the root span's.
  std::int64_t in = -1, outt = -1;
  auto add = [](std::int64_t& sum, std::int64_t n) {
    if (n >= 0) sum = (sum < 0 ? 0 : sum) + n;
  };
  for (const SpanInfo& sp : spans)
    if (sp.model_call) {
      add(in, sp.input_tokens);
      add(outt, sp.output_tokens);
    }
  if (in < 0 && outt < 0)
    for (const SpanInfo& sp : spans)
      if (sp.root) {
        add(in, sp.input_tokens);
        add(outt, sp.output_tokens);
        break;
      }
  if (in < 0 && outt < 0) return;
  if (!has_member(given, "tokens"))
    fmt::format_to(std::back_inserter(out.key("tokens")), "{}", std::max<std::int64_t>(in, 0) + std::max<std::int64_t>(outt, 0));
  if (in >= 0 && !has_member(given, "input_tokens")) fmt::format_to(std::back_inserter(out.key("input_tokens")), "{}", in);
  if (outt >= 0 && !has_member(given, "output_tokens")) fmt::format_to(std::back_inserter(out.key("output_tokens")), "{}", outt);
}

bool read_otel(ParseCtx& outer, od::object record) {
  Scratch& s = outer.s;
  Trajectory& staging = s.staging;
  staging.clear();
  staging.set_tools(outer.t.tools());
  s.spans.clear();
  s.resources.clear();
  // Spans are read into `staging` with a context of their own; errors still go to `outer`.
  ParseCtx c(outer.opts, outer.text, outer.origin, staging, s, outer.outcome);
  c.doc = outer.doc;
  ObjectWriter meta(s.meta);
  bool has_spans = false;
  bool ok = for_fields(c, record, [&](std::string_view key, od::value v) {
    if (key != "resourceSpans") return c.write_member(meta, key, v);
    has_spans = true;
    return for_elements(c, v, "\"resourceSpans\"", [&](od::value rv) {
      od::object ro;
      if (!get_object(c, rv, &ro, "a resourceSpans entry")) return false;
      auto resource = static_cast<std::uint32_t>(s.resources.size());
      s.resources.emplace_back();
      if (!peek_field(c, ro, "resource", [&](od::value res) {
            od::object oo;
            if (!get_object(c, res, &oo, "\"resource\"")) return false;
            std::string& out = s.result_extra;
            out.clear();
            bool r = for_fields(c, oo, [&](std::string_view k, od::value val) {
              if (k != "attributes") return c.skip_value(val);
              out.clear();
              return write_kvlist(c, val, out, 0);
            });
            if (r && out.size() > 2) s.resources[resource] = staging.store(out);
            return r;
          }))
        return false;
      return for_fields(c, ro, [&](std::string_view k, od::value val) {
        if (k != "scopeSpans") return c.skip_value(val);  // "resource" read ahead, and read again
        return for_elements(c, val, "\"scopeSpans\"", [&](od::value ssv) {
          od::object so;
          if (!get_object(c, ssv, &so, "a scopeSpans entry")) return false;
          Slice scope;
          if (!peek_field(c, so, "scope", [&](od::value sc) { return c.store_value(sc, &scope); })) return false;
          if (scope.len <= 2) scope = Slice{};
          return for_fields(c, so, [&](std::string_view sk, od::value sval) {
            if (sk != "spans") return c.skip_value(sval);  // the same for "scope"
            return for_elements(c, sval, "\"spans\"", [&](od::value span) {
              return read_span(c, span, resource, scope);
            });
          });
        });
      });
    });
  });
  if (!ok) return false;
  if (!has_spans) return outer.fail(outer.text.data(), "OTLP record has no \"resourceSpans\" array");
  std::string_view m = meta.finish();
  s.otel_meta.assign(m);
  return true;
}

void emit_otel(ParseCtx& outer, const TraceParser::Emit& emit) {
  Scratch& s = outer.s;
  Trajectory& staging = s.staging;
  // Group by traceId in order of first appearance; order each trace by start time.
  struct Key {
    std::uint32_t group;
    std::uint64_t start;
    bool child;  // a root span comes first among spans that start together
    std::uint32_t index;
  };
  std::vector<Slice> groups;  // first trace id slice of each group
  std::unordered_map<std::string_view, std::uint32_t> group_of;  // trace id -> index in groups
  std::vector<Key> keys;
  keys.reserve(s.spans.size());
  for (std::uint32_t i = 0; i < s.spans.size(); ++i) {
    std::string_view id = staging.text(s.spans[i].trace_id);
    auto [it, fresh] = group_of.try_emplace(id, static_cast<std::uint32_t>(groups.size()));
    if (fresh) groups.push_back(s.spans[i].trace_id);
    keys.push_back(Key{it->second, s.spans[i].start, !s.spans[i].info.root, i});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.group != b.group   ? a.group < b.group
           : a.start != b.start ? a.start < b.start
           : a.child != b.child ? a.child < b.child
                                : a.index < b.index;
  });
  Trajectory& t = outer.t;
  std::string_view meta_text = s.otel_meta;
  auto emit_one = [&](std::size_t from, std::size_t to, Slice trace_id) {
    t.clear();
    t.origin = outer.origin;
    if (from == 0) t.warnings = staging.warnings;
    std::string_view id = staging.text(trace_id);
    t.set_trace_id(id.empty() ? outer.origin_id() : t.store(id));
    std::string& m = s.merged;
    m.clear();
    ObjectWriter mw(m);
    if (from < to) {
      Slice res = s.resources[s.spans[keys[from].index].resource];
      if (!res.empty()) mw.key("resource").append(staging.text(res));
    }
    mw.append_members(meta_text);
    std::vector<SpanInfo>& infos = s.span_infos;
    infos.clear();
    for (std::size_t k = from; k < to; ++k) infos.push_back(s.spans[keys[k].index].info);
    append_span_totals(infos, meta_text, mw);
    std::string_view mt = mw.finish();
    if (!mt.empty()) t.set_metadata(t.store(mt));
    // Tool calls that only the messages of the latest GenAI conventions name (no execute_tool
    // span of this trace has their id): one step each, after the model call that made it.
    std::vector<std::string_view> span_calls;
    std::vector<std::pair<std::string, std::string>> responses;  // call id -> response JSON
    bool any_messages = false;
    for (std::size_t k = from; k < to; ++k) {
      const StagedSpan& sp = s.spans[keys[k].index];
      const Step& st = staging.steps()[sp.step];
      if (st.type == StepType::tool_call && !st.id.empty()) span_calls.push_back(staging.text(st.id));
      any_messages |= !sp.output_messages.empty();
    }
    if (any_messages)
      for (std::size_t k = from; k < to; ++k) {
        const StagedSpan& sp = s.spans[keys[k].index];
        for (Slice m : {sp.input_messages, sp.output_messages})
          for_message_parts(staging.text(m), "tool_call_response", [&](simdjson::dom::object part) {
            std::string_view id;
            simdjson::dom::element response;
            if (part["id"].get_string().get(id) || part["response"].get(response)) return;
            responses.emplace_back(std::string(id), simdjson::minify(response));
          });
      }
    std::vector<std::string> message_calls;
    std::vector<std::pair<std::size_t, Step>> pending_calls;  // (key index, the call)
    for (std::size_t k = from; k < to; ++k) {
      const StagedSpan& msp = s.spans[keys[k].index];
      if (!msp.output_messages.empty())
        for_message_parts(staging.text(msp.output_messages), "tool_call", [&](simdjson::dom::object part) {
          std::string_view id, name;
          if (part["name"].get_string().get(name) || name.empty()) return;
          if (part["id"].get_string().get(id)) id = {};
          if (!id.empty() && (std::find(span_calls.begin(), span_calls.end(), id) != span_calls.end() ||
                              std::find(message_calls.begin(), message_calls.end(), id) != message_calls.end()))
            return;
          if (!id.empty()) message_calls.emplace_back(id);
          Step call;
          call.type = StepType::tool_call;
          call.status = StepStatus::ok;
          outer.set_tool(call, name);
          if (!id.empty()) call.id = t.store(id);
          simdjson::dom::element args;
          if (!part["arguments"].get(args)) {
            std::string_view text;
            if (!args.get_string().get(text)) outer.set_arguments_text(call, text, msp.where);
            else call.arguments = t.store(simdjson::minify(args));
          }
          for (const auto& [rid, response] : responses)
            if (!id.empty() && rid == id) {
              call.result = t.store(response);
              if (outer.matches_error_pattern(response)) call.status = StepStatus::error;
              break;
            }
          std::string x = R"({"source":"gen_ai.output.messages")";
          std::string_view span_extra = staging.text(staging.steps()[msp.step].extra);
          if (auto at = span_extra.find(R"("span_id":")"); at != std::string_view::npos) {
            std::size_t end = span_extra.find('"', at + 11);
            if (end != std::string_view::npos) (x += ",") += span_extra.substr(at, end + 1 - at);
          }
          x += '}';
          call.extra = t.store(x);
          pending_calls.emplace_back(k, call);
        });
    }
    std::size_t next_pending = 0;
    for (std::size_t k = from; k < to; ++k) {
      Step st = staging.steps()[s.spans[keys[k].index].step];
      bool shared = st.tool_name.off == st.raw_tool.off && st.tool_name.len == st.raw_tool.len;
      st.type_name = copy_slice(staging, t, st.type_name);
      st.raw_tool = copy_slice(staging, t, st.raw_tool);
      st.tool_name = shared ? st.raw_tool : copy_slice(staging, t, st.tool_name);
      st.id = copy_slice(staging, t, st.id);
      st.arguments = copy_slice(staging, t, st.arguments);
      st.result = copy_slice(staging, t, st.result);
      st.content = copy_slice(staging, t, st.content);
      st.extra = copy_slice(staging, t, st.extra);
      st.turn = static_cast<std::uint32_t>(t.steps().size());
      t.steps().push_back(st);
      t.spans.push_back(infos[k - from]);
      for (; next_pending < pending_calls.size() && pending_calls[next_pending].first == k; ++next_pending) {
        Step call = pending_calls[next_pending].second;
        call.turn = static_cast<std::uint32_t>(t.steps().size());
        t.steps().push_back(call);
        // Placed by its model call's start; its usage is the model call's, counted there.
        SpanInfo info;
        info.start_ns = infos[k - from].start_ns;
        info.end_ns = infos[k - from].end_ns;
        t.spans.push_back(info);
      }
    }
    ++outer.outcome.traces;
    if (emit) emit(t);
  };
  if (keys.empty()) {
    emit_one(0, 0, Slice{});
    return;
  }
  std::size_t from = 0;
  for (std::size_t k = 1; k <= keys.size(); ++k)
    if (k == keys.size() || keys[k].group != keys[from].group) {
      emit_one(from, k, groups[keys[from].group]);
      from = k;
    }
}

}  // namespace trajcheck::detail
