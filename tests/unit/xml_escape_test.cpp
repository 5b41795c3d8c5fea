// One XML/HTML escaper for every report: markup kept out, forbidden control characters
// replaced, so that no trace text makes a JUnit or HTML report invalid.
#include <doctest/doctest.h>

#include <algorithm>

#include "eval/eval.hpp"
#include "util/xml_escape.hpp"

using namespace trajcheck;

TEST_CASE("xml and html flavours differ only in the apostrophe") {
  CHECK(xml_escaped("<a href='x'>&\"\x02\n\t\r") == "&lt;a href=&apos;x&apos;&gt;&amp;&quot; \n\t\r");
  CHECK(xml_escaped("it's \x1f", /*html=*/true) == "it&#39;s  ");
  CHECK(xml_escaped("é ✓") == "é ✓");
}

TEST_CASE("eval's JUnit report stays valid XML when a case's text holds a control character") {
  eval::EvalReport r;
  r.suite_name = "s\x01uite";
  eval::CaseResult c;
  c.case_id = "case\x02" "1";
  c.status = eval::CaseStatus::judged;
  c.pass = false;
  c.problems.push_back("tool said \x1b[31mno\x1b[0m");
  r.cases.push_back(c);
  std::string xml = eval::report_junit(r);
  const bool has_control = std::any_of(xml.begin(), xml.end(), [](char ch) {
    auto u = static_cast<unsigned char>(ch);
    return u < 0x20 && u != '\n' && u != '\t' && u != '\r';
  });
  CHECK_FALSE(has_control);
  CHECK(xml.find("case 1") != std::string::npos);
}
