// The regex engine behind JSON Schema `pattern` / `patternProperties` (and valijson's
// date/time formats): RE2, like every regex in trajcheck, so validation stays linear-time.
// See valijson.hpp for how valijson is made to call it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace re2 {
class RE2;
}

namespace trajcheck::detail {

// The compiled form of a schema pattern, compiled once per process and shared by all threads
// (RE2 matching is thread-safe). A pattern RE2 cannot compile throws std::runtime_error
// naming the pattern and RE2's reason; catalogs reject such schemas when they load
// (schema_pattern_problems), so this only happens for a pattern outside the places a schema
// keeps its subschemas that only a `$ref` reaches.
const re2::RE2& schema_regex(std::string_view pattern);

// A `pattern` value or `patternProperties` key of a schema that RE2 rejects (ECMA-262
// lookaround, backreferences, `\u` escapes, …).
struct SchemaPatternProblem {
  std::string pointer;  // JSON Pointer of the keyword in the schema ("/properties/code/pattern")
  std::string pattern;
  bool is_key = false;  // a patternProperties key (else a `pattern` value)
  std::string reason;   // RE2's error
};

// Compiles (into the shared cache) every pattern of `schema` found where drafts 4-7 keep
// subschemas, and returns those RE2 rejects, in document order.
std::vector<SchemaPatternProblem> schema_pattern_problems(const nlohmann::json& schema);

}  // namespace trajcheck::detail
