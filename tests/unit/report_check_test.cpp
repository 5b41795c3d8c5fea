// Unit tests of the check report helpers (escaping, truncation, step descriptions).
#include <doctest/doctest.h>

#include <random>
#include <string>

#include <fmt/format.h>

#include "run/text.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/json_string.hpp"
#include "util/xml_escape.hpp"

using namespace trajcheck;
using trajcheck::detail::truncate_utf8;

TEST_CASE("json strings escape quotes, backslashes and control characters") {
  std::string out;
  // 13 bytes: the embedded NUL is part of the value.
  append_json_string(out, std::string_view("a\"b\\c\n\t\x01\x1f é\0", 13));
  CHECK(out == "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f é\\u0000\"");
}

TEST_CASE("xml escaping keeps markup out and drops forbidden control characters") {
  std::string out;
  append_xml_escaped(out, "<a href='x'>&\"\x02\n");
  CHECK(out == "&lt;a href=&apos;x&apos;&gt;&amp;&quot; \n");
}

TEST_CASE("truncate_utf8 never cuts a character in half") {
  CHECK(truncate_utf8("short", 10) == "short");
  CHECK(truncate_utf8("abcdef", 3) == "abc…");
  // "é" is two bytes (c3 a9): cutting after its first byte backs off before it.
  CHECK(truncate_utf8("abé", 3) == "ab…");
  CHECK(truncate_utf8("abé", 4) == "abé");
}

TEST_CASE("describe_step shows tool calls with arguments and messages on one line") {
  ToolTable tools;
  Trajectory t(&tools);
  Step& call = t.add_step(StepType::tool_call);
  call.tool_name = t.store("refund_order");
  call.tool = tools.intern("refund_order");
  call.arguments = t.store("{\"order_id\":\"ord_1\"}");
  call.status = StepStatus::error;
  Step& msg = t.add_step(StepType::user_message);
  msg.content = t.store("yes,\n  go \"ahead\"");
  CHECK(describe_step(t, 0) == "refund_order {\"order_id\":\"ord_1\"} -> error");
  CHECK(describe_step(t, 1) == "user_message \"yes, go \\\"ahead\\\"\"");
  CHECK(describe_step(t, 2) == "(end of trace)");
  CHECK(describe_step(t, 0, 5) == "refund_order {\"ord… -> error");
}

TEST_CASE("describe_step cuts long text at a character boundary after folding blanks") {
  ToolTable tools;
  Trajectory t(&tools);
  Step& msg = t.add_step(StepType::user_message);
  msg.content = t.store("  ab \n\t cd\xc3\xa9" "f  ");  // folds to "ab cdéf" (8 bytes)
  CHECK(describe_step(t, 0, 8) == "user_message \"ab cd\xc3\xa9" "f\"");
  CHECK(describe_step(t, 0, 7) == "user_message \"ab cd\xc3\xa9…\"");
  CHECK(describe_step(t, 0, 6) == "user_message \"ab cd…\"");  // é would be cut in half
  CHECK(describe_step(t, 0, 3) == "user_message \"ab …\"");    // the folded space counts
  std::string out = "x:";
  append_step(out, t, 0, 2);
  CHECK(out == "x:user_message \"ab…\"");
}

TEST_CASE("check formats by name") {
  CheckFormat f = CheckFormat::text;
  CHECK(parse_check_format("junit", &f));
  CHECK(f == CheckFormat::junit);
  CHECK(parse_check_format("markdown", &f));
  CHECK(f == CheckFormat::markdown);
  CHECK_FALSE(parse_check_format("yaml", &f));
  CHECK(f == CheckFormat::markdown);
}

namespace {
// Byte-at-a-time references of the report's text helpers, which scan eight bytes at a time.
std::string printable_reference(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) out += ch;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}
// Blanks trimmed and each run of them one space (no cut: `max` is never reached below).
std::string one_line_reference(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}
}  // namespace

TEST_CASE("printing and folding text agree with byte-at-a-time references at every offset") {
  std::mt19937 rng(31);
  // Blanks, other control bytes, DEL, the bytes either side of the SWAR thresholds, UTF-8.
  const std::string alphabet = std::string("  \n\t\r\x01\x1f\x7f!\"a\xc3\xa9\x80\xff", 16) + std::string(1, '\0');
  ToolTable tools;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const std::size_t n = rng() % 40;
    for (std::size_t k = 0; k < n; ++k)
      text += rng() % 3 ? 'x' : alphabet[rng() % alphabet.size()];
    CAPTURE(text);
    CHECK(detail::printable(text) == printable_reference(text));
    Trajectory t(&tools);
    Step& call = t.add_step(StepType::tool_call);
    call.tool_name = t.store("a");
    call.tool = tools.intern("a");
    call.arguments = t.store(text);
    const std::string folded = one_line_reference(text);
    CHECK(describe_step(t, 0, 1000) == (folded.empty() && text.empty() ? "a" : "a " + folded));
    // Cut anywhere, runs of words and single spaces included.
    const std::size_t max = rng() % 40;
    CAPTURE(max);
    CHECK(describe_step(t, 0, max) == (folded.empty() && text.empty() ? "a" : "a " + detail::truncate_utf8(folded, max)));
  }
}
