// The member names of one JSON object, to find a name given twice. RFC 8259 leaves which of
// two same-named members counts undefined (parsers differ: first, last, both), so a reader
// that picked one would be guessing: the readers reject such an object instead.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>

#include "trajcheck/json_string.hpp"

namespace trajcheck::json {

class MemberNames {
 public:
  // False when `name` (a decoded name) was inserted before. The views must outlive the set.
  bool insert(std::string_view name) {
    if (n_ < few_.size()) {
      for (std::size_t i = 0; i < n_; ++i)
        if (few_[i] == name) return false;
      few_[n_++] = name;
      return true;
    }
    if (many_.empty()) many_.insert(few_.begin(), few_.end());
    return many_.insert(name).second;
  }

 private:
  std::array<std::string_view, 8> few_{};  // most objects: no allocation
  std::size_t n_ = 0;
  std::unordered_set<std::string_view> many_;
};

// The message for a second member named `name`.
inline std::string duplicate_member_message(std::string_view name) {
  std::string m = "duplicate key ";
  append_json_string(m, name, true);
  m += ": a JSON object may name each member once (which of the two counts is not defined)";
  return m;
}

}  // namespace trajcheck::json
