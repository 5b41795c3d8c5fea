// The reports of `trajcheck test`: text for people, one JSON document, JUnit XML.
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/rule_tests.hpp"
#include "util/xml_escape.hpp"

namespace trajcheck {
namespace {

std::string steps_text(const std::vector<std::uint32_t>& steps) {
  std::string out;
  for (std::uint32_t s : steps) out += fmt::format("{}#{}", out.empty() ? "" : " ", s);
  return out;
}

std::string expected_text(const RuleCheck& c) {
  std::string s(to_string(c.expected));
  if (c.expected_steps) s += " at " + steps_text(c.steps);
  return s;
}

std::string actual_text(const RuleCheck& c) {
  std::string s(to_string(c.actual));
  if (c.actual == VerdictStatus::violated) s += c.actual_steps.empty() ? " at the end of the trace" : " at " + steps_text(c.actual_steps);
  return s;
}

const std::string& step_of(const RuleTestCaseResult& r, std::uint32_t s) {
  static const std::string none;
  for (const StepText& t : r.steps)
    if (t.index == s) return t.text;
  return none;
}

// A failing case's details: per rule that did not match, expected vs actual and the steps.
std::string failure_text(const RuleTestCaseResult& r) {
  std::string out;
  for (const RuleCheck& c : r.checks) {
    if (c.passed) continue;
    out += fmt::format("  {}: expected {}{}, got {}  {}\n", c.rule, expected_text(c), c.from_others ? " (others: holds)" : "",
                       actual_text(c), c.location);
    if (c.expected_steps)
      for (std::uint32_t s : c.steps) out += fmt::format("    expected > #{} {}\n", s, step_of(r, s));
    if (c.actual == VerdictStatus::violated)
      for (std::uint32_t s : c.actual_steps) out += fmt::format("    actual   > #{} {}\n", s, step_of(r, s));
  }
  return out;
}

std::string transition_end(const std::string& atom, std::uint32_t position) {
  return position == 0 ? atom : fmt::format("{} `{}`", position, atom);
}

std::string rule_label(const RuleCoverage& rc) { return fmt::format("{} {}", rc.location, rc.name); }

void coverage_text(const RuleTestRun& run, std::string& out) {
  const CoverageSummary& s = run.summary;
  out += fmt::format("coverage: {:.1f}% ({} of {} items): rules violated {}/{}, held {}/{}", s.percent(), s.covered(), s.items(),
                     s.violated, s.rules, s.held, s.rules);
  if (s.statements) out += fmt::format(", statements {}/{}", s.statements_covered, s.statements);
  if (s.positions) out += fmt::format(", PATH positions {}/{}", s.positions_reached, s.positions);
  if (s.transitions) out += fmt::format(", PATH transitions {}/{}", s.transitions_taken, s.transitions);
  if (s.not_measured) out += fmt::format(", {} not measured", s.not_measured);
  out += '\n';
  for (const RuleCoverage& rc : run.rules) {
    if (!rc.tested) {
      out += fmt::format("  {}: no tests\n", rule_label(rc));
      continue;
    }
    if (!rc.violated) out += fmt::format("  {}: no passing case expects it violated\n", rule_label(rc));
    if (!rc.held) out += fmt::format("  {}: no passing case shows it satisfied (not vacuously)\n", rule_label(rc));
    const bool several = rc.statements.size() > 1;
    for (const StatementCoverage& sc : rc.statements) {
      if (several && !sc.measured) out += fmt::format("  {}: statement `{}` not measured (it binds nothing in a parametric rule)\n", rule_label(rc), sc.text);
      else if (several && !sc.violated) out += fmt::format("  {}: statement `{}` never violated on its own\n", rule_label(rc), sc.text);
      if (sc.is_expect && !sc.paths_measured)
        out += fmt::format("  {}: PATH of `{}` not measured (scoped or parametric rule)\n", rule_label(rc), sc.text);
      for (std::size_t q = 0; q < sc.positions.size(); ++q)
        if (!sc.positions[q].reached)
          out += fmt::format("  {}: PATH position {} `{}` never reached\n", rule_label(rc), q + 1, sc.positions[q].atom);
      for (const PathTransitionCoverage& t : sc.transitions)
        if (!t.taken) out += fmt::format("  {}: PATH transition {} -> {} never taken\n", rule_label(rc), transition_end(t.from, t.from_position), transition_end(t.to, t.to_position));
    }
  }
}

std::string report_text(const RuleTestRun& run, bool quiet) {
  std::string out;
  std::size_t files = 0;
  for (const RuleTestFileResult& f : run.files) {
    if (!f.ran) continue;
    ++files;
    for (const RuleTestCaseResult& c : f.cases) {
      if (c.passed) {
        if (!quiet) out += fmt::format("PASS {}: {}\n", f.file, c.name);
      } else {
        out += fmt::format("FAIL {}: {}\n", c.location, c.name);
        out += failure_text(c);
      }
    }
  }
  out += fmt::format("{} case{} in {} file{}: {} passed, {} failed", run.cases, run.cases == 1 ? "" : "s", files,
                     files == 1 ? "" : "s", run.passed, run.failed);
  if (!run.warnings.empty()) out += fmt::format(", {} warning{}", run.warnings.size(), run.warnings.size() == 1 ? "" : "s");
  out += '\n';
  if (run.coverage) coverage_text(run, out);
  return out;
}

nlohmann::ordered_json steps_json(const std::vector<std::uint32_t>& steps) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (std::uint32_t s : steps) a.push_back(s);
  return a;
}

std::string report_json(const RuleTestRun& run) {
  using J = nlohmann::ordered_json;
  J doc = J::object();
  J files = J::array();
  for (const RuleTestFileResult& f : run.files) {
    J jf = J::object();
    jf["file"] = f.file;
    jf["rules"] = f.rules;
    jf["ran"] = f.ran;
    J cases = J::array();
    for (const RuleTestCaseResult& c : f.cases) {
      J jc = J::object();
      jc["name"] = c.name;
      jc["location"] = c.location;
      jc["passed"] = c.passed;
      J checks = J::array();
      for (const RuleCheck& k : c.checks) {
        J jk = J::object();
        jk["rule"] = k.rule;
        jk["location"] = k.location;
        jk["expected"] = std::string(to_string(k.expected));
        if (k.expected_steps) jk["expected_steps"] = steps_json(k.steps);
        jk["actual"] = std::string(to_string(k.actual));
        if (k.actual == VerdictStatus::violated) jk["actual_steps"] = steps_json(k.actual_steps);
        if (k.from_others) jk["from_others"] = true;
        jk["passed"] = k.passed;
        checks.push_back(std::move(jk));
      }
      jc["checks"] = std::move(checks);
      if (!c.steps.empty()) {
        J steps = J::object();
        for (const StepText& s : c.steps) steps[std::to_string(s.index)] = s.text;
        jc["steps"] = std::move(steps);
      }
      cases.push_back(std::move(jc));
    }
    jf["cases"] = std::move(cases);
    files.push_back(std::move(jf));
  }
  doc["files"] = std::move(files);
  doc["summary"] = J{{"cases", run.cases}, {"passed", run.passed}, {"failed", run.failed}, {"errors", run.errors.size()}, {"warnings", run.warnings.size()}};
  if (run.coverage) {
    const CoverageSummary& s = run.summary;
    J cov = J::object();
    cov["percent"] = s.percent();
    cov["items"] = s.items();
    cov["covered"] = s.covered();
    cov["rules"] = s.rules;
    cov["rules_violated"] = s.violated;
    cov["rules_held"] = s.held;
    cov["statements"] = s.statements;
    cov["statements_covered"] = s.statements_covered;
    cov["path_positions"] = s.positions;
    cov["path_positions_reached"] = s.positions_reached;
    cov["path_transitions"] = s.transitions;
    cov["path_transitions_taken"] = s.transitions_taken;
    cov["not_measured"] = s.not_measured;
    J rules = J::array();
    for (const RuleCoverage& rc : run.rules) {
      J jr = J::object();
      jr["file"] = rc.file;
      jr["rule"] = rc.name;
      jr["location"] = rc.location;
      jr["tested"] = rc.tested;
      jr["violated"] = rc.violated;
      jr["held"] = rc.held;
      J sts = J::array();
      for (const StatementCoverage& sc : rc.statements) {
        J js = J::object();
        js["statement"] = sc.text;
        if (rc.statements.size() > 1) {
          if (sc.measured) js["violated"] = sc.violated;
          else js["violated"] = nullptr;
        }
        if (sc.is_expect) {
          if (!sc.paths_measured) {
            js["path_positions"] = nullptr;
          } else {
            J ps = J::array();
            for (const PathPositionCoverage& p : sc.positions) ps.push_back(J{{"atom", p.atom}, {"reached", p.reached}});
            js["path_positions"] = std::move(ps);
            J ts = J::array();
            for (const PathTransitionCoverage& t : sc.transitions)
              ts.push_back(J{{"from", t.from}, {"from_position", t.from_position}, {"to", t.to},
                             {"to_position", t.to_position}, {"taken", t.taken}});
            js["path_transitions"] = std::move(ts);
          }
        }
        sts.push_back(std::move(js));
      }
      jr["statements"] = std::move(sts);
      rules.push_back(std::move(jr));
    }
    cov["by_rule"] = std::move(rules);
    doc["coverage"] = std::move(cov);
  }
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string report_junit(const RuleTestRun& run) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"trajcheck test\" tests=\"{}\" failures=\"{}\">\n", run.cases, run.failed);
  for (const RuleTestFileResult& f : run.files) {
    std::size_t failures = 0;
    for (const RuleTestCaseResult& c : f.cases) failures += !c.passed;
    out += "  <testsuite name=\"";
    append_xml_escaped(out, f.file);
    out += fmt::format("\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", f.cases.size(), failures, f.ran ? 0 : 1);
    if (!f.ran) {
      out += "    <testcase name=\"(test file)\" classname=\"";
      append_xml_escaped(out, f.file);
      out += "\">\n      <error message=\"the test file or its rules have errors; no case was run\"/>\n    </testcase>\n";
    }
    for (const RuleTestCaseResult& c : f.cases) {
      out += "    <testcase name=\"";
      append_xml_escaped(out, c.name);
      out += "\" classname=\"";
      append_xml_escaped(out, f.file);
      if (c.passed) {
        out += "\"/>\n";
        continue;
      }
      out += "\">\n      <failure message=\"";
      std::size_t n = 0;
      for (const RuleCheck& k : c.checks) n += !k.passed;
      append_xml_escaped(out, fmt::format("{} rule{} did not reach the expected verdict", n, n == 1 ? "" : "s"));
      out += "\">";
      append_xml_escaped(out, c.location + "\n" + failure_text(c));
      out += "</failure>\n    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace

bool parse_rule_test_format(std::string_view name, RuleTestFormat* out) {
  if (name == "text") *out = RuleTestFormat::text;
  else if (name == "json") *out = RuleTestFormat::json;
  else if (name == "junit") *out = RuleTestFormat::junit;
  else return false;
  return true;
}

std::string format_rule_test_report(const RuleTestRun& run, RuleTestFormat format, bool quiet) {
  switch (format) {
    case RuleTestFormat::json: return report_json(run);
    case RuleTestFormat::junit: return report_junit(run);
    case RuleTestFormat::text: break;
  }
  return report_text(run, quiet);
}

}  // namespace trajcheck
