// TraceParser: per-record format detection and dispatch to the format readers (whose shared
// state and normalization rules are ParseCtx, readers/parse_ctx.cpp).
#include <string.h>

#include <algorithm>
#include <map>
#include <new>

#include <fmt/format.h>

#include "readers/chat_formats.hpp"
#include "readers/chat_shared.hpp"
#include "readers/parser_impl.hpp"
#include "trajcheck/record_shape.hpp"

namespace trajcheck {

using detail::od::json_type;
namespace od = detail::od;

namespace {

using Shape = RecordShape;
namespace shape_bits = shape_key_bits;

// Whether a "type" tags a message of a list without roles (LangChain, the Responses API).
bool message_type(std::string_view type) {
  // Not LangChain's legacy "function": an OpenAI tool call of a tool list is {"type": "function"}.
  // "constructor": a LangChain message serialized by JSON.stringify or dumpd.
  return type == "message" || type == "constructor" || detail::is_responses_item(type) ||
         (type != "function" && !detail::langchain_role(type).empty());
}

// The shape-telling names of an object (the table of trajcheck/record_shape.hpp), up to its
// "steps" (which decides the shape: skipping the rest, the steps themselves, saves a pass), with
// shape_bits::typed_message when its "type" tags a message.
ShapeKeys object_keys(od::object& o, simdjson::error_code* error) {
  ShapeKeys keys = 0;
  *error = simdjson::SUCCESS;
  for (auto field : o) {
    std::string_view name;
    if ((*error = field.unescaped_key().get(name))) break;
    ShapeKeys k = shape_key(name);
    keys |= k;
    if (k == shape_bits::steps) break;
    if (k == shape_bits::type) {
      std::string_view type;
      if (!field.value().get_string().get(type) && message_type(type)) keys |= shape_bits::typed_message;
    }
  }
  return keys;
}

Shape forced_shape(InputFormat f) {
  switch (f) {
    case InputFormat::native: return Shape::native;
    case InputFormat::openai:
    case InputFormat::anthropic: return Shape::chat;
    case InputFormat::otel: return Shape::otel;
    case InputFormat::list: return Shape::list;
    case InputFormat::agentdojo:
    case InputFormat::inspect:
    case InputFormat::bedrock:
    case InputFormat::responses:
    case InputFormat::gemini:
    case InputFormat::langchain: return Shape::chat;  // or a response record: see read()
    case InputFormat::session: return Shape::session;
    default: return Shape::unknown;
  }
}

// The formats read by the chat reader that may also come as a response record.
bool chat_family(InputFormat f) { return forced_shape(f) == Shape::chat && f != InputFormat::openai && f != InputFormat::anthropic; }

// simdjson rejects an unbalanced document before reading it, and reports structural errors
// met while skipping without a useful position. This scan (string-aware, error path only)
// finds where: a closer that does not match, the end of the input (truncated), or the first
// byte after the value (trailing content). npos when the structure is balanced.
std::pair<std::size_t, detail::ReadError> diagnose_root(std::string_view text) {
  using K = RecordErrorKind;
  std::size_t i = 0;
  auto ws = [&](std::size_t k) { return text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r'; };
  while (i < text.size() && ws(i)) ++i;
  std::string open;
  for (; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '"') {
      std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (i >= text.size()) return {start, {"invalid JSON: unclosed string", K::json_structure}};
      if (open.empty()) { ++i; break; }
      continue;
    }
    if (ch == '{' || ch == '[') {
      open.push_back(ch == '{' ? '}' : ']');
    } else if (ch == '}' || ch == ']') {
      if (open.empty() || open.back() != ch)
        return {i, {open.empty() ? fmt::format("invalid JSON: unexpected '{}'", ch)
                                 : fmt::format("invalid JSON: '{}' where '{}' was expected", ch, open.back()),
                    K::json_structure}};
      open.pop_back();
      if (open.empty()) {
        ++i;
        break;
      }
    } else if (open.empty()) {
      // A scalar at the top: its end is the next whitespace.
      while (i < text.size() && !ws(i)) ++i;
      break;
    }
  }
  if (!open.empty()) {
    std::size_t end = text.size();
    while (end > 0 && ws(end - 1)) --end;
    return {end, {fmt::format("invalid JSON: unexpected end of input ('{}' expected)", open.back()), K::json_structure}};
  }
  while (i < text.size() && ws(i)) ++i;
  if (i < text.size()) return {i, detail::json_error_message(simdjson::TRAILING_CONTENT)};
  return {std::string_view::npos, {}};
}

constexpr std::string_view kLoneSessionLine =
    "a single line of a coding-agent session log, not a session: a session log is read whole, from its "
    "JSONL file or as an array of its lines";

constexpr std::string_view kLoneRolloutLine =
    "a single line of a Codex CLI rollout file, not a rollout: a rollout is read whole, from its JSONL file or as "
    "an array of its lines";

constexpr std::string_view kUnknownShape =
    "not a known trace shape: expected an object with \"steps\" (native), \"messages\" or \"traj\" "
    "(OpenAI/Anthropic chat), \"resourceSpans\" (OpenTelemetry) or \"tool_calls\", or an array of "
    "messages or tool names";

// Per-thread pool of scratch memory, indexed by nesting depth so that a parse called from
// an emit callback does not clobber the outer one.
struct ScratchPool {
  std::vector<std::unique_ptr<detail::Scratch>> items;
  std::size_t depth = 0;
};
thread_local ScratchPool t_pool;

struct ScratchLease {
  detail::Scratch* s;
  ScratchLease() {
    if (t_pool.items.size() <= t_pool.depth) t_pool.items.push_back(std::make_unique<detail::Scratch>());
    s = t_pool.items[t_pool.depth++].get();
  }
  ~ScratchLease() { --t_pool.depth; }
};

}  // namespace

struct TraceParser::Impl {
  detail::CompiledOptions c;

  // `capacity`: bytes readable from json.data(); with kRecordPadding past the text, it is
  // parsed in place.
  // `borrow`: a record read by the fast path is borrowed by `t` (Trajectory::borrow).
  bool run(std::string_view json, std::size_t capacity, const RecordOrigin& origin, Trajectory& t,
           ParseOutcome& outcome, const Emit& emit, bool borrow = false) const;
  bool read(std::string_view json, std::size_t capacity, const RecordOrigin& origin, Trajectory& t,
            ParseOutcome& outcome, const Emit& emit, bool borrow) const;
  // The fast path of read() for native and chat records (the bulk of production logs): the
  // record is validated whole (TapeDoc), and the reader walks its token indexes instead of
  // ondemand values. False, with `t` cleared, when the record is not a valid native or chat
  // trace; the ondemand path then reads it, or says why not.
  bool read_validated(std::string_view text, const RecordOrigin& start, Trajectory& t, detail::Scratch& s,
                      ParseOutcome& outcome, const Emit& emit, bool borrow) const;
};

namespace {

// The shape read() would give a validated record (the table's object_shape and
// first_element_shape), for the shapes the fast path reads: native, chat under "messages" or
// "traj", an array whose first element has a "role", or unknown (declined).
Shape tape_shape(const detail::TapeDoc& doc, InputFormat format) {
  if (format == InputFormat::native) return doc.root_is_array() ? Shape::unknown : Shape::native;
  if (format == InputFormat::openai || format == InputFormat::anthropic) return Shape::chat;
  if (format != InputFormat::auto_detect) return Shape::unknown;
  // The names up to "steps", as object_keys() collects them (a "type" is not read: the shapes
  // taken here do not depend on it).
  auto keys_of = [&](std::uint32_t k) {
    ShapeKeys keys = 0;
    doc.for_keys(k, [&](std::string_view name) {
      ShapeKeys bit = shape_key(name);
      keys |= bit;
      return bit != shape_bits::steps;
    });
    return keys;
  };
  // The root opens at token 0.
  if (!doc.root_is_array()) {
    ShapeKeys keys = keys_of(0);
    Shape shape = object_shape(keys);
    if (shape == Shape::native) return shape;
    return shape == Shape::chat && (keys & shape_bits::messages) ? Shape::chat : Shape::unknown;  // not "contents"
  }
  // An array: its first element decides, as in read(); empty is chat.
  char first = doc.at(1);
  if (first == ']') return Shape::chat;
  if (first != '{') return Shape::unknown;
  ShapeKeys keys = keys_of(1);
  return first_element_shape(keys) == Shape::chat && (keys & shape_bits::role) ? Shape::chat : Shape::unknown;
}

// Whether a record may take the fast path, judged from a bounded look at its text (a search
// of a whole long chat record for a key costs almost a tenth of its read): OTel records and
// tool lists are declined from their first bytes, and a small object record needs the key of
// a native or chat record. A wrong "yes" costs a DOM parse (tape_shape then declines), a
// wrong "no" only the fast path; an escaped key is found by the ondemand path.
bool may_take_fast_path(std::string_view text, InputFormat format) {
  auto blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; };
  std::size_t i = 0;
  while (i < text.size() && blank(text[i])) ++i;
  if (i == text.size()) return false;
  char top = text[i];
  switch (format) {
    case InputFormat::native: return top == '{';
    case InputFormat::openai:
    case InputFormat::anthropic: return top == '{' || top == '[';
    case InputFormat::auto_detect: break;
    default: return false;
  }
  if (top != '{' && top != '[') return false;
  for (++i; i < text.size() && blank(text[i]); ++i) {
  }
  std::string_view first = text.substr(i);
  if (first.empty()) return false;
  constexpr std::size_t kLook = 1024;
  std::string_view head = first.substr(0, kLook);
  // An array is chat when its first element is a message: an empty one is, one of tool
  // names or (small) of entries without a "role" is a tool list; the lines of a session log,
  // which name their session, are read the ondemand way.
  if (top == '[')
    return first.front() == ']' ||
           (first.front() == '{' && (first.size() > kLook || mentions_shape_key(head, shape_bits::role)) &&
            !mentions_shape_key(head, shape_bits::session_id | shape_bits::leaf_uuid));
  // An OTLP request or a tool list, told by its first name.
  if (first.front() == '"') {
    std::size_t close = first.find('"', 1);
    if (close != std::string_view::npos &&
        (shape_key(first.substr(1, close - 1)) & (shape_bits::resource_spans | shape_bits::tool_calls)) != 0)
      return false;
  }
  return first.size() > kLook || mentions_shape_key(head, shape_bits::fast_path);
}

}  // namespace

bool TraceParser::Impl::read_validated(std::string_view text, const RecordOrigin& start, Trajectory& t,
                                       detail::Scratch& s, ParseOutcome& outcome, const Emit& emit,
                                       bool borrow) const {
  if (!c.options.dom_fast_path || !may_take_fast_path(text, c.options.format)) return false;
  detail::TapeDoc doc;
  detail::count_parse(detail::ParseCount::validated);
  if (!doc.parse_indexed(s.tape, s.parser, text)) return false;
  Shape shape = tape_shape(doc, c.options.format);
  if (shape == Shape::unknown) return false;
  detail::TapeValue root(&doc, 0);
  if (borrow) t.borrow(text);
  ParseOutcome attempt;
  detail::ParseCtx ctx(c, text, start, t, s, attempt);
  bool ok = shape == Shape::native ? detail::read_native(ctx, detail::TapeObject(root))
            : doc.root_is_array()  ? detail::read_chat_array(ctx, detail::TapeArray(root))
                                   : detail::read_chat_object(ctx, detail::TapeObject(root));
  if (ok && attempt.ok()) {
    if (doc.root_is_array()) t.set_trace_id(ctx.origin_id());  // as read() names an array record
    ++outcome.traces;
    if (emit) emit(t);
    return true;
  }
  RecordOrigin origin = t.origin;
  t.clear();
  t.origin = origin;
  return false;
}
static_assert(kRecordPadding == simdjson::SIMDJSON_PADDING);

bool TraceParser::Impl::run(std::string_view json, std::size_t capacity, const RecordOrigin& origin,
                            Trajectory& t, ParseOutcome& outcome, const Emit& emit, bool borrow) const {
  try {
    if (read(json, capacity, origin, t, outcome, emit, borrow)) return true;
  } catch (const std::bad_alloc&) {
    // Memory ran out while this record was read: it is rejected, at its first byte (a session
    // log's "[" stands in column 0), and the records after it are read.
    RecordOrigin origin_of_record = origin;
    origin_of_record.column = std::max<std::uint64_t>(origin.column, 1);
    outcome.errors.clear();
    outcome.errors.push_back(RecordError{origin_of_record,
                                         fmt::format("not enough memory to read this record of {} MiB (reading one "
                                                     "takes several times its size; docs/limits.md)",
                                                     json.size() >> 20),
                                         RecordErrorKind::limit});
    const RecordOrigin kept = t.origin;
    t.clear();
    t.origin = kept;
    return false;
  }
  // A structural error found while skipping is reported where simdjson stopped, which may
  // be far from the cause, and one in a part the reader had not reached yet may surface as a
  // shape error ("a step must be a JSON object" for `[}`): a record that is not JSON is
  // reported as such, at the position a bracket-matching scan finds. A bad token or bad UTF-8
  // is reported where it is.
  if (!outcome.errors.empty()) {
    RecordError& err = outcome.errors.front();
    if (err.kind != RecordErrorKind::json_token && err.kind != RecordErrorKind::utf8) {
      std::size_t skip = json.size() >= 3 && json.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
      std::string_view text = json.substr(skip);
      auto [at, message] = diagnose_root(text);
      if (at != std::string_view::npos) {
        RecordOrigin start = origin;
        start.column += skip;
        err.where = detail::locate(start, text, at);
        err.message = std::move(message.message);
        err.kind = message.kind;
      } else if (err.kind == RecordErrorKind::content) {
        // Brackets that match prove little: `nonsense`, `tru` and `[1,]` were told apart from
        // a trace by their shape ("the record is a JSON null"). What the DOM parser finds wrong
        // is the reason (a number it refuses may be valid JSON: those stay shape errors).
        static thread_local simdjson::dom::parser validator;
        simdjson::padded_string padded(text);
        simdjson::error_code e = validator.parse(padded).error();
        if (e && e != simdjson::NUMBER_ERROR && e != simdjson::DEPTH_ERROR && e != simdjson::CAPACITY &&
            e != simdjson::MEMALLOC) {
          detail::ReadError why = detail::json_error_message(e);
          err.message = std::move(why.message);
          err.kind = why.kind;
        }
      }
    }
  }
  return false;
}

bool TraceParser::Impl::read(std::string_view json, std::size_t capacity, const RecordOrigin& origin,
                             Trajectory& t, ParseOutcome& outcome, const Emit& emit, bool borrow) const {
  ScratchLease lease;
  detail::Scratch& s = *lease.s;
  std::size_t skip = 0;
  if (json.size() >= 3 && json.compare(0, 3, "\xEF\xBB\xBF") == 0) skip = 3;  // a BOM is not content
  std::string_view text = json.substr(skip);
  if (capacity < json.size() + simdjson::SIMDJSON_PADDING) {
    s.padded.assign(text);
    s.padded.append(simdjson::SIMDJSON_PADDING, ' ');
    text = std::string_view(s.padded.data(), text.size());
  }
  RecordOrigin start = origin;
  start.column += skip;
  t.clear();
  t.origin = origin;
  // The record is indexed once (simdjson's stage 1): the fast path validates and reads those
  // indexes, and a record it declines is read from the same document. The parser's buffers
  // are kept at the usual record size (grown for a longer record, and back at the next record
  // of usual size, so one long trace does not hold its memory for the rest of the run).
  constexpr std::size_t kUsual = detail::TapeDoc::kUsualRecord;
  const std::size_t capacity_now = s.parser.capacity();
  if (capacity_now < text.size() || (capacity_now > kUsual && text.size() <= kUsual)) {
    // Should this fail, the parser is left empty: iterate() allocates again, and says so.
    simdjson::error_code sized = s.parser.allocate(std::max(text.size(), kUsual), s.parser.max_depth());
    (void)sized;
  }
  od::document doc;
  detail::count_parse(detail::ParseCount::stage1);
  const simdjson::error_code indexed =
      s.parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING).get(doc);
  if (!indexed && read_validated(text, start, t, s, outcome, emit, borrow)) return true;
  detail::count_parse(detail::ParseCount::general);
  detail::ParseCtx ctx(c, text, start, t, s, outcome);
  ctx.doc = &doc;
  std::vector<Trajectory> sessions;  // a session log's traces, read before any is emitted
  if (auto e = indexed) {
    if (e == simdjson::MEMALLOC) throw std::bad_alloc();  // reported by run()
    std::size_t bad = detail::stage1_error_offset(e, text);
    return ctx.fail(bad == std::string_view::npos ? nullptr : text.data() + bad, detail::json_error_message(e));
  }
  json_type type;
  if (auto e = doc.type().get(type)) return ctx.fail(nullptr, detail::json_error_message(e));
  Shape shape = forced_shape(c.options.format);
  bool forced = shape != Shape::unknown;
  const char* top = text.data();
  while (top < text.data() + text.size() && (*top == ' ' || *top == '\t' || *top == '\n' || *top == '\r')) ++top;

  if (type == json_type::object) {
    od::object o;
    if (auto e = doc.get_object().get(o)) {
      auto [at, message] = diagnose_root(text);
      if (at == std::string_view::npos) return ctx.fail(top, detail::json_error_message(e));
      return ctx.fail(text.data() + at, message);
    }
    simdjson::error_code err;
    ShapeKeys keys = object_keys(o, &err);
    if (err) return ctx.fail(ctx.here(), detail::json_error_message(err));
    Shape detected = object_shape(keys);
    if (!forced) shape = detected;
    else if (shape == Shape::chat && chat_family(c.options.format) &&
             (detected == Shape::response || detected == Shape::inspect_log || detected == Shape::inspect_sample))
      shape = detected;
    if (shape == Shape::unknown && is_message(keys))
      return ctx.fail(top, "a single chat message, not a trajectory: expected an array of messages or {\"messages\": [...]}");
    if (!detail::rewind(doc)) return ctx.fail(ctx.here(), detail::json_error_message(simdjson::TAPE_ERROR));
    if (auto e = doc.get_object().get(o)) return ctx.fail(top, detail::json_error_message(e));
    bool ok = false;
    switch (shape) {
      case Shape::native: ok = read_native(ctx, o); break;
      case Shape::chat: ok = read_chat_object(ctx, o); break;
      case Shape::list: ok = read_list_object(ctx, o); break;
      case Shape::otel: ok = read_otel(ctx, o); break;
      case Shape::response: ok = read_response_object(ctx, o); break;
      case Shape::inspect_log: ok = read_inspect_log(ctx, o, nullptr, nullptr); break;  // validates; emitted below
      case Shape::inspect_sample: ok = read_inspect_sample(ctx, o, detail::InspectSample{}); break;
      case Shape::rollout:
        if (detected == Shape::rollout) return ctx.fail(top, std::string(kLoneRolloutLine));
        [[fallthrough]];
      case Shape::session:  // a session log is an array of its lines
        if (detected == Shape::session) {
          // A line a session log left out because its JSON breaks past what stage 1 checks
          // is reported at the break; a well-formed one as a line on its own.
          std::string scratch;
          detail::JsonFailure f;
          if (detail::rewind(doc) && !doc.get_object().get(o) && !detail::write_object(o, scratch, f)) return ctx.fail(f);
          return ctx.fail(top, std::string(kLoneSessionLine));
        }
        [[fallthrough]];
      case Shape::unknown:
        return ctx.fail(top, forced ? fmt::format("input format is {}, but the record does not have its shape",
                                                  to_string(c.options.format))
                                    : std::string(kUnknownShape));
    }
    if (!ok) return false;
  } else if (type == json_type::array) {
    od::array a;
    if (auto e = doc.get_array().get(a)) {
      auto [at, message] = diagnose_root(text);
      if (at == std::string_view::npos) return ctx.fail(top, detail::json_error_message(e));
      return ctx.fail(text.data() + at, message);
    }
    // The first element decides; a session log may start with lines that are not messages
    // (typed objects of no known kind), and then the first line that is decides.
    Shape detected = Shape::chat;  // an empty array is an empty trajectory
    bool first = true;
    for (auto element : a) {
      od::value v;
      if (auto e = element.get(v)) return ctx.fail(ctx.here(), detail::json_error_message(e));
      json_type et;
      if (auto e = v.type().get(et)) return ctx.fail(ctx.here(), detail::json_error_message(e));
      if (et == json_type::object) {
        od::object eo;
        if (auto e = v.get_object().get(eo)) return ctx.fail(ctx.here(), detail::json_error_message(e));
        simdjson::error_code err;
        ShapeKeys keys = object_keys(eo, &err);
        if (err) return ctx.fail(ctx.here(), detail::json_error_message(err));
        Shape element_shape = object_shape(keys);
        if (element_shape == Shape::session || element_shape == Shape::rollout) {
          detected = element_shape;
          break;
        }
        if (first) detected = first_element_shape(keys);
        first = false;
        // A typed object of no known kind (a session log's summary or snapshot line).
        if (detected == Shape::unknown && (keys & shape_bits::type) && !(keys & shape_bits::typed_message)) continue;
      } else if (first) {
        detected = et == json_type::string ? Shape::list : Shape::unknown;
      }
      break;
    }
    if (!forced) shape = detected;
    if (shape == Shape::session && detected == Shape::rollout) shape = Shape::rollout;  // --input-format session
    if (shape != Shape::chat && shape != Shape::list && shape != Shape::session && shape != Shape::rollout)
      return ctx.fail(top, forced ? fmt::format("input format is {}, but the record is an array", to_string(c.options.format))
                                  : std::string(kUnknownShape));
    if (!detail::rewind(doc)) return ctx.fail(ctx.here(), detail::json_error_message(simdjson::TAPE_ERROR));
    if (auto e = doc.get_array().get(a)) return ctx.fail(top, detail::json_error_message(e));
    bool ok = shape == Shape::chat      ? read_chat_array(ctx, a)
              : shape == Shape::session ? read_sessions(ctx, a, sessions)  // emitted below
              : shape == Shape::rollout ? read_rollout(ctx, a)
                                        : read_list_array(ctx, a);
    if (!ok) return false;
    if (shape != Shape::session && shape != Shape::rollout) t.set_trace_id(ctx.origin_id());
  } else {
    return ctx.fail(top, fmt::format("{}: the record is a JSON {}", kUnknownShape,
                                     type == json_type::string ? "string" : type == json_type::number ? "number"
                                     : type == json_type::boolean ? "boolean" : "null"));
  }
  const char* trailing = nullptr;
  if (!doc.current_location().get(trailing))
    return ctx.fail(trailing, detail::json_error_message(simdjson::TRAILING_CONTENT));
  if (shape == Shape::otel) {
    detail::emit_otel(ctx, emit);
  } else if (shape == Shape::session) {
    for (Trajectory& session : sessions) {
      t = std::move(session);
      ++outcome.traces;
      if (emit) emit(t);
    }
  } else if (shape == Shape::inspect_log) {
    // Every sample read: now each is read again and emitted.
    od::object o;
    if (!detail::rewind(doc)) return ctx.fail(ctx.here(), detail::json_error_message(simdjson::TAPE_ERROR));
    if (auto e = doc.get_object().get(o)) return ctx.fail(top, detail::json_error_message(e));
    if (!read_inspect_log(ctx, o, &emit, &outcome.traces)) return false;
  } else {
    ++outcome.traces;
    if (emit) emit(t);
  }
  return true;
}

namespace {

// The aliases as a rules file's resolve (docs/language.md): names normalized, chains followed
// to their end (`a=b`, `b=c`: a means c), a name renamed to itself dropped. A name given two
// different names, or a cycle, is an error (returned), never a silent choice.
std::string resolve_aliases(const std::vector<std::pair<std::string, std::string>>& given, bool case_sensitive,
                            decltype(detail::CompiledOptions::aliases)& out) {
  std::map<std::string, std::string> direct;
  for (const auto& [observed, canonical] : given) {
    std::string from = normalize_tool_name(observed, case_sensitive), to = normalize_tool_name(canonical, case_sensitive);
    if (from == to) continue;
    auto [it, fresh] = direct.emplace(from, to);
    if (!fresh && it->second != to)
      return fmt::format("conflicting aliases: '{}' is renamed to '{}' and to '{}'", from, it->second, to);
  }
  for (const auto& [from, to] : direct) {
    std::string end = to;
    std::size_t steps = 0;
    for (auto next = direct.find(end); next != direct.end(); next = direct.find(end)) {
      if (++steps > direct.size()) return fmt::format("alias cycle through '{}'", from);
      end = next->second;
    }
    out[from] = std::move(end);
  }
  return {};
}

}  // namespace

TraceParser::TraceParser(NormalizeOptions options) : impl_(std::make_unique<Impl>()) {
  detail::CompiledOptions& c = impl_->c;
  c.options = std::move(options);
  c.error = resolve_aliases(c.options.aliases, c.options.case_sensitive, c.aliases);
  for (const std::string& p : c.options.error_patterns) {
    RE2::Options ro;
    ro.set_log_errors(false);
    auto re = std::make_unique<RE2>(p, ro);
    if (!re->ok()) {
      if (c.error.empty()) c.error = fmt::format("invalid --error-pattern '{}': {}", p, re->error());
      continue;
    }
    c.error_patterns.push_back(std::move(re));
  }
}

TraceParser::~TraceParser() = default;
TraceParser::TraceParser(TraceParser&&) noexcept = default;
TraceParser& TraceParser::operator=(TraceParser&&) noexcept = default;

const std::string& TraceParser::option_error() const { return impl_->c.error; }
const NormalizeOptions& TraceParser::options() const { return impl_->c.options; }

namespace {

// Rewrites the context object with the --context overrides: the source's members whose key
// is not overridden, then every override, so a key never appears twice.
void apply_context_overrides(Trajectory& t, const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::string out = "{";
  auto add = [&](std::string_view key, std::string_view raw) {
    if (out.size() > 1) out += ',';
    append_json_string(out, key);
    out += ':';
    out += raw;
  };
  std::string_view ctx = t.context();
  if (!ctx.empty()) {
    // The members as the source wrote them (a DOM parse would refuse a number beyond 64 bits,
    // and with it every member; minify would rewrite the others). The reader has validated the
    // object already.
    simdjson::ondemand::parser parser;
    simdjson::padded_string padded(ctx);
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    if (!parser.iterate(padded).get(doc) && !doc.get_object().get(obj)) {
      for (auto field : obj) {
        std::string_view key, raw;
        simdjson::ondemand::value value;
        if (field.unescaped_key().get(key) || field.value().get(value) || json::value_source_text(value, &raw)) break;
        bool overridden = false;
        for (const auto& o : overrides) overridden = overridden || o.first == key;
        if (!overridden) add(key, raw);
      }
    }
  }
  for (const auto& [key, raw] : overrides) add(key, raw);
  out += '}';
  t.set_context(t.store(out));
}

}  // namespace

ParseOutcome TraceParser::parse(const RawRecord& record, Trajectory& scratch, const Emit& emit) const {
  return parse_record(record, scratch, emit, false);
}

ParseOutcome TraceParser::parse_borrowing(const RawRecord& record, Trajectory& scratch, const Emit& emit) const {
  ParseOutcome outcome = parse_record(record, scratch, emit, true);
  scratch.clear();
  return outcome;
}

ParseOutcome TraceParser::parse_record(const RawRecord& record, Trajectory& scratch, const Emit& emit, bool borrow) const {
  ParseOutcome outcome;
  if (!record.container_error.empty()) {
    scratch.clear();
    scratch.origin = record.origin;
    outcome.errors.push_back(RecordError{record.origin, record.container_error, RecordErrorKind::input});
    return outcome;
  }
  const auto& overrides = impl_->c.options.context_overrides;
  if (!overrides.empty()) {
    impl_->run(record.bytes(), record.readable(), record.origin, scratch, outcome, [&](Trajectory& t) {
      apply_context_overrides(t, overrides);
      if (emit) emit(t);
    }, borrow);
    if (!outcome.ok()) outcome.traces = 0;
    return outcome;
  }
  impl_->run(record.bytes(), record.readable(), record.origin, scratch, outcome, emit, borrow);
  if (!outcome.ok()) outcome.traces = 0;
  return outcome;
}

ParseOutcome TraceParser::parse_value(std::string_view json, const RecordOrigin& origin, Trajectory& out) const {
  ParseOutcome outcome;
  std::uint32_t emitted = 0;
  // OTLP may hold several traces; the value must be exactly one trajectory, and `out` must
  // hold it afterwards, so a second one is an error.
  impl_->run(json, json.size(), origin, out, outcome, [&](Trajectory&) { ++emitted; });
  if (outcome.ok() && emitted != 1) {
    outcome.errors.push_back(RecordError{origin, fmt::format("expected one trajectory, found {}", emitted)});
  }
  if (!outcome.ok()) outcome.traces = 0;
  return outcome;
}

}  // namespace trajcheck
