// The canonical key of a call's arguments (`no duplicate`): the text built without a parse
// (append_flat_canonical) is byte for byte the text of the parse (append_canonical), and
// text that is not JSON never takes the path without a parse.
#include <doctest/doctest.h>

#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <simdjson.h>

#include "checker/step_eval.hpp"

using namespace trajcheck::detail;

namespace {

// The canonical text of the parse of `text` into `out`; false when `text` is not JSON.
bool full_canonical(std::string_view text, std::string* out) {
  static simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root)) return false;
  CanonicalMembers members;
  out->clear();
  append_canonical(*out, root, members);
  return true;
}

// Whether some member's value starts like a number ("a":1, "a":-2).
bool has_number_member(std::string_view text) {
  for (std::size_t at = text.find("\":"); at != std::string_view::npos; at = text.find("\":", at + 1)) {
    const char c = at + 2 < text.size() ? text[at + 2] : ' ';
    if (c == '-' || (c >= '0' && c <= '9')) return true;
  }
  return false;
}

struct Outcome {
  bool fast = false;
  bool json = false;
};

// Both paths on `text`; the fast one's text, when taken, must equal the parse's, and must
// leave what `out` held before it.
Outcome compare(std::string_view text) {
  Outcome o;
  std::string fast = "prefix|";
  o.fast = append_flat_canonical(fast, text);
  std::string full;
  o.json = full_canonical(text, &full);
  CAPTURE(text);
  if (!o.fast) {
    CHECK(fast == "prefix|");
  } else {
    CHECK(o.json);  // nothing but JSON takes the fast path
    CHECK(fast == "prefix|" + full);
  }
  return o;
}

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(std::uint64_t seed) : rng(seed) {}
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng() % n); }

  std::string name() {
    static const char* kNames[] = {"", "a", "b", "ab", "order_id", "amount", "reason", "B", "a b", "z9", "é", "a\\n"};
    return kNames[pick(std::size(kNames))];
  }
  std::string digits(std::size_t n) {
    std::string d;
    for (std::size_t i = 0; i < n; ++i) d += static_cast<char>('0' + pick(10));
    return d;
  }
  std::string integer() {
    std::string sign = pick(4) == 0 ? "-" : "";
    switch (pick(6)) {
      case 0: return sign + "0";
      case 1: return sign + std::to_string(1 + pick(9)) + digits(14);  // 15 digits: the largest taken
      case 2: return sign + std::to_string(1 + pick(9)) + digits(15 + pick(6));  // 16 to 21
      default: return sign + std::to_string(1 + pick(9)) + digits(pick(8));
    }
  }
  std::string number() {
    switch (pick(8)) {
      case 0: return integer() + "." + digits(1 + pick(3));
      case 1: return integer() + (pick(2) ? "e" : "E") + (pick(2) ? "-" : "") + digits(1 + pick(2));
      case 2: return "1.0";
      default: return integer();
    }
  }
  std::string string() {
    static const char* kStrings[] = {"", "x", "ord_81", "damaged item", "a \\\" quote", "tab\\t", "caf\xc3\xa9",
                                     "\\u0041", "slash\\/", "0123456789abcdefghijklmnop"};
    return std::string("\"") + kStrings[pick(std::size(kStrings))] + "\"";
  }
  std::string value(int depth) {
    const std::size_t k = pick(depth > 0 ? 10 : 7);
    if (k < 3) return string();
    if (k < 6) return number();
    if (k == 6) {
      static const char* kWords[] = {"true", "false", "null"};
      return kWords[pick(3)];
    }
    if (k == 7) {
      std::string a = "[";
      for (std::size_t i = 0, n = pick(4); i < n; ++i) a += (i ? "," : "") + value(depth - 1);
      return a + "]";
    }
    return object(depth - 1);
  }
  std::string object(int depth) {
    std::string o = pick(20) == 0 ? "{ " : "{";  // a blank: the parse's alone
    for (std::size_t i = 0, n = pick(7); i < n; ++i) o += (i ? "," : "") + ("\"" + name() + "\":") + value(depth);
    return o + "}";
  }
  // One byte of `s` changed, removed or doubled, or a leading zero put before a digit.
  std::string damage(std::string s) {
    if (s.empty()) return s;
    const std::size_t at = pick(s.size());
    switch (pick(4)) {
      case 0: s[at] = "0-.e\",:{}[] x"[pick(13)]; break;
      case 1: s.erase(at, 1); break;
      case 2: s.insert(at, 1, s[at]); break;
      default: {
        const std::size_t d = s.find_first_of("123456789", at);
        if (d != std::string::npos) s.insert(d, 1, '0');
      }
    }
    return s;
  }
};

}  // namespace

TEST_CASE("append_flat_canonical: the text of the parse, for integers at the edges of the fast path") {
  for (const char* text :
       {"{}", R"({"a":1})", R"({"a":0})", R"({"a":-0})", R"({"a":-7})", R"({"a":999999999999999})",
        R"({"a":-999999999999999})", R"({"a":1000000000000000})", R"({"a":18446744073709551616})",
        R"({"a":1.0})", R"({"a":1e3})", R"({"a":1.5})", R"({"b":2,"a":"x"})", R"({"a":1,"a":2})",
        R"({"amount":12,"order_id":"o1","reason":"damaged item"})",
        R"({"order_id":"o1","reason":"damaged item","amount":12})"})
    compare(text);
  // Taken without a parse: plain integers up to 15 digits, in any member order.
  CHECK(compare(R"({"a":1})").fast);
  CHECK(compare(R"({"a":0})").fast);
  CHECK(compare(R"({"a":-999999999999999})").fast);
  CHECK(compare(R"({"order_id":"o1","reason":"damaged item","amount":12})").fast);
  // Left to the parse: what append_number writes otherwise, a name twice, not JSON.
  for (const char* text : {R"({"a":-0})", R"({"a":1000000000000000})", R"({"a":1.0})", R"({"a":1e3})",
                           R"({"a":1,"a":2})", R"({"a":01})", R"({"a":-01})", R"({"a":1.})", R"({"a":+1})"})
    CHECK_MESSAGE(!compare(text).fast, text);
  std::string many = "{";
  for (int i = 0; i < 17; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(100 + i) + "\":" + std::to_string(i);
  CHECK(!compare(many + "}").fast);  // more members than the fast path sorts
}

TEST_CASE("append_flat_canonical: random argument objects give the parse's text, damaged ones are refused") {
  Gen g(20261206);
  int json = 0, fast = 0, fast_with_integer = 0, damaged_fast = 0, damaged_invalid = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string text = g.object(2);
    const Outcome o = compare(text);
    json += o.json;  // all but integers past 64 bits, which the parser refuses
    fast += o.fast;
    fast_with_integer += o.fast && has_number_member(text);
    const Outcome d = compare(g.damage(text));
    damaged_fast += d.fast;
    damaged_invalid += !d.json;
  }
  // The property is not vacuous: both paths and both kinds of member were seen.
  CHECK(json > 15000);
  CHECK(fast > 2000);
  CHECK(fast_with_integer > 300);
  CHECK(fast < 20000);
  CHECK(damaged_fast > 500);
  CHECK(damaged_invalid > 5000);
}
