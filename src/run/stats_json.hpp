// JSON pieces shared by the run counters that travel between processes (CheckStats,
// ScoreSummary): their text parsed with errors that name them, and objects of name -> count,
// written and read back exactly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace trajcheck::detail {

// The JSON text of one kind of counters being read: `what` ("check stats") starts every error.
class CountersJson {
 public:
  CountersJson(std::string_view what, std::string* error) : what_(what), error_(error) {}
  // False, with the error "WHAT: not JSON", when `json` is not JSON text.
  bool parse(std::string_view json);
  simdjson::dom::element root() const { return root_; }
  // Sets the error to "WHAT: why" and returns false (`return in.fail("…")`).
  bool fail(std::string_view why) const;

 private:
  simdjson::dom::parser parser_;
  simdjson::dom::element root_;
  std::string_view what_;
  std::string* error_;
};

using CountMap = std::map<std::string, std::uint64_t>;

// Appends `{"name":count,…}`: every name escaped, in the map's order; `{}` when empty.
void append_count_object(std::string& out, const CountMap& counts);

enum class CountObjectRead : std::uint8_t {
  ok,
  not_object,  // `parent[key]` is missing or not an object
  bad_count,   // a value is not a non-negative integer
};
// Reads `parent[key]`, an object of name -> count, into *out (a name's last count stands).
CountObjectRead read_count_object(simdjson::dom::element parent, const char* key, CountMap* out);

}  // namespace trajcheck::detail
