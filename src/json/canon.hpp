// Canonical text of JSON argument values, so that deep equality (numbers by value, arrays by
// position, object keys in any order, strings never numbers) becomes byte equality.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "trajcheck/json_string.hpp"

namespace trajcheck::json {

// One call's arguments in canonical form; text lives in ArgCanon's arena.
struct CanonArgs {
  bool object = true;          // absent arguments count as the empty object
  std::uint32_t whole_off = 0, whole_len = 0;
  std::uint32_t members_begin = 0, members_end = 0;  // into ArgCanon::members(), sorted by key
};

struct CanonMember {
  std::uint32_t key_off = 0, key_len = 0;
  std::uint32_t value_off = 0, value_len = 0;
};

// Canonicalizes many calls' arguments into one arena; clear() keeps capacity.
class ArgCanon {
 public:
  void clear();
  // Canonicalizes raw JSON text (empty: absent = {}); text that is not JSON is kept as a
  // JSON string of itself so that it equals only the same text.
  CanonArgs add(std::string_view raw_json);

  std::string_view text(std::uint32_t off, std::uint32_t len) const {
    return std::string_view(arena_.data() + off, len);
  }
  std::string_view whole(const CanonArgs& a) const { return text(a.whole_off, a.whole_len); }
  std::string_view key(const CanonMember& m) const { return text(m.key_off, m.key_len); }
  std::string_view value(const CanonMember& m) const { return text(m.value_off, m.value_len); }
  const std::vector<CanonMember>& members() const { return members_; }

  // The value of `key` in `a`, or false.
  bool find(const CanonArgs& a, std::string_view key, std::string_view* value) const;

  // The same canonical form, straight from an On-Demand object (arguments given as a JSON
  // value) or from the text of one (arguments given as a JSON string, parsed with `parser`
  // in `padded`; empty text is {}), validating every value as the trace readers do. False,
  // with nothing added, when the readers would not store the value as that object: invalid
  // JSON, another type, trailing content, nesting deeper than 64 levels; and also for
  // integers beyond 64 bits (compared as text elsewhere), so the caller must fall back.
  bool add_object(simdjson::ondemand::object o, CanonArgs* out);
  bool add_object_text(std::string_view text, simdjson::ondemand::parser& parser,
                       std::string& padded, CanonArgs* out);

 private:
  void canon(simdjson::dom::element e, std::string& out);
  bool canon_od(simdjson::ondemand::value v, std::string& out, int depth);
  void write_members(CanonArgs& a);
  simdjson::dom::parser parser_;
  std::string arena_;
  std::string scratch_;
  std::vector<CanonMember> members_;
  struct Member {
    std::string_view key;  // into the parser's document
    std::uint32_t off, len;  // canonical value in scratch_
    bool plain = false;      // the key needs no escaping
  };
  void append_key(std::string& out, const Member& m) {
    if (m.plain) {
      out += '"';
      out += m.key;
      out += '"';
    } else {
      append_json_string(out, m.key);
    }
  }
  // Appends each member of `o` to `members`, its canonical value (nesting `depth`) to `values`.
  bool collect_members(simdjson::ondemand::object o, std::vector<Member>& members, std::string& values,
                       int depth);
  std::vector<Member> sort_buf_;
  // Per nesting level below the top: members and their canonical values (reused).
  struct Level {
    std::vector<Member> members;
    std::string values;
  };
  std::vector<Level> levels_;
};

}  // namespace trajcheck::json
