// trajcheck/record_shape.hpp — the one table of record shapes: which top-level member names tell
// what a record is (docs/traces.md), and the shape a record's names decide. Every detector reads
// names through this table: TraceParser (its general reader and its fast path), RecordSource
// (whether a .json array is one trace, whether a JSONL file is a session log), split_entry (OTLP
// JSONL is never cut), and score (a record's two sides, and the direct reader of chat sides).
//
//   trajcheck::ShapeKeys keys = 0;
//   for (std::string_view name : top_level_names) keys |= trajcheck::shape_key(name);
//   trajcheck::RecordShape shape = trajcheck::object_shape(keys);
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace trajcheck {

// What a record is, as told by its top-level names (an object) or its first elements (an array).
enum class RecordShape : std::uint8_t {
  unknown,         // none of the shapes below
  native,          // {"steps": [...]}
  chat,            // {"messages" | "traj" | "contents": [...]}, or an array of messages
  otel,            // an OTLP export request ({"resourceSpans": [...]})
  list,            // {"tool_calls": [...]}, or an array of tool names or tool entries
  response,        // a response record ({"output" | "candidates": ...})
  inspect_log,     // an Inspect AI log ({"eval", "samples"})
  inspect_sample,  // an Inspect AI sample ({"messages", "epoch"})
  session,         // a line of a coding-agent session log ({"sessionId", "uuid"}, or "leafUuid")
  rollout,         // a line of a Codex CLI rollout file ({"timestamp", "type", "payload"})
};
std::string_view to_string(RecordShape s);

// The names that tell a shape, one bit per meaning (several names may share one).
using ShapeKeys = std::uint32_t;
namespace shape_key_bits {
inline constexpr ShapeKeys steps = 1u << 0;           // "steps"
inline constexpr ShapeKeys messages = 1u << 1;        // "messages", "traj"
inline constexpr ShapeKeys contents = 1u << 2;        // "contents" (Gemini)
inline constexpr ShapeKeys output = 1u << 3;          // "output", "candidates"
inline constexpr ShapeKeys samples = 1u << 4;         // "samples"
inline constexpr ShapeKeys eval = 1u << 5;            // "eval"
inline constexpr ShapeKeys epoch = 1u << 6;           // "epoch"
inline constexpr ShapeKeys session_id = 1u << 7;      // "sessionId"
inline constexpr ShapeKeys uuid = 1u << 8;            // "uuid", "parentUuid"
inline constexpr ShapeKeys leaf_uuid = 1u << 9;       // "leafUuid"
inline constexpr ShapeKeys payload = 1u << 10;        // "payload"
inline constexpr ShapeKeys timestamp = 1u << 11;      // "timestamp"
inline constexpr ShapeKeys type = 1u << 12;           // "type"
inline constexpr ShapeKeys resource_spans = 1u << 13; // "resourceSpans"
inline constexpr ShapeKeys tool_calls = 1u << 14;     // "tool_calls"
inline constexpr ShapeKeys role = 1u << 15;           // "role"
inline constexpr ShapeKeys tool_name = 1u << 16;      // "name", "function", "tool"
inline constexpr ShapeKeys trace_id = 1u << 17;       // "trace_id"
inline constexpr ShapeKeys actual = 1u << 18;         // "actual", "outputs": a score record's actual side
inline constexpr ShapeKeys expected = 1u << 19;       // "expected", "reference_outputs": its expected side
inline constexpr ShapeKeys message_data = 1u << 20;   // "data", "kwargs" (a LangChain message)
// Not a name: set by a reader when the object's "type" is one that tags a message (LangChain,
// the Responses API); object_shape() then takes the object for a message.
inline constexpr ShapeKeys typed_message = 1u << 31;

// The names that hold a chat trace's messages: an object with one is a trace, not a message.
inline constexpr ShapeKeys message_list = messages | contents;
// The names a record of the fast path's shapes (native, or chat under "messages"/"traj") has.
inline constexpr ShapeKeys fast_path = steps | messages;
// The names of a record that is not one message, tool name or tool entry (RecordSource's
// splitting of a .json array).
inline constexpr ShapeKeys record = steps | messages | resource_spans | trace_id | actual | expected | tool_calls;
}  // namespace shape_key_bits

// The table: each name and its bit.
struct ShapeKeyName {
  std::string_view name;
  ShapeKeys bit;
};
inline constexpr ShapeKeyName kShapeKeyNames[] = {
    {"steps", shape_key_bits::steps},
    {"messages", shape_key_bits::messages},
    {"traj", shape_key_bits::messages},
    {"contents", shape_key_bits::contents},
    {"output", shape_key_bits::output},
    {"candidates", shape_key_bits::output},
    {"samples", shape_key_bits::samples},
    {"eval", shape_key_bits::eval},
    {"epoch", shape_key_bits::epoch},
    {"sessionId", shape_key_bits::session_id},
    {"uuid", shape_key_bits::uuid},
    {"parentUuid", shape_key_bits::uuid},
    {"leafUuid", shape_key_bits::leaf_uuid},
    {"payload", shape_key_bits::payload},
    {"timestamp", shape_key_bits::timestamp},
    {"type", shape_key_bits::type},
    {"resourceSpans", shape_key_bits::resource_spans},
    {"tool_calls", shape_key_bits::tool_calls},
    {"role", shape_key_bits::role},
    {"name", shape_key_bits::tool_name},
    {"function", shape_key_bits::tool_name},
    {"tool", shape_key_bits::tool_name},
    {"trace_id", shape_key_bits::trace_id},
    {"actual", shape_key_bits::actual},
    {"outputs", shape_key_bits::actual},
    {"expected", shape_key_bits::expected},
    {"reference_outputs", shape_key_bits::expected},
    {"data", shape_key_bits::message_data},
    {"kwargs", shape_key_bits::message_data},
};

namespace record_shape_detail {
// shape_key runs for every top-level name of every record: a name is looked up in a table of
// 64 slots indexed by its length and its first and last bytes, which places every name of
// kShapeKeyNames in a slot of its own (make_slots does not compile otherwise: then change the
// factors).
constexpr std::size_t slot_of(std::string_view name) {
  return (static_cast<unsigned char>(name.front()) * 4u + static_cast<unsigned char>(name.back()) * 11u +
          name.size() * 2u) & 63u;
}
struct Slots {
  std::array<std::uint8_t, 64> entry{};  // 1 + the name's index in kShapeKeyNames; 0: none
};
constexpr Slots make_slots() {
  Slots s;
  for (std::size_t i = 0; i < std::size(kShapeKeyNames); ++i) {
    std::size_t at = slot_of(kShapeKeyNames[i].name);
    if (s.entry[at] != 0) throw "two names of the table share a slot";
    s.entry[at] = static_cast<std::uint8_t>(i + 1);
  }
  return s;
}
inline constexpr Slots kSlots = make_slots();
}  // namespace record_shape_detail

// The bit of a top-level member name (as decoded, or as written when it has no escape); 0 for a
// name that tells nothing.
inline ShapeKeys shape_key(std::string_view name) {
  if (name.empty()) return 0;
  std::uint8_t e = record_shape_detail::kSlots.entry[record_shape_detail::slot_of(name)];
  if (e == 0) return 0;
  const ShapeKeyName& k = kShapeKeyNames[e - 1];
  return k.name == name ? k.bit : 0;
}

// The shape of an object record with these names. An object that names "steps" is native
// whatever follows, so a reader may stop collecting names there.
RecordShape object_shape(ShapeKeys keys);
// Whether an object with these names is one chat message (a "role", or a "type" that tags a
// message) rather than a trace holding messages.
bool is_message(ShapeKeys keys);
// Whether an object with these names is a line of a session log or of a rollout file (what
// makes a JSONL file one session, read whole).
bool is_session_line(ShapeKeys keys);
// The shape an array decides from its first element's names: chat when it is a message, list
// when it is a tool entry (names a tool), unknown otherwise.
RecordShape first_element_shape(ShapeKeys keys);

// Whether `text` holds one of the names with a bit in `bits` as a JSON string ("steps" with its
// quotes): a look at text, not a parse, for the detectors that decide from a record's first bytes.
bool mentions_shape_key(std::string_view text, ShapeKeys bits);

}  // namespace trajcheck
