// Coverage of a program by traces (`trajcheck test --coverage`, docs/testing-rules.md): which
// statements of a rule of several statements are violated on their own, and which positions of
// an `expect` automaton a trace reaches. A separate run over the trace, never a mode of the
// Checker `check` uses: the statements are checked by an ordinary Checker over a derived program
// (each statement a rule of its own), the positions by the automaton walk of the checker's
// expect monitor (StatementMonitor::expect_next) repeated on the side. The probe compiles the
// rules source again (as compile() does) to reach the compiled tables, so that the Program the
// checks run keeps its compiled form private.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trajcheck/rules.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::detail {

struct StatementProbe {
  std::string text;
  bool split = false;      // its own verdict is measured (a rule of several statements, not parametric)
  bool path = false;       // an `expect` whose positions are followed (unscoped, not parametric)
  bool is_expect = false;  // an `expect` at all
  std::vector<std::string> atoms;  // per position of the automaton (path)
  // Transitions of the automaton (path): (from, to) positions, kPathStart for "before the
  // first call" and kPathEnd for "the trace ends here, accepted".
  std::vector<std::pair<std::uint32_t, std::uint32_t>> transitions;
};
inline constexpr std::uint32_t kPathStart = 0xFFFFFFFEu;
inline constexpr std::uint32_t kPathEnd = 0xFFFFFFFFu;

// What one trace did: per rule, per statement, violated on its own (split statements), and
// per position reached (path statements).
struct TraceCoverage {
  std::vector<std::vector<std::uint8_t>> violated;
  std::vector<std::vector<std::vector<std::uint8_t>>> reached;
  std::vector<std::vector<std::vector<std::uint8_t>>> taken;  // per transition
};

class CoverageProbe {
 public:
  // `source` compiled with `options` (as the Program under test was); ok() false when it does
  // not compile.
  CoverageProbe(const Source& source, const CompileOptions& options);
  bool ok() const;
  ~CoverageProbe();
  CoverageProbe(CoverageProbe&&) noexcept;
  CoverageProbe& operator=(CoverageProbe&&) noexcept;

  // Per rule (Program::rules() order), its statements.
  const std::vector<std::vector<StatementProbe>>& statements() const;
  bool parametric(std::uint32_t rule) const;
  bool scoped(std::uint32_t rule) const;
  // Observes one trace (read with the rule set's reading options) with `fixture` (JSON, or
  // empty) as the environment fixture.
  void observe(const Trajectory& trace, std::string_view fixture, TraceCoverage& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool ok_ = false;
};

}  // namespace trajcheck::detail
