// Formatting helpers shared by the eval and compare reports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/eval.hpp"
#include "util/warnings_note.hpp"
#include "util/xml_escape.hpp"

namespace trajcheck::eval {

struct ReportCounts {
  std::size_t cases = 0, judged = 0, passed = 0, stale = 0, unmatched = 0;
  std::size_t gates_passed = 0, gates_failed = 0, gates_no_data = 0;
};
ReportCounts counts(const EvalReport& r);

// Calls per successful case -> number of cases.
std::map<std::uint32_t, std::uint32_t> calls_histogram(const Efficiency& e);
// "95.0%" for ratios, "3", "2.50", "0.0123" otherwise; "n/a" when absent.
std::string fmt_value(const std::optional<double>& v, bool ratio);
bool ratio_metric(std::string_view metric);
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
