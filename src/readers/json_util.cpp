// JSON helpers of the trace readers: a validating minifier over simdjson ondemand values,
// error messages and positions.
#include "readers/json_util.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "json/member_names.hpp"

namespace trajcheck::detail {

ReadError json_error_message(simdjson::error_code e) {
  using namespace simdjson;
  using K = RecordErrorKind;
  switch (e) {
    case TAPE_ERROR:
      return {"invalid JSON: unexpected character (a missing or extra comma, colon, bracket or key)", K::json_structure};
    case INCOMPLETE_ARRAY_OR_OBJECT: return {"invalid JSON: unclosed array or object (truncated?)", K::json_structure};
    case EMPTY: return {"no JSON value", K::json_structure};
    case NUMBER_ERROR: return {"invalid JSON: malformed number", K::json_token};
    case STRING_ERROR: return {"invalid JSON: invalid escape in string", K::json_token};
    case UNCLOSED_STRING: return {"invalid JSON: unclosed string", K::json_structure};
    case UTF8_ERROR: return {"invalid UTF-8", K::utf8};
    case UNESCAPED_CHARS: return {"invalid JSON: control character in string", K::json_token};
    case T_ATOM_ERROR:
    case F_ATOM_ERROR:
    case N_ATOM_ERROR:
    case INCORRECT_TYPE: return {"invalid JSON: unexpected literal", K::json_token};
    case DEPTH_ERROR: return {fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth), K::limit};
    case TRAILING_CONTENT: return {"invalid JSON: unexpected content after the value", K::json_token};
    case CAPACITY: return {"record too large for the JSON parser (4 GiB)", K::limit};
    default: return {fmt::format("invalid JSON: {}", error_message(e)), K::json_token};
  }
}

ReadError expect(simdjson::error_code e, std::string_view what_was_expected) {
  return e == simdjson::INCORRECT_TYPE ? ReadError{std::string(what_was_expected)} : json_error_message(e);
}


const char* location_of(od::value& v) {
  const char* p = nullptr;
  if (v.current_location().get(p)) return nullptr;
  return p;
}

namespace {
bool fail_with(od::value& v, simdjson::error_code e, JsonFailure& fail) {
  return fail.set(location_of(v), json_error_message(e));
}
// Objects cannot say where they are; the caller resolves a null position from its document.
bool fail_with(od::object&, simdjson::error_code e, JsonFailure& fail) {
  return fail.set(nullptr, json_error_message(e));
}
}  // namespace

bool write_value(od::value v, std::string& out, JsonFailure& fail, int depth) {
  od::json_type type;
  if (auto e = v.type().get(type)) return fail_with(v, e, fail);
  switch (type) {
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o)) return fail_with(v, e, fail);
      if (depth >= kMaxJsonDepth) return fail_with(v, simdjson::DEPTH_ERROR, fail);
      return write_object(o, out, fail, depth);
    }
    case od::json_type::array: {
      if (depth >= kMaxJsonDepth) return fail_with(v, simdjson::DEPTH_ERROR, fail);
      od::array a;
      if (auto e = v.get_array().get(a)) return fail_with(v, e, fail);
      out.push_back('[');
      bool first = true;
      for (auto element : a) {
        od::value ev;
        if (auto e = element.get(ev)) return fail_with(v, e, fail);
        if (!first) out.push_back(',');
        first = false;
        if (!write_value(ev, out, fail, depth + 1)) return false;
      }
      out.push_back(']');
      return true;
    }
    case od::json_type::string: {
      // Fast path: a string whose source text is canonical (and so valid) is copied as it is,
      // skipping unescaping and re-escaping (most of the bytes of real traces).
      if (std::string_view quoted; json::plain_string_token(v, &quoted)) {
        out.append(quoted);
        return true;
      }
      const char* at = v.raw_json_token().data();  // simdjson reports escape errors past the string
      std::string_view s;
      if (auto e = v.get_string().get(s)) return fail.set(at, json_error_message(e));
      append_json_string(out, s);
      return true;
    }
    case od::json_type::number: {
      // The source text is kept (1.0 stays 1.0; integers beyond 64 bits stay exact), so
      // only the syntax is checked here.
      std::string_view raw = trim_ws(v.raw_json_token());
      if (!is_json_number(raw)) return fail.set(raw.data(), json_error_message(simdjson::NUMBER_ERROR));
      out.append(raw);
      return true;
    }
    case od::json_type::boolean: {
      bool b;
      if (auto e = v.get_bool().get(b)) return fail_with(v, e, fail);
      out += b ? "true" : "false";
      return true;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) return fail_with(v, e, fail);
      if (!is_null) return fail_with(v, simdjson::N_ATOM_ERROR, fail);
      out += "null";
      return true;
    }
  }
  return fail_with(v, simdjson::TAPE_ERROR, fail);
}

bool write_object(od::object o, std::string& out, JsonFailure& fail, int depth) {
  out.push_back('{');
  bool first = true;
  json::MemberNames names;
  for (auto field_result : o) {
    od::field f;
    if (auto e = std::move(field_result).get(f)) return fail_with(o, e, fail);
    if (!first) out.push_back(',');
    first = false;
    const char* raw_key = f.key().raw();
    const std::size_t size = canonical_string_size(raw_key - 1);
    // Names are compared decoded, so "a" and "\u0061" meet.
    std::string_view name;
    if (!json::field_key(f, &name)) return fail_with(o, simdjson::STRING_ERROR, fail);
    if (size) out.append(raw_key - 1, size);
    else append_json_string(out, name);
    if (!names.insert(name)) {
      fail.where = raw_key - 1;
      fail.message = json::duplicate_member_message(name);
      fail.duplicate_key = true;
      return false;
    }
    out.push_back(':');
    if (!write_value(f.value(), out, fail, depth + 1)) return false;
  }
  out.push_back('}');
  return true;
}

bool minify_document(od::parser& parser, std::string_view json, std::string& padded,
                     std::string& out, JsonFailure& fail) {
  padded.assign(json);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (auto e = parser.iterate(padded.data(), json.size(), padded.size()).get(doc)) {
    std::size_t at = stage1_error_offset(e, json);
    return fail.set(at != std::string_view::npos ? padded.data() + at : fail.where, json_error_message(e));
  }
  od::json_type type;
  if (auto e = doc.type().get(type)) return fail.set(fail.where, json_error_message(e));
  if (type == od::json_type::object || type == od::json_type::array) {
    od::value v;
    if (auto e = doc.get_value().get(v)) return fail.set(fail.where, json_error_message(e));
    if (!write_value(v, out, fail)) return false;
    const char* trailing = nullptr;
    if (!doc.current_location().get(trailing)) return fail.set(trailing, json_error_message(simdjson::TRAILING_CONTENT));
    return true;
  }
  simdjson::error_code e = simdjson::SUCCESS;
  switch (type) {
    case od::json_type::string: {
      std::string_view s;
      if (!(e = doc.get_string().get(s))) append_json_string(out, s);
      break;
    }
    case od::json_type::number: {
      std::string_view raw = trim_ws(doc.raw_json_token());
      if (is_json_number(raw)) out.append(raw);
      else e = simdjson::NUMBER_ERROR;
      break;
    }
    case od::json_type::boolean: {
      bool b;
      if (!(e = doc.get_bool().get(b))) out += b ? "true" : "false";
      break;
    }
    default: {
      bool is_null = false;
      if (!(e = doc.is_null().get(is_null)) && !is_null) e = simdjson::N_ATOM_ERROR;
      if (!e) out += "null";
    }
  }
  if (e) fail.set(fail.where, json_error_message(e));
  return !e;
}

RecordOrigin locate(const RecordOrigin& origin, std::string_view text, std::size_t offset) {
  RecordOrigin r = origin;
  if (offset > text.size()) offset = text.size();
  std::size_t line_start = std::string_view::npos;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++r.line;
      line_start = i + 1;
    }
  r.column = line_start == std::string_view::npos ? origin.column + offset : offset - line_start + 1;
  return r;
}

RecordOrigin LineIndex::locate(const RecordOrigin& origin, std::string_view text, std::size_t offset) {
  if (!built_) {
    built_ = true;
    scanned_ += text.size();
    for (const char* p = text.data(); const void* nl = std::memchr(p, '\n', text.data() + text.size() - p);) {
      newlines_.push_back(static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()));
      p = static_cast<const char*>(nl) + 1;
    }
  }
  if (offset > text.size()) offset = text.size();
  // The newlines before `offset`: the line is origin's plus their count.
  const auto before = std::lower_bound(newlines_.begin(), newlines_.end(), offset);
  RecordOrigin r = origin;
  r.line += static_cast<std::uint64_t>(before - newlines_.begin());
  r.column = before == newlines_.begin() ? origin.column + offset : offset - before[-1];
  return r;
}

}  // namespace trajcheck::detail
