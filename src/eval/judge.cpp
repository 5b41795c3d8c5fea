// One run against one case: rules (suite and case), control flow, selection/order/arguments
// through the metrics library, recovery, outcome and the run's efficiency figures.
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"
#include "metrics/call_figures.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::eval {

using nlohmann::json;

namespace {

// score's options from the suite: `order min length N`, `overall weights S, O`.
ScoreOptions score_options(const suite::Suite* suite) {
  ScoreOptions o;
  if (suite == nullptr) return o;
  o.min_order_length = suite->order_min_length;
  o.selection_weight = suite->selection_weight;
  o.ordering_weight = suite->order_weight;
  return o;
}

// A JSON value for a problem line, cut to `max` bytes.
std::string shown(const json& v, std::size_t max = 40) {
  std::string t = v.dump();
  if (t.size() > max) t = t.substr(0, max - 3) + "...";
  return t;
}

// Why a run's `output` does not meet expected.output ({"required": [fields…], field: value…}):
// the missing fields and the ones whose value differs; empty when it meets it.
std::string output_mismatch(const json& expected, const json* actual) {
  if (actual == nullptr) return "the run has no \"output\" object";
  if (!actual->is_object()) return "the run's \"output\" is not an object";
  if (!expected.is_object()) return "";
  std::vector<std::string> missing, differ;
  for (const auto& [k, v] : expected.items()) {
    if (k == "required" && v.is_array()) {
      for (const auto& f : v)
        if (!f.is_string() || !actual->contains(f.get<std::string>())) missing.push_back(f.is_string() ? f.get<std::string>() : f.dump());
    } else if (!actual->contains(k)) {
      missing.push_back(k);
    } else if ((*actual)[k] != v) {
      differ.push_back(fmt::format("{} expected {}, got {}", k, shown(v), shown((*actual)[k])));
    }
  }
  std::string why;
  if (!missing.empty()) why = "missing " + fmt::format("{}", fmt::join(missing, ", "));
  if (!differ.empty()) why += (why.empty() ? "" : "; ") + fmt::format("{}", fmt::join(differ, "; "));
  return why;
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

// The tokens one usage object reports: its total (OpenAI `total_tokens`, Gemini
// `totalTokenCount`) when it gives one, else the sum of its input and output counts — OpenAI
// chat's `prompt_tokens` / `completion_tokens`, the Responses API's, Anthropic's and LangChain's
// `input_tokens` / `output_tokens` (with Anthropic's `cache_creation_input_tokens` and
// `cache_read_input_tokens`, which its `input_tokens` leaves out), Gemini's counts.
std::optional<double> usage_total(const json& u) {
  if (!u.is_object()) return std::nullopt;
  for (const char* k : {"total_tokens", "totalTokenCount"})
    if (u.contains(k) && u[k].is_number()) return u[k].get<double>();
  double sum = 0;
  bool any = false;
  for (const char* k : {"input_tokens", "prompt_tokens", "output_tokens", "completion_tokens", "cache_creation_input_tokens",
                        "cache_read_input_tokens", "promptTokenCount", "candidatesTokenCount"})
    if (u.contains(k) && u[k].is_number()) {
      sum += u[k].get<double>();
      any = true;
    }
  if (!any) return std::nullopt;
  return sum;
}

// The run's tokens when its metadata gives no `tokens`: the usage the run reports as a whole
// (metadata `usage` / `usageMetadata`, a Responses or Gemini response record), else the sum of
// the usage of its messages (a step's `usage` or LangChain's `usage_metadata`), counted once per
// message (`message_id`: Claude Code writes one line per content block of a response, each with
// the response's usage). Empty when nothing reports usage.
std::optional<double> usage_tokens(const Trajectory& run, const json& meta) {
  for (const char* k : {"usage", "usageMetadata"})
    if (meta.contains(k))
      if (auto t = usage_total(meta[k])) return t;
  double sum = 0;
  bool any = false;
  std::unordered_set<std::string> messages;
  for (const Step& s : run.steps()) {
    std::string_view extra = run.text(s.extra);
    if (extra.find("usage") == std::string_view::npos) continue;
    json x = json::parse(extra, nullptr, false);
    if (!x.is_object()) continue;
    std::optional<double> t;
    for (const char* k : {"usage", "usage_metadata"})
      if (!t && x.contains(k)) t = usage_total(x[k]);
    if (!t) continue;
    if (x.contains("message_id") && x["message_id"].is_string() && !messages.insert(x["message_id"].get<std::string>()).second)
      continue;
    sum += *t;
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
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

// The argument naming one operation across attempts: the catalog's `operation_key` of the
// tool, else the first of these present in the failed attempt's arguments.
constexpr const char* kOperationKeys[] = {"idempotency_key", "operation_key", "operation_id", "request_id"};

json arguments_of(std::string_view text) {
  json j = text.empty() ? json::object() : json::parse(text, nullptr, false);
  return j.is_object() ? j : json::object();
}

}  // namespace

// Injected failures (docs/eval.md): each is observed when the attempt-th call of its tool failed
// with its class; an observed one is judged on its recovery — retry only a retryable class,
// keep the operation key across attempts, never repeat an uncertain write without it, hand
// off where the case expects it. Also fills the run's failure events and the error classes
// outside the catalog's vocabulary. False when some injection was not observed (the case is
// then not judged on recovery).
bool CaseJudge::judge_injections(const CaseSpec& c, const std::vector<Call>& calls, CaseResult& out) {
  const Catalog* catalog = ctx_.catalog.get();
  auto vocabulary = [&](std::string_view tool, const std::string& cls) -> const ToolErrorClass* {
    const CatalogTool* t = catalog ? catalog->find(tool) : nullptr;
    if (t == nullptr) return nullptr;
    for (const ToolErrorClass& e : t->errors)
      if (e.name == cls) return &e;
    return nullptr;
  };
  std::vector<int> injected_at(calls.size(), -1);  // call -> index of its observed injection
  bool all_observed = true;
  for (const Injection& in : c.inject) {
    InjectionResult r;
    r.tool = in.tool;
    r.error_class = in.cls;
    r.attempt = in.attempt;
    const ToolErrorClass* v = vocabulary(in.tool, in.cls);
    r.retryable = in.retryable.value_or(v != nullptr && v->retryable);
    r.uncertain = in.uncertain.value_or(v != nullptr ? v->uncertain : in.cls == "timeout");
    std::size_t at = calls.size(), next = calls.size();
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].tool != in.tool) continue;
      ++n;
      if (n == in.attempt) at = i;
      else if (n == in.attempt + 1) next = i;
    }
    if (at == calls.size()) {
      r.problems.push_back(n == 0 ? fmt::format("the run never called {}", in.tool)
                                  : fmt::format("the run called {} {} time{}", in.tool, n, n == 1 ? "" : "s"));
    } else if (!calls[at].failed) {
      r.problems.push_back(fmt::format("call {} of {} did not fail", in.attempt, in.tool));
    } else if (calls[at].cls != in.cls) {
      r.problems.push_back(fmt::format("call {} of {} failed with {}, not {}", in.attempt, in.tool, calls[at].cls, in.cls));
    } else {
      r.observed = true;
      injected_at[at] = static_cast<int>(out.injections.size());
    }
    if (!r.observed) {
      all_observed = false;
      out.injections.push_back(std::move(r));
      continue;
    }
    const bool retried = next < calls.size();
    const bool handed_off = out.control == "handoff";
    if (retried && !r.retryable)
      r.problems.push_back(fmt::format("retried {} after {}, which is not retryable", in.tool, in.cls));
    if (!retried && r.retryable && !handed_off && c.control != "refuse" && c.control != "answer")
      r.problems.push_back(fmt::format("gave up on {} after {}, which is retryable, without a hand-off", in.tool, in.cls));
    if (retried) {
      json before = arguments_of(calls[at].arguments), after = arguments_of(calls[next].arguments);
      std::string key;
      const CatalogTool* t = catalog ? catalog->find(in.tool) : nullptr;
      if (t != nullptr && !t->operation_key.empty()) key = t->operation_key;
      for (const char* k : kOperationKeys)
        if (key.empty() && before.contains(k)) key = k;
      bool stable = !key.empty() && before.contains(key) && after.contains(key) && before[key] == after[key];
      if (!key.empty() && before.contains(key) && !stable)
        r.problems.push_back(fmt::format("operation key {} of {} changed across attempts {} and {}", key, in.tool,
                                         in.attempt, in.attempt + 1));
      else if (r.uncertain && ctx_.write_tools.count(in.tool) && !stable)
        r.problems.push_back(fmt::format("possible duplicate side effect: {} repeated after an uncertain {} without "
                                         "an operation key",
                                         in.tool, in.cls));
    }
    if (c.control == "handoff" && !handed_off)
      r.problems.push_back(fmt::format("no hand-off after {} of {}", in.cls, in.tool));
    r.recovered = r.problems.empty();
    out.injections.push_back(std::move(r));
  }
  std::set<std::string> unknown;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (!calls[i].failed) continue;
    FailureEvent f;
    f.tool = std::string(calls[i].tool);
    f.error_class = calls[i].cls;
    if (injected_at[i] >= 0) {
      f.injected = true;
      f.recovered = out.injections[static_cast<std::size_t>(injected_at[i])].recovered;
    }
    const CatalogTool* t = catalog ? catalog->find(calls[i].tool) : nullptr;
    if (t != nullptr && !t->errors.empty() && vocabulary(calls[i].tool, calls[i].cls) == nullptr)
      unknown.insert(f.tool + ": " + f.error_class);
    out.failures.push_back(std::move(f));
  }
  out.unknown_errors.assign(unknown.begin(), unknown.end());
  for (const InjectionResult& r : out.injections)
    if (r.observed)
      for (const std::string& why : r.problems)
        if (why.rfind("no hand-off", 0) != 0) out.problems.push_back("recovery: " + why);  // control says that one
  return all_observed;
}

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

CaseJudge::CaseJudge(const EvalContext& ctx)
    : ctx_(ctx), checkers_(ctx.programs.size()), scorer_(score_options(ctx.suite)) {
  if (ctx.suite && ctx.suite->control_program) control_checker_ = std::make_unique<Checker>(ctx.suite->control_program);
}

void CaseJudge::judge(const CaseSpec& c, const Trajectory& run, const json& meta, const std::string& where,
                      CaseResult& out) {
  out = CaseResult{};
  out.status = CaseStatus::judged;
  out.run = where;
  const auto& steps = run.steps();

  // Rules: the suite's and the case's own.
  bool recovery_rules_hold = true, order_rules_hold = true, has_order_rules = false;
  std::vector<std::string> invariants_broken;
  auto check = [&](std::uint32_t p) {
    if (!checkers_[p]) checkers_[p] = std::make_unique<Checker>(ctx_.programs[p]);
    checkers_[p]->set_fixture(c.fixture ? std::string_view(*c.fixture) : std::string_view());
    checkers_[p]->check(run, results_);
    const auto& infos = ctx_.programs[p]->rules();
    for (const RuleResult& rr : results_) {
      const RuleInfo& info = infos[rr.rule];
      bool recovery = std::find(info.tags.begin(), info.tags.end(), "recovery") != info.tags.end();
      bool order = std::find(info.tags.begin(), info.tags.end(), "order") != info.tags.end();
      has_order_rules |= order;
      if (rr.status != VerdictStatus::violated) continue;
      if (std::find(c.invariants.begin(), c.invariants.end(), info.name) != c.invariants.end() &&
          std::find(invariants_broken.begin(), invariants_broken.end(), info.name) == invariants_broken.end())
        invariants_broken.push_back(info.name);
      if (recovery) recovery_rules_hold = false;
      if (order) order_rules_hold = false;
      Violation v;
      v.rule = info.name;
      v.severity = std::string(to_string(info.severity));
      v.tags = info.tags;
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
  std::vector<Call> calls;
  std::vector<std::string> classes;
  std::vector<std::string_view> call_tools;  // loop depth
  std::vector<std::pair<trajcheck::json::CanonArgs, bool>> call_args;  // duplicates: canonical arguments, failed
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
    call_tools.push_back(tool);
    auto lf = last_failed.find(tool);
    if (lf != last_failed.end()) {
      ++out.retries;
      ++out.retries_by_class[classes[lf->second]];
      out.retried = true;
      last_failed.erase(lf);
    }
    calls.push_back({tool, s.status == StepStatus::error, {}, run.text(s.arguments)});
    if (s.status == StepStatus::error) {
      out.failed_call = true;
      classes.push_back(error_class(run.text(s.result)));
      last_failed[tool] = classes.size() - 1;
      calls.back().cls = classes.back();
    }
    trajcheck::json::CanonArgs a = canon_.add(run.text(s.arguments));
    call_args.emplace_back(a, s.status == StepStatus::error);
    // Argument validity: every call of a tool the catalog gives a schema.
    std::optional<bool> valid;
    if (ctx_.validate_arguments) valid = ctx_.validate_arguments(tool, run.text(s.arguments));
    if (valid) {
      ++out.schema_calls;
      out.schema_valid += *valid;
    }
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
      if (match && valid && !*valid) match = false;
      if (match) ++out.arguments_matched;
      else out.problems.push_back(fmt::format("arguments of {} differ from expected", tool));
      break;
    }
  }
  // Duplicates and loop depth as score counts them (metrics/call_figures.hpp). The keys view
  // canon_'s text, complete only now.
  std::vector<trajcheck::metrics::CallKey> keys;
  keys.reserve(call_args.size());
  for (std::size_t k = 0; k < call_args.size(); ++k)
    keys.push_back({call_tools[k], canon_.whole(call_args[k].first), call_args[k].second});
  std::vector<std::uint32_t> order;
  out.duplicates = trajcheck::metrics::count_duplicates(keys, order);
  out.loop_depth = trajcheck::metrics::loop_depth(call_tools);
  out.tokens = number_of(meta, "tokens");
  if (!out.tokens) out.tokens = usage_tokens(run, meta);
  out.cost = number_of(meta, "cost");
  out.latency_ms = number_of(meta, "latency_ms");
  if (!out.latency_ms && latency_any) out.latency_ms = latency_sum;

  // Selection and order: score's numbers. expected.tools is scored as score scores an
  // expected tool list (calls of one assistant turn unordered), expected.path as a PATH.
  bool abstain = c.control == "answer" || c.control == "clarify" || c.control == "refuse";
  std::optional<ScoreResult> scored;
  if (!c.path.empty()) {
    scored = scorer_.score(run, c.path, c.origin);
  } else if (c.has_tools && !c.tools.empty()) {
    expected_.clear();
    for (const std::string& t : c.tools) {
      std::string name = normalize_tool_name(t);
      Step& st = expected_.add_step(StepType::tool_call);
      st.raw_tool = st.tool_name = expected_.store(name);
      st.tool = expected_tools_.intern(name);
    }
    scored = scorer_.score(run, expected_);
  }
  if (scored) {
    if (!scored->error.empty()) {
      out.problems.push_back("expected path: " + scored->error);
    } else {
      out.selection = scored->selection;
      out.order = scored->ordering;
      out.explanation = scored->explanation;
      out.missing_tools = scored->missing;
      out.extra_tools = scored->extra;
      out.misordered_tools = scored->misordered;
    }
  }
  if ((abstain || (c.has_tools && c.tools.empty() && c.path.empty())) && !scored) {
    // No tool expected: every tool called is extra (each name once, in call order).
    for (const Call& call : calls)
      if (std::find(out.extra_tools.begin(), out.extra_tools.end(), call.tool) == out.extra_tools.end())
        out.extra_tools.emplace_back(call.tool);
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
  if (out.selection) {  // score's overall of the case's selection and order (order null: selection)
    const ScoreOptions& so = scorer_.options();
    const double w = so.selection_weight + so.ordering_weight;
    out.overall = out.order && w > 0 ? (so.selection_weight * *out.selection + so.ordering_weight * *out.order) / w
                                     : *out.selection;
  }

  // Control and recovery.
  if (out.control == "act" && out.retried) out.control = "retry";
  bool control_ok = c.control.empty() || out.control == c.control || (c.control == "act" && out.control == "retry");
  if (!control_ok) out.problems.push_back(fmt::format("control flow {}, expected {}", out.control, c.control));
  // A case with an injection its run did not meet is not judged on recovery.
  const bool all_observed = judge_injections(c, calls, out);
  bool injections_recovered = true;
  for (const InjectionResult& r : out.injections) injections_recovered &= r.recovered;
  if (out.failed_call && all_observed) out.recovery = recovery_rules_hold && control_ok && injections_recovered;
  for (FailureEvent& f : out.failures) {
    if (!all_observed) f.recovered.reset();
    else if (f.injected) f.recovered = *f.recovered && recovery_rules_hold && control_ok;
    else f.recovered = out.recovery;
  }

  // Outcome: success/reward if the run has it, else expected.output; a failure says why.
  std::string why;
  if (meta.contains("success") && meta["success"].is_boolean()) {
    out.outcome = meta["success"].get<bool>();
    why = "the run reports success false";
  } else if (meta.contains("reward") && meta["reward"].is_number()) {
    out.outcome = meta["reward"].get<double>() >= 1.0;
    why = fmt::format("the run's reward {} is below 1", meta["reward"].dump());
  } else if (!c.output.empty()) {
    why = output_mismatch(json::parse(c.output, nullptr, false), meta.contains("output") ? &meta["output"] : nullptr);
    out.outcome = why.empty();
  }
  if (out.outcome && !*out.outcome) out.problems.push_back("outcome: " + why);

  retrieval(run, meta, out);

  for (const auto& v : out.violations)
    if (v.severity == "critical" || v.severity == "error")
      out.problems.push_back(fmt::format("[{}] {} violated", v.severity, v.rule));
  // An expected invariant is broken whatever its severity.
  for (const std::string& name : invariants_broken) out.problems.push_back(fmt::format("invariant {} violated", name));
  // A case passes when nothing is wrong with it (docs/eval.md): every problem above counts.
  out.pass = out.problems.empty();
}

// Retrieval volume (catalog `effect: read` calls): their result bytes, and the calls none of
// whose result values (non-empty strings, numbers) is used later — equal to a scalar of a later
// call's arguments or of the run's `output`, or (strings) inside the final answer. One
// backward pass with seen()'s provenance index, fed the later values as it goes.
void CaseJudge::retrieval(const Trajectory& run, const json& meta, CaseResult& out) {
  if (ctx_.read_tools.empty()) return;
  const auto& steps = run.steps();
  out.read_volume = 0;
  later_.clear();
  // The final answer: the last final_answer step, else the last assistant message.
  const Step* answer = nullptr;
  for (const Step& s : steps)
    if (s.type == StepType::final_answer || (s.type == StepType::assistant_message &&
                                             (answer == nullptr || answer->type != StepType::final_answer)))
      answer = &s;
  if (answer != nullptr) later_.add_user_text(run.text(answer->content));
  if (meta.contains("output")) {
    simdjson::dom::element el;
    std::string text = meta["output"].dump();
    if (!json_.parse(text).get(el)) later_.add_leaves(el);
  }
  std::function<bool(simdjson::dom::element)> used = [&](simdjson::dom::element el) {
    switch (el.type()) {
      case simdjson::dom::element_type::OBJECT:
        for (auto f : simdjson::dom::object(el))
          if (used(f.value)) return true;
        return false;
      case simdjson::dom::element_type::ARRAY:
        for (simdjson::dom::element e : simdjson::dom::array(el))
          if (used(e)) return true;
        return false;
      case simdjson::dom::element_type::STRING:
        return !std::string_view(el.get_string().value_unsafe()).empty() && later_.seen(detail::value_of(el));
      case simdjson::dom::element_type::BOOL:
      case simdjson::dom::element_type::NULL_VALUE: return false;
      default: return later_.seen(detail::value_of(el));
    }
  };
  for (std::size_t i = steps.size(); i-- > 0;) {
    const Step& s = steps[i];
    if (s.type != StepType::tool_call) continue;
    if (ctx_.read_tools.count(std::string(run.tool_name(s)))) {
      std::string_view result = run.text(s.result);
      ++out.read_calls;
      *out.read_volume += result.size();
      simdjson::dom::element el;
      if (result.empty() || json_.parse(result.data(), result.size()).get(el) || !used(el)) ++out.unused_reads;
    }
    std::string_view args = run.text(s.arguments);
    simdjson::dom::element el;
    if (!args.empty() && !json_.parse(args.data(), args.size()).get(el)) later_.add_leaves(el);
  }
}

}  // namespace trajcheck::eval
