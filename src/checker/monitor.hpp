// One statement's monitor over one segment: a small value type with begin (reset for a
// new segment), step, finish and done. A parametric rule (§5) will keep one of these per
// binding value; a scope keeps one and resets it per segment.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checker/step_eval.hpp"
#include "compiler/program.hpp"

namespace trajcheck::detail {

// Parametric rules (§5): the steps binding nothing that matter to one statement (its
// `ignoring` applied), as sorted step indices, logged once per rule. What `a` and `b` hold
// depends on the statement kind (see Checker::Impl::log_non_binding); a slice reads a range
// of them when it catches up.
struct NbEvents {
  std::vector<std::uint32_t> a, b;
  void clear() {
    a.clear();
    b.clear();
  }
};

class StatementMonitor {
 public:
  StatementMonitor(const StatementSpec& spec, const ProgramImpl& program);

  void begin();
  void step(StepEval& ev);
  // Parametric rules (spec().nb == lazy): applies the steps binding nothing in [from, to),
  // all inside this segment, in one step: O(log events) plus the witnesses it adds.
  void catch_up(const NbEvents& ev, std::uint32_t from, std::uint32_t to);
  // Before finish() at segment end `end`: materialises what catch_up kept as a range
  // (followed by: the pending A's that bind nothing).
  void flush_nb(const NbEvents& ev, std::uint32_t end);
  // The segment's verdict; a violated segment appends its witnesses to `witnesses`.
  VerdictStatus finish(std::vector<std::uint32_t>& witnesses);
  // Nothing a later step does can change this segment's verdict or witnesses.
  bool done() const { return done_; }
  const StatementSpec& spec() const { return *spec_; }

 private:
  void step_expect(StepEval& ev);
  void canonical_arguments(StepEval& ev);
  void canonical_value(simdjson::dom::element el);

  const StatementSpec* spec_;
  const Nfa* nfa_ = nullptr;
  bool done_ = false;
  bool activated_ = false;  // the statement's trigger occurred (vacuity)
  bool seen_a_ = false, seen_b_ = false, any_ = false, flag_ = false;
  std::uint32_t first_a_ = kNoId, first_b_ = kNoId, pending_ = kNoId, last_ = kNoId;
  // followed by, lazy: every A of NbEvents::a from this step on is pending (kNoId: none).
  std::uint32_t nb_from_ = kNoId;
  std::uint64_t count_ = 0;
  std::vector<std::uint32_t> buf_;  // candidate witnesses of this segment
  // retries: per local tool (chain active, retries so far), and the tools touched.
  std::vector<std::pair<bool, std::uint64_t>> chains_;
  std::vector<std::uint32_t> touched_;
  // no duplicate: canonical (tool, arguments) keys seen in this segment.
  KeySet keys_;
  std::string scratch_;
  std::vector<std::pair<std::string_view, simdjson::dom::element>> members_;
  // expect: current and next position sets; `started_` false means "at the start state".
  std::vector<std::uint64_t> cur_, next_;
  bool started_ = false;
};

}  // namespace trajcheck::detail
