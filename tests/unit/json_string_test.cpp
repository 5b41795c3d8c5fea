// append_json_string (eight bytes at a time) against a byte-at-a-time reference, with and
// without DEL escaped, the canonical-string scan against what append_json_string writes, and
// the scan of flat string objects.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trajcheck/json_string.hpp"
#include "json/text.hpp"

namespace {

std::string reference_escape(std::string_view s, bool escape_del = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (escape_del && c == 0x7f)) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
  return out + "\"";
}

struct Rng {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  std::uint64_t next() {
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// Strings mixing plain bytes with every kind of byte that needs escaping, at every offset
// of an eight-byte word.
std::string random_text(Rng& rng) {
  static constexpr char kSpecial[] = {'"', '\\', '\n', '\r', '\t', '\b', '\f', '\x01', '\x1f', '\x7f', '/'};
  // Mostly short; a quarter up to 200 bytes, across the 32-byte blocks of the vectorized scans.
  std::string s(rng.next() % (rng.next() % 4 == 0 ? 200 : 40), 'a');
  for (char& c : s) {
    std::uint64_t r = rng.next() % 10;
    if (r == 0) c = kSpecial[rng.next() % sizeof kSpecial];
    else if (r == 1) c = static_cast<char>(0x80 + rng.next() % 0x80);  // UTF-8 bytes stay as they are
    else c = static_cast<char>('a' + rng.next() % 26);
  }
  return s;
}

}  // namespace

TEST_CASE("append_json_string matches the byte-at-a-time reference") {
  Rng rng;
  for (int i = 0; i < 20000; ++i) {
    std::string s = random_text(rng);
    std::string out = "prefix";
    trajcheck::append_json_string(out, s);
    REQUIRE(out == "prefix" + reference_escape(s));
  }
  std::string out;
  trajcheck::append_json_string(out, std::string_view("\0", 1));
  CHECK(out == "\"\\u0000\"");
}

TEST_CASE("append_json_string with DEL escaped (the rule printer's strings)") {
  Rng rng;
  for (int i = 0; i < 20000; ++i) {
    std::string s = random_text(rng);
    std::string out;
    trajcheck::append_json_string(out, s, /*escape_del=*/true);
    REQUIRE(out == reference_escape(s, true));
  }
  std::string out;
  trajcheck::append_json_string(out, "a\x7f\x01" "b", true);
  CHECK(out == "\"a\\u007f\\u0001b\"");
  out.clear();
  trajcheck::append_json_string(out, "a\x7f\x01" "b");
  CHECK(out == "\"a\x7f\\u0001" "b\"");  // JSON writers keep DEL as it is
}

TEST_CASE("canonical_string_size: the size of what append_json_string writes, 0 for other escapes") {
  using trajcheck::json::canonical_string_size;
  Rng rng;
  for (int i = 0; i < 20000; ++i) {
    std::string s = random_text(rng);
    std::string lit;
    trajcheck::append_json_string(lit, s);
    // append_json_string writes \u00XX for the control characters without a short escape.
    bool has_u = std::any_of(s.begin(), s.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 && std::string_view("\b\f\n\r\t").find(c) == std::string_view::npos;
    });
    std::string buf = lit + ",\"next\"" + std::string(64, ' ');  // padded, as simdjson's input is
    CAPTURE(lit);
    CHECK(canonical_string_size(buf.data()) == (has_u ? 0 : lit.size()));
    // A value's raw token runs to the next structural character, blanks included.
    CHECK(canonical_string_size(std::string_view(buf.data(), lit.size())) == (has_u ? 0 : lit.size()));
    std::string spaced = lit + " \n" + std::string(64, ' ');
    CHECK(canonical_string_size(std::string_view(spaced.data(), lit.size() + 2)) == (has_u ? 0 : lit.size()));
  }
  auto size_of = [](std::string lit) {
    lit.append(64, ' ');
    return canonical_string_size(lit.data());
  };
  CHECK(size_of(R"("")") == 2);
  CHECK(size_of(R"("a\"b")") == 6);
  CHECK(size_of(R"("\\")") == 4);
  CHECK(size_of(R"("x\\"y")") == 5);  // the literal ends after the escaped backslash
  CHECK(size_of(R"("\u00e9")") == 0);  // decoded and re-escaped as é by the caller
  CHECK(size_of(R"("a\/b")") == 0);
  CHECK(size_of(R"("a\x")") == 0);  // invalid: the decoding path reports it
}

TEST_CASE("find_unescaped_control: the first control byte inside a string literal") {
  using trajcheck::json::find_unescaped_control;
  CHECK(find_unescaped_control("{\"a\": \"b\"}") == std::string_view::npos);
  CHECK(find_unescaped_control("{\n\t\"a\": 1}") == std::string_view::npos);  // blanks between tokens
  CHECK(find_unescaped_control("{\"a\": \"b\x01\"}") == 8);
  CHECK(find_unescaped_control("{\"a\\\"\x1f\": 1}") == 5);  // an escaped quote does not end it
  CHECK(find_unescaped_control("[\"\\\\\", \"\n\"]") == 8);    // an escaped backslash does not escape
}

TEST_CASE("scan_flat_object: objects of plain strings and integers, strings read eight bytes at a time") {
  using Members = std::vector<std::pair<std::string, std::string>>;
  auto scan = [](std::string_view s, Members* members) {
    members->clear();
    return trajcheck::json::scan_flat_object(s, [&](std::string_view k, std::string_view v, bool number) {
      members->emplace_back(std::string(k), number ? "#" + std::string(v) : std::string(v));
    });
  };
  Members m;
  CHECK(scan("{}", &m));
  CHECK(m.empty());
  CHECK(scan(R"({"a":"x","":"","order_id":"ord_81ks92 & co."})", &m));
  CHECK(m == Members{{"a", "x"}, {"", ""}, {"order_id", "ord_81ks92 & co."}});
  for (const char* no : {"", "{", "}", "[]", R"({"a":"x",})", R"({"a":"x"} )", R"( {"a":"x"})", R"({"a" :"x"})",
                         R"({"a":["x"]})", R"({"a":{"b":"x"}})", R"({"a":"x\"y"})", R"({"a":"x\ny"})",
                         "{\"a\":\"caf\xc3\xa9\"}", "{\"a\":\"x\ty\"}", R"({"a":"x")", R"({"a":"x"}})", R"({"a"})",
                         R"({"a":"x""b":"y"})", R"({"a":null})", R"({"a":true})", R"({"a":01})", R"({"a":-01})",
                         R"({"a":00})", R"({"a":-})", R"({"a":1.0})", R"({"a":1.})", R"({"a":1e3})", R"({"a":1E3})",
                         R"({"a":+1})", R"({"a":0x1})", R"({"a":1 })", R"({"a":1"b"})", R"({"a":1,})", R"({"a":})",
                         R"({"a":-1.5e-3})", R"({"a":12}3)"})
    CHECK_MESSAGE(!scan(no, &m), no);
  CHECK(scan(R"({"a":1,"b":"x","c":-0,"d":0,"e":-120,"f":123456789012345678901234567890})", &m));
  CHECK(m == Members{{"a", "#1"}, {"b", "x"}, {"c", "#-0"}, {"d", "#0"}, {"e", "#-120"},
                     {"f", "#123456789012345678901234567890"}});
  // A stop byte (the closing quote, or one that rejects) at every place of strings of 0 to 40
  // bytes, across the words the scan reads.
  for (std::size_t n = 0; n <= 40; ++n)
    for (std::size_t at = 0; at <= n; ++at) {
      std::string value(n, 'v');
      CAPTURE(n);
      CAPTURE(at);
      std::string ok = "{\"k\":\"" + value + "\"}";
      REQUIRE(scan(ok, &m));
      CHECK(m == Members{{"k", value}});
      if (at == n) continue;
      for (char bad : {'\\', '\x01', '\x80', '\xff'}) {
        std::string v = value;
        v[at] = bad;
        CHECK_FALSE(scan("{\"k\":\"" + v + "\",\"l\":\"w\"}", &m));
      }
      std::string v = value;
      v[at] = '"';  // ends the string early: what follows is not a member
      CHECK_FALSE(scan("{\"k\":\"" + v + "\"}", &m));
    }
}
