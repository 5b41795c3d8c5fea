// Values of a record validated whole before it is read: simdjson's stage 1 indexes every token
// (and checks UTF-8, string boundaries and control characters), then one walk over those
// indexes checks the JSON grammar, every escape (through simdjson's own string decoder), every
// number and literal, the nesting depth and that no object names a member twice, and notes
// where each container closes and whether its text is minified. Raw values are then copied as
// the source wrote them, in one piece when they are already minified with canonical escapes,
// and numbers keep their text.
//
// The walk accepts only records simdjson's DOM parser accepts too (it declines, rather than
// decides, what it is unsure of: numbers the DOM might find out of range, nesting deeper than
// the readers go), so the readers never meet bad JSON here: the native and chat readers run
// over TapeValue exactly as they run over ondemand values (each is one template), and a record
// declined is read the ondemand way, which reports what is wrong. Stage 1 and the string
// decoder are reached through simdjson's internal parser implementation
// (`simdjson::implementation::create_dom_parser_implementation`, whose structural-index
// layout is simdjson 3's): TapeDoc::parse declines under any other major version.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "readers/json_util.hpp"

namespace trajcheck::detail {

// Working memory of TapeDoc::parse, reused from record to record (one per thread).
// Buffers grow to the largest record seen and go back to their usual size at the next record
// of usual size, so one long trace does not hold its memory for the rest of the run.
struct TapeScratch {
  std::unique_ptr<simdjson::internal::dom_parser_implementation> stage1;
  std::unique_ptr<std::uint32_t[]> aux;  // per token: see TapeDoc
  std::size_t aux_capacity = 0;
  std::unique_ptr<char[]> decoded;  // strings with escapes, decoded: [length:4][bytes]…
  std::size_t decoded_capacity = 0;
  struct Name {
    std::uint64_t fingerprint;
    std::string_view text;
  };
  struct Open {
    std::uint32_t token;  // where the container opens
    std::uint32_t flags;  // the enclosing container's flags, restored at the close
    std::uint64_t seen;   // the enclosing object's name filter, restored at the close
    bool object;
  };
  // The open containers, innermost last: kMaxJsonDepth of them at most, so a fixed array
  // (allocated once) and a depth, not a vector whose size is checked at every push.
  std::unique_ptr<Open[]> open;
  std::vector<Name> names;                // one object's member names, when they are compared
  std::vector<std::uint32_t> name_slots;  // and the table that compares many
};

// What TraceParser did with the records read on this thread, counted: how often simdjson's
// stage 1 indexed one (TraceParser indexes a record once, for its fast path and its ondemand
// reader alike; TapeDoc::parse indexes on its own), how often the fast path validated one,
// and how often the general (ondemand) reader read one. Tests read them; three increments a
// record cost nothing measurable.
enum class ParseCount : std::uint8_t { stage1, validated, general };
struct ParseCounts {
  std::uint64_t stage1 = 0, validated = 0, general = 0;
};
inline thread_local ParseCounts t_parse_counts;
inline void count_parse(ParseCount c) {
  ++(c == ParseCount::stage1 ? t_parse_counts.stage1 : c == ParseCount::validated ? t_parse_counts.validated
                                                                                 : t_parse_counts.general);
}

class TapeDoc {
 public:
  // The usual record size the buffers are kept at (records of any size are read).
  static constexpr std::size_t kUsualRecord = 256 * 1024;

  // Indexes and validates `text` (with SIMDJSON_PADDING readable bytes past its end). False
  // when it is not valid JSON, is neither an object nor an array, an object in it names a
  // member twice, or it holds what the walk leaves to the ondemand reader (see above). The
  // root value is TapeValue(doc, 0); root_is_array() tells which.
  bool parse(TapeScratch& s, std::string_view text);
  // parse() over the stage 1 that `parser` ran for its last iterate() of `text`: the record's
  // On-Demand document and this walk share one stage 1, so a record declined here is read from
  // that document without being indexed again. `parser` must not iterate again while this
  // TapeDoc is in use.
  bool parse_indexed(TapeScratch& s, const simdjson::ondemand::parser& parser, std::string_view text);

  bool root_is_array() const { return at(0) == '['; }
  char at(std::uint32_t k) const { return text_[idx_[k]]; }
  const char* pos(std::uint32_t k) const { return text_ + idx_[k]; }
  // Source text from token k to the start of token k + 1 (trailing blanks included).
  std::string_view token(std::uint32_t k) const {
    return std::string_view(text_ + idx_[k], idx_[k + 1] - idx_[k]);
  }
  // The decoded string at token k (which must be a string).
  std::string_view string_at(std::uint32_t k) const {
    const std::uint32_t a = aux_[k] & ~kBlank;
    if (a == 0) return std::string_view(text_ + idx_[k] + 1, static_cast<std::size_t>(string_end(k) - (text_ + idx_[k] + 1)));
    return decoded_string(k, a);
  }
  // The size of the string token k with its quotes when its escapes are all canonical (what
  // append_json_string writes for its value), else 0: json::canonical_string_size, known from
  // the walk.
  std::size_t canonical_string_size(std::uint32_t k) const {
    if (aux_[k] & kBlank) return 0;
    return static_cast<std::size_t>(string_end(k) - (text_ + idx_[k])) + 1;
  }
  // Calls fn(key) for each key of the object that opens at token k, in order, until fn
  // returns false.
  template <class Fn>
  void for_keys(std::uint32_t k, Fn&& fn) const {
    if (at(k + 1) == '}') return;
    for (std::uint32_t w = k + 1;;) {
      if (!fn(string_at(w))) return;
      std::uint32_t next = after(w + 2);
      if (at(next) != ',') return;
      w = next + 1;
    }
  }
  // The token after the value that starts at token k.
  std::uint32_t after(std::uint32_t k) const {
    char c = at(k);
    return c == '{' || c == '[' ? close_of(k) + 1 : k + 1;
  }
  // Where the container that opens at token k (k must open one) closes.
  std::uint32_t close_of(std::uint32_t k) const { return aux_[k] & kTokenMask; }
  // Whether the container at k is exactly what write_value would write: no blank between
  // tokens and no escape but \" \\ \n \r \t \b \f.
  bool canonical(std::uint32_t k) const { return (aux_[k] & (kBlank | kEscaped)) == 0; }

  // aux_[k] for a container opening at k: the token where it closes, and the flags below;
  // for a string token: 0 when its text has no escape (the bytes between the quotes are its
  // value), else 1 + the offset of its decoded form in decoded_, with kBlank set when one of
  // its escapes is not canonical, or kUndecoded for a value whose escapes are all canonical
  // and that is decoded when first read.
  static constexpr std::uint32_t kBlank = 1u << 31;    // a blank between two of its tokens
  static constexpr std::uint32_t kEscaped = 1u << 30;  // a \u or \/ escape in one of its strings
  static constexpr std::uint32_t kUndecoded = 1u << 30;  // (strings) not decoded yet
  static constexpr std::uint32_t kTokenMask = kEscaped - 1;

 private:
  // The closing quote of the string at token k: the last byte before the next token that is
  // not a blank (stage 1 starts a token at anything after a string's close but a blank).
  const char* string_end(std::uint32_t k) const {
    const char* q = text_ + idx_[k + 1] - 1;
    if (*q == '"') return q;  // minified: one comparison
    while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r') --q;
    return q;
  }
  // Validates the record indexed by `stage1` (see parse()).
  bool walk(TapeScratch& s, const simdjson::internal::dom_parser_implementation& stage1, std::string_view text);
  bool validate(TapeScratch& s, std::size_t size);
  bool distinct_names(std::uint32_t k, TapeScratch& s) const;
  // Decodes the kUndecoded string at token k after the strings decoded so far; returns its
  // new aux_ entry.
  std::uint32_t decode(std::uint32_t k) const;
  // string_at for a string with an escape, whose aux_ entry (kBlank cleared) is `a`.
  std::string_view decoded_string(std::uint32_t k, std::uint32_t a) const;

  const char* text_ = nullptr;
  const std::uint32_t* idx_ = nullptr;
  const simdjson::internal::dom_parser_implementation* stage1_ = nullptr;  // its string decoder
  // The document is read through const references; a string decoded when first read is
  // written to the scratch these point into (one document per thread).
  std::uint32_t* aux_ = nullptr;
  char* decoded_ = nullptr;
  mutable std::size_t decoded_size_ = 0;  // bytes of decoded_ in use
  std::uint32_t n_ = 0;
};

class TapeObject;
class TapeArray;

// One value: its first token. Mirrors the part of ondemand::value the readers use, so the
// same reader code compiles for both.
class TapeValue {
 public:
  TapeValue() = default;
  TapeValue(const TapeDoc* d, std::uint32_t k) : d_(d), k_(k) {}
  // `in_canonical`: the container holding the value is canonical (TapeDoc::canonical), so
  // the value's text runs from its first token to the next token, as it is to be written.
  TapeValue(const TapeDoc* d, std::uint32_t k, bool in_canonical) : d_(d), k_(k), in_canonical_(in_canonical) {}

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
    if (d_->at(k_) != '"') return simdjson::INCORRECT_TYPE;
    return d_->string_at(k_);
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

  // The token just past this value.
  std::uint32_t end() const { return d_->after(k_); }

  const TapeDoc* doc() const { return d_; }
  std::uint32_t token_index() const { return k_; }
  // Whether the container holding this value is known to be canonical (see the constructor);
  // false when it is not, or not known.
  bool in_canonical() const { return in_canonical_; }

 private:
  const TapeDoc* d_ = nullptr;
  std::uint32_t k_ = 0;
  bool in_canonical_ = false;
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

// Calls fn(key, value) for each member, in order; false when fn returns false.
template <class Fn>
bool for_tape_fields(const TapeObject& o, Fn&& fn) {
  const TapeDoc& d = *o.value().doc();
  const bool canonical = d.canonical(o.value().token_index());
  std::uint32_t k = o.value().token_index() + 1;
  if (d.at(k) == '}') return true;
  for (;;) {
    TapeValue v(&d, k + 2, canonical);  // k + 1 is the colon
    if (!fn(d.string_at(k), v)) return false;
    std::uint32_t next = v.end();
    if (d.at(next) != ',') return true;
    k = next + 1;
  }
}

template <class Fn>
bool for_tape_elements(const TapeArray& a, Fn&& fn) {
  const TapeDoc& d = *a.value().doc();
  const bool canonical = d.canonical(a.value().token_index());
  std::uint32_t k = a.value().token_index() + 1;
  if (d.at(k) == ']') return true;
  for (;;) {
    TapeValue v(&d, k, canonical);
    if (!fn(v)) return false;
    std::uint32_t next = v.end();
    if (d.at(next) != ',') return true;
    k = next + 1;
  }
}

// Writes `v` minified, as write_value(od::value) writes the same source text.
void write_tape_value(const TapeValue& v, std::string& out);
// The value's source text when it is already what write_value would write (so it can be
// stored without a copy through a scratch buffer): a canonical container, or any value of one;
// empty otherwise.
inline std::string_view canonical_tape_text(const TapeValue& v) {
  const TapeDoc& d = *v.doc();
  const std::uint32_t k = v.token_index();
  // A value of a canonical container runs to the next token.
  if (v.in_canonical()) return std::string_view(d.pos(k), static_cast<std::size_t>(d.pos(v.end()) - d.pos(k)));
  const char c = d.at(k);
  if ((c != '{' && c != '[') || !d.canonical(k)) return {};
  return std::string_view(d.pos(k), static_cast<std::size_t>(d.pos(d.close_of(k)) - d.pos(k)) + 1);
}
// canonical_tape_member for a value whose container is not known to be canonical.
std::string_view checked_tape_member(const TapeValue& v);
// For the value of an object member: the member's source text, `"name":value`, when it is
// what writing the name (append_json_string) and the value (write_tape_value) would write —
// no blank, no escape but \" \\ \n \r \t \b \f; empty otherwise.
inline std::string_view canonical_tape_member(const TapeValue& v) {
  const TapeDoc& d = *v.doc();
  const std::uint32_t k = v.token_index();
  // In a canonical object the member runs from its name to the next token.
  if (v.in_canonical() && k >= 2 && d.at(k - 1) == ':')
    return std::string_view(d.pos(k - 2), static_cast<std::size_t>(d.pos(v.end()) - d.pos(k - 2)));
  return checked_tape_member(v);
}

// json::canonical_string_size of a string value's token.
inline std::size_t canonical_string_size(const TapeValue& v) {
  const TapeDoc& d = *v.doc();
  const std::uint32_t k = v.token_index();
  if (v.in_canonical()) return static_cast<std::size_t>(d.pos(k + 1) - d.pos(k));
  return d.canonical_string_size(k);
}

// consume_string for a validated record: nothing is left to read.
inline bool consume_string(const TapeValue&, JsonFailure&) { return true; }

}  // namespace trajcheck::detail
