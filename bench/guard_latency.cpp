// Guard-mode latency (trajcheck/monitor.hpp): per step of a running trace, the time of one
// decision — check_call for the call about to be made, then observe of the step once made —
// with 20 rules of every common kind (limits, orderings, obligations, an allow-list, runs,
// retries, repeats, a workflow `expect`, and parametric rules on the order id). Traces of
// retail-like tool calls with user messages and approvals between them; every step is
// observed (warn mode), so the state grows as in a run that lets violations through.
// Prints p50 / p90 / p99 / p99.9 / max in nanoseconds over all steps, after a warm-up trace.
//
//   bench_guard_latency [traces] [steps per trace]      (defaults: 2000 200)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "trajcheck/monitor.hpp"
#include "trajcheck/rules.hpp"

using namespace trajcheck;

namespace {

constexpr const char* kRules = R"(workflow "guard-bench"

group lookups = customer_get | order_search_by_email | order_get | order_list
group writes = refund_order | cancel_order | update_address

rule no_delete [critical]:
    forbid delete_* | drop_*
rule allow_list:
    only lookups | writes | notify | search
rule one_read:
    order_get at most 3
rule searches:
    search at most 4 in a row
rule retries_bounded:
    retries of tool_call at most 2
rule no_repeat_write:
    no duplicate writes
rule approval_first:
    approval precedes refund_order
rule lookup_first:
    lookups precedes writes
rule notified:
    refund_order followed by notify
rule audited:
    cancel_order requires notify
rule no_refund_after_transfer:
    transfer_to_human is never followed by refund_order
rule cancel_or_refund:
    cancel_order excludes refund_order
rule starts_with_user:
    starts with user_message
rule writes_limited:
    writes at most 6
rule failed_writes:
    failed writes at most 1
rule workflow:
    expect lookups+ -> (writes | notify | search)*
rule order_read_before_refund:
    order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o
rule refund_once:
    refund_order where arguments.order_id == $o at most 1
rule approved_order:
    approval where order_id == $o precedes refund_order where arguments.order_id == $o
rule session:
    between user_message and final_answer: update_address at most 1
)";

struct Call {
  std::string tool, arguments, result;
  bool failed = false;
  StepType type = StepType::tool_call;
  std::string extra;
};

std::vector<Call> make_trace(std::mt19937_64& rng, int steps) {
  static const char* kTools[] = {"customer_get", "order_search_by_email", "order_get", "order_list", "search",
                                 "refund_order", "cancel_order", "update_address", "notify", "search"};
  std::vector<Call> t;
  t.push_back({"", "", "", false, StepType::user_message, ""});
  for (int i = 1; i < steps; ++i) {
    const int k = static_cast<int>(rng() % 20);
    const std::string order = "\"o" + std::to_string(rng() % 40) + "\"";
    if (k == 0) {
      t.push_back({"", "", "", false, StepType::approval, R"({"order_id":)" + order + "}"});
    } else if (k == 1) {
      t.push_back({"", "", "", false, StepType::user_message, ""});
    } else {
      Call c;
      c.tool = kTools[rng() % 10];
      c.arguments = R"({"order_id":)" + order + R"(,"reason":"damaged item","amount":)" + std::to_string(rng() % 500) + "}";
      c.result = R"({"status":"ok","order_id":)" + order + "}";
      c.failed = rng() % 10 == 0;
      t.push_back(std::move(c));
    }
  }
  return t;
}

MonitorStep step_of(const Call& c) {
  MonitorStep s = MonitorStep::call(c.tool, c.arguments, c.result, c.failed);
  s.type = c.type;
  s.extra = c.extra;
  if (c.type != StepType::tool_call) s.content = "hello";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int traces = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  CompileResult r = compile(Source("guard-bench.rules", kRules));
  if (!r.ok()) {
    std::fputs(format_diagnostics(r.source, r.diagnostics).c_str(), stderr);
    return 2;
  }
  std::printf("rules: %zu\n", r.program->rules().size());
  Monitor mon(r.program);
  std::vector<Violation> v;
  std::vector<RuleResult> results;
  std::mt19937_64 rng(42);
  std::vector<std::uint32_t> ns;
  ns.reserve(static_cast<std::size_t>(traces) * static_cast<std::size_t>(steps));
  std::uint64_t denied = 0;
  for (int t = 0; t <= traces; ++t) {  // trace 0 warms up and is not counted
    const std::vector<Call> trace = make_trace(rng, steps);
    mon.reset();
    for (const Call& c : trace) {
      const MonitorStep s = step_of(c);
      const auto t0 = std::chrono::steady_clock::now();
      if (c.type == StepType::tool_call) {
        mon.check_call(c.tool, c.arguments, v);
        denied += !v.empty();
      }
      mon.observe(s, v);
      const auto t1 = std::chrono::steady_clock::now();
      if (t > 0) ns.push_back(static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    }
    mon.finish(results);
  }
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[std::min(ns.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ns.size())))]; };
  std::printf("steps: %zu (%d traces of %d), calls denied: %llu\n", ns.size(), traces, steps,
              static_cast<unsigned long long>(denied));
  std::printf("check_call + observe per step, ns: p50 %u  p90 %u  p99 %u  p99.9 %u  max %u\n", at(0.5), at(0.9),
              at(0.99), at(0.999), ns.back());
  return 0;
}
