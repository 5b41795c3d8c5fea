// The test helpers of trajcheck/testing.hpp: traces built as native records and read by the
// library's own reader, rules compiled once per process, checks explained as `check` prints them.
#include "trajcheck/testing.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "trajcheck/report.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::testing {

namespace {

std::string json_string(std::string_view text, std::string_view what) {
  try {
    return nlohmann::json(std::string(text)).dump();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string(what) + ": text is not valid UTF-8");
  }
}

std::string checked_json(std::string_view json, std::string_view what) {
  if (!nlohmann::json::accept(json))
    throw std::invalid_argument(std::string(what) + ": not one JSON value: " + std::string(json));
  return std::string(json);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Traces

Trace::Trace() : tools_(std::make_unique<ToolTable>()), trajectory_(std::make_unique<Trajectory>(tools_.get())) {}
Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;
Trace::~Trace() = default;

Trace read_trace(std::string_view json, const NormalizeOptions& options) {
  TraceParser parser(options);
  if (!parser.option_error().empty()) throw std::invalid_argument(parser.option_error());
  Trace t;
  t.record_ = std::string(json);
  ParseOutcome o = parser.parse_value(json, RecordOrigin{"<trace>", 1, 1, 0}, *t.trajectory_);
  if (!o.ok()) {
    std::string message;
    for (const RecordError& e : o.errors) message += format_record_error(e);
    if (!message.empty() && message.back() == '\n') message.pop_back();
    throw std::invalid_argument(message);
  }
  return t;
}

void TraceBuilder::PendingStep::put(std::string_view key, std::string json) {
  for (auto& [k, v] : fields)
    if (k == key) {
      v = std::move(json);
      return;
    }
  fields.emplace_back(std::string(key), std::move(json));
}

TraceBuilder::PendingStep& TraceBuilder::last(std::string_view what) {
  if (steps_.empty()) throw std::invalid_argument(std::string(what) + ": the trace has no step yet");
  return steps_.back();
}

TraceBuilder& TraceBuilder::id(std::string_view trace_id) {
  trace_id_ = std::string(trace_id);
  return *this;
}

TraceBuilder& TraceBuilder::context(std::string_view json) {
  context_ = checked_json(json, "context");
  return *this;
}

TraceBuilder& TraceBuilder::message(std::string_view type, std::string_view text) {
  PendingStep s;
  s.put("type", json_string(type, "type"));
  s.put("content", json_string(text, type));
  steps_.push_back(std::move(s));
  return *this;
}

TraceBuilder& TraceBuilder::user(std::string_view text) { return message("user_message", text); }
TraceBuilder& TraceBuilder::assistant(std::string_view text) { return message("assistant_message", text); }
TraceBuilder& TraceBuilder::system(std::string_view text) { return message("system_message", text); }
TraceBuilder& TraceBuilder::final_answer(std::string_view text) { return message("final_answer", text); }

TraceBuilder& TraceBuilder::call(std::string_view tool, std::string_view arguments_json) {
  PendingStep s;
  s.put("type", "\"tool_call\"");
  s.put("tool", json_string(tool, "call"));
  if (!arguments_json.empty())
    s.put("arguments", checked_json(arguments_json, "call " + std::string(tool) + " arguments"));
  steps_.push_back(std::move(s));
  return *this;
}

TraceBuilder& TraceBuilder::result(std::string_view json) {
  last("result").put("result", checked_json(json, "result"));
  return *this;
}

TraceBuilder& TraceBuilder::result_text(std::string_view text) {
  last("result_text").put("result", json_string(text, "result_text"));
  return *this;
}

TraceBuilder& TraceBuilder::fails(std::string_view message) {
  PendingStep& s = last("fails");
  s.put("status", "\"error\"");
  if (!message.empty()) s.put("result", json_string(message, "fails"));
  return *this;
}

TraceBuilder& TraceBuilder::approval_request(std::string_view tool_call_id) {
  PendingStep s;
  s.put("type", "\"approval_request\"");
  if (!tool_call_id.empty()) s.put("tool_call_id", json_string(tool_call_id, "approval_request"));
  steps_.push_back(std::move(s));
  return *this;
}

TraceBuilder& TraceBuilder::approval(std::string_view decision, std::string_view tool_call_id) {
  PendingStep s;
  s.put("type", "\"approval\"");
  s.put("decision", json_string(decision, "approval"));
  if (!tool_call_id.empty()) s.put("tool_call_id", json_string(tool_call_id, "approval"));
  steps_.push_back(std::move(s));
  return *this;
}

TraceBuilder& TraceBuilder::set(std::string_view key, std::string_view json) {
  last("set").put(key, checked_json(json, "set " + std::string(key)));
  return *this;
}

TraceBuilder& TraceBuilder::step(std::string_view json) {
  nlohmann::ordered_json v = nlohmann::ordered_json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!v.is_object()) throw std::invalid_argument("step: not a JSON object: " + std::string(json));
  // Member by member, in the order written.
  PendingStep s;
  for (auto it = v.begin(); it != v.end(); ++it) s.put(it.key(), it.value().dump());
  steps_.push_back(std::move(s));
  return *this;
}

std::string TraceBuilder::json() const {
  std::string out = "{\"trace_id\":" + json_string(trace_id_, "id");
  if (!context_.empty()) out += ",\"context\":" + context_;
  out += ",\"steps\":[";
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (i) out += ',';
    out += '{';
    for (std::size_t f = 0; f < steps_[i].fields.size(); ++f) {
      if (f) out += ',';
      out += json_string(steps_[i].fields[f].first, "key");
      out += ':';
      out += steps_[i].fields[f].second;
    }
    out += '}';
  }
  out += "]}";
  return out;
}

Trace TraceBuilder::build(const NormalizeOptions& options) const { return read_trace(json(), options); }

// ---------------------------------------------------------------------------------------
// Rules

namespace {

std::vector<Diagnostic> all_diagnostics(const RuleSetResult& r) {
  std::vector<Diagnostic> diags;
  for (const RuleFile& f : r.files) diags.insert(diags.end(), f.diagnostics.begin(), f.diagnostics.end());
  return diags;
}

Rules compile_or_throw(std::vector<Source> sources, const CompileOptions& options) {
  RuleSetResult r = compile_rule_set(std::move(sources), options);
  if (!r.ok()) throw RulesError(r.format_diagnostics(/*color=*/false, /*warnings=*/true), all_diagnostics(r));
  return Rules(std::move(r.rules));
}

const Rules& cached(const std::string& key, const std::function<Rules()>& make) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Rules>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, std::make_unique<Rules>(make())).first;
  return *it->second;
}

}  // namespace

const Rules& Rules::file(const std::string& path) {
  return cached("file\n" + path, [&] {
    std::string error;
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) throw RulesError(error, {});
    std::vector<Source> sources;
    sources.push_back(std::move(*src));
    return compile_or_throw(std::move(sources), {});
  });
}

const Rules& Rules::text(const std::string& text, const std::string& name) {
  return cached("text\n" + name + '\n' + text, [&] {
    std::vector<Source> sources;
    sources.emplace_back(name, text);
    return compile_or_throw(std::move(sources), {});
  });
}

const Rules& Rules::files(const std::vector<std::string>& paths) {
  std::string key = "files";
  for (const std::string& p : paths) key += '\n' + p;
  return cached(key, [&] {
    RuleSetResult r = compile_rule_set(paths);
    if (!r.ok()) throw RulesError(r.format_diagnostics(false, true), all_diagnostics(r));
    return Rules(std::move(r.rules));
  });
}

Rules Rules::compile(Source source, const CompileOptions& options) {
  std::vector<Source> sources;
  sources.push_back(std::move(source));
  return compile_or_throw(std::move(sources), options);
}

int Rules::find(std::string_view name) const {
  const auto& rules = rules_->rules();
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (rules[i].info->name == name) return static_cast<int>(i);
  return -1;
}

// ---------------------------------------------------------------------------------------
// Checks

namespace {

std::string trace_text(const Rules& rules, const Trajectory& trace, const TraceVerdict& v, FailOn fail_on) {
  CheckReportOptions o;
  o.format = CheckFormat::text;
  o.fail_on = fail_on;
  CheckReport report(rules.rule_set(), o);
  std::string out;
  report.trace(trace, v, out);
  return out;
}

std::string list_steps(const Trajectory& trace) {
  std::string out;
  for (std::uint32_t i = 0; i < trace.steps().size(); ++i)
    out += "    #" + std::to_string(i) + ' ' + describe_step(trace, i) + '\n';
  if (trace.steps().empty()) out += "    (no steps)\n";
  return out;
}

}  // namespace

CheckOutcome satisfies(const Rules& rules, const Trajectory& trace, RuleSeverity fail_on) {
  FailOn f{false, fail_on};
  RuleSetChecker checker(rules.rule_set(), f);
  const TraceVerdict& v = checker.check(trace);
  CheckOutcome out;
  out.results = v.results;
  out.ok = !v.failed;
  if (!out.ok) out.explanation = trace_text(rules, trace, v, f);
  return out;
}

CheckOutcome violates(const Rules& rules, const Trajectory& trace, std::string_view rule) {
  CheckOutcome out;
  int id = rules.find(rule);
  if (id < 0) {
    out.explanation = "the rules have no rule named '" + std::string(rule) + "'; they have:\n";
    for (const auto& r : rules.rule_set()->rules()) out.explanation += "    " + r.info->name + '\n';
    return out;
  }
  FailOn f;
  RuleSetChecker checker(rules.rule_set(), f);
  const TraceVerdict& v = checker.check(trace);
  out.results = v.results;
  VerdictStatus status = VerdictStatus::vacuous;
  for (const RuleResult& r : v.results)
    if (r.rule == static_cast<std::uint32_t>(id)) {
      if (r.status == VerdictStatus::violated) out.ok = true;
      else if (status != VerdictStatus::satisfied) status = r.status;
    }
  if (out.ok) return out;
  out.explanation = "rule '" + std::string(rule) + "' is " + std::string(to_string(status)) + " on trace " +
                    std::string(trace.trace_id()) + " (" + std::to_string(trace.steps().size()) + " steps):\n" +
                    list_steps(trace);
  std::string others = trace_text(rules, trace, v, f);
  if (!others.empty()) out.explanation += "other rules it violates:\n" + others;
  return out;
}

std::string explain(const Rules& rules, const Trajectory& trace, RuleSeverity fail_on) {
  FailOn f{false, fail_on};
  RuleSetChecker checker(rules.rule_set(), f);
  return trace_text(rules, trace, checker.check(trace), f);
}

}  // namespace trajcheck::testing
