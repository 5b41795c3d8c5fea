// The table of record shapes (trajcheck/record_shape.hpp) and its detectors: one record of each
// shape is told the same by TraceParser's fast path and its general reader, by RecordSource
// (a .json array of it, a JSONL file of it: session log or lines), by split_entry (the
// pieces the Python module and the Dask runner read), and by score's direct chat reader. A
// record the fast path declines is indexed by simdjson's stage 1 once.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <simdjson.h>

#include "metrics/chat_calls.hpp"
#include "readers/tape_value.hpp"
#include "readers_support.hpp"
#include "trajcheck/input.hpp"
#include "trajcheck/record_shape.hpp"

using namespace trajcheck;
using namespace trajcheck::test;
namespace bits = trajcheck::shape_key_bits;

namespace {

struct Sample {
  const char* name;
  std::string text;       // one record, on one line
  RecordShape shape;      // what its names (an object) or first element (an array) decide
  bool array;             // the record is an array
  bool one_record_array;  // a .json array of these (or: this array) is one trace
  bool session_log;       // a JSONL file of such lines is read whole as a session log
  std::size_t traces;     // traces read from the record alone (0: rejected)
};

const std::string kOtel =
    R"({"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"execute_tool search","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"search"}}]}]}]}]})";

std::vector<Sample> shape_samples() {
  return {
      {"native", R"({"trace_id":"n1","steps":[{"type":"tool_call","tool":"search","arguments":{}}]})", RecordShape::native,
       false, false, false, 1},
      {"chat object", R"({"id":"c1","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]})",
       RecordShape::chat, false, false, false, 1},
      {"chat array", R"([{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}])", RecordShape::chat, true,
       true, false, 1},
      {"gemini contents", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})", RecordShape::chat, false, false,
       false, 1},
      {"otel", kOtel, RecordShape::otel, false, false, false, 1},
      {"tool list object", R"({"tool_calls":[{"name":"search"}]})", RecordShape::list, false, false, false, 1},
      {"tool names", R"(["search","fetch"])", RecordShape::list, true, true, false, 1},
      {"tool entries", R"([{"name":"search"},{"name":"fetch"}])", RecordShape::list, true, true, false, 1},
      {"response", R"({"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}}})", RecordShape::response,
       false, false, false, 1},
      {"inspect sample", R"({"id":"s7","epoch":2,"input":"hi","messages":[{"role":"user","content":"hi"}],"scores":{}})",
       RecordShape::inspect_sample, false, false, false, 1},
      {"lone message", R"({"role":"user","content":"hi"})", RecordShape::unknown, false, true, false, 0},
      {"session line", R"({"sessionId":"s","uuid":"u1","parentUuid":null,"type":"user","message":{"role":"user","content":"hi"}})",
       RecordShape::session, false, true, true, 0},
      {"rollout line", R"({"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"r1","cwd":"/p"}})",
       RecordShape::rollout, false, true, true, 0},
      {"unknown", R"({"what":1})", RecordShape::unknown, false, false, false, 0},
  };
}

// The names of an object record, or of an array's first element, through the table.
ShapeKeys keys_of(const std::string& text, bool* array) {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(text);
  *array = root.is_array();
  ShapeKeys keys = 0;
  simdjson::dom::element first = root;
  if (*array) {
    simdjson::dom::array a = root.get_array();
    if (a.size() == 0) return 0;
    first = a.at(0);
  }
  if (!first.is_object()) return 0;
  for (auto field : first.get_object()) keys |= shape_key(field.key);
  return keys;
}

std::string temp_file(const std::string& name, const std::string& content) {
  std::string path = "/tmp/trajcheck_shape_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// What a read gives, compared whole: records, rejections, the normalized traces, the errors.
std::string outcome_of(const ReadResult& r) {
  std::string out = std::to_string(r.records) + " records, " + std::to_string(r.rejected) + " rejected\n";
  for (const std::string& n : r.normalized) out += n + "\n";
  for (const RecordError& e : r.errors) out += e.message + "\n";
  return out;
}

// The records of `entries` read as the Python module and the Dask runner read them: each cut
// into pieces of `piece_bytes`, their line numbers counted, then one RecordSource.
ReadResult read_pieces(const std::string& path, std::uint64_t piece_bytes, std::size_t* pieces_out) {
  std::vector<InputPiece> pieces;
  for (const InputEntry& e : list_input(path))
    for (InputPiece& p : split_entry(e, piece_bytes)) pieces.push_back(std::move(p));
  std::vector<std::int64_t> counts;
  for (const InputPiece& p : pieces) counts.push_back(p.ranged ? count_newlines(p.entry.path, p.start, p.end) : 0);
  set_lines_before(pieces, counts);
  *pieces_out = pieces.size();
  ReadResult r;
  RecordSource src(std::move(pieces), InputFormat::auto_detect);
  TraceParser parser{NormalizeOptions{}};
  Trajectory t(r.tools.get());
  RawRecord rec;
  while (src.next(rec)) {
    ++r.records;
    ParseOutcome o = parser.parse(rec, t, [&](Trajectory& tr) {
      std::string line;
      write_normalized_json(tr, line);
      r.normalized.push_back(line);
    });
    if (!o.ok()) {
      ++r.rejected;
      for (const auto& e : o.errors) r.errors.push_back(e);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("record shapes: the table names each key once and tells each name's bit") {
  std::set<std::string_view> names;
  for (const ShapeKeyName& k : kShapeKeyNames) {
    CHECK(names.insert(k.name).second);
    CHECK(shape_key(k.name) == k.bit);
    CHECK((k.bit & bits::typed_message) == 0);  // set by readers, never by a name
    CHECK(mentions_shape_key("{\"" + std::string(k.name) + "\":1}", k.bit));
    CHECK(!mentions_shape_key("{\"x" + std::string(k.name) + "\":1}", k.bit));
  }
  CHECK(shape_key("Steps") == 0);
  CHECK(shape_key("") == 0);
  for (RecordShape s : {RecordShape::unknown, RecordShape::native, RecordShape::chat, RecordShape::otel, RecordShape::list,
                        RecordShape::response, RecordShape::inspect_log, RecordShape::inspect_sample,
                        RecordShape::session, RecordShape::rollout})
    CHECK(!to_string(s).empty());
}

TEST_CASE("record shapes: the decisions of the table") {
  using namespace bits;
  CHECK(object_shape(steps | messages | resource_spans) == RecordShape::native);
  CHECK(object_shape(messages | resource_spans) == RecordShape::chat);
  CHECK(object_shape(contents) == RecordShape::chat);
  CHECK(object_shape(messages | epoch) == RecordShape::inspect_sample);
  CHECK(object_shape(samples | eval) == RecordShape::inspect_log);
  CHECK(object_shape(samples) == RecordShape::unknown);
  CHECK(object_shape(session_id | uuid) == RecordShape::session);
  CHECK(object_shape(leaf_uuid) == RecordShape::session);
  CHECK(object_shape(session_id | uuid | role) == RecordShape::unknown);  // a message naming its session
  CHECK(object_shape(timestamp | type | payload) == RecordShape::rollout);
  CHECK(object_shape(timestamp | payload) == RecordShape::unknown);
  CHECK(object_shape(resource_spans | tool_calls) == RecordShape::otel);
  CHECK(object_shape(role | tool_calls) == RecordShape::unknown);
  CHECK(object_shape(typed_message | output) == RecordShape::unknown);
  CHECK(object_shape(tool_calls | output) == RecordShape::list);
  CHECK(object_shape(output) == RecordShape::response);

  CHECK(is_message(role));
  CHECK(is_message(typed_message | type));
  CHECK(!is_message(role | messages));
  CHECK(!is_message(role | contents));
  CHECK(!is_message(type));

  CHECK(is_session_line(session_id | uuid));
  CHECK(is_session_line(leaf_uuid));
  CHECK(is_session_line(timestamp | type | payload));
  CHECK(!is_session_line(session_id));

  CHECK(first_element_shape(role) == RecordShape::chat);
  CHECK(first_element_shape(tool_name) == RecordShape::list);
  CHECK(first_element_shape(tool_name | tool_calls) == RecordShape::list);
  CHECK(first_element_shape(tool_name | steps) == RecordShape::unknown);
  CHECK(first_element_shape(tool_name | role | messages) == RecordShape::unknown);
  CHECK(first_element_shape(tool_name | typed_message) == RecordShape::chat);
  CHECK(first_element_shape(0) == RecordShape::unknown);
}

TEST_CASE("record shapes: every detector tells each sample's shape the same") {
  for (const Sample& s : shape_samples()) {
    CAPTURE(s.name);
    bool array = false;
    ShapeKeys keys = keys_of(s.text, &array);
    REQUIRE(array == s.array);
    if (!array) CHECK(object_shape(keys) == s.shape);
    else if (s.text[1] == '{') CHECK(first_element_shape(keys) == s.shape);

    // TraceParser: its fast path and its general reader agree, byte for byte.
    NormalizeOptions general;
    general.dom_fast_path = false;
    ReadResult fast = read_text(s.text), slow = read_text(s.text, general);
    CHECK(outcome_of(fast) == outcome_of(slow));
    CHECK(fast.traces.size() == s.traces);

    // RecordSource: a .json file of the record twice is two records, or one trace (an array
    // of messages, tool names or entries, or of a session log's lines).
    std::string twice = s.array ? s.text : "[" + s.text + ",\n" + s.text + "]";
    std::string json = temp_file("twice.json", twice);
    ReadResult doc = read_inputs({json});
    CHECK(doc.records == (s.one_record_array ? 1u : 2u));
    std::remove(json.c_str());

    // A JSONL file of it: a session log read whole, or lines; the pieces the Python module
    // and the Dask runner read give what the command line's read gives.
    std::string lines;
    for (int i = 0; i < 40; ++i) lines += s.text + "\n";
    std::string jsonl = temp_file("lines.jsonl", lines);
    CHECK((file_layout(jsonl) == FileLayout::session_log) == s.session_log);
    std::size_t pieces = 0;
    ReadResult cut = read_pieces(jsonl, 256, &pieces);
    ReadResult whole = read_inputs({jsonl});
    CHECK(outcome_of(cut) == outcome_of(whole));
    // Cut into byte ranges only where lines are read one by one and no trace spans lines.
    bool cuttable = !s.session_log && s.shape != RecordShape::otel;
    CHECK((pieces > 1) == cuttable);
    std::remove(jsonl.c_str());
  }
}

TEST_CASE("record shapes: score's direct chat reader takes only what TraceParser reads as chat") {
  NormalizeOptions opt;
  metrics::ChatCallReader reader(opt);
  auto accepts = [&](const std::string& side) {
    simdjson::padded_string record("{\"actual\":" + side + "}");
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    REQUIRE(!parser.iterate(record).get(doc));
    REQUIRE(!doc.get_object().get(obj));
    metrics::ArgCanon canon;
    std::vector<metrics::Call> calls;
    std::vector<metrics::CanonArgs> args;
    reader.begin_record(canon);
    simdjson::ondemand::value v;
    REQUIRE(!obj.find_field("actual").get(v));
    return reader.read_side(v, canon, calls, args);
  };
  const std::string msgs = R"([{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}])";
  CHECK(accepts(R"({"messages":)" + msgs + "}"));
  CHECK(accepts(R"({"traj":)" + msgs + "}"));
  CHECK(accepts(msgs));
  // Shapes that TraceParser reads otherwise (native, Inspect sample, OTLP, Gemini contents first).
  CHECK(!accepts(R"({"messages":)" + msgs + R"(,"steps":[]})"));
  CHECK(!accepts(R"({"messages":)" + msgs + R"(,"epoch":1})"));
  CHECK(!accepts(R"({"resourceSpans":[],"messages":)" + msgs + "}"));
  CHECK(!accepts(R"({"contents":[],"messages":)" + msgs + "}"));
  // An array whose first element holds a message list is not an array of messages.
  CHECK(!accepts(R"([{"role":"user","contents":[]}])"));
}

TEST_CASE("record shapes: a record the fast path declines is indexed once") {
  detail::ParseCounts& n = detail::t_parse_counts;
  struct Case {
    const char* name;
    std::string text;
    std::uint64_t validated, general;  // per record
  };
  std::vector<Case> cases = {
      // Read by the fast path alone.
      {"native", R"({"trace_id":"n1","steps":[{"type":"tool_call","tool":"search","arguments":{}}]})", 1, 0},
      {"chat", R"({"messages":[{"role":"user","content":"hi"}]})", 1, 0},
      // Validated by the fast path, then declined: an Inspect sample names "messages".
      {"inspect sample", R"({"id":"s7","epoch":2,"input":"hi","messages":[{"role":"user","content":"hi"}],"scores":{}})",
       1, 1},
      // Validated, then rejected by the fast path's reader: the general reader says why.
      {"bad step", R"({"trace_id":"n1","steps":[{"type":"tool_call","tool":7}]})", 1, 1},
      // Not valid JSON: declined by the validation, reported by the general reader.
      {"bad JSON", R"({"steps":[1,]})", 1, 1},
      // Never offered to the fast path.
      {"otel", kOtel, 0, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    detail::ParseCounts before = n;
    ReadResult r = read_text(c.text);
    CHECK(n.stage1 - before.stage1 == 1);
    CHECK(n.validated - before.validated == c.validated);
    CHECK(n.general - before.general == c.general);
  }
}
