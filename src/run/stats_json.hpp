// JSON pieces shared by the run counters that travel between processes (CheckStats,
// ScoreSummary): objects of name -> count, written and read back exactly.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <simdjson.h>

namespace trajcheck::detail {

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
