// Coding-agent session logs (Claude Code's ~/.claude/projects/<project>/<session>.jsonl and
// the like): one JSON object per line, each wrapping one Anthropic- or OpenAI-shaped message
// with session fields ({"type": "user" | "assistant", "message": {…}, "sessionId", "uuid",
// "parentUuid", "timestamp", …}), beside lines that are not messages (summaries, file
// snapshots, system notices). RecordSource hands a session file over as one array record
// (record_source.cpp); this reader makes one trace per session, its steps in parentUuid
// order, each message read by the chat reader. docs/traces.md states the rules.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "readers/chat_shared.hpp"

namespace trajcheck::detail {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

// What the first pass learns of a line.
struct Line {
  const char* begin = nullptr;  // the line's object, in the record's text
  std::size_t len = 0;
  std::string session, uuid, parent, leaf, type;
  std::string agent;  // agentId: a Claude Code subagent's transcript line
  bool message = false;  // has a "message": a message line
  std::uint32_t session_index = kNone;
  std::uint64_t line = 0, column = 0;  // of `begin` in the file
};

// The file positions of the lines, in one pass over the record (they are in file order).
void locate_lines(const ParseCtx& c, std::vector<Line>& lines) {
  std::uint64_t line = c.origin.line;
  const char* at = c.text.data();
  const char* line_start = nullptr;  // after the last '\n' passed; null on the record's first line
  for (Line& ln : lines) {
    for (; at < ln.begin; ++at)
      if (*at == '\n') {
        ++line;
        line_start = at + 1;
      }
    ln.line = line;
    ln.column = line_start ? static_cast<std::uint64_t>(ln.begin - line_start) + 1
                           : c.origin.column + static_cast<std::uint64_t>(ln.begin - c.text.data());
  }
}

// A warning at the start of a line (ParseCtx::warn would find its position from the start of
// the record each time).
void warn_at(ParseCtx& c, const Line& ln, std::string_view message) {
  c.t.warnings.push_back(fmt::format("{}:{}:{}: warning: {}", c.origin.file, ln.line, ln.column, message));
}

// A string field's text (a number's too, as written); empty for null.
bool read_key(ParseCtx& c, od::value v, std::string_view key, std::string* out) {
  bool null = false;
  if (!c.is_null(v, &null)) return false;
  if (null) return true;
  Slice s;
  if (!c.get_id(v, &s, fmt::format("\"{}\"", key))) return false;
  out->assign(c.t.text(s));
  return true;
}

// The first pass: the session fields of every line and where its text is, without reading
// the rest (read again, in order, by read_line).
bool scan_lines(ParseCtx& c, od::array lines, std::vector<Line>& out) {
  return for_each_element(c, lines, [&](od::value v) {
    Line ln;
    ln.begin = location_of(v);
    od::object o;
    if (auto e = v.get_object().get(o)) return c.fail(ln.begin, expect(e, "a session log line must be a JSON object"));
    bool ok = for_fields(c, o, [&](std::string_view key, od::value fv) {
      if (key == "sessionId") return read_key(c, fv, key, &ln.session);
      if (key == "uuid") return read_key(c, fv, key, &ln.uuid);
      if (key == "parentUuid") return read_key(c, fv, key, &ln.parent);
      if (key == "leafUuid") return read_key(c, fv, key, &ln.leaf);
      if (key == "agentId") return read_key(c, fv, key, &ln.agent);
      if (key == "type") {
        od::json_type type;
        if (auto e = fv.type().get(type)) return c.fail(location_of(fv), json_error_message(e));
        return type != od::json_type::string || read_key(c, fv, key, &ln.type);
      }
      if (key == "message") {
        bool null = false;
        if (!c.is_null(fv, &null)) return false;
        ln.message = !null;
      }
      return true;  // the value is skipped, unread: read_line reads it
    });
    if (!ok) return false;
    // Only lines whose type is a role (user, assistant, tool, system, developer) are the
    // conversation. Newer Claude Code logs also copy the messages of each model request into
    // lines of another type (`api-request-blob`): read, they would repeat the calls.
    if (ln.message && !ln.type.empty() && ln.type != "user" && ln.type != "assistant" && ln.type != "tool" &&
        ln.type != "system" && ln.type != "developer")
      ln.message = false;
    const char* end = c.here();
    if (!end || end < ln.begin || end > c.text.data() + c.text.size()) end = c.text.data() + c.text.size();
    while (end > ln.begin && end[-1] != '}') --end;  // back over the separator and blanks
    ln.len = static_cast<std::size_t>(end - ln.begin);
    out.push_back(std::move(ln));
    return true;
  });
}

// The trace id of a Claude Code subagent's transcript: its session's, then "/agent-" and its
// agentId.
std::string subagent_trace_id(std::string_view session, std::string_view agent) {
  return fmt::format("{}/agent-{}", session, agent);
}

// One trace of the file: a session, or a subagent's transcript (its lines carry the session's
// id and the subagent's agentId).
struct SessionKey {
  std::string id;                // the trace id
  std::string session, agent;    // sessionId, agentId (empty: not a subagent)
  std::uint32_t first_line = 0;  // index of its first line
};

// Sessions in order of first appearance; a line without a sessionId belongs to the session of
// the line its leafUuid names (a summary line), else of the line before it, else to the
// file's first session. A line with an agentId belongs to that subagent's trace.
std::vector<SessionKey> assign_sessions(std::vector<Line>& lines) {
  std::vector<SessionKey> ids;
  std::unordered_map<std::string, std::uint32_t> index;
  std::unordered_map<std::string_view, std::uint32_t> by_uuid;
  for (std::uint32_t k = 0; k < lines.size(); ++k) {
    Line& ln = lines[k];
    if (ln.session.empty()) continue;
    std::string id = ln.agent.empty() ? ln.session : subagent_trace_id(ln.session, ln.agent);
    auto [it, added] = index.emplace(id, static_cast<std::uint32_t>(ids.size()));
    if (added) ids.push_back({std::move(id), ln.session, ln.agent, k});
    ln.session_index = it->second;
    if (!ln.uuid.empty()) by_uuid.emplace(ln.uuid, ln.session_index);
  }
  if (ids.empty()) ids.push_back({});
  std::uint32_t previous = 0;
  for (Line& ln : lines) {
    if (ln.session_index == kNone) {
      auto leaf = ln.leaf.empty() ? by_uuid.end() : by_uuid.find(ln.leaf);
      ln.session_index = leaf != by_uuid.end() ? leaf->second : previous;
    }
    previous = ln.session_index;
  }
  return ids;
}

// The lines of one session (indices into `lines`, in file order) in parentUuid order. A line
// whose parentUuid names another line of the session is its child; siblings come in file
// order, each with all that follows from it (a conversation the user went back on, and the
// one they took instead). A line with no such parent starts a chain: the first chain is the
// session's start, each later one (a subagent's sidechain, a resumed or compacted
// conversation) hangs under the line written just before it, where it happened. A cycle of
// parentUuid links is cut at its first line in the file (with a warning).
std::vector<std::uint32_t> session_order(ParseCtx& c, const std::vector<Line>& lines,
                                         const std::vector<std::uint32_t>& mine) {
  const std::size_t n = mine.size();
  std::unordered_map<std::string_view, std::uint32_t> by_uuid;  // uuid -> position in `mine`
  for (std::uint32_t k = 0; k < n; ++k)
    if (!lines[mine[k]].uuid.empty()) by_uuid.emplace(lines[mine[k]].uuid, k);
  std::vector<std::uint32_t> parent(n, kNone);
  for (std::uint32_t k = 0; k < n; ++k) {
    const Line& ln = lines[mine[k]];
    auto it = ln.parent.empty() ? by_uuid.end() : by_uuid.find(ln.parent);
    if (it != by_uuid.end() && it->second != k) parent[k] = it->second;
  }
  // The chain each line starts from (kNone: not known yet); cycles are cut on the way.
  std::vector<std::uint32_t> root(n, kNone);
  std::vector<char> on_path(n, 0);
  std::vector<std::uint32_t> path;
  for (std::uint32_t k = 0; k < n; ++k) {
    while (root[k] == kNone) {
      path.clear();
      std::uint32_t at = k;
      while (root[at] == kNone && parent[at] != kNone && !on_path[at]) {
        on_path[at] = 1;
        path.push_back(at);
        at = parent[at];
      }
      if (on_path[at]) {  // a cycle through `at`: cut it at its first line in the file
        std::uint32_t first = at;
        for (std::uint32_t p = parent[at]; p != at; p = parent[p]) first = std::min(first, p);
        warn_at(c, lines[mine[first]], "the parentUuid links of this line's session form a cycle; cut here, "
                                       "the line starts a chain of its own");
        parent[first] = kNone;
        for (std::uint32_t p : path) on_path[p] = 0;
        continue;
      }
      std::uint32_t r = root[at] != kNone ? root[at] : at;
      root[at] = r;
      for (std::uint32_t p : path) {
        root[p] = r;
        on_path[p] = 0;
      }
    }
  }
  // Later chains hang under the line before them whose chain is already placed.
  std::vector<char> placed(n, 0);
  std::uint32_t last = kNone;
  for (std::uint32_t k = 0; k < n; ++k) {
    if (parent[k] == kNone) {
      if (last != kNone) parent[k] = last;
      placed[k] = 1;
    }
    if (placed[root[k]]) last = k;
  }
  std::vector<std::vector<std::uint32_t>> children(n);
  std::uint32_t start = kNone;
  for (std::uint32_t k = 0; k < n; ++k) {
    if (parent[k] == kNone) start = start == kNone ? k : start;
    else children[parent[k]].push_back(k);
  }
  std::vector<std::uint32_t> order, stack;
  if (start != kNone) stack.push_back(start);
  while (!stack.empty()) {
    std::uint32_t k = stack.back();
    stack.pop_back();
    order.push_back(mine[k]);
    stack.insert(stack.end(), children[k].rbegin(), children[k].rend());
  }
  return order;
}

// Milliseconds since 1970 of an ISO 8601 UTC time as Claude Code writes it
// ("2025-07-01T09:00:03.120Z", also with an offset "+02:00" or without a zone), as integer
// microseconds; false for any other text.
bool iso8601_us(std::string_view s, std::int64_t* us) {
  auto digits = [&](std::size_t at, std::size_t count, std::int64_t* v) {
    if (at + count > s.size()) return false;
    *v = 0;
    for (std::size_t i = at; i < at + count; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      *v = *v * 10 + (s[i] - '0');
    }
    return true;
  };
  std::int64_t y, mo, d, h, mi, se;
  if (!digits(0, 4, &y) || s.size() < 19 || s[4] != '-' || !digits(5, 2, &mo) || s[7] != '-' || !digits(8, 2, &d) ||
      (s[10] != 'T' && s[10] != ' ') || !digits(11, 2, &h) || s[13] != ':' || !digits(14, 2, &mi) || s[16] != ':' ||
      !digits(17, 2, &se) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    return false;
  std::size_t i = 19;
  std::int64_t frac = 0;
  if (i < s.size() && s[i] == '.') {
    std::size_t k = 0;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++k)
      if (k < 6) frac = frac * 10 + (s[i] - '0');
    if (k == 0) return false;
    for (; k < 6; ++k) frac *= 10;
  }
  std::int64_t offset = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    std::int64_t oh, om;
    if (!digits(i + 1, 2, &oh) || i + 3 >= s.size() || s[i + 3] != ':' || !digits(i + 4, 2, &om)) return false;
    offset = (s[i] == '-' ? -1 : 1) * (oh * 60 + om) * 60;
    i += 6;
  }
  if (i != s.size()) return false;
  // Days from the civil date (Howard Hinnant's algorithm).
  y -= mo <= 2;
  std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  std::int64_t yoe = y - era * 400;
  std::int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  std::int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  *us = ((days * 24 + h) * 60 + mi) * 60 * 1000000 + se * 1000000 + frac - offset * 1000000;
  return true;
}

// A duration in microseconds as a JSON number of milliseconds, exactly ("1250.5").
std::string ms_text(std::int64_t us) {
  std::string out = fmt::format("{}", us / 1000);
  if (std::int64_t rest = us % 1000) {
    std::string frac = fmt::format("{:03}", rest);
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out;
}

// What one session gathers while its lines are read.
struct SessionState {
  // The session-wide fields, first value of each: cwd and gitBranch are the trace context,
  // version and userType metadata, with the first summary line's "summary".
  std::string cwd, branch, version, user_type, summary;
  struct Kind {
    std::string type;
    std::uint32_t count = 0;
    std::uint32_t first = 0;  // the line
  };
  std::vector<Kind> skipped;  // lines that are not messages, by type
  std::unordered_map<std::string, std::uint32_t> turns;  // assistant message id -> turn
  std::uint32_t next_turn = 0;
  std::vector<std::int64_t> started;  // per step: the time of the line that made it
  std::string session_id;              // the sessionId (a subagent's trace ids start with it)
};

constexpr std::int64_t kUntimed = INT64_MIN;

// The id of a line's message (Claude Code writes one line per content block of a response,
// each with the response's id): the calls of one response share a turn. A line without one
// has none; a line whose JSON breaks on the way to it (stage 1 checks only its structure)
// leaves the document unusable: false, with the error and where it was found.
bool message_id(od::document& doc, std::string* id, simdjson::error_code* error, const char** where) {
  od::object line, message;
  std::string_view sv;
  simdjson::error_code e = doc.get_object().get(line);
  if (!e) e = line.find_field_unordered("message").get_object().get(message);
  if (!e) e = message.find_field_unordered("id").get_string().get(sv);
  if (!e) id->assign(sv);
  if (rewind(doc)) return true;
  *error = e ? e : simdjson::TAPE_ERROR;
  if (doc.current_location().get(*where)) *where = nullptr;
  return false;
}

// A tool result line's `toolUseResult` (Claude Code's structured copy of the result) is not
// kept, but the agentId in it (the result of a call that started a subagent) links the call
// to the subagent's trace.
bool subagent_of_result(ParseCtx& c, od::value v, std::string* agent) {
  od::json_type type;
  if (auto e = v.type().get(type)) return c.fail(location_of(v), json_error_message(e));
  if (type != od::json_type::object) return c.skip_value(v);
  od::object o;
  if (auto e = v.get_object().get(o)) return c.fail(location_of(v), json_error_message(e));
  return for_fields(c, o, [&](std::string_view key, od::value fv) {
    if (key != "agentId") return c.skip_value(fv);
    od::json_type t;
    if (auto e = fv.type().get(t)) return c.fail(location_of(fv), json_error_message(e));
    if (t != od::json_type::string) return c.skip_value(fv);
    std::string_view text;
    if (!c.get_string(fv, &text, "\"agentId\"")) return false;
    agent->assign(text);
    return true;
  });
}

// Reads one line (again, now in session order) into the session's trajectory.
bool read_line(ParseCtx& c, const Line& ln, std::uint32_t index, SessionState& st) {
  Scratch& s = c.s;
  std::size_t capacity = static_cast<std::size_t>(c.text.data() + c.text.size() + simdjson::SIMDJSON_PADDING - ln.begin);
  od::document doc;
  if (auto e = s.line_parser.iterate(ln.begin, ln.len, capacity).get(doc)) {
    std::size_t bad = stage1_error_offset(e, std::string_view(ln.begin, ln.len));
    return c.fail(bad == std::string_view::npos ? ln.begin : ln.begin + bad, json_error_message(e));
  }
  od::document* record_doc = c.doc;
  c.doc = &doc;
  std::uint32_t turn = ln.message ? st.next_turn++ : 0;
  if (ln.message) {
    std::string id;
    simdjson::error_code e = simdjson::SUCCESS;
    const char* at = nullptr;
    if (!message_id(doc, &id, &e, &at)) {
      c.doc = record_doc;
      return c.fail(at ? at : ln.begin, json_error_message(e));
    }
    if (!id.empty() && ln.type == "assistant") turn = st.turns.emplace(id, turn).first->second;
  }
  od::object o;
  if (auto e = doc.get_object().get(o)) {
    c.doc = record_doc;
    return c.fail(ln.begin, json_error_message(e));
  }
  // The line's own fields: on the steps it makes, and (but its timestamp, which becomes
  // "completed_at") on the calls its results answer.
  std::string fields, result_fields, value;
  ObjectWriter w(fields), wr(result_fields);
  auto keep = [&](std::string_view key, std::string_view raw) {
    w.key(key).append(raw);
    if (key != "timestamp") wr.key(key).append(raw);
  };
  std::string timestamp, agent;
  std::size_t before = c.t.steps().size();
  s.joined.clear();
  bool read = false;
  auto session_field = [&](std::string& first, od::value v, std::string_view key) {
    value.clear();
    if (!c.write_value(v, value)) return false;
    if (first.empty()) first = value;
    else if (value != first) keep(key, value);  // changed during the session: kept on the line's steps
    return true;
  };
  bool ok = for_fields(c, o, [&](std::string_view key, od::value v) {
    bool null = false;
    if (!c.is_null(v, &null)) return false;
    if (null) return true;
    if (key == "message" && ln.message) {
      const char* where = location_of(v);
      od::json_type type;
      if (auto e = v.type().get(type)) return c.fail(where, json_error_message(e));
      if (type != od::json_type::object) return c.fail(where, "a session line's \"message\" must be an object");
      read = true;
      return read_chat_element(c, v, turn);
    }
    if (key == "type" || key == "sessionId") return c.skip_value(v);  // the message's role; the trace id
    if (key == "toolUseResult") return subagent_of_result(c, v, &agent);  // a copy of the tool result
    if (key == "cwd") return session_field(st.cwd, v, key);
    if (key == "gitBranch") return session_field(st.branch, v, key);
    if (key == "version") return session_field(st.version, v, key);
    if (key == "userType") return session_field(st.user_type, v, key);
    if (key == "summary" && !ln.message) return session_field(st.summary, v, key);
    if (key == "timestamp") {
      od::json_type type;
      if (!v.type().get(type) && type == od::json_type::string) {
        std::string_view text;
        if (!c.get_string(v, &text, "\"timestamp\"")) return false;
        timestamp.assign(text);
      }
    }
    value.clear();
    if (!c.write_value(v, value)) return false;
    keep(key, value);
    return true;
  });
  c.doc = record_doc;
  if (!ok) return false;
  if (!read) {
    auto kind = std::find_if(st.skipped.begin(), st.skipped.end(), [&](const SessionState::Kind& k) { return k.type == ln.type; });
    if (kind == st.skipped.end()) st.skipped.push_back({ln.type, 1, index});
    else ++kind->count;
    return true;
  }
  auto& steps = c.t.steps();
  std::string_view x = w.finish(), xr = wr.finish();
  std::int64_t at_us = 0;
  bool timed = iso8601_us(timestamp, &at_us);
  st.started.resize(steps.size(), kUntimed);
  for (std::size_t i = before; i < steps.size(); ++i) {
    if (!x.empty()) steps[i].extra = c.merge_extra(steps[i].extra, x);
    steps[i].turn = turn;
    if (timed) st.started[i] = at_us;
  }
  // The calls this line's results answered: when they completed, and the line's fields.
  for (std::uint32_t at : s.joined) {
    if (at >= before) continue;  // a result with no call, kept as a call of its own (above)
    Step& call = steps[at];
    std::string done;
    ObjectWriter d(done);
    if (!timestamp.empty()) append_json_string(d.key("completed_at"), timestamp);
    if (!agent.empty() && !st.session_id.empty())
      append_json_string(d.key("subagent_trace_id"), subagent_trace_id(st.session_id, agent));
    if (timed && st.started[at] != kUntimed && at_us >= st.started[at])
      d.key("latency_ms").append(ms_text(at_us - st.started[at]));
    if (std::string_view timing = d.finish(); !timing.empty()) call.extra = c.merge_extra(call.extra, timing);
    if (!xr.empty()) call.extra = merge_result_fields(c, call.extra, xr);
  }
  if (steps.size() == before && s.joined.empty())
    warn_at(c, ln, "this session line's message makes no step (no text, no tool call or result); its fields are not kept");
  return true;
}

// What a subagent's meta file (Claude Code 2.x: `agent-<id>.meta.json` beside the transcript
// `agent-<id>.jsonl`) says: the id of the call that started the subagent (toolUseId), the
// subagent that started it when it is nested (parentAgentId), and the whole object, kept in
// the trace's metadata. A meta file that is missing or cannot be read is a warning (at the
// transcript's first line, or at the meta file).
struct SubagentMeta {
  std::string call_id, parent_agent, raw;
};

SubagentMeta read_subagent_meta(ParseCtx& c, const Line& first, std::string_view agent) {
  namespace fs = std::filesystem;
  SubagentMeta m;
  std::string name = fmt::format("agent-{}.meta.json", agent);
  if (c.origin.file.empty() || c.origin.file == "-") {
    warn_at(c, first, fmt::format("this Claude Code subagent transcript is read from standard input, without its meta "
                                  "file {}: the call that started the subagent is not known", name));
    return m;
  }
  std::string path = (fs::path(c.origin.file).parent_path() / name).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    warn_at(c, first, fmt::format("no meta file {} beside this Claude Code subagent transcript: the call that started "
                                  "the subagent is not known", name));
    return m;
  }
  auto bad = [&](std::string_view why) {
    c.t.warnings.push_back(fmt::format("{}:1:1: warning: cannot read this Claude Code subagent meta file ({}): the call "
                                       "that started subagent {} is not known", path, why, agent));
    return SubagentMeta{};
  };
  simdjson::padded_string text;
  if (auto e = simdjson::padded_string::load(path).get(text)) return bad(simdjson::error_message(e));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.parse(text).get(doc)) return bad(simdjson::error_message(e));
  simdjson::dom::object o;
  if (doc.get_object().get(o)) return bad("not a JSON object");
  std::string_view sv;
  if (!o["toolUseId"].get_string().get(sv)) m.call_id.assign(sv);
  if (!o["parentAgentId"].get_string().get(sv)) m.parent_agent.assign(sv);
  m.raw = simdjson::minify(o);
  return m;
}

}  // namespace

bool read_sessions(ParseCtx& c, od::array lines, std::vector<Trajectory>& sessions) {
  std::vector<Line> all;
  if (!scan_lines(c, lines, all)) return false;
  locate_lines(c, all);
  std::vector<SessionKey> ids = assign_sessions(all);
  std::vector<std::vector<std::uint32_t>> members(ids.size());
  for (std::uint32_t k = 0; k < all.size(); ++k) members[all[k].session_index].push_back(k);
  RecordOrigin record_origin = c.t.origin;
  for (std::size_t si = 0; si < ids.size(); ++si) {
    c.t.clear();
    c.t.origin = record_origin;
    if (!members[si].empty()) {
      c.t.origin.line = all[members[si].front()].line;
      c.t.origin.column = all[members[si].front()].column;
    }
    c.context = {};
    begin_chat(c);
    SessionState st;
    st.session_id = ids[si].session;
    // A line repeating the uuid of an earlier one (a resumed session copies lines) is read once.
    std::unordered_map<std::string_view, std::uint32_t> seen;
    for (std::uint32_t k : session_order(c, all, members[si])) {
      const Line& ln = all[k];
      if (!ln.uuid.empty()) {
        auto [it, fresh] = seen.emplace(ln.uuid, k);
        if (!fresh) {
          warn_at(c, ln, fmt::format("this line repeats uuid '{}' of line {}; read once, there", ln.uuid,
                                     all[it->second].line));
          continue;
        }
      }
      if (!read_line(c, ln, k, st)) return false;
    }
    for (const SessionState::Kind& k : st.skipped) {
      std::string lines = fmt::format("{} {}line{}", k.count, k.type == "summary" ? "summary " : "", k.count == 1 ? "" : "s");
      if (k.type == "summary")
        warn_at(c, all[k.first], fmt::format("{} in this session (the first here): not messages; the first one's \"summary\" is "
                                    "kept in the trace's metadata", lines));
      else if (k.type.empty())
        warn_at(c, all[k.first], fmt::format("{} with no \"type\" and no \"message\" in this session (the first here): no steps; "
                                    "skipped", lines));
      else
        warn_at(c, all[k.first], fmt::format("{} of type '{}' in this session (the first here): no message, no steps; skipped",
                                    lines, k.type));
    }
    c.t.set_trace_id(ids[si].id.empty() ? c.origin_id() : c.t.store(ids[si].id));
    std::string json;
    ObjectWriter ctx(json);
    if (!st.cwd.empty()) ctx.key("cwd").append(st.cwd);
    if (!st.branch.empty()) ctx.key("gitBranch").append(st.branch);
    if (std::string_view x = ctx.finish(); !x.empty()) c.t.set_context(c.t.store(x));
    ObjectWriter meta(json);
    if (!ids[si].agent.empty()) {
      // A subagent's transcript: its own trace, linked to the session (or subagent) and the
      // call that started it.
      SubagentMeta sub = read_subagent_meta(c, all[ids[si].first_line], ids[si].agent);
      std::string parent = sub.parent_agent.empty() ? ids[si].session : subagent_trace_id(ids[si].session, sub.parent_agent);
      append_json_string(meta.key("parent_trace_id"), parent);
      if (!sub.call_id.empty()) append_json_string(meta.key("parent_call_id"), sub.call_id);
      append_json_string(meta.key("agentId"), ids[si].agent);
      if (!sub.raw.empty()) meta.key("subagent").append(sub.raw);
    }
    if (!st.summary.empty()) meta.key("summary").append(st.summary);
    if (!st.version.empty()) meta.key("version").append(st.version);
    if (!st.user_type.empty()) meta.key("userType").append(st.user_type);
    if (std::string_view x = meta.finish(); !x.empty()) c.t.set_metadata(c.t.store(x));
    sessions.push_back(std::move(c.t));
  }
  c.t.clear();
  c.t.origin = record_origin;
  return true;
}

}  // namespace trajcheck::detail
