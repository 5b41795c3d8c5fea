// TraceCheck: the per-thread state of checking records one after another, and the check of a
// record that holds exactly one trajectory.
#include <fmt/format.h>

#include "trajcheck/run.hpp"

namespace trajcheck {

struct TraceCheck::Impl {
  // The trajectory points at the tool table: both on the heap, so that moving a TraceCheck
  // keeps them where they are.
  std::unique_ptr<ToolTable> tools = std::make_unique<ToolTable>();
  Trajectory scratch{tools.get()};
  RuleSetChecker checker;
  Impl(std::shared_ptr<const RuleSet> rules, FailOn fail_on) : checker(std::move(rules), fail_on) {}
};

TraceCheck::TraceCheck(std::shared_ptr<const RuleSet> rules, FailOn fail_on)
    : impl_(std::make_unique<Impl>(std::move(rules), fail_on)) {}
TraceCheck::~TraceCheck() = default;
TraceCheck::TraceCheck(TraceCheck&&) noexcept = default;
TraceCheck& TraceCheck::operator=(TraceCheck&&) noexcept = default;

ToolTable& TraceCheck::tools() { return *impl_->tools; }
Trajectory& TraceCheck::scratch() { return impl_->scratch; }
RuleSetChecker& TraceCheck::checker() { return impl_->checker; }

ParseOutcome TraceCheck::check_one(const TraceParser& parser, const RawRecord& record, const OnTrace& on_trace) {
  std::uint32_t found = 0;
  ParseOutcome outcome = parser.parse_borrowing(record, impl_->scratch, [&](Trajectory& t) {
    if (++found == 1) on_trace(t, impl_->checker.check(t));
  });
  if (outcome.ok() && found != 1)
    outcome.errors.push_back(RecordError{record.origin, fmt::format("expected one trajectory, found {}", found)});
  return outcome;
}

}  // namespace trajcheck
