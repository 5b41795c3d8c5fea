// Parametric-rule scaling (LANGUAGE.md §5): one in-memory trace of N steps binding V distinct
// values, interleaved with steps binding nothing, checked at 10/25/50/100% of its length by
// four rule sets (global statements; scopes, `only` and free alternatives; adjacency and
// runs with a free side; `retries` and scoped `no duplicate` with a free alternative). Time
// per step must stay flat (cost linear in steps, not steps × bindings).
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

using namespace trajcheck;

namespace {

// Rules of several statement kinds; each binds $o, and most see steps binding nothing too
// (free patterns, adjacency, in a row, ends with) so the lazy catch-up is exercised.
constexpr const char* kRules = R"(workflow "param-scaling"

rule lookup_before_refund:
    order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o

rule login_before_refund:
    login precedes refund_order where arguments.order_id == $o

rule refund_at_most_once:
    refund_order where arguments.order_id == $o at most 1

rule refund_then_notify:
    refund_order where arguments.order_id == $o followed by notify

rule get_right_before_refund:
    order_get where arguments.order_id == $o immediately precedes refund_order where arguments.order_id == $o

rule lookups_in_a_row:
    order_get where arguments.order_id == $o at most 2 in a row

rule no_refund_after_cancel:
    cancel_order where arguments.order_id == $o is never followed by refund_order where arguments.order_id == $o

rule refund_excludes_cancel:
    refund_order where arguments.order_id == $o excludes cancel_order where arguments.order_id == $o
)";

// Scopes opened and closed by steps binding nothing (between, after, after until, before),
// `only`, patterns with a free alternative beside the binder and an `expect` beside a
// binding statement: before, every step binding nothing was fed to every live slice of
// these rules.
constexpr const char* kScopedRules = R"(workflow "param-scaling-scoped"

rule lookup_before_refund_in_session:
    between login and notify:
        order_get where arguments.order_id == $o precedes refund_order where arguments.order_id == $o

rule refund_once_after_login:
    after login:
        refund_order where arguments.order_id == $o at most 1

rule lookups_in_a_row_until_notify:
    after login until notify:
        order_get where arguments.order_id == $o at most 2 in a row

rule refund_then_search_in_session:
    between login and notify:
        refund_order where arguments.order_id == $o followed by search

rule only_known_tools:
    only order_get where arguments.order_id == $o | refund_order where arguments.order_id == $o | cancel_order | login | notify | search

rule cancel_excludes_refund_in_session:
    between login and notify:
        cancel_order where arguments.order_id == $o excludes refund_order where arguments.order_id == $o

rule no_cancel_or_wipe:
    forbid cancel_order where arguments.order_id == $o | wipe_db

rule refunds_in_login_sessions:
    refund_order where arguments.order_id == $o at most 3
    expect (login -> (notify | search)*)*

rule lookup_after_refund_before_wipe:
    before wipe_db:
        refund_order where arguments.order_id == $o is never followed by order_get where arguments.order_id == $o
)";

// Adjacency with a free side, `in a row` and `no duplicate` with a free alternative, global
// and scoped: before, each step binding nothing was fed to every live slice of these rules.
constexpr const char* kFreeRules = R"(workflow "param-scaling-free"

rule login_right_before_refund:
    login | search immediately precedes refund_order where arguments.order_id == $o

rule refund_right_before_notify:
    refund_order where arguments.order_id == $o immediately followed by notify | order_get where arguments.order_id == $o

rule search_right_before_lookup_in_session:
    between login and notify:
        search immediately precedes order_get where arguments.order_id == $o

rule cancel_right_before_search_until_notify:
    after login until notify:
        cancel_order where arguments.order_id == $o immediately followed by search

rule refunds_or_logins_in_a_row:
    refund_order where arguments.order_id == $o | login at most 6 in a row

rule lookups_or_logins_in_a_row_after_login:
    after login:
        order_get where arguments.order_id == $o | login at most 6 in a row

rule no_duplicate_lookups_or_searches:
    no duplicate (order_get where arguments.order_id == $o | search)

rule no_duplicate_refunds_or_searches_before_wipe:
    before wipe_db:
        no duplicate (refund_order where arguments.order_id == $o | search)
)";

// `retries` with a free alternative (a free failed call starts or extends its tool's chain in
// every slice) in every scope, and `no duplicate` with a free alternative where segments open
// per slice (after, between, after … until; `after order_get` opens at a binding step), with
// lookups that bind their order when they fail and nothing when they succeed (own and free
// calls of one tool). Before, each step binding nothing was fed to every live slice of these
// rules. A third of the bound calls and a tenth of the free ones fail (a free call past N
// retries is a witness in every live slice: N = 3 keeps the result from being steps × values).
constexpr const char* kChainRules = R"(workflow "param-scaling-chains"

rule lookup_retries:
    retries of (order_get where arguments.order_id == $o | search) at most 3

rule refund_retries_after_login:
    after login:
        retries of (refund_order where arguments.order_id == $o | search) at most 3

rule lookup_retries_in_session:
    between login and notify:
        retries of (order_get where arguments.order_id == $o | search | login) at most 3

rule failed_lookup_retries:
    retries of (order_get where status == "error" and arguments.order_id == $o | order_get) at most 1

rule no_duplicate_after_login:
    after login:
        no duplicate (refund_order where arguments.order_id == $o | search)

rule no_duplicate_lookups_in_session:
    between login and notify:
        no duplicate (order_get where status == "error" and arguments.order_id == $o | order_get)

rule no_duplicate_after_lookup_until_notify:
    after order_get until notify:
        no duplicate (cancel_order where arguments.order_id == $o | search)
)";

long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// CPU seconds of this process: the shared machine's load inflates wall time, not this.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Step k of the trace: a rotating mix over value v = (k / 8) % V: lookup, refund, login,
// notify, noise; every value is bound many times when N ≫ V.
// Returns the number of distinct values bound.
// `chains`: a third of the calls binding a value fail and a tenth of the others (other sets:
// every call succeeds). Every search has a query of its own.
std::uint64_t build(Trajectory& t, ToolTable& tools, std::uint64_t n, std::uint64_t values, bool chains) {
  std::vector<bool> bound(values, false);
  std::uint64_t distinct = 0;
  static const char* kTools[] = {"order_get", "refund_order", "login", "notify", "search", "cancel_order"};
  std::uint32_t ids[6];
  for (int i = 0; i < 6; ++i) ids[i] = tools.intern(kTools[i]);
  std::string args;
  std::uint64_t x = 88172645463325252ull;
  for (std::uint64_t k = 0; k < n; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int which;
    switch (x % 10) {
      case 0: case 1: case 2: which = 0; break;  // order_get $o
      case 3: case 4: which = 1; break;          // refund_order $o
      case 5: which = 5; break;                  // cancel_order $o
      case 6: which = 2; break;                  // login (binds nothing)
      case 7: which = 3; break;                  // notify (binds nothing)
      default: which = 4; break;                 // search (binds nothing)
    }
    Step& s = t.add_step(StepType::tool_call);
    s.tool = ids[which];
    s.tool_name = t.store(kTools[which]);
    s.raw_tool = s.tool_name;
    if (which == 0 || which == 1 || which == 5) {
      std::uint64_t v = (x >> 8) % values;
      distinct += !bound[v];
      bound[v] = true;
      args = "{\"order_id\":\"#W" + std::to_string(v) + "\"}";
      s.arguments = t.store(args);
    } else if (which == 4) {  // a query of its own: `no duplicate … | search` sees few repeats
      args = "{\"q\":\"s" + std::to_string(k) + "\"}";
      s.arguments = t.store(args);
    } else {
      s.arguments = t.store("{}");
    }
    s.result = t.store("{\"ok\":true}");
    const bool bound_call = which == 0 || which == 1 || which == 5;
    s.status = chains && (x >> 40) % (bound_call ? 3 : 10) == 0 ? StepStatus::error : StepStatus::ok;
  }
  return distinct;
}

int run(const char* name, const char* rules, std::uint64_t n, std::uint64_t values, bool chains = false) {
  CompileResult cr = compile(Source(std::string(name) + ".rules", rules));
  if (!cr.ok()) {
    std::fputs(format_diagnostics(cr.source, cr.diagnostics).c_str(), stderr);
    return 2;
  }
  std::printf("rules: %s\n", name);
  std::printf("%-8s %10s %10s %10s %10s %12s %12s %12s %12s\n", "percent", "steps", "bindings", "wall s",
              "CPU s", "CPU ns/step", "violations", "witnesses", "peak RSS MiB");
  Checker checker(cr.program);
  std::vector<RuleResult> out;
  for (double f : {0.10, 0.25, 0.50, 1.00}) {
    auto len = static_cast<std::uint64_t>(static_cast<double>(n) * f);
    ToolTable tools;
    Trajectory t(&tools);
    std::uint64_t distinct = build(t, tools, len, values, chains);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    checker.check(t, out);
    double cpu = cpu_seconds() - c0;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t violations = 0, witnesses = 0;  // witnesses: the size of the result
    for (const RuleResult& r : out) {
      violations += r.status == VerdictStatus::violated;
      witnesses += r.steps.size();
    }
    std::printf("%-8.0f %10llu %10llu %10.3f %10.3f %12.1f %12zu %12zu %12.1f\n", f * 100,
                static_cast<unsigned long long>(len), static_cast<unsigned long long>(distinct), secs, cpu,
                cpu * 1e9 / static_cast<double>(len), violations, witnesses, peak_rss_kib() / 1024.0);
  }
  return 0;
}

}  // namespace

// bench_param_scaling [steps] [values] [global|scoped|free|chains|all]
int main(int argc, char** argv) {
  std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  std::uint64_t values = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
  std::string set = argc > 3 ? argv[3] : "all";
  int rc = 0;
  if (set == "global" || set == "all") rc |= run("param-scaling", kRules, n, values);
  if (set == "scoped" || set == "all") rc |= run("param-scaling-scoped", kScopedRules, n, values);
  if (set == "free" || set == "all") rc |= run("param-scaling-free", kFreeRules, n, values);
  if (set == "chains" || set == "all") rc |= run("param-scaling-chains", kChainRules, n, values, true);
  return rc;
}
