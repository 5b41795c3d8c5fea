// Reading simdjson On-Demand values the way the trace readers store them: strings and numbers
// by their source text when it is canonical, keys without copies, members one by one.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include <simdjson.h>

#include "json/member_names.hpp"
#include "json/swar.hpp"
#include "json/text.hpp"

namespace trajcheck::json {

// Offset in `text` of the byte behind an error simdjson reports before it can say where
// (invalid UTF-8, a control character in a string), or npos.
inline std::size_t stage1_error_offset(simdjson::error_code e, std::string_view text) {
  switch (e) {
    case simdjson::UTF8_ERROR: return find_invalid_utf8(text);
    case simdjson::UNESCAPED_CHARS: return find_unescaped_control(text);
    default: return std::string_view::npos;
  }
}

// Every value the direct readers look at is consumed, not merely peeked at: On-Demand
// checks the separators and brackets after a value only when the value was consumed, and
// skipping an unconsumed one can step over a malformed structure without an error.

// Length of the string whose contents start at `p` (after its opening quote, inside a
// document simdjson indexed: quotes paired, control characters rejected, buffer padded) when
// it holds no escape, so its source bytes are its value; npos when it holds one.
inline std::size_t unescaped_length(const char* p) {
  const char* q = swar::find_quote_or_backslash(p);
  return *q == '"' ? static_cast<std::size_t>(q - p) : std::string_view::npos;
}

// The source text of a string value when it is canonical (canonical_string_size:
// what append_json_string would write for its value, so also valid), consumed; false
// otherwise, leaving the value for get_string(). `no_escapes` (optional): the text holds no
// escape at all, so what lies between the quotes is the decoded value.
inline bool plain_string_token(simdjson::ondemand::value& v, std::string_view* quoted,
                               bool* no_escapes = nullptr) {
  std::string_view raw = v.raw_json_token();
  std::size_t size = canonical_string_size(raw.data());
  if (!size) return false;
  if (no_escapes) *no_escapes = std::memchr(raw.data() + 1, '\\', size - 2) == nullptr;
  simdjson::ondemand::raw_json_string consumed;
  if (v.get_raw_json_string().get(consumed)) return false;
  *quoted = std::string_view(raw.data(), size);
  return true;
}

// The source text of a value, as written: an object or an array whole (consumed), a scalar's
// token without the blanks after it. For documents validated already (a trace's fields):
// unlike a DOM parse and minify, it keeps numbers beyond the DOM's range and as written.
inline simdjson::error_code value_source_text(simdjson::ondemand::value& v, std::string_view* out) {
  simdjson::ondemand::json_type type;
  if (auto e = v.type().get(type)) return e;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) return e;
      return o.raw_json().get(*out);
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array a;
      if (auto e = v.get_array().get(a)) return e;
      return a.raw_json().get(*out);
    }
    default:
      *out = trim_ws(v.raw_json_token());
      return simdjson::SUCCESS;
  }
}

// A number as simdjson's DOM reads it (which is what ArgCanon::add sees): integer syntax
// is an int64, else a uint64; anything else a double.
struct NumberValue {
  enum Kind : std::uint8_t { int64, uint64, real } kind = int64;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

// A number's source text, checked as the readers check it, and its value; the value is
// consumed. False for bad syntax and for what the DOM rejects too (integers beyond 64 bits,
// doubles out of range). On-Demand's get_number() is not used: simdjson 3.0.1 returns 0 for
// decimals with more than 19 significant digits there.
inline bool number_token(simdjson::ondemand::value& v, std::string_view* text, NumberValue* n = nullptr) {
  *text = trim_ws(v.raw_json_token());
  if (!is_json_number(*text)) return false;
  NumberValue local;
  NumberValue& out = n ? *n : local;
  if (text->find_first_of(".eE") != std::string_view::npos) {
    out.kind = NumberValue::real;
    return !v.get_double().get(out.d);
  }
  if ((*text)[0] == '-') {
    out.kind = NumberValue::int64;
    return !v.get_int64().get(out.i);
  }
  if (!v.get_uint64().get(out.u)) {
    if (out.u < (std::uint64_t(1) << 63)) {
      out.kind = NumberValue::int64;
      out.i = static_cast<std::int64_t>(out.u);
    } else {
      out.kind = NumberValue::uint64;
    }
    return true;
  }
  return false;
}

// A field's key, decoded. A key without escapes is its source bytes, which spares simdjson's
// copy into its string buffer (most keys); false on an invalid escape.
// `plain` (optional) tells whether the key needed no decoding (its JSON text is then "key").
inline bool field_key(simdjson::ondemand::field& f, std::string_view* key, bool* plain = nullptr) {
  const char* raw = f.key().raw();  // after the opening quote
  std::size_t len = unescaped_length(raw);
  if (len != std::string_view::npos) {
    *key = std::string_view(raw, len);
    if (plain) *plain = true;
    return true;
  }
  if (plain) *plain = false;
  return !f.unescaped_key().get(*key);
}

// Calls f(key, plain, value) for each member of `o` (key unescaped; `plain`: it needed no
// unescaping) until f returns false. False when f did, the object is not valid JSON or it
// names a member twice (MemberNames: the trace readers reject such objects, so the direct
// paths built on this leave them to the readers, which say where).
template <class F>
bool for_members(simdjson::ondemand::object o, F&& f) {
  MemberNames names;
  for (auto member : o) {
    simdjson::ondemand::field field;
    if (std::move(member).get(field)) return false;
    std::string_view key;
    bool plain = false;
    if (!field_key(field, &key, &plain) || !names.insert(key)) return false;
    if (!f(key, plain, field.value())) return false;
  }
  return true;
}

}  // namespace trajcheck::json
