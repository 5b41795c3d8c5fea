#include <doctest/doctest.h>

#include "trajcheck/diagnostic.hpp"

using namespace trajcheck;

TEST_CASE("line and column are 1-based bytes") {
  Source s("f.rules", "ab\n\tcé d\r\nlast");
  CHECK(s.line_count() == 3);
  CHECK(s.line_col(0).line == 1);
  CHECK(s.line_col(3).line == 2);
  CHECK(s.line_col(3).column == 1);
  CHECK(s.line_col(7).column == 5);  // \t c é(2 bytes) -> 'space' at byte 7 is column 5
  CHECK(s.line_text(2) == "\tcé d");
  CHECK(s.line_text(3) == "last");
  CHECK(s.line_text(4).empty());
}

TEST_CASE("a diagnostic renders like a compiler's, caret under the span, tabs kept") {
  Source s("rules/r.rules", "forbid x\n\tafter lokup: forbid y\n");
  Diagnostic d;
  d.code = "E012";
  d.message = "unknown group 'lokup'";
  d.range = {16, 21};
  CHECK(format_diagnostic(s, d) ==
        "rules/r.rules:2:8: error[E012]: unknown group 'lokup'\n"
        " 2 | \tafter lokup: forbid y\n"
        "   | \t      ^~~~~\n");
}

TEST_CASE("diagnostics sort by position and errors are detected") {
  std::vector<Diagnostic> v(3);
  v[0].range = {9, 9};
  v[0].severity = Severity::warning;
  v[1].range = {2, 3};
  v[1].severity = Severity::warning;
  v[2].range = {5, 6};
  sort_diagnostics(v);
  CHECK(v[0].range.begin == 2);
  CHECK(v[2].range.begin == 9);
  CHECK(has_errors(v));
  v.erase(v.begin() + 1);
  CHECK_FALSE(has_errors(v));
}
