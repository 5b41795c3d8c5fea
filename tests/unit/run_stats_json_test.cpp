// The JSON pieces the run counters share (run/stats_json.hpp): their text parsed, count objects
// written and read back, and what the readers of CheckStats and ScoreSummary say about a broken one.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <simdjson.h>

#include "run/stats_json.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/score_run.hpp"

using namespace trajcheck;

TEST_CASE("counters' JSON: parsed, and every error names the counters") {
  std::string error;
  detail::CountersJson in("some stats", &error);
  CHECK_FALSE(in.parse("{\"a\":"));
  CHECK(error == "some stats: not JSON");
  REQUIRE(in.parse("{\"a\":7}"));
  std::uint64_t a = 0;
  CHECK_FALSE(in.root()["a"].get_uint64().get(a));
  CHECK(a == 7);
  CHECK_FALSE(in.fail("\"b\" is missing"));
  CHECK(error == "some stats: \"b\" is missing");
  CheckStats c;
  CHECK_FALSE(CheckStats::from_json("nope", &c, &error));
  CHECK(error == "check stats: not JSON");
  ScoreSummary s;
  CHECK_FALSE(ScoreSummary::from_json("", &s, &error));
  CHECK(error == "score summary: not JSON");
}

TEST_CASE("count objects: written in name order, escaped, and read back exactly") {
  using detail::CountObjectRead;
  std::string out;
  detail::append_count_object(out, {});
  CHECK(out == "{}");
  out = "x";
  detail::append_count_object(out, {{"b", 2}, {"a\"q", 18446744073709551615ull}});
  CHECK(out == "x{\"a\\\"q\":18446744073709551615,\"b\":2}");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE_FALSE(parser.parse(std::string("{\"m\":") + out.substr(1) + "}").get(root));
  detail::CountMap m{{"b", 7}, {"c", 1}};
  CHECK(detail::read_count_object(root, "m", &m) == CountObjectRead::ok);
  CHECK(m == detail::CountMap{{"a\"q", 18446744073709551615ull}, {"b", 2}, {"c", 1}});
  for (const char* bad : {R"({"m":[]})", R"({"n":{}})", R"({"m":3})"}) {
    REQUIRE_FALSE(parser.parse(std::string(bad)).get(root));
    CHECK(detail::read_count_object(root, "m", &m) == CountObjectRead::not_object);
  }
  for (const char* bad : {R"({"m":{"a":-1}})", R"({"m":{"a":1.5}})", R"({"m":{"a":"1"}})", R"({"m":{"a":null}})"}) {
    REQUIRE_FALSE(parser.parse(std::string(bad)).get(root));
    CHECK(detail::read_count_object(root, "m", &m) == CountObjectRead::bad_count);
  }
}

TEST_CASE("score summaries say which count object is not one") {
  ScoreSummary s;
  s.missed["a"] = 1;
  std::string json = s.to_json();
  ScoreSummary back;
  std::string error;
  REQUIRE(ScoreSummary::from_json(json, &back, &error));
  CHECK(back.missed == s.missed);
  std::string broken = json;
  broken.replace(broken.find("\"missed\":{\"a\":1}"), 16, "\"missed\":{\"a\":-1}");
  CHECK_FALSE(ScoreSummary::from_json(broken, &back, &error));
  CHECK(error == "score summary: \"missed\" holds a count that is not an integer");
  broken = json;
  broken.replace(broken.find("\"extra\":{}"), 10, "\"extra\":[]");
  CHECK_FALSE(ScoreSummary::from_json(broken, &back, &error));
  CHECK(error == "score summary: \"extra\" is not an object");
}

TEST_CASE("check stats say which part of the catalog counters is broken") {
  CheckStats s;
  s.catalog.unknown_tools["t"] = 2;
  std::string json = s.to_json();
  CheckStats back;
  std::string error;
  REQUIRE(CheckStats::from_json(json, &back, &error));
  CHECK(back.catalog.unknown_tools == s.catalog.unknown_tools);
  CHECK(json.ends_with("\"unknown_tools\":{\"t\":2}}}"));
  std::string broken = json;
  broken.replace(broken.find("{\"t\":2}"), 7, "{\"t\":\"2\"}");
  CHECK_FALSE(CheckStats::from_json(broken, &back, &error));
  CHECK(error == "check stats: an unknown tool's calls are not a non-negative integer");
  broken = json;
  broken.replace(broken.find("{\"t\":2}"), 7, "[]");
  CHECK_FALSE(CheckStats::from_json(broken, &back, &error));
  CHECK(error == "check stats: \"catalog\" is not the catalog counters");
}
