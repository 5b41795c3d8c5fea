// trajcheck/monitor.hpp — the same rules enforced while a trace is being made (guard mode).
//
//   trajcheck::Monitor mon(program, R"({"user":"u1"})");  // one per running trace
//   std::vector<trajcheck::Violation> v;
//   mon.check_call("refund_order", R"({"order_id":"o1"})", v);  // would this call violate now?
//   if (!v.empty()) return deny(program->rules()[v[0].rule].message);
//   ... make the call ...
//   mon.observe(trajcheck::MonitorStep::call("refund_order", args, result), v);
//   std::vector<trajcheck::RuleResult> results;
//   mon.finish(results);  // exactly what Checker::check gives for the steps observed
//
// A Monitor holds one trace's state and advances it by one step per observe(): its cost per
// step does not grow with the trace. observe() reports the violations that step made final:
// those no later step can undo (a forbidden call, the fourth call of `at most 3`, a refund
// no approval preceded). A violation that only the end of the trace can show (a `followed
// by` never answered, `at least` not reached) is in pending() until finish() reports it.
// check() asks the same question of a step without taking it: it reports exactly what
// observe() would report for that step, and changes nothing. Which statements can deny a
// call is listed per statement in docs/language.md. Like a Checker, a Monitor belongs to
// one thread; it reuses its memory across steps and across reset().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {

// One step, as a reader would have read it (texts are copied; JSON texts are kept as given).
struct MonitorStep {
  StepType type = StepType::tool_call;
  std::string_view tool;       // tool_call: the name as called (trimmed and case-folded here)
  std::string_view arguments;  // JSON object text; empty: none
  std::string_view result;     // JSON text; empty: none (a call not made yet)
  bool failed = false;         // tool_call: the call failed (status "error")
  std::string_view content;    // message text
  std::string_view extra;      // JSON object of the step's other fields (`decision`, …)
  std::string_view id;         // tool call id
  // Steps of one assistant message share a number (Step::turn); none: a turn of its own (the
  // step's index, as a native trace without `turn` gives it).
  std::optional<std::uint32_t> turn;

  static MonitorStep call(std::string_view tool, std::string_view arguments, std::string_view result = {},
                          bool failed = false) {
    MonitorStep s;
    s.tool = tool;
    s.arguments = arguments;
    s.result = result;
    s.failed = failed;
    return s;
  }
};

// A violation a step made final: the rule (index into Program::rules()), its binding for
// a parametric rule, and the witness steps (indices in the monitored trace) this step made
// final, sorted. A rule whose violation only its segment's end shows (a `between` segment,
// `require` before R) is reported at the step that ends the segment, with the witnesses of
// its verdict; such a report may have no witness steps (nothing occurred that should have).
struct Violation {
  std::uint32_t rule = 0;
  std::vector<std::pair<std::string, std::string>> binding;  // parametric: var -> value (JSON)
  std::vector<std::uint32_t> steps;
};

// An open obligation: a statement that the trace ending now would violate beyond what
// observe() has reported, with the steps finish() would then name (e.g. the unanswered
// A of `A followed by B`; none for `require` or an unfinished `expect`).
struct Obligation {
  std::uint32_t rule = 0;
  std::uint32_t statement = 0;  // index of the statement within its rule
  std::vector<std::pair<std::string, std::string>> binding;
  std::vector<std::uint32_t> steps;
};

class Monitor {
 public:
  // `context`: the trace's context (a JSON object text, for `context.*`), or empty.
  explicit Monitor(std::shared_ptr<const Program> program, std::string_view context = {});
  ~Monitor();
  Monitor(Monitor&&) noexcept;
  Monitor& operator=(Monitor&&) noexcept;

  // Forgets the trace (keeping memory) and starts a new one with this context.
  void reset(std::string_view context = {});

  // Takes the step as the trace's next; `out` is cleared and given the violations it made
  // final, one entry per rule (and binding), in rules-file order. The Violations `out` held
  // are kept and reused: passing the same vector each step allocates nothing once warm.
  void observe(const MonitorStep& step, std::vector<Violation>& out);
  // The same for step `index` of another trajectory, copied as it is (already normalized).
  void observe(const Trajectory& from, std::size_t index, std::vector<Violation>& out);
  // What observe(step, out) would report, without taking the step: the state is unchanged.
  void check(const MonitorStep& step, std::vector<Violation>& out);
  void check(const Trajectory& from, std::size_t index, std::vector<Violation>& out);
  // check() for a tool call about to be made (no result yet).
  void check_call(std::string_view tool, std::string_view arguments, std::vector<Violation>& out) {
    check(MonitorStep::call(tool, arguments), out);
  }

  // The obligations still open, in rules-file order.
  void pending(std::vector<Obligation>& out);
  // The final verdicts of the steps observed, exactly as Checker::check gives them for the
  // trajectory trace() holds. The monitor then takes no more steps until reset().
  void finish(std::vector<RuleResult>& out);

  // The steps observed so far, as a trajectory (write it out, check or score it later).
  const Trajectory& trace() const;
  const Program& program() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trajcheck
