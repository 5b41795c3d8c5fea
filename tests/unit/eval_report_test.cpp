// The pieces of eval's reports shared by the text, markdown and html formats
// (eval/report_util.hpp): a group's dimension cells and the dimensions tables.
#include <doctest/doctest.h>

#include <string>

#include "eval/report_util.hpp"
#include "trajcheck/eval.hpp"

using namespace trajcheck;
using namespace trajcheck::eval;

TEST_CASE("dimension cells: cases, the six dimensions as shares, calls per success, critical violations") {
  Dimensions d;
  d.cases = 12;
  d.selection = 0.5;
  d.arguments = 1.0;
  d.order = 0.25;
  d.outcome = 0.125;
  d.efficiency.calls_per_success = 2.5;
  d.violations["error"] = 4;
  DimensionCells c = dimension_cells(d);
  CHECK(c[0] == "12");
  CHECK(c[1] == fmt_value(0.5, true));
  CHECK(c[2] == fmt_value(1.0, true));
  CHECK(c[3] == "n/a");  // argument validity: no catalog calls
  CHECK(c[4] == fmt_value(0.25, true));
  CHECK(c[5] == "n/a");  // recovery: nothing injected
  CHECK(c[6] == fmt_value(0.125, true));
  CHECK(c[7] == fmt_value(2.5, false));
  CHECK(c[8] == "0");  // only critical violations are counted
  d.violations["critical"] = 3;
  CHECK(dimension_cells(d)[8] == "3");
}

TEST_CASE("dimensions tables: overall, per segment only when there are segments, per split always") {
  EvalReport r;
  r.overall.cases = 2;
  std::vector<DimensionTable> t = dimension_tables(r);
  REQUIRE(t.size() == 2);
  CHECK(t[0].title == "dimensions");
  REQUIRE(t[0].rows.size() == 1);
  CHECK(t[0].rows[0].first == "overall");
  CHECK(t[0].rows[0].second == &r.overall);
  CHECK(t[1].title == "per split");
  CHECK(t[1].rows.empty());
  r.segments.push_back(GroupRow{"task_type", "refund", {}});
  r.splits.push_back(GroupRow{"split", "designed", {}});
  t = dimension_tables(r);
  REQUIRE(t.size() == 3);
  CHECK(t[1].title == "per segment");
  REQUIRE(t[1].rows.size() == 1);
  CHECK(t[1].rows[0].first == "task_type=refund");
  CHECK(t[1].rows[0].second == &r.segments[0].dims);
  CHECK(t[2].title == "per split");
  REQUIRE(t[2].rows.size() == 1);
  CHECK(t[2].rows[0].first == "designed");
  CHECK(t[2].rows[0].second == &r.splits[0].dims);
}
