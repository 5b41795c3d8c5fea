// Regression cases from traces: what the trace did becomes what the case expects.
#include "trajcheck/eval.hpp"

#include <nlohmann/json.hpp>

#include "eval/eval_internal.hpp"
#include "language/parser.hpp"
#include "suite/suite.hpp"

namespace trajcheck::eval {

std::string case_from_trace(const Trajectory& trace, const CaseNewOptions& o) {
  nlohmann::ordered_json j;
  j["case_id"] = o.case_id;
  for (const auto& [k, v] : o.fields) j[k] = v;
  j["split"] = o.split;
  std::string input;
  for (const Step& s : trace.steps())
    if (s.type == StepType::user_message) {
      input = std::string(trace.text(s.content));
      break;
    }
  j["input"] = input;
  if (!o.catalog_version.empty()) j["catalog_version"] = o.catalog_version;
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  std::string path;
  for (const Step& s : trace.steps()) {
    if (s.type != StepType::tool_call) continue;
    std::string_view name = trace.tool_name(s);
    tools.push_back(std::string(name));
    if (!path.empty()) path += " -> ";
    // As `fmt` prints a tool name: bare only when it reads back as this exact name (a tool
    // called `any`, `approval` or `not` is quoted, or the PATH would mean something else).
    path += language::detail::quote_name_if_needed(name);
  }
  nlohmann::ordered_json expected;
  expected["tools"] = tools;
  if (!path.empty()) expected["path"] = path;
  std::vector<RuleResult> results;
  if (o.suite && o.suite->control_program) {
    Checker checker(o.suite->control_program);
    checker.check(trace, results);
  }
  static const suite::Suite empty;
  expected["control"] = classify_control(o.suite ? *o.suite : empty, results, trace);
  j["expected"] = expected;
  j["note"] = o.note;
  j["source"] = {{"trace_id", std::string(trace.trace_id())},
                 {"record", trace.origin.file + ":" + std::to_string(trace.origin.line)}};
  return j.dump() + "\n";
}

}  // namespace trajcheck::eval

namespace trajcheck::eval {

SuiteFile parse_suite_file(Source source) {
  suite::SuiteResult r = suite::parse_suite(std::move(source));
  SuiteFile f;
  f.source = std::move(r.source);
  f.diagnostics = std::move(r.diagnostics);
  if (r.ok()) f.suite = std::make_shared<const suite::Suite>(std::move(r.suite));
  return f;
}

}  // namespace trajcheck::eval
