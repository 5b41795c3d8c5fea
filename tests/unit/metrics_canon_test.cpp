// Canonical argument text: equal values give equal bytes, different values different bytes.
#include <doctest/doctest.h>

#include <string>

#include "json/canon.hpp"
#include "json/ondemand.hpp"

using trajcheck::json::ArgCanon;
using trajcheck::json::CanonArgs;

namespace {
std::string canon(const char* json) {
  ArgCanon c;
  CanonArgs a = c.add(json);
  return std::string(c.whole(a));
}
}  // namespace

TEST_CASE("canonical text sorts keys at every depth and prints numbers by value") {
  CHECK(canon(R"({"b":1,"a":{"d":[1,2.0,{"y":1,"x":2}],"c":null}})") ==
        R"({"a":{"c":null,"d":[1,2,{"x":2,"y":1}]},"b":1})");
  CHECK(canon(R"({"n":1.5e0})") == R"({"n":1.5})");
  CHECK(canon(R"({"n":-0.0})") == R"({"n":0})");
  CHECK(canon(R"({"n":1e20})") == canon(R"({"n":100000000000000000000.0})"));
  // Integers past 64 bits are beyond simdjson: such arguments compare as their raw text.
  CHECK(canon(R"({"n":100000000000000000000})") != canon(R"({"n":1e20})"));
  CHECK(canon(R"({"n":100000000000000000000})") == canon(R"({"n":100000000000000000000})"));
  CHECK(canon(R"({"s":"1"})") != canon(R"({"s":1})"));
  CHECK(canon(R"({"t":true})") != canon(R"({"t":1})"));
  CHECK(canon("") == "{}");
  CHECK(canon(" { } ") == "{}");
}

TEST_CASE("strings are re-escaped canonically") {
  CHECK(canon(R"({"s":"a\u0041\n\"\\"})") == R"({"s":"aA\n\"\\"})");
  CHECK(canon(R"({"s":"\u00e9"})") == canon("{\"s\":\"\xc3\xa9\"}"));
  CHECK(canon(R"({"s":"\u0001"})") == R"({"s":"\u0001"})");
}

TEST_CASE("duplicate keys: the last one wins") {
  CHECK(canon(R"({"a":1,"a":2})") == R"({"a":2})");
  CHECK(canon(R"({"x":{"a":1,"a":2}})") == R"({"x":{"a":2}})");
}

TEST_CASE("members are found by key; non-objects and bad JSON are opaque") {
  ArgCanon c;
  CanonArgs a = c.add(R"({"z":[1],"a":"x"})");
  std::string_view v;
  REQUIRE(c.find(a, "a", &v));
  CHECK(v == R"("x")");
  REQUIRE(c.find(a, "z", &v));
  CHECK(v == "[1]");
  CHECK_FALSE(c.find(a, "m", &v));
  CanonArgs arr = c.add("[2,1]");
  CHECK_FALSE(arr.object);
  CHECK(c.whole(arr) == "[2,1]");
  CanonArgs bad = c.add("{not json");
  CHECK_FALSE(bad.object);
  CanonArgs bad2 = c.add("{not json");
  CHECK(c.whole(bad) == c.whole(bad2));
  CHECK(c.whole(bad) != c.whole(c.add(R"("{not json")")));
  // Earlier slices stay valid after later additions.
  CHECK(c.whole(a) == R"({"a":"x","z":[1]})");
}

TEST_CASE("the shared string scan stops at the first quote or backslash, whatever its offset") {
  // Every position of the stop byte within and across eight-byte words, with bytes that
  // differ from the stop bytes by one (a SWAR borrow must not mark them).
  for (char stop : {'"', '\\'}) {
    for (std::size_t at = 0; at < 24; ++at) {
      std::string buf(at, '!');  // '!' is '"' - 1
      for (std::size_t i = 0; i < at; ++i)
        if (i % 3 == 1) buf[i] = ']';  // '\\' + 1
      buf += stop;
      buf += "\"\\\"";
      buf.append(16, ' ');  // padding: whole words are read
      INFO("stop " << stop << " at " << at);
      CHECK(trajcheck::swar::find_quote_or_backslash(buf.data()) == buf.data() + at);
      std::size_t len = trajcheck::json::unescaped_length(buf.data());
      CHECK(len == (stop == '"' ? at : std::string::npos));
    }
  }
}
