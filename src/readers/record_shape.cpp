// The table of record shapes (trajcheck/record_shape.hpp): a record's top-level names → its shape.
#include "trajcheck/record_shape.hpp"

#include <string.h>

#include <algorithm>

namespace trajcheck {

namespace {
namespace shape_bits = shape_key_bits;
}  // namespace

std::string_view to_string(RecordShape s) {
  switch (s) {
    case RecordShape::unknown: return "unknown";
    case RecordShape::native: return "native";
    case RecordShape::chat: return "chat";
    case RecordShape::otel: return "otel";
    case RecordShape::list: return "list";
    case RecordShape::response: return "response";
    case RecordShape::inspect_log: return "inspect_log";
    case RecordShape::inspect_sample: return "inspect_sample";
    case RecordShape::session: return "session";
    case RecordShape::rollout: return "rollout";
  }
  return "unknown";
}

RecordShape object_shape(ShapeKeys k) {
  auto has = [k](ShapeKeys b) { return (k & b) != 0; };
  if (has(shape_bits::steps)) return RecordShape::native;
  if (has(shape_bits::message_list)) return has(shape_bits::epoch) ? RecordShape::inspect_sample : RecordShape::chat;
  if (has(shape_bits::samples) && has(shape_bits::eval)) return RecordShape::inspect_log;
  const bool role = has(shape_bits::role);
  // A line of a coding-agent session log (its "type" is "user", "assistant", "summary"…).
  if (!role && ((has(shape_bits::session_id) && has(shape_bits::uuid)) || has(shape_bits::leaf_uuid)))
    return RecordShape::session;
  // A line of a Codex CLI rollout file ({"timestamp", "type", "payload"}).
  if (!role && has(shape_bits::type) && has(shape_bits::payload) && has(shape_bits::timestamp))
    return RecordShape::rollout;
  if (has(shape_bits::resource_spans)) return RecordShape::otel;
  if (role || has(shape_bits::typed_message)) return RecordShape::unknown;  // one message: is_message()
  if (has(shape_bits::tool_calls)) return RecordShape::list;
  if (has(shape_bits::output)) return RecordShape::response;
  return RecordShape::unknown;
}

bool is_message(ShapeKeys k) {
  return (k & (shape_bits::role | shape_bits::typed_message)) != 0 && (k & shape_bits::message_list) == 0;
}

bool is_session_line(ShapeKeys k) {
  auto all = [k](ShapeKeys b) { return (k & b) == b; };
  return all(shape_bits::session_id | shape_bits::uuid) || (k & shape_bits::leaf_uuid) != 0 ||
         all(shape_bits::timestamp | shape_bits::type | shape_bits::payload);
}

RecordShape first_element_shape(ShapeKeys k) {
  if (is_message(k)) return RecordShape::chat;
  // A tool entry names its tool and has none of the names of another shape (a message's
  // among them: those with a message list are traces).
  RecordShape s = object_shape(k);
  bool other = s != RecordShape::unknown && s != RecordShape::list && s != RecordShape::response;
  if (!other && (k & (shape_bits::role | shape_bits::typed_message)) == 0 && (k & shape_bits::tool_name) != 0)
    return RecordShape::list;
  return RecordShape::unknown;
}

bool mentions_shape_key(std::string_view text, ShapeKeys wanted) {
  char needle[32];
  for (const ShapeKeyName& k : kShapeKeyNames) {
    if ((k.bit & wanted) == 0 || k.name.size() + 2 > sizeof needle) continue;
    needle[0] = '"';
    std::copy(k.name.begin(), k.name.end(), needle + 1);
    needle[k.name.size() + 1] = '"';
    if (memmem(text.data(), text.size(), needle, k.name.size() + 2) != nullptr) return true;
  }
  return false;
}

}  // namespace trajcheck
