// One run against one case: rules (suite and case), control flow, selection/order/arguments
// through the metrics library, recovery, outcome and the run's efficiency figures.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::eval {

using nlohmann::json;

namespace {

// expected.tools as a PATH sequence; names quoted so none is read as a glob or keyword.
std::string tools_path(const std::vector<std::string>& tools) {
  std::string p;
  for (const auto& t : tools) {
    if (!p.empty()) p += " -> ";
    p += '"';
    for (char c : t) {
      if (c == '"' || c == '\\') p += '\\';
      p += c;
    }
    p += '"';
  }
  return p;
}

std::optional<double> number_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_object()) {  // tokens: {"input": …, "output": …} or {"total": …}
    for (const char* k : {"total", "total_tokens"})
      if (it->contains(k) && (*it)[k].is_number()) return (*it)[k].get<double>();
    double s = 0;
    bool any = false;
    for (const auto& [k, v] : it->items())
      if (v.is_number()) {
        s += v.get<double>();
        any = true;
      }
    if (any) return s;
  }
  return std::nullopt;
}

// A short class for a failed call's result: its code/type/error field, else its text.
std::string error_class(std::string_view result) {
  json r = json::parse(result, nullptr, false);
  std::string c;
  if (r.is_object()) {
    for (const char* k : {"error_class", "code", "error_type", "type", "error"}) {
      if (r.contains(k) && (r[k].is_string() || r[k].is_number())) {
        c = r[k].is_string() ? r[k].get<std::string>() : r[k].dump();
        break;
      }
    }
  } else if (r.is_string()) {
    c = r.get<std::string>();
  } else if (!r.is_discarded()) {
    c = r.dump();
  } else {
    c = std::string(result);
  }
  if (c.empty()) c = "error";
  if (c.size() > 40) c = c.substr(0, 40);
  return c;
}

}  // namespace

std::string classify_control(const suite::Suite& suite, const std::vector<RuleResult>& control_results,
                             const Trajectory& run) {
  const auto& steps = run.steps();
  std::size_t end = steps.size();
  while (end > 0 && steps[end - 1].type == StepType::user_message) --end;
  std::size_t begin = end;
  while (begin > 0 && steps[begin - 1].type != StepType::user_message) --begin;
  for (const char* name : {"handoff", "clarify", "refuse"}) {
    for (std::size_t i = 0; i < suite.controls.size() && i < control_results.size(); ++i) {
      if (suite.controls[i].name != name) continue;
      for (std::uint32_t s : control_results[i].steps)
        if (s >= begin && s < end) return name;
    }
  }
  for (const Step& s : steps)
    if (s.type == StepType::tool_call) return "act";
  return "answer";
}

CaseJudge::CaseJudge(const EvalContext& ctx) : ctx_(ctx), checkers_(ctx.programs.size()) {
  if (ctx.suite && ctx.suite->control_program) control_checker_ = std::make_unique<Checker>(ctx.suite->control_program);
}

void CaseJudge::judge(const CaseSpec& c, const Trajectory& run, const json& meta, const std::string& where,
                      CaseResult& out) {
  out = CaseResult{};
  out.status = "judged";
  out.run = where;
  const auto& steps = run.steps();

  // Rules: the suite's and the case's own.
  bool recovery_rules_hold = true, order_rules_hold = true, has_order_rules = false;
  auto check = [&](std::uint32_t p) {
    if (!checkers_[p]) checkers_[p] = std::make_unique<Checker>(ctx_.programs[p]);
    checkers_[p]->check(run, results_);
    const auto& infos = ctx_.programs[p]->rules();
    for (const RuleResult& rr : results_) {
      const RuleInfo& info = infos[rr.rule];
      bool recovery = std::find(info.tags.begin(), info.tags.end(), "recovery") != info.tags.end();
      bool order = std::find(info.tags.begin(), info.tags.end(), "order") != info.tags.end();
      has_order_rules |= order;
      if (rr.status != VerdictStatus::violated) continue;
      if (recovery) recovery_rules_hold = false;
      if (order) order_rules_hold = false;
      Violation v;
      v.rule = info.name;
      v.severity = std::string(to_string(info.severity));
      v.source = info.location;
      v.message = info.message;
      v.steps = rr.steps;
      out.violations.push_back(std::move(v));
    }
  };
  for (std::uint32_t p : ctx_.suite_programs) check(p);
  for (std::uint32_t p : c.programs) check(p);

  // Control flow.
  results_.clear();
  if (control_checker_) control_checker_->check(run, results_);
  out.control = classify_control(*ctx_.suite, results_, run);
  out.expected_control = c.control;

  // Efficiency figures and failures.
  std::unordered_map<std::string_view, std::size_t> last_failed;  // tool -> class index
  std::vector<std::string> classes;
  std::unordered_map<std::string, std::uint32_t> seen_calls;
  std::string_view prev_tool;
  std::uint32_t run_len = 0;
  canon_.clear();
  std::vector<trajcheck::json::CanonArgs> expected_args;
  for (const auto& [tool, args] : c.arguments) expected_args.push_back(canon_.add(args));
  double latency_sum = 0;
  bool latency_any = false;
  for (const Step& s : steps) {
    if (!s.extra.empty()) {
      json x = json::parse(run.text(s.extra), nullptr, false);
      if (x.is_object() && x.contains("latency_ms") && x["latency_ms"].is_number()) {
        latency_sum += x["latency_ms"].get<double>();
        latency_any = true;
      }
    }
    if (s.type != StepType::tool_call) continue;
    std::string_view tool = run.tool_name(s);
    ++out.calls;
    if (ctx_.write_tools.count(std::string(tool))) ++out.write_calls;
    run_len = tool == prev_tool ? run_len + 1 : 1;
    prev_tool = tool;
    out.loop_depth = std::max(out.loop_depth, run_len);
    auto lf = last_failed.find(tool);
    if (lf != last_failed.end()) {
      ++out.retries;
      ++out.retries_by_class[classes[lf->second]];
      out.retried = true;
      last_failed.erase(lf);
    }
    if (s.status == StepStatus::error) {
      out.failed_call = true;
      classes.push_back(error_class(run.text(s.result)));
      last_failed[tool] = classes.size() - 1;
    }
    // A duplicate repeats a call that succeeded; repeating a failed call is a retry.
    trajcheck::json::CanonArgs a = canon_.add(run.text(s.arguments));
    std::string key = std::string(tool) + '\0' + std::string(canon_.whole(a));
    auto seen = seen_calls.find(key);
    if (seen != seen_calls.end()) ++out.duplicates;
    else if (s.status != StepStatus::error) seen_calls.emplace(std::move(key), 1);
    // Arguments dimension: calls of tools that the case gives arguments for.
    for (std::size_t i = 0; i < c.arguments.size(); ++i) {
      if (c.arguments[i].first != tool) continue;
      ++out.arguments_total;
      bool match = true;
      const auto& members = canon_.members();
      for (std::uint32_t m = expected_args[i].members_begin; m < expected_args[i].members_end; ++m) {
        std::string_view v;
        if (!canon_.find(a, canon_.key(members[m]), &v) || v != canon_.value(members[m])) {
          match = false;
          break;
        }
      }
      if (match && ctx_.validate_arguments) {
        auto valid = ctx_.validate_arguments(tool, run.text(s.arguments));
        if (valid && !*valid) match = false;
      }
      if (match) ++out.arguments_matched;
      else out.problems.push_back(fmt::format("arguments of {} differ from expected", tool));
      break;
    }
  }
  out.tokens = number_of(meta, "tokens");
  out.cost = number_of(meta, "cost");
  out.latency_ms = number_of(meta, "latency_ms");
  if (!out.latency_ms && latency_any) out.latency_ms = latency_sum;

  // Selection and order.
  bool abstain = c.control == "answer" || c.control == "clarify" || c.control == "refuse";
  std::string expected = !c.path.empty() ? c.path : c.has_tools && !c.tools.empty() ? tools_path(c.tools) : "";
  if (!expected.empty()) {
    ScoreResult sr = scorer_.score(run, expected, c.origin);
    if (!sr.error.empty()) {
      out.problems.push_back("expected path: " + sr.error);
    } else {
      out.selection = sr.selection;
      out.order = sr.ordering;
      out.explanation = sr.explanation;
    }
  }
  if (abstain) {
    out.selection = out.calls == 0 ? 1.0 : 0.0;
    if (out.calls > 0) out.problems.push_back(fmt::format("expected {} without tool calls; {} call(s) made", c.control, out.calls));
  } else if (c.has_tools && c.tools.empty() && c.path.empty()) {
    out.selection = out.calls == 0 ? 1.0 : 0.0;
  }
  if (has_order_rules) {
    if (!order_rules_hold) out.order = 0.0;
    else if (!out.order) out.order = 1.0;
  }

  // Control and recovery.
  if (out.control == "act" && out.retried) out.control = "retry";
  bool control_ok = c.control.empty() || out.control == c.control || (c.control == "act" && out.control == "retry");
  if (!control_ok) out.problems.push_back(fmt::format("control flow {}, expected {}", out.control, c.control));
  if (out.failed_call) out.recovery = recovery_rules_hold && control_ok;

  // Outcome: success/reward if the run has it, else expected.output.
  if (meta.contains("success") && meta["success"].is_boolean()) {
    out.outcome = meta["success"].get<bool>();
  } else if (meta.contains("reward") && meta["reward"].is_number()) {
    out.outcome = meta["reward"].get<double>() >= 1.0;
  } else if (!c.output.empty()) {
    json exp = json::parse(c.output, nullptr, false);
    const json* actual = meta.contains("output") ? &meta["output"] : nullptr;
    bool good = actual && actual->is_object();
    if (good && exp.is_object()) {
      for (const auto& [k, v] : exp.items()) {
        if (k == "required" && v.is_array()) {
          for (const auto& f : v)
            if (!f.is_string() || !actual->contains(f.get<std::string>())) good = false;
        } else if (!actual->contains(k) || (*actual)[k] != v) {
          good = false;
        }
      }
    }
    out.outcome = good;
  }
  if (out.outcome && !*out.outcome) out.problems.push_back("outcome: not successful");

  for (const auto& v : out.violations)
    if (v.severity == "critical" || v.severity == "error")
      out.problems.push_back(fmt::format("[{}] {} violated", v.severity, v.rule));
  // A case passes when nothing is wrong with it (docs/eval.md): every problem above counts.
  out.pass = out.problems.empty();
}

}  // namespace trajcheck::eval
