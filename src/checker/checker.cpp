// The Checker: one pass over a trace's steps, feeding each rule's scope tracker, which
// opens and closes segments (§4, §4a) around its statement monitors; then a finish step.
#include <algorithm>

#include "checker/monitor.hpp"
#include "checker/step_eval.hpp"
#include "compiler/program.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck {

namespace {

using detail::StatementMonitor;
using detail::StepEval;

// One rule's per-trace state: the segment tracker and its statements' monitors.
struct RuleState {
  const detail::RuleSpec* spec = nullptr;
  std::vector<StatementMonitor> monitors;
  bool open = false;      // a segment is open
  bool opened_once = false;  // `after Q` opens at the first Q only
  bool settled = false;   // single-segment scope whose monitors are all done
  bool violated = false, satisfied = false;
  std::vector<std::uint32_t> witnesses;

  void begin_segment() {
    open = true;
    for (StatementMonitor& m : monitors) m.begin();
  }
  void end_segment() {
    open = false;
    for (StatementMonitor& m : monitors) {
      switch (m.finish(witnesses)) {
        case VerdictStatus::violated: violated = true; break;
        case VerdictStatus::satisfied: satisfied = true; break;
        case VerdictStatus::vacuous: break;
      }
    }
  }
  void feed(StepEval& ev) {
    bool all_done = true;
    for (StatementMonitor& m : monitors) {
      if (!m.done()) {
        std::uint32_t ign = m.spec().ignoring;
        if (ign == detail::kNoId || !ev.match(ign)) m.step(ev);
      }
      all_done = all_done && m.done();
    }
    // Only scopes with one segment can stop early; between/after-until may open again.
    settled = all_done && (spec->scope == ir::ScopeKind::global ||
                           spec->scope == ir::ScopeKind::after ||
                           spec->scope == ir::ScopeKind::before);
  }
};

}  // namespace

struct Checker::Impl {
  std::shared_ptr<const detail::ProgramImpl> program;
  StepEval eval;
  std::vector<RuleState> rules;

  explicit Impl(std::shared_ptr<const detail::ProgramImpl> p) : program(std::move(p)), eval(*program) {
    rules.resize(program->specs.size());
    for (std::size_t r = 0; r < rules.size(); ++r) {
      rules[r].spec = &program->specs[r];
      rules[r].monitors.reserve(program->specs[r].statements.size());
      for (const detail::StatementSpec& s : program->specs[r].statements)
        rules[r].monitors.emplace_back(s, *program);
    }
  }

  void step(RuleState& rs) {
    const detail::RuleSpec& s = *rs.spec;
    switch (s.scope) {
      case ir::ScopeKind::global:
        if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::before:
        if (!rs.open) break;  // closed by the first R: nothing more to check
        if (eval.match(s.r)) rs.end_segment();
        else if (!rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::after:
        if (!rs.opened_once && eval.match(s.q)) {
          rs.opened_once = true;
          rs.begin_segment();
        }
        if (rs.open && !rs.settled) rs.feed(eval);
        break;
      case ir::ScopeKind::between:
      case ir::ScopeKind::after_until:
        if (rs.open) {
          if (eval.match(s.r)) rs.end_segment();
          else rs.feed(eval);
        } else if (eval.match(s.q) && !eval.match(s.r)) {
          rs.begin_segment();
          rs.feed(eval);
        }
        break;
    }
  }

  void check(const Trajectory& trace, std::vector<RuleResult>& out) {
    eval.begin_trace(trace);
    for (RuleState& rs : rules) {
      rs.open = rs.opened_once = rs.settled = rs.violated = rs.satisfied = false;
      rs.witnesses.clear();
      if (rs.spec->scope == ir::ScopeKind::global || rs.spec->scope == ir::ScopeKind::before)
        rs.begin_segment();
    }
    const std::vector<Step>& steps = trace.steps();
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      eval.begin_step(steps[i], i);
      for (RuleState& rs : rules) step(rs);
    }
    out.clear();
    for (std::uint32_t r = 0; r < rules.size(); ++r) {
      RuleState& rs = rules[r];
      if (rs.open && rs.spec->scope != ir::ScopeKind::between) rs.end_segment();
      RuleResult res;
      res.rule = r;
      if (rs.violated) {
        res.status = VerdictStatus::violated;
        std::sort(rs.witnesses.begin(), rs.witnesses.end());
        rs.witnesses.erase(std::unique(rs.witnesses.begin(), rs.witnesses.end()), rs.witnesses.end());
        res.steps = rs.witnesses;
      } else {
        res.status = rs.satisfied ? VerdictStatus::satisfied : VerdictStatus::vacuous;
      }
      out.push_back(std::move(res));
    }
  }
};

Checker::Checker(std::shared_ptr<const Program> program)
    : impl_(std::make_unique<Impl>(std::static_pointer_cast<const detail::ProgramImpl>(program))) {}
Checker::~Checker() = default;
Checker::Checker(Checker&&) noexcept = default;
Checker& Checker::operator=(Checker&&) noexcept = default;

void Checker::check(const Trajectory& trace, std::vector<RuleResult>& out) { impl_->check(trace, out); }

}  // namespace trajcheck
