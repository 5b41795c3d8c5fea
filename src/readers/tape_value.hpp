// Values of a record that simdjson's DOM parser has validated, read through two views of the
// same parse: the tape (decoded strings) and stage 1's structural indexes (where each token
// starts in the source). Raw values are then copied as the source wrote them, in one piece
// when they are already minified with canonical escapes, and numbers keep their text.
//
// The DOM parse checks every byte of the record against the JSON grammar, so the walks here
// never meet bad JSON: the native and chat readers run over TapeValue exactly as they run
// over ondemand values (each is one template), and only fall back to the ondemand reader for
// its error messages. Reading the tape and the structural indexes side by side relies on two
// members simdjson documents as "for benchmarking access" (`parser::implementation`,
// `document::tape`): TapeDoc::parse declines under any simdjson major version but 3, and
// every string read checks that the two views are in step.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "readers/json_util.hpp"

namespace trajcheck::detail {

class TapeDoc {
 public:
  // Largest record read this way: the DOM parser holds about 14 bytes per input byte (tape,
  // strings, structural indexes), so bigger records use the ondemand reader alone.
  static constexpr std::size_t kMaxRecord = 256 * 1024;

  // Parses `text` (with SIMDJSON_PADDING readable bytes past its end). False when simdjson
  // rejects it, it is neither an object nor an array, or an object in it names a member
  // twice: the caller then reads it the ondemand way, which reports what is wrong. The root value is TapeValue(doc, 0, 1); root_is_array() tells which.
  bool parse(simdjson::dom::parser& parser, std::string_view text);

  bool root_is_array() const { return at(0) == '['; }
  char at(std::uint32_t k) const { return text_[idx_[k]]; }
  const char* pos(std::uint32_t k) const { return text_ + idx_[k]; }
  // Source text from token k to the start of token k + 1 (trailing blanks included).
  std::string_view token(std::uint32_t k) const {
    return std::string_view(text_ + idx_[k], idx_[k + 1] - idx_[k]);
  }
  // The decoded string at tape word t; false when the tape holds no string there.
  bool string_at(std::uint32_t t, std::string_view* out) const {
    std::uint64_t w = tape_[t];
    if ((w >> 56) != '"') return false;
    std::uint64_t off = w & kPayload;
    std::uint32_t len;
    std::memcpy(&len, strings_ + off, sizeof len);
    *out = std::string_view(reinterpret_cast<const char*>(strings_ + off + sizeof len), len);
    return true;
  }
  // Tape word after the container that opens at tape word t.
  std::uint32_t tape_after(std::uint32_t t) const { return static_cast<std::uint32_t>(tape_[t]); }
  // The kind of value at tape word t: '{', '[', '"', 't', 'f', 'n', or a number ('l', 'u', 'd').
  char tape_type(std::uint32_t t) const { return static_cast<char>(tape_[t] >> 56); }
  // Calls fn(key) for each key of the object that opens at tape word t, in order, until fn
  // returns false. Reads the tape alone: a container value is stepped over in one move,
  // without the token walk that for_tape_fields needs (which is for reading values).
  template <class Fn>
  void for_keys(std::uint32_t t, Fn&& fn) const {
    for (std::uint32_t w = t + 1; tape_type(w) != '}';) {
      std::string_view key;
      if (!string_at(w, &key) || !fn(key)) return;
      char type = tape_type(w + 1);
      w = type == '{' || type == '[' ? tape_after(w + 1) : type == 'l' || type == 'u' || type == 'd' ? w + 3 : w + 2;
    }
  }
  // The container that opens at token k (k must open one): where it closes, whether its source text has no
  // blank between tokens, and whether it nests deeper than kMaxJsonDepth (the ondemand
  // reader then reports it). One walk over its tokens; the last result is remembered, as
  // a value is usually read and then stepped over.
  struct Span {
    std::uint32_t close = 0;
    bool minified = true;
    bool too_deep = false;
  };
  const Span& span(std::uint32_t k) const {
    if (memo_k_ != k || !memo_walked_) remember(k);
    return memo_;
  }
  std::uint32_t close_of(std::uint32_t k) const {
    if (memo_k_ != k) remember(k);
    return memo_.close;
  }
  // Records where an iterated container closed (its iterator found the bracket), so that
  // stepping over it afterwards costs nothing.
  void closed_at(std::uint32_t k, std::uint32_t close) const {
    if (memo_k_ == k) return;
    memo_k_ = k;
    memo_ = Span{close, false, false};
    memo_walked_ = false;
  }
  // Whether the container at k is exactly what write_value would write: no blank between
  // tokens and no escape but \" \\ \n \r \t \b \f.
  bool canonical(std::uint32_t k) const;

 private:
  static constexpr std::uint64_t kPayload = (std::uint64_t{1} << 56) - 1;
  const char* text_ = nullptr;
  const std::uint32_t* idx_ = nullptr;
  const std::uint64_t* tape_ = nullptr;
  const std::uint8_t* strings_ = nullptr;
  void remember(std::uint32_t k) const;
  bool member_names_unique() const;
  mutable std::uint32_t memo_k_ = 0xffffffffu;
  mutable Span memo_;
  mutable bool memo_walked_ = false;  // memo_.minified and memo_.too_deep are known
};

class TapeObject;
class TapeArray;

// One value: its first token (k) and its tape word (t). Mirrors the part of ondemand::value
// the readers use, so the same reader code compiles for both.
class TapeValue {
 public:
  TapeValue() = default;
  TapeValue(const TapeDoc* d, std::uint32_t k, std::uint32_t t) : d_(d), k_(k), t_(t) {}

  simdjson::simdjson_result<od::json_type> type() const {
    switch (d_->at(k_)) {
      case '{': return od::json_type::object;
      case '[': return od::json_type::array;
      case '"': return od::json_type::string;
      case 't': case 'f': return od::json_type::boolean;
      case 'n': return od::json_type::null;
      default: return od::json_type::number;
    }
  }
  simdjson::simdjson_result<std::string_view> get_string() const {
    std::string_view s;
    if (d_->at(k_) != '"') return simdjson::INCORRECT_TYPE;
    if (!d_->string_at(t_, &s)) return simdjson::TAPE_ERROR;
    return s;
  }
  simdjson::simdjson_result<bool> get_bool() const {
    char c = d_->at(k_);
    if (c == 't') return true;
    if (c == 'f') return false;
    return simdjson::INCORRECT_TYPE;
  }
  simdjson::simdjson_result<bool> is_null() const { return d_->at(k_) == 'n'; }
  std::string_view raw_json_token() const { return d_->token(k_); }
  simdjson::simdjson_result<TapeObject> get_object() const;
  simdjson::simdjson_result<TapeArray> get_array() const;

  // The token and tape word just past this value.
  std::pair<std::uint32_t, std::uint32_t> end() const {
    switch (d_->at(k_)) {
      case '{': case '[': return {d_->close_of(k_) + 1, d_->tape_after(t_)};
      case '"': case 't': case 'f': case 'n': return {k_ + 1, t_ + 1};
      default: return {k_ + 1, t_ + 2};  // a number takes two tape words
    }
  }

  const TapeDoc* doc() const { return d_; }
  std::uint32_t token_index() const { return k_; }
  std::uint32_t tape_index() const { return t_; }

 private:
  const TapeDoc* d_ = nullptr;
  std::uint32_t k_ = 0, t_ = 0;
};

// A container value; iterated by for_tape_fields / for_tape_elements below.
class TapeObject {
 public:
  TapeObject() = default;
  explicit TapeObject(TapeValue v) : v_(v) {}
  const TapeValue& value() const { return v_; }

 private:
  TapeValue v_;
};
class TapeArray {
 public:
  TapeArray() = default;
  explicit TapeArray(TapeValue v) : v_(v) {}
  const TapeValue& value() const { return v_; }

 private:
  TapeValue v_;
};

inline simdjson::simdjson_result<TapeObject> TapeValue::get_object() const {
  if (d_->at(k_) != '{') return simdjson::INCORRECT_TYPE;
  return TapeObject(*this);
}
inline simdjson::simdjson_result<TapeArray> TapeValue::get_array() const {
  if (d_->at(k_) != '[') return simdjson::INCORRECT_TYPE;
  return TapeArray(*this);
}

inline const char* location_of(const TapeValue& v) { return v.doc()->pos(v.token_index()); }

// Calls fn(key, value) for each member, in order; false when fn returns false or the two
// views of the parse disagree.
template <class Fn>
bool for_tape_fields(const TapeObject& o, Fn&& fn) {
  const TapeDoc& d = *o.value().doc();
  std::uint32_t k = o.value().token_index() + 1, t = o.value().tape_index() + 1;
  if (d.at(k) == '}') return true;
  for (;;) {
    std::string_view key;
    if (d.at(k) != '"' || !d.string_at(t, &key)) return false;
    TapeValue v(&d, k + 2, t + 1);  // k + 1 is the colon, which has no tape word
    if (!fn(key, v)) return false;
    auto [next_k, next_t] = v.end();
    if (d.at(next_k) != ',') {
      d.closed_at(o.value().token_index(), next_k);
      return true;
    }
    k = next_k + 1;
    t = next_t;
  }
}

template <class Fn>
bool for_tape_elements(const TapeArray& a, Fn&& fn) {
  const TapeDoc& d = *a.value().doc();
  std::uint32_t k = a.value().token_index() + 1, t = a.value().tape_index() + 1;
  if (d.at(k) == ']') return true;
  for (;;) {
    TapeValue v(&d, k, t);
    if (!fn(v)) return false;
    auto [next_k, next_t] = v.end();
    if (d.at(next_k) != ',') {
      d.closed_at(a.value().token_index(), next_k);
      return true;
    }
    k = next_k + 1;
    t = next_t;
  }
}

// Writes `v` minified, as write_value(od::value) writes the same source text; false when it
// nests deeper than kMaxJsonDepth or the views disagree (the record is then read again the
// ondemand way, which reports it).
bool write_tape_value(const TapeValue& v, std::string& out);
// The value's source text when it is already what write_value would write (so it can be
// stored without a copy through a scratch buffer); empty otherwise.
std::string_view canonical_tape_text(const TapeValue& v);

// consume_string for a validated record: nothing is left to read.
inline bool consume_string(const TapeValue&, JsonFailure&) { return true; }

}  // namespace trajcheck::detail
