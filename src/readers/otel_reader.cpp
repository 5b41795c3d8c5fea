// OpenTelemetry GenAI traces in OTLP JSON: spans are staged in one pass (the file order is
// not the trace order), then grouped by traceId, ordered by start time and emitted as one
// trajectory per trace. Tool spans (gen_ai.operation.name = execute_tool) become tool_call
// steps; other spans are kept as steps of type `other` named after their operation.
#include <algorithm>
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

bool read_span(ParseCtx& c, od::value sv, std::uint32_t resource, Slice scope) {
  const char* where = location_of(sv);
  od::object o;
  if (!get_object(c, sv, &o, "a span")) return false;
  Scratch& s = c.s;
  ObjectWriter extra(s.call_extra);
  StagedSpan staged;
  staged.resource = resource;
  std::string_view op, tool, call_id, args_text, result_text, span_name;
  bool has_args = false, has_result = false, error = false;
  std::string& args_json = s.text;
  std::string& result_json = s.result_blocks;
  args_json.clear();
  result_json.clear();
  std::uint64_t start = 0, end = 0;
  std::string call_id_buf;
  bool ok = for_fields(c, o, [&](std::string_view key, od::value v) {
    if (key == "traceId") {
      std::string_view id;
      if (!c.get_string(v, &id, "\"traceId\"")) return false;
      staged.trace_id = c.t.store(id);
      return true;
    }
    if (key == "spanId" || key == "parentSpanId") {
      std::string_view id;
      if (!c.get_string(v, &id, key)) return false;
      if (!id.empty()) append_json_string(extra.key(key == "spanId" ? "span_id" : "parent_id"), id);
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
          bool special = akey == "gen_ai.operation.name" || akey == "gen_ai.tool.name" ||
                         akey == "gen_ai.tool.call.id" || akey == "gen_ai.tool.call.arguments" ||
                         akey == "gen_ai.tool.call.result";
          if (!special) return write_any(c, val, extra.key(akey), &str, 0);
          std::string& target = akey == "gen_ai.tool.call.arguments" ? args_json
                                : akey == "gen_ai.tool.call.result"  ? result_json
                                                                      : s.value;
          target.clear();
          if (!write_any(c, val, target, &str, 0)) return false;
          if (akey == "gen_ai.operation.name") op = str;
          else if (akey == "gen_ai.tool.name") tool = str;
          else if (akey == "gen_ai.tool.call.id") {
            if (str.data()) call_id = str;
            else call_id_buf.assign(trim_ws(s.value));  // a numeric id
          }
          else if (akey == "gen_ai.tool.call.arguments") { has_args = true; args_text = str; }
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
    st.type = StepType::other;
    st.type_name = c.t.store(op.empty() ? std::string_view("span") : op);
    if (!tool.empty()) append_json_string(extra.key("gen_ai.tool.name"), tool);
    if (!call_id.empty()) append_json_string(extra.key("gen_ai.tool.call.id"), call_id);
    if (has_args) extra.key("gen_ai.tool.call.arguments").append(args_json);
    if (has_result) extra.key("gen_ai.tool.call.result").append(result_json);
    if (error) st.status = StepStatus::error;
  }
  std::string_view x = extra.finish();
  if (!x.empty()) st.extra = c.t.store(x);
  staged.start = start;
  staged.step = static_cast<std::uint32_t>(c.t.steps().size());
  c.t.steps().push_back(st);
  s.spans.push_back(staged);
  return true;
}

Slice copy_slice(const Trajectory& from, Trajectory& to, Slice s) {
  return s.empty() ? Slice{} : to.store(from.text(s));
}

}  // namespace

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
    keys.push_back(Key{it->second, s.spans[i].start, i});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.group != b.group ? a.group < b.group : a.start != b.start ? a.start < b.start : a.index < b.index;
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
    if (!meta_text.empty()) {
      std::string_view inner = meta_text.substr(1, meta_text.size() - 2);
      if (mw.empty()) m.push_back('{');
      else m.push_back(',');
      m.append(inner);
      m.push_back('}');
      t.set_metadata(t.store(m));
    } else {
      std::string_view mt = mw.finish();
      if (!mt.empty()) t.set_metadata(t.store(mt));
    }
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
      st.turn = static_cast<std::uint32_t>(k - from);
      t.steps().push_back(st);
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
