// JSON Schema regexes run by RE2 (no std::regex): `pattern` (a search), `patternProperties`
// (with properties/additionalProperties), `propertyNames`, and schemas whose patterns RE2
// cannot run, which fail at load time with the pattern and where it is written.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/schema_regex.hpp"
#include "catalog/valijson.hpp"
#include "trajcheck/catalog.hpp"
#include "unit/catalog_test_util.hpp"

using namespace trajcheck;
using trajcheck::test::check;
using trajcheck::test::schema;

namespace {

std::string compile_error(const std::string& text) {
  std::string error;
  auto v = SchemaValidator::compile(text, SchemaDraft::draft7, &error);
  CHECK(v == nullptr);
  return error;
}

}  // namespace

TEST_CASE("pattern: unanchored search, anchors when written, strings only") {
  auto v = schema(R"({"type": "object", "properties": {"order_id": {"pattern": "^#W[0-9]{7}$"},
                                                        "note": {"pattern": "ref-[a-z]+"}}})");
  CHECK(check(*v, R"({"order_id": "#W1234567"})") == "");
  CHECK(check(*v, R"({"order_id": "#W123456"})") ==
        "arguments.order_id: Failed to match regex specified by 'pattern' constraint.");
  CHECK(check(*v, R"({"order_id": "x#W1234567"})") ==
        "arguments.order_id: Failed to match regex specified by 'pattern' constraint.");
  CHECK(check(*v, R"({"note": "see ref-abc please"})") == "");  // a match anywhere is enough
  CHECK(check(*v, R"({"note": "see REF-abc"})") ==
        "arguments.note: Failed to match regex specified by 'pattern' constraint.");
  CHECK(check(*v, R"({"order_id": 7})") == "");  // `pattern` ignores non-strings
}

TEST_CASE("pattern: UTF-8 text is matched by characters") {
  auto v = schema(R"({"pattern": "^.{3}$"})");
  CHECK(check(*v, R"("äöü")") == "");
  CHECK(check(*v, R"("äö")") == "arguments: Failed to match regex specified by 'pattern' constraint.");
}

TEST_CASE("patternProperties: matching names validate against each matching schema") {
  auto v = schema(R"({"type": "object",
      "properties": {"id": {"type": "string"}},
      "patternProperties": {"^x-": {"type": "integer"}, "_at$": {"type": "string", "pattern": "^[0-9]{4}-"}},
      "additionalProperties": false})");
  CHECK(check(*v, R"({"id": "a", "x-count": 3, "created_at": "2024-01-02"})") == "");
  CHECK(check(*v, R"({"x-count": "three"})") == "arguments.x-count: Value type not permitted by 'type' constraint.");
  CHECK(check(*v, R"({"created_at": "yesterday"})") ==
        "arguments.created_at: Failed to match regex specified by 'pattern' constraint.");
  // A name matching no pattern (and not in `properties`) is additional, hence rejected.
  CHECK(check(*v, R"({"y-count": 3})") != "");
  // A name matching a pattern is not additional.
  CHECK(check(*v, R"({"x-a": 1, "x-b": 2, "updated_at": "2023-"})") == "");
}

TEST_CASE("patternProperties in draft 4, and propertyNames with a pattern") {
  auto v4 = schema(R"({"patternProperties": {"^n": {"type": "number"}}})", SchemaDraft::draft4);
  CHECK(check(*v4, R"({"num": 1, "other": "x"})") == "");
  CHECK(check(*v4, R"({"num": "1"})") != "");
  // valijson validates property names without collecting reasons: only the verdict.
  auto names = schema(R"({"propertyNames": {"pattern": "^[a-z_]+$"}})");
  CHECK(names->validate(R"({"order_id": 1})", nullptr));
  CHECK_FALSE(names->validate(R"({"OrderId": 1})", nullptr));
}

TEST_CASE("the same pattern in many schemas and threads") {
  auto a = schema(R"({"pattern": "^[a-c]+$"})");
  auto b = schema(R"({"properties": {"k": {"pattern": "^[a-c]+$"}}})");
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (!a->validate(R"("abcabc")", nullptr)) ++wrong[t];
        if (a->validate(R"("abd")", nullptr)) ++wrong[t];
        if (b->validate(R"({"k": "d"})", nullptr)) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == std::vector<int>(4, 0));
}

TEST_CASE("formats date, time, date-time are checked by RE2 too") {
  auto v = schema(R"({"properties": {"d": {"format": "date"}, "t": {"format": "time"},
                                     "dt": {"format": "date-time"}, "n": {"format": "date"}}})");
  CHECK(check(*v, R"({"d": "2024-02-29", "t": "16:52:45Z", "dt": "2022-07-18T16:52:45+02:00"})") == "");
  CHECK(check(*v, R"({"d": "2024-02-30"})") == "arguments.d: String should be a valid date-time");
  CHECK(check(*v, R"({"d": "2024-13-01"})") == "arguments.d: String should be a valid date");
  CHECK(check(*v, R"({"t": "25:00:00Z"})") == "arguments.t: String should be a valid time");
  CHECK(check(*v, R"({"dt": "2022-07-18 16:52:45Z"})") == "arguments.dt: String should be a valid date-time");
  CHECK(check(*v, R"({"n": 20240101})") == "");  // `format` ignores non-strings
}

TEST_CASE("a pattern RE2 cannot run fails the schema at compile time, naming it and where") {
  CHECK(compile_error(R"j({"properties": {"code": {"pattern": "^(?=[A-Z])\\w+$"}}})j") ==
        "pattern \"^(?=[A-Z])\\w+$\" at /properties/code/pattern is not supported by RE2: "
        "invalid perl operator: (?=");
  CHECK(compile_error(R"j({"patternProperties": {"^(a)\\1$": {}}})j") ==
        "patternProperties pattern \"^(a)\\1$\" at /patternProperties/^(a)\\1$ is not supported by RE2: "
        "invalid escape sequence: \\1");
  // Inside combinators, items and definitions too; JSON Pointer escapes ~ and /.
  std::string e = compile_error(R"j({"definitions": {"a/b": {"items": [{"anyOf": [{"pattern": "(?<!x)y"}]}]}}})j");
  CHECK(e.find("at /definitions/a~1b/items/0/anyOf/0/pattern ") != std::string::npos);
  // A `pattern` that is data (inside `enum`, or a property named "pattern") is not a regex.
  CHECK(SchemaValidator::compile(R"j({"enum": [{"pattern": "(?=x)"}], "properties": {"pattern": {"type": "string"}}})j",
                                 SchemaDraft::draft7, nullptr) != nullptr);
}

TEST_CASE("a rejected pattern reached only through $ref fails the call, with the reason") {
  // "x-shapes" is not a place schemas are kept, so the load-time check does not look there.
  auto v = schema(R"j({"$ref": "#/x-shapes/code", "x-shapes": {"code": {"pattern": "^(?=A)"}}})j");
  CHECK(check(*v, R"("A1")") ==
        "arguments: schema could not be applied: pattern \"^(?=A)\" is not supported by RE2: "
        "invalid perl operator: (?=");
  CHECK_FALSE(v->validate(R"("B")", nullptr));
  CHECK(check(*v, "7") == "");  // not a string: `pattern` does not apply
}

TEST_CASE("valijson's URN test of $id runs on RE2 too, lookahead included") {
  using valijson::internal::uri::isUrn;
  CHECK(isUrn("urn:example:tools"));
  CHECK(isUrn("URN:isbn:0451450523?+r#frag"));
  CHECK_FALSE(isUrn("urn:urn:x"));  // (?!urn:)
  CHECK_FALSE(isUrn("urn:a:b"));    // a namespace id has 2 to 32 characters
  CHECK_FALSE(isUrn("http://example.com/tools"));
  CHECK_FALSE(isUrn("urn"));
  auto v = schema(R"({"$id": "urn:example:root", "definitions": {"s": {"type": "string"}},
                      "properties": {"a": {"$ref": "#/definitions/s"}}})");
  CHECK(check(*v, R"({"a": "x"})") == "");
  CHECK(check(*v, R"({"a": 1})") != "");
}

TEST_CASE("schema_pattern_problems lists every rejected pattern") {
  auto problems = detail::schema_pattern_problems(nlohmann::json::parse(
      R"j({"properties": {"a": {"pattern": "ok+"}, "b": {"pattern": "(?=no)"}},
          "patternProperties": {"\\k<n>": true}})j"));
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].pointer == "/patternProperties/\\k<n>");
  CHECK(problems[0].is_key);
  CHECK(problems[1].pointer == "/properties/b/pattern");
  CHECK(problems[1].pattern == "(?=no)");
  CHECK_FALSE(problems[1].is_key);
}

TEST_CASE("a catalog with an RE2-incompatible pattern: E305 at the pattern, with the tool and the pattern") {
  CatalogLoad c = load_catalog(TRAJCHECK_TEST_DIR "/data/catalog/lookaround.json");
  CHECK_FALSE(c.ok());
  CHECK(format_diagnostics(c.source, c.diagnostics) ==
        TRAJCHECK_TEST_DIR "/data/catalog/lookaround.json:8:41: error[E305]: tool 'order_get': pattern "
        "\"^(?!#W)\\w+$\" (arguments/properties/order_id/pattern) is not supported by RE2, trajcheck's regex "
        "engine (no lookaround, backreferences or \\u escapes): invalid perl operator: (?!\n"
        " 8 |                 \"order_id\": {\"pattern\": \"^(?!#W)\\\\w+$\"}\n"
        "   |                                         ^~~~~~~~~~~~~~\n" TRAJCHECK_TEST_DIR
        "/data/catalog/lookaround.json:14:43: error[E305]: tool 'user_find': patternProperties pattern "
        "\"^(\\w)\\1\" (arguments/patternProperties/^(\\w)\\1) is not supported by RE2, trajcheck's regex "
        "engine (no lookaround, backreferences or \\u escapes): invalid escape sequence: \\1\n"
        " 14 |       \"arguments\": {\"patternProperties\": {\"^(\\\\w)\\\\1\": {\"type\": \"string\"}}}\n"
        "    |                                           ^~~~~~~~~~~\n");
  // The valid tool's pattern did not stop the others from being checked, nor was it reported.
  CHECK(c.diagnostics.size() == 2);
}
