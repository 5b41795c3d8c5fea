// The Monitor (guard mode) against the batch checker, on the differential generator's random
// rules and traces (every statement kind, every scope, `ignoring`, `$` bindings):
//   - observing a trace step by step and finishing gives exactly Checker::check's results;
//   - check() of a step reports exactly what observing it then reports, and changes nothing
//     (a decoy step checked and never observed leaves the verdicts as they were);
//   - what observe() reports is final: each reported (rule, binding) is violated at the end
//     and its witnesses are the end's; every violation of the end was reported or pending,
//     and the witnesses reported and pending are exactly the end's.
// Plus named cases showing which statements deny a call and which only report at the end.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reference/builders.hpp"
#include "reference/generator.hpp"
#include "trajcheck/guard.hpp"
#include "trajcheck/monitor.hpp"
#include "trajcheck/run.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using K = ir::StatementKind;

namespace {

MonitorStep as_monitor_step(const Trajectory& t, std::size_t i) {
  const Step& s = t.steps()[i];
  MonitorStep m;
  m.type = s.type;
  m.tool = t.text(s.tool_name);
  m.arguments = t.text(s.arguments);
  m.result = t.text(s.result);
  m.failed = s.status == StepStatus::error;
  m.content = t.text(s.content);
  m.extra = t.text(s.extra);
  m.id = t.text(s.id);
  m.turn = s.turn;
  return m;
}

using Key = std::pair<std::uint32_t, std::string>;  // rule, bound value ("" when none)

Key key_of(std::uint32_t rule, const std::vector<std::pair<std::string, std::string>>& binding) {
  return {rule, binding.empty() ? std::string() : binding[0].second};
}

std::string text_of(const std::vector<Violation>& v) {
  std::string s;
  for (const Violation& x : v) {
    s += "rule " + std::to_string(x.rule) + " [" + (x.binding.empty() ? "" : x.binding[0].second) + "]";
    for (auto i : x.steps) s += " " + std::to_string(i);
    s += "\n";
  }
  return s;
}

std::string text_of(const std::vector<RuleResult>& v) {
  std::string s;
  for (const RuleResult& r : v) {
    s += "rule " + std::to_string(r.rule) + " [" + (r.binding.empty() ? "" : r.binding[0].second) + "] " +
         verdict_text(r.status, r.steps) + " dropped " + std::to_string(r.bindings_dropped) + "\n";
  }
  return s;
}

struct MonitorStats {
  int traces = 0, mismatches = 0, reports = 0, denials = 0, pending = 0, end_only = 0;
  std::set<int> kinds_denied;  // statement kinds of rules that denied a step
};

MonitorStats run_monitor(Gen& g, int modules, std::uint64_t max_bindings = 1000000) {
  MonitorStats st;
  StepsBuilder t;
  for (int m = 0; m < modules && st.mismatches < 3; ++m) {
    g.module();
    std::vector<Diagnostic> diags;
    CompileOptions options;
    options.max_automaton_states = 100000;
    options.max_bindings = max_bindings;
    auto compiled = g.b.build(&diags, options);
    auto program = as_program(compiled);
    REQUIRE_MESSAGE(program != nullptr, "module " << m << " did not compile");
    Checker checker(program);
    Monitor mon(program);
    std::vector<RuleResult> want, got;
    std::vector<Violation> asked, seen, decoy;
    std::vector<Obligation> open;
    for (int k = 0; k < 5; ++k) {
      g.trace(t);
      ++st.traces;
      mon.reset(t.t.context());
      std::string failure;
      std::map<Key, std::set<std::uint32_t>> reported;
      const std::size_t n = t.t.steps().size();
      for (std::size_t i = 0; i < n && failure.empty(); ++i) {
        if (n > 1 && g.chance(40)) mon.check(as_monitor_step(t.t, g.pick(static_cast<int>(n))), decoy);
        mon.check(as_monitor_step(t.t, i), asked);
        mon.observe(as_monitor_step(t.t, i), seen);
        if (text_of(asked) != text_of(seen)) {
          failure = "step " + std::to_string(i) + ": check said\n" + text_of(asked) + "observe said\n" + text_of(seen);
          break;
        }
        st.denials += !seen.empty();
        for (const Violation& v : seen) {
          ++st.reports;
          auto& w = reported[key_of(v.rule, v.binding)];
          w.insert(v.steps.begin(), v.steps.end());
          for (const auto& spec : compiled->specs[v.rule].statements) st.kinds_denied.insert(static_cast<int>(spec.kind));
        }
      }
      if (failure.empty()) {
        mon.pending(open);
        std::map<Key, std::set<std::uint32_t>> pend;
        for (const Obligation& o : open) {
          ++st.pending;
          auto& w = pend[key_of(o.rule, o.binding)];
          w.insert(o.steps.begin(), o.steps.end());
        }
        mon.finish(got);
        checker.check(t.t, want);
        if (text_of(got) != text_of(want)) failure = "finish\n" + text_of(got) + "check\n" + text_of(want);
        for (const RuleResult& r : want) {
          if (!failure.empty()) break;
          const Key key = key_of(r.rule, r.binding);
          const bool was_reported = reported.count(key) != 0, is_pending = pend.count(key) != 0;
          if (r.status != VerdictStatus::violated) {
            if (was_reported || is_pending) failure = "reported or pending, not violated: rule " + std::to_string(r.rule);
            continue;
          }
          if (!was_reported && !is_pending) failure = "violated, never reported: rule " + std::to_string(r.rule);
          st.end_only += !was_reported;
          std::set<std::uint32_t> all = reported[key];
          all.insert(pend[key].begin(), pend[key].end());
          if (all != std::set<std::uint32_t>(r.steps.begin(), r.steps.end()))
            failure = "witnesses reported and pending differ from the end's: rule " + std::to_string(r.rule);
        }
        for (const auto& entry : reported) {
          const auto& key = entry.first;
          const bool found = std::any_of(want.begin(), want.end(), [&](const RuleResult& r) {
            return key_of(r.rule, r.binding) == key && r.status == VerdictStatus::violated;
          });
          if (!found && failure.empty()) failure = "reported, not violated at the end: rule " + std::to_string(key.first);
        }
      }
      if (!failure.empty()) {
        ++st.mismatches;
        MESSAGE("module " << m << " trace " << k << "\n"
                          << static_cast<const Program&>(*program).dump_automaton() << describe(t.t) << failure);
      }
    }
  }
  return st;
}

void report(const MonitorStats& st) {
  MESSAGE("traces " << st.traces << ", steps denied " << st.denials << ", reports " << st.reports
                    << ", obligations " << st.pending << ", violations only the end shows " << st.end_only);
}

}  // namespace

TEST_CASE("monitor: exact on random rules and traces, every statement kind and scope") {
  const auto [seed, modules] = soak(20261201, 3000, 0);
  Gen g(seed);
  MonitorStats st = run_monitor(g, modules);
  report(st);
  CHECK(st.mismatches == 0);
  CHECK(st.denials > 1000);
  CHECK(st.pending > 1000);
  CHECK(st.end_only > 500);
  // Every kind that can make a violation final before the end did so somewhere.
  for (K k : {K::forbid, K::count, K::precedes, K::immediately_precedes, K::immediately_followed_by,
              K::never_followed_by, K::excludes, K::starts_with, K::only, K::no_duplicate, K::in_a_row,
              K::retries, K::expect, K::expect_exactly})
    CHECK_MESSAGE(st.kinds_denied.count(static_cast<int>(k)) == 1, "kind " << static_cast<int>(k));
}

TEST_CASE("monitor: exact on mentions of bound values (contains $o)") {
  const auto [seed, modules] = soak(6161, 1200, 11);
  Gen g(seed);
  g.param_percent = 100;
  g.mention = 70;
  g.max_len = 20;
  for (K k : {K::precedes, K::never_followed_by, K::immediately_followed_by, K::excludes}) {
    g.force_kind = static_cast<int>(k);
    MonitorStats st = run_monitor(g, modules / 4);
    CHECK_MESSAGE(st.mismatches == 0, "kind " << static_cast<int>(k));
  }
}

TEST_CASE("monitor: exact on parametric rules, global and scoped, with free alternatives") {
  const auto [seed, modules] = soak(4711, 1500, 1);
  for (bool scoped : {false, true}) {
    Gen g(seed + scoped);
    g.global_only = !scoped;
    g.scoped_only = scoped;
    g.param_percent = 90;
    g.max_len = 24;
    g.extra_expect = 30;
    g.free_alt = 30;
    MonitorStats st = run_monitor(g, modules);
    report(st);
    CHECK(st.mismatches == 0);
    CHECK(st.denials > 500);
  }
}

TEST_CASE("monitor: exact on no duplicate and retries bound by outcome, and past the bindings limit") {
  const auto [seed, modules] = soak(5353, 800, 2);
  for (K kind : {K::no_duplicate, K::retries, K::in_a_row, K::immediately_followed_by}) {
    Gen g(seed + static_cast<int>(kind));
    g.force_kind = static_cast<int>(kind);
    g.param_percent = 90;
    g.max_len = 30;
    g.free_alt = 60;
    g.status_binder = 50;
    MonitorStats st = run_monitor(g, modules);
    CHECK(st.mismatches == 0);
    CHECK(st.denials > 100);
  }
  Gen g(seed + 100);
  g.param_percent = 90;
  g.max_len = 20;
  MonitorStats st = run_monitor(g, modules, 2);  // a third value gets no slice
  CHECK(st.mismatches == 0);
}

TEST_CASE("monitor: large and nested all-of groups") {
  const auto [seed, modules] = soak(4243, 800, 3);
  Gen g(seed);
  g.big_groups = true;
  g.param_percent = 0;
  g.max_len = 14;
  MonitorStats st = run_monitor(g, modules);
  CHECK(st.mismatches == 0);
  CHECK(st.denials > 100);
}

namespace {

std::shared_ptr<const Program> rules_of(const char* text) {
  CompileResult r = compile(Source("guard.rules", text));
  REQUIRE_MESSAGE(r.ok(), format_diagnostics(r.source, r.diagnostics));
  return r.program;
}

std::vector<std::string> denied(Monitor& mon, std::string_view tool, std::string_view args = "{}") {
  std::vector<Violation> v;
  mon.check_call(tool, args, v);
  std::vector<std::string> names;
  for (const Violation& x : v) names.push_back(mon.program().rules()[x.rule].name);
  return names;
}

void call(Monitor& mon, std::string_view tool, std::string_view args = "{}") {
  std::vector<Violation> v;
  mon.observe(MonitorStep::call(tool, args, R"({"ok":true})"), v);
}

}  // namespace

TEST_CASE("monitor: a forbidden call, a limit and a missing approval are denied as they are asked") {
  auto p = rules_of(R"(
rule no_delete: forbid delete_*
  message "nothing may be deleted"
rule one_read: order_get at most 1
rule approved: approval precedes refund_order
rule answered: order_get followed by notify
)");
  Monitor mon(p);
  CHECK(denied(mon, "order_get").empty());
  call(mon, "order_get");
  CHECK(denied(mon, "order_get") == std::vector<std::string>{"one_read"});
  CHECK(denied(mon, "Delete_User") == std::vector<std::string>{"no_delete"});  // names normalized
  CHECK(denied(mon, "refund_order") == std::vector<std::string>{"approved"});
  std::vector<Violation> v;
  mon.observe(MonitorStep{StepType::approval}, v);
  CHECK(v.empty());
  CHECK(denied(mon, "refund_order").empty());
  // `followed by` cannot deny: it is an obligation until the end.
  std::vector<Obligation> open;
  mon.pending(open);
  REQUIRE(open.size() == 1);
  CHECK(p->rules()[open[0].rule].name == "answered");
  CHECK(open[0].steps == std::vector<std::uint32_t>{0});
  call(mon, "notify");
  mon.pending(open);
  CHECK(open.empty());
  // A denied call not observed leaves no trace: the verdicts are those of the steps taken.
  std::vector<RuleResult> results;
  mon.finish(results);
  for (const RuleResult& r : results) CHECK(r.status != VerdictStatus::violated);
  CHECK(mon.trace().steps().size() == 3);
}

TEST_CASE("monitor: a parametric rule denies per bound value") {
  auto p = rules_of(R"(
rule approved_first: approval where order_id == $o precedes refund_order where arguments.order_id == $o
)");
  Monitor mon(p);
  std::vector<Violation> v;
  mon.observe(MonitorStep{StepType::approval, {}, {}, {}, false, {}, R"({"order_id":"o1"})"}, v);
  CHECK(v.empty());
  CHECK(denied(mon, "refund_order", R"({"order_id":"o1"})").empty());
  mon.check_call("refund_order", R"({"order_id":"o2"})", v);
  REQUIRE(v.size() == 1);
  REQUIRE(v[0].binding.size() == 1);
  CHECK(v[0].binding[0].second == "\"o2\"");
  CHECK(v[0].steps == std::vector<std::uint32_t>{1});
}

TEST_CASE("monitor: a rule set's monitor reports global rule ids and finishes as RuleSetChecker") {
  RuleSetResult rs = compile_rule_set(std::vector<Source>{
      Source("a.rules", "rule a_one: forbid drop_table\nrule a_two: order_get at most 1\n"),
      Source("b.rules", "rule b_one: approval precedes refund_order\nrule b_two: refund_order followed by notify\n")});
  REQUIRE(rs.ok());
  TraceParser parser(rs.rules->reading_options({}));
  ToolTable tools;
  Trajectory steps(&tools);
  RawRecord rec;
  rec.text = R"({"trace_id":"t","steps":[{"type":"tool_call","tool":"order_get"},{"type":"tool_call","tool":"Refund_Order"},)"
             R"({"type":"tool_call","tool":"order_get"},{"type":"tool_call","tool":"drop_table"}]})";
  REQUIRE(parser.parse(rec, steps, [](Trajectory&) {}).ok());
  RuleSetMonitor mon(rs.rules);
  std::vector<Violation> asked, seen;
  std::vector<std::vector<std::uint32_t>> rules_seen;
  for (std::size_t i = 0; i < steps.steps().size(); ++i) {
    mon.check(steps, i, asked);
    mon.observe(steps, i, seen);
    CHECK(text_of(asked) == text_of(seen));
    std::vector<std::uint32_t> ids;
    for (const Violation& v : seen) ids.push_back(v.rule);
    rules_seen.push_back(ids);
  }
  CHECK(rules_seen == std::vector<std::vector<std::uint32_t>>{{}, {2}, {1}, {0}});
  std::vector<Obligation> open;
  mon.pending(open);
  REQUIRE(open.size() == 1);
  CHECK(open[0].rule == 3);
  const TraceVerdict want = RuleSetChecker(rs.rules).check(steps);
  const TraceVerdict& got = mon.finish();
  CHECK(text_of(got.results) == text_of(want.results));
  CHECK(got.failed == want.failed);
  CHECK(mon.trace().steps().size() == 4);
}
