// Formatting helpers shared by the eval and compare reports.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eval/eval.hpp"
#include "util/warnings_note.hpp"
#include "util/xml_escape.hpp"

namespace trajcheck::eval {

struct ReportCounts {
  // passed: judged cases whose every run passes; runs: judged runs, runs_passed of them pass.
  std::size_t cases = 0, judged = 0, passed = 0, stale = 0, unmatched = 0;
  std::size_t runs = 0, runs_passed = 0, flaky = 0;
  std::size_t gates_passed = 0, gates_failed = 0, gates_no_data = 0;
};
ReportCounts counts(const EvalReport& r);
// Why a case does not pass (its problems; with k runs, each failing run's, named "run 2: …").
std::string case_problems(const CaseResult& c);
// ", 9 runs (7 pass), k = 3" when some case has several runs; else empty.
std::string runs_note(const EvalReport& r, const ReportCounts& c);

// Calls per successful case -> number of cases.
std::map<std::uint32_t, std::uint32_t> calls_histogram(const Efficiency& e);
// "95.0%" for ratios, "3", "2.50", "0.0123" otherwise; "n/a" when absent.
std::string fmt_value(const std::optional<double>& v, bool ratio);
bool ratio_metric(std::string_view metric);

// The cells of a group's row in the dimensions tables, after its name: cases, selection,
// arguments, argument validity, order, recovery, outcome, calls/success, critical violations.
using DimensionCells = std::array<std::string, 9>;
DimensionCells dimension_cells(const Dimensions& d);
// The dimensions tables of the text and markdown reports: "dimensions" (overall), "per segment"
// (when the suite has segments) and "per split", each row a name and its group's dimensions.
struct DimensionTable {
  std::string title;
  std::vector<std::pair<std::string, const Dimensions*>> rows;
};
std::vector<DimensionTable> dimension_tables(const EvalReport& r);
// HTML text and attribute values (util/xml_escape.hpp in its HTML flavour).
inline std::string html_escape(std::string_view s) { return xml_escaped(s, /*html=*/true); }

// A titled table of text cells, rendered alike by the text, markdown and html reports.
struct Table {
  std::string id, title;  // id: the html element's, `recovery-by-class`
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};
// The recovery tables (per error class, per tool), the error classes outside the catalog's
// vocabulary and the injections no run met; none when the report does not show recovery.
std::vector<Table> recovery_tables(const EvalReport& r);
// One row per grader overall and per split (each grader its own dimension), and the cases a
// grader gave no answer for; none without graders.
std::vector<Table> grader_tables(const EvalReport& r);
// For cases run k > 1 times: pass@k, pass^k and the pass rate overall, per segment and per
// split, and the flaky cases (some runs pass, some fail); none when every case has one run.
std::vector<Table> runs_tables(const EvalReport& r);
// Each judged run whose tools differ from the expected ones: the missing, extra and
// misordered tools; none when every run called what its case expects.
std::vector<Table> tools_tables(const EvalReport& r);
// "missing refund_order; extra order_search_by_email; misordered order_get, refund_order".
std::string tools_difference(const CaseResult& c);
std::string table_text(const Table& t);
std::string table_markdown(const Table& t);
std::string table_html(const Table& t);

}  // namespace trajcheck::eval

namespace trajcheck::eval {

// One row of a compare chart: a label, the delta B - A and its confidence interval.
struct DeltaRow {
  std::string label;
  std::optional<double> delta, lo, hi;
};

// Inline SVG charts drawn by our own code (no scripts, no external resources).
std::string svg_deltas(const std::vector<DeltaRow>& rows, const std::string& title);
// A whole self-contained HTML page around `body` (inline CSS, no network).
std::string html_page(const std::string& title, const std::string& body);

}  // namespace trajcheck::eval
