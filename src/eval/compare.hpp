// `trajcheck compare A.json B.json`: two eval reports side by side, per dimension and
// segment, with paired-bootstrap confidence intervals over the cases both runs answered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trajcheck::eval {

struct CompareOptions {
  std::uint64_t seed = 1;     // the bootstrap is reproducible for a given seed
  unsigned resamples = 2000;
  double confidence = 0.95;
};

struct CompareRow {
  std::string dimension;      // selection, arguments, order, recovery, outcome
  std::string group;          // "overall", "task_type=refund", "split=designed"
  std::optional<double> a, b, delta;  // each report's own value; delta = b - a
  std::optional<double> lo, hi;       // bootstrap CI of the paired delta
  std::size_t paired = 0;             // cases judged in both runs that count for the row
};

struct CompareReport {
  std::string a_name, b_name;
  std::vector<CompareRow> rows;
  std::vector<std::string> pass_to_fail, fail_to_pass;
  std::size_t paired_cases = 0;
  CompareOptions options;
};

// Parses both reports (`eval --format json`) and compares them; false with `error` set on
// bad input.
bool compare_reports(const std::string& a_name, const std::string& a_json, const std::string& b_name,
                     const std::string& b_json, const CompareOptions& options, CompareReport& out,
                     std::string& error);

std::string compare_text(const CompareReport& r);
std::string compare_json(const CompareReport& r);
std::string compare_markdown(const CompareReport& r);
std::string compare_html(const CompareReport& r);

}  // namespace trajcheck::eval
