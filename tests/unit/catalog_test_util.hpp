// Helpers shared by the catalog unit tests: compiling a schema and reading its verdict.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "trajcheck/catalog.hpp"

namespace trajcheck::test {

inline std::shared_ptr<const SchemaValidator> schema(const std::string& text,
                                                     SchemaDraft draft = SchemaDraft::draft7) {
  std::string error;
  auto v = SchemaValidator::compile(text, draft, &error);
  REQUIRE_MESSAGE(v != nullptr, error);
  return v;
}

// "" when `json` is valid, else "path: reason" of every error joined by "; ". Also checks that
// the validator agrees with itself: with and without an error list.
inline std::string check(const SchemaValidator& v, const std::string& json) {
  std::vector<ArgumentError> errors;
  bool ok = v.validate(json, &errors);
  CHECK(ok == errors.empty());
  CHECK(ok == v.validate(json, nullptr));  // the fast path (no error list) agrees
  std::string out;
  for (const ArgumentError& e : errors) out += (out.empty() ? "" : "; ") + e.path + ": " + e.reason;
  return out;
}

}  // namespace trajcheck::test
