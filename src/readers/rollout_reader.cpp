// Codex CLI rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): one JSON object per
// line, {"timestamp", "type", "payload"}, where "response_item" lines hold the conversation
// as OpenAI Responses items (messages, function calls and their outputs, shell and custom
// tool calls, reasoning) and the other lines are Codex's own bookkeeping (session_meta,
// turn_context, event_msg, …). RecordSource hands a rollout over as one array record, as it
// does a session log (record_source.cpp); this reader makes one trace of it, each item read by
// the chat reader. docs/traces.md states the rules.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "readers/chat_shared.hpp"

namespace trajcheck::detail {

namespace {

// Line types Codex writes that hold no conversation item: counted and warned about, once per
// type.
bool rollout_bookkeeping_type(std::string_view type) {
  return type == "turn_context" || type == "event_msg" || type == "world_state" || type == "token_usage_record" ||
         type == "compacted";
}

// Payload types of response_item lines that are not conversation items (Codex's own
// snapshots and summaries): counted, warned about, no steps.
bool rollout_bookkeeping_item(std::string_view type) {
  return type == "ghost_snapshot" || type == "compaction" || type == "compaction_summary";
}

struct RolloutKind {
  std::string what;  // the warning's subject
  std::uint32_t count = 0;
  const char* first = nullptr;
  bool known = true;
};

void count_kind(std::vector<RolloutKind>& kinds, std::string what, const char* where, bool known) {
  for (RolloutKind& k : kinds)
    if (k.what == what) {
      ++k.count;
      return;
    }
  kinds.push_back({std::move(what), 1, where, known});
}

// The string member `key` of `o` (empty when absent or not a string); `o` is rewound.
bool rollout_peek(ParseCtx& c, od::object& o, std::string_view key, std::string* out, const char* where) {
  od::value v;
  auto e = o.find_field_unordered(key).get(v);
  if (e == simdjson::SUCCESS) {
    std::string_view sv;
    if (!v.get_string().get(sv)) out->assign(sv);
  } else if (e != simdjson::NO_SUCH_FIELD) {
    return c.fail(where, json_error_message(e));
  }
  if (auto r = o.reset().error()) return c.fail(where, json_error_message(r));
  return true;
}

// The exit status Codex reports in a shell command's output: "Process exited with code N" in
// the text (exec_command), or "exit_code": N in its JSON ({"output", "metadata": {"exit_code"}},
// the shell tool); -1 when none.
long rollout_exit_code(std::string_view result) {
  for (std::string_view marker : {std::string_view("Process exited with code "), std::string_view("\"exit_code\":")}) {
    std::size_t at = result.find(marker);
    if (at == std::string_view::npos) continue;
    at += marker.size();
    long code = 0;
    std::size_t digits = 0;
    for (; at < result.size() && result[at] >= '0' && result[at] <= '9' && digits < 9; ++at, ++digits)
      code = code * 10 + (result[at] - '0');
    if (digits > 0) return code;
  }
  return -1;
}

// An event_msg payload: a token_count event's running total ({"type": "token_count", "info":
// {"total_token_usage": {…}}}) replaces `usage` (the last one is the session's); the other
// events are not read.
bool rollout_token_count(ParseCtx& c, od::value v, std::string* usage) {
  od::json_type t;
  if (auto e = v.type().get(t)) return c.fail(location_of(v), json_error_message(e));
  if (t != od::json_type::object) return c.skip_value(v);
  od::object p;
  if (auto e = v.get_object().get(p)) return c.fail(location_of(v), json_error_message(e));
  std::string type;
  if (!rollout_peek(c, p, "type", &type, location_of(v))) return false;
  return for_fields(c, p, [&](std::string_view key, od::value fv) {
    if (type != "token_count" || key != "info") return c.skip_value(fv);
    od::json_type it;
    if (auto e = fv.type().get(it)) return c.fail(location_of(fv), json_error_message(e));
    if (it != od::json_type::object) return c.skip_value(fv);
    od::object info;
    if (auto e = fv.get_object().get(info)) return c.fail(location_of(fv), json_error_message(e));
    return for_fields(c, info, [&](std::string_view k, od::value uv) {
      if (k != "total_token_usage") return c.skip_value(uv);
      usage->clear();
      return c.write_value(uv, *usage);
    });
  });
}

}  // namespace

bool read_rollout(ParseCtx& c, od::array lines) {
  begin_chat(c);
  std::vector<RolloutKind> kinds;
  std::string trace_id, cwd, meta_json, fields, result_fields, value, usage;
  ObjectWriter meta(meta_json);
  std::uint32_t index = 0;
  bool ok = for_each_element(c, lines, [&](od::value lv) {
    const char* where = location_of(lv);
    od::object o;
    if (auto e = lv.get_object().get(o)) return c.fail(where, expect(e, "a rollout line must be a JSON object"));
    std::string type, item_type;
    if (!rollout_peek(c, o, "type", &type, where)) return false;
    fields.clear();
    result_fields.clear();
    ObjectWriter w(fields), wr(result_fields);
    std::string timestamp;
    std::size_t before = c.t.steps().size();
    c.s.joined.clear();
    bool read = false, item_counted = false;
    bool fine = for_fields(c, o, [&](std::string_view key, od::value v) {
      if (key == "type") return c.skip_value(v);
      if (key == "payload") {
        if (type == "event_msg") return rollout_token_count(c, v, &usage);
        if (type != "session_meta" && type != "response_item") return c.skip_value(v);
        const char* pwhere = location_of(v);
        od::object p;
        if (auto e = v.get_object().get(p)) return c.fail(pwhere, expect(e, "a rollout line's \"payload\" must be an object"));
        if (type == "session_meta") {
          // The session: its id names the trace, its cwd is the context, the rest the metadata.
          return for_fields(c, p, [&](std::string_view k, od::value pv) {
            od::json_type t;
            if (auto e = pv.type().get(t)) return c.fail(location_of(pv), json_error_message(e));
            if (k == "id" && t == od::json_type::string) {
              std::string_view id;
              if (!c.get_string(pv, &id, "session_meta \"id\"")) return false;
              trace_id.assign(id);
              return true;
            }
            if (k == "cwd") {
              value.clear();
              if (!c.write_value(pv, value)) return false;
              cwd = value;
              return true;
            }
            if (k == "cli_version" || k == "originator" || k == "source" || k == "model_provider" ||
                k == "session_id" || k == "timestamp")
              return c.write_member(meta, k == "timestamp" ? "session_started_at" : k, pv);
            return c.skip_value(pv);  // instructions, git details, …
          });
        }
        bool role = false;
        {
          std::string r;
          if (!rollout_peek(c, p, "type", &item_type, pwhere) || !rollout_peek(c, p, "role", &r, pwhere)) return false;
          role = !r.empty();
        }
        if (!role && item_type != "message" && !is_responses_item(item_type)) {
          bool known = rollout_bookkeeping_item(item_type);
          count_kind(kinds, fmt::format("response_item payload{} '{}'", known ? "" : " of unknown type", item_type),
                     where, known);
          item_counted = true;
          return for_fields(c, p, [&](std::string_view, od::value fv) { return c.skip_value(fv); });
        }
        read = true;
        return read_chat_element(c, v, index++);  // the item, read again from its start
      }
      value.clear();
      if (!c.write_value(v, value)) return false;
      if (key == "timestamp" && value.size() > 1 && value.front() == '"') timestamp = value;
      w.key(key).append(value);
      if (key != "timestamp") wr.key(key).append(value);
      return true;
    });
    if (!fine) return false;
    if (item_counted) return true;
    if (type == "session_meta" || read) {
      if (!read) return true;
    } else if (type.empty()) {
      count_kind(kinds, "lines with no \"type\"", where, false);
      return true;
    } else {
      count_kind(kinds, fmt::format("lines of type '{}'", type), where, rollout_bookkeeping_type(type));
      return true;
    }
    auto& steps = c.t.steps();
    std::string_view x = w.finish(), xr = wr.finish();
    for (std::size_t i = before; i < steps.size(); ++i)
      if (!x.empty()) steps[i].extra = c.merge_extra(steps[i].extra, x);
    for (std::uint32_t at : c.s.joined) {
      if (at >= before) continue;
      Step& call = steps[at];
      std::string done;
      ObjectWriter d(done);
      if (!timestamp.empty()) d.key("completed_at").append(timestamp);
      if (long code = rollout_exit_code(c.t.text(call.result)); code >= 0) {
        d.key("exit_code").append(std::to_string(code));
        if (code != 0) call.status = StepStatus::error;
      }
      if (std::string_view t = d.finish(); !t.empty()) call.extra = c.merge_extra(call.extra, t);
      if (!xr.empty()) call.extra = merge_result_fields(c, call.extra, xr);
    }
    return true;
  });
  if (!ok) return false;
  for (const RolloutKind& k : kinds) {
    std::string text = k.count == 1 ? k.what : fmt::format("{} ({} of them; the first here)", k.what, k.count);
    c.warn(k.first, k.known ? fmt::format("{}: Codex bookkeeping, not conversation items; skipped", text)
                            : fmt::format("{}: not known; skipped", text));
  }
  c.t.set_trace_id(trace_id.empty() ? c.origin_id() : c.t.store(trace_id));
  std::string ctx;
  ObjectWriter cw(ctx);
  if (!cwd.empty()) cw.key("cwd").append(cwd);
  if (std::string_view x = cw.finish(); !x.empty()) c.t.set_context(c.t.store(x));
  if (!usage.empty()) meta.key("usage").append(usage);
  if (std::string_view x = meta.finish(); !x.empty()) c.t.set_metadata(c.t.store(x));
  return true;
}

}  // namespace trajcheck::detail
