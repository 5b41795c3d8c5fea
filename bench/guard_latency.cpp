// Guard-mode latency (trajcheck/monitor.hpp): per step of a running trace, the time of one
// decision — check_call for the call about to be made, then observe of the step once made —
// with 20 rules of every common kind (limits, orderings, obligations, an allow-list, runs,
// retries, repeats, a workflow `expect`, and parametric rules on the order id). Traces of
// retail-like tool calls with user messages and approvals between them; every step is
// observed (warn mode), so the state grows as in a run that lets violations through.
// Prints p50 / p90 / p99 / p99.9 / max in nanoseconds over all steps, after a warm-up trace;
// the heap allocations per decision (a counting operator new); and what the slowest 1% of
// the steps are: their kind (step type, tool, a value new to the trace, an allocation) and
// the rules they reported, beside the share of all steps that kind is.
//
//   bench_guard_latency [traces] [steps per trace] [turns]      (defaults: 2000 200)
//
// `turns`: the calls come in turns of 1 to 3 parallel calls (MonitorStep::turn), as an agent
// issuing several tool calls in one message; a guard then checks each call against every
// order of its turn's calls.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "trajcheck/monitor.hpp"
#include "trajcheck/rules.hpp"

using namespace trajcheck;

namespace {
std::atomic<std::uint64_t> g_allocs{0};
}  // namespace

// Every heap allocation of the process is counted (the bench's own ones are outside the
// timed steps).
void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

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
  std::uint32_t turn = 0;
  bool new_value = false;  // its order id occurs here first in the trace
};

std::vector<Call> make_trace(std::mt19937_64& rng, int steps, bool turns) {
  static const char* kTools[] = {"customer_get", "order_search_by_email", "order_get", "order_list", "search",
                                 "refund_order", "cancel_order", "update_address", "notify", "search"};
  std::vector<Call> t;
  t.push_back({"", "", "", false, StepType::user_message, ""});
  bool seen[40] = {};
  std::uint32_t turn = 0, left = 0;  // `turns`: calls still to come in the current turn
  for (int i = 1; i < steps; ++i) {
    const int k = static_cast<int>(rng() % 20);
    const auto id = static_cast<int>(rng() % 40);
    const std::string order = "\"o" + std::to_string(id) + "\"";
    if (k == 0) {
      t.push_back({"", "", "", false, StepType::approval, R"({"order_id":)" + order + "}"});
      left = 0;
    } else if (k == 1) {
      t.push_back({"", "", "", false, StepType::user_message, ""});
      left = 0;
    } else {
      Call c;
      c.tool = kTools[rng() % 10];
      c.arguments = R"({"order_id":)" + order + R"(,"reason":"damaged item","amount":)" + std::to_string(rng() % 500) + "}";
      c.result = R"({"status":"ok","order_id":)" + order + "}";
      c.failed = rng() % 10 == 0;
      c.new_value = !seen[id];
      if (turns) {
        if (left == 0) {
          ++turn;
          left = 1 + static_cast<std::uint32_t>(rng() % 3);
        }
        --left;
      }
      t.push_back(std::move(c));
    }
    if (t.back().type != StepType::tool_call) ++turn;
    t.back().turn = turn;
    if (t.back().type == StepType::tool_call && !turns) ++turn;
    seen[id] = true;
  }
  return t;
}

MonitorStep step_of(const Call& c, bool turns) {
  MonitorStep s = MonitorStep::call(c.tool, c.arguments, c.result, c.failed);
  s.type = c.type;
  s.extra = c.extra;
  if (c.type != StepType::tool_call) s.content = "hello";
  if (turns) s.turn = c.turn;
  return s;
}

// One timed step, for the breakdown of the slowest.
struct Sample {
  std::uint32_t ns;
  std::uint32_t allocs;
  std::uint32_t rules;  // bit r: rule r was reported by the question or by the taking
  std::uint16_t kind;   // index into the kinds' names
  bool new_value;
};

}  // namespace

int main(int argc, char** argv) {
  const int traces = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const bool turns = argc > 3 && std::strcmp(argv[3], "turns") == 0;
  CompileResult r = compile(Source("guard-bench.rules", kRules));
  if (!r.ok()) {
    std::fputs(format_diagnostics(r.source, r.diagnostics).c_str(), stderr);
    return 2;
  }
  const std::size_t nrules = r.program->rules().size();
  std::printf("rules: %zu%s\n", nrules, turns ? ", calls in turns of 1 to 3" : "");
  Monitor mon(r.program);
  std::vector<Violation> asked, taken;
  std::vector<RuleResult> results;
  std::mt19937_64 rng(42);
  std::vector<Sample> samples;
  samples.reserve(static_cast<std::size_t>(traces) * static_cast<std::size_t>(steps));
  std::vector<std::string> kinds;
  std::uint64_t denied = 0;
  for (int t = 0; t <= traces; ++t) {  // trace 0 warms up and is not counted
    const std::vector<Call> trace = make_trace(rng, steps, turns);
    mon.reset();
    for (const Call& c : trace) {
      const MonitorStep s = step_of(c, turns);
      const std::uint64_t a0 = g_allocs.load(std::memory_order_relaxed);
      const auto t0 = std::chrono::steady_clock::now();
      if (c.type == StepType::tool_call) mon.check_call(c.tool, c.arguments, asked);
      mon.observe(s, taken);
      const auto t1 = std::chrono::steady_clock::now();
      const std::uint64_t a1 = g_allocs.load(std::memory_order_relaxed);
      const bool call = c.type == StepType::tool_call;
      denied += call && !asked.empty();
      if (t == 0) continue;
      std::uint32_t mask = 0;
      for (const std::vector<Violation>* v : {&asked, &taken})
        if (v == &taken || call)
          for (const Violation& x : *v) mask |= x.rule < 32 ? 1u << x.rule : 0;
      const std::string kind = call ? c.tool
                               : c.type == StepType::approval ? "(approval)"
                                                               : "(user message)";
      const auto kind_at = static_cast<std::uint16_t>(std::find(kinds.begin(), kinds.end(), kind) - kinds.begin());
      if (kind_at == kinds.size()) kinds.push_back(kind);
      samples.push_back({static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()),
                         static_cast<std::uint32_t>(a1 - a0), mask, kind_at,
                         call && c.new_value});
    }
    mon.finish(results);
  }
  std::vector<std::uint32_t> ns(samples.size());
  for (std::size_t k = 0; k < samples.size(); ++k) ns[k] = samples[k].ns;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[std::min(ns.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ns.size())))]; };
  std::printf("steps: %zu (%d traces of %d), calls denied: %llu\n", ns.size(), traces, steps,
              static_cast<unsigned long long>(denied));
  std::printf("check_call + observe per step, ns: p50 %u  p90 %u  p99 %u  p99.9 %u  max %u\n", at(0.5), at(0.9),
              at(0.99), at(0.999), ns.back());

  // Allocations, and the slowest 1% (at or above p99) against all steps.
  std::uint64_t allocs = 0, allocating = 0, most = 0;
  for (const Sample& x : samples) {
    allocs += x.allocs;
    allocating += x.allocs != 0;
    most = std::max<std::uint64_t>(most, x.allocs);
  }
  const double n = static_cast<double>(samples.size());
  std::printf("heap allocations per decision: mean %.4f, decisions allocating %.3f%%, most in one %llu\n",
              static_cast<double>(allocs) / n, 100.0 * static_cast<double>(allocating) / n,
              static_cast<unsigned long long>(most));
  const std::uint32_t p99 = at(0.99);
  struct Share {
    std::uint64_t slow = 0, all = 0;
  };
  std::vector<Share> by_kind(kinds.size()), by_rule(nrules);
  Share fresh_value, allocated, reporting;
  std::uint64_t slow = 0;
  for (const Sample& x : samples) {
    const bool s = x.ns >= p99;
    slow += s;
    auto count = [&](Share& sh) {
      sh.slow += s;
      ++sh.all;
    };
    count(by_kind[x.kind]);
    if (x.new_value) count(fresh_value);
    if (x.allocs != 0) count(allocated);
    if (x.rules != 0) count(reporting);
    for (std::size_t k = 0; k < nrules && k < 32; ++k)
      if (x.rules >> k & 1) count(by_rule[k]);
  }
  auto line = [&](const std::string& what, const Share& sh) {
    if (sh.slow == 0) return;
    std::printf("  %-28s %6.2f%% of the slowest  %6.2f%% of all\n", what.c_str(),
                100.0 * static_cast<double>(sh.slow) / static_cast<double>(slow),
                100.0 * static_cast<double>(sh.all) / n);
  };
  std::printf("slowest 1%% (%llu steps at or above %u ns), by kind:\n", static_cast<unsigned long long>(slow), p99);
  for (std::size_t k = 0; k < kinds.size(); ++k) line(kinds[k], by_kind[k]);
  line("(a value new to the trace)", fresh_value);
  line("(allocated)", allocated);
  line("(reported a violation)", reporting);
  std::printf("slowest 1%%, by rule reported:\n");
  for (std::size_t k = 0; k < nrules; ++k) line(r.program->rules()[k].name, by_rule[k]);
  return 0;
}
