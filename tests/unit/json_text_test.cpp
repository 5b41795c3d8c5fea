// JSON text without a parser: the numbers simdjson's DOM refuses, written as doubles.
#include <doctest/doctest.h>

#include <string>

#include <simdjson.h>

#include "json/text.hpp"

using trajcheck::json::write_wide_numbers_as_doubles;

namespace {
// The rewritten text, or "-" when nothing needed rewriting.
std::string wide(const std::string& json) {
  std::string out = "untouched";
  if (!write_wide_numbers_as_doubles(json, out)) {
    CHECK(out == "untouched");
    return "-";
  }
  return out;
}
}  // namespace

TEST_CASE("numbers the DOM refuses are written as the doubles they stand for; nothing else moves") {
  CHECK(wide(R"({"a":12345678901234567890123})") == R"({"a":1.2345678901234568e+22})");
  CHECK(wide(R"([18446744073709551616,-9223372036854775809])") == R"([1.8446744073709552e+19,-9.223372036854776e+18])");
  CHECK(wide(R"({"x":1e400,"y":-2E+308,"z":1.5e308})") ==
        R"({"x":1.7976931348623157e+308,"y":-1.7976931348623157e+308,"z":1.5e308})");
  // What the DOM reads: 64-bit integers, doubles in range, underflow to zero, strings.
  CHECK(wide(R"({"u":18446744073709551615,"i":-9223372036854775808,"d":1.5,"t":1e-400})") == "-");
  CHECK(wide(R"({"s":"12345678901234567890123","e":"1e400 \" 99999999999999999999999"})") == "-");
  CHECK(wide(R"({"k\"99999999999999999999999":1})") == "-");
  CHECK(wide("99999999999999999999999") == "1e+23");  // the nearest double, shortest
  CHECK(wide(" [ 1 , 99999999999999999999999 ] ") == " [ 1 , 1e+23 ] ");
  // Malformed numbers are left for the parser to refuse.
  CHECK(wide(R"([01, 1e, -, 1.])") == "-");
}

TEST_CASE("a rewritten document parses, with the values the numbers stand for") {
  simdjson::dom::parser parser;
  for (std::string json : {R"({"a":[1e400,-1e999,12345678901234567890123],"b":"x"})",
                           R"([-99999999999999999999.0e300, 340282366920938463463374607431768211456])"}) {
    CAPTURE(json);
    CHECK(parser.parse(simdjson::padded_string(json)).error() == simdjson::NUMBER_ERROR);
    std::string out;
    REQUIRE(write_wide_numbers_as_doubles(json, out));
    simdjson::dom::element e;
    CHECK(parser.parse(simdjson::padded_string(out)).get(e) == simdjson::SUCCESS);
  }
}
