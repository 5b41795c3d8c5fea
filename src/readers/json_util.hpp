// JSON helpers shared by the trace readers: validating minified copies of ondemand values,
// error messages and positions, on top of src/json. Internal to src/readers/.
#pragma once

#include "trajcheck/json_string.hpp"
#include "json/ondemand.hpp"
#include "json/text.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "trajcheck/reader.hpp"

namespace trajcheck::detail {

namespace od = simdjson::ondemand;

// Deepest JSON nesting a record may have. simdjson's ondemand parser does not bound the
// depth of what it skips, so every recursive walk here counts levels itself.
constexpr int kMaxJsonDepth = 512;

using json::canonical_string_size;
using json::find_invalid_utf8;
using json::stage1_error_offset;
using json::is_json_number;
using json::trim_ws;

// A reader's error: the message, for people, and its kind, for code (never told apart by
// its words).
struct ReadError {
  std::string message;
  RecordErrorKind kind = RecordErrorKind::content;
};

// The error of a simdjson error code: a message phrased for users, and its kind.
ReadError json_error_message(simdjson::error_code e);

// Rewinds `doc` for another pass; false when simdjson gave the document up at an error it
// met (stage 1 checks structure only, so a missing colon is found while reading), since a
// document given up has no parser left to rewind with.
inline bool rewind(od::document& doc) {
  if (!doc.is_alive()) return false;
  doc.rewind();
  return true;
}

// `what_was_expected` for a wrong-type error (content), the JSON error otherwise.
ReadError expect(simdjson::error_code e, std::string_view what_was_expected);

// A failure inside a walk: where (a pointer into the parsed buffer, or null) and why.
struct JsonFailure {
  const char* where = nullptr;
  std::string message;
  RecordErrorKind kind = RecordErrorKind::content;
  bool duplicate_key = false;  // the JSON is well formed but names a member twice
  bool failed() const { return !message.empty(); }
  bool set(const char* at, ReadError e) {  // always false, for `return fail.set(…)`
    where = at;
    message = std::move(e.message);
    kind = e.kind;
    return false;
  }
};

// Pointer to the token the iterator stopped at; null when simdjson cannot say.
const char* location_of(od::value& v);

// Reads past a string value whose text was taken from its raw_json_token() (as
// json::plain_string_token does). simdjson skips a value left unread without validating it,
// and its skip takes a string followed by a colon for a member name, so {"a":"x":"b":1} would
// read as one member and ["x":"y"] as one element: every value a reader meets is read,
// written or skipped with a validating call.
inline bool consume_string(od::value& v, JsonFailure& fail) {
  od::raw_json_string consumed;
  if (auto e = v.get_raw_json_string().get(consumed)) return fail.set(location_of(v), json_error_message(e));
  return true;
}

// Writes `v` minified to `out`, validating every byte of it (ondemand validates lazily,
// so this is what makes a record "valid JSON"). Numbers keep their source text, whatever
// their magnitude. Fails on bad JSON or nesting deeper than kMaxJsonDepth.
bool write_value(od::value v, std::string& out, JsonFailure& fail, int depth = 0);
bool write_object(od::object o, std::string& out, JsonFailure& fail, int depth = 0);

// Like write_value, for a whole document held in `padded` (with SIMDJSON_PADDING spare
// bytes): used for JSON embedded in strings (OpenAI arguments, tau-bench results).
bool minify_document(od::parser& parser, std::string_view json, std::string& padded,
                     std::string& out, JsonFailure& fail);

// 1-based line and byte column of `offset` inside a record that starts at `origin`.
RecordOrigin locate(const RecordOrigin& origin, std::string_view text, std::size_t offset);

// The same for many offsets of one record (its warnings, in any order): the record's newlines
// are found once, on the first question, and each offset is then placed by a binary search,
// so k positions in n bytes cost n + k log n, not k × n.
class LineIndex {
 public:
  RecordOrigin locate(const RecordOrigin& origin, std::string_view text, std::size_t offset);
  // Bytes of text looked at so far (for tests: the text's size at most).
  std::size_t bytes_scanned() const { return scanned_; }

 private:
  bool built_ = false;
  std::vector<std::size_t> newlines_;  // offsets of the '\n's of the text, ascending
  std::size_t scanned_ = 0;
};

}  // namespace trajcheck::detail
