// trajcheck/testing.hpp — rules checks as one-line test assertions, and trajectories built in code.
//
//   #include <doctest/doctest.h>      // first, for the TRAJCHECK_* doctest macros
//   #include <trajcheck/testing.hpp>
//   using namespace trajcheck::testing;
//
//   const Rules& rules = Rules::file("rules/refunds.rules");   // compiled once per test binary
//   Trace t = TraceBuilder{}
//                 .user("refund ord_1")
//                 .call("order_get", R"({"order_id":"ord_1"})").result(R"({"status":"delivered"})")
//                 .call("refund_order", R"({"order_id":"ord_1"})").fails("Error: gateway timeout")
//                 .build();
//   TRAJCHECK_CHECK_VIOLATES(rules, t, "approval precedes refund_order");
//   CheckOutcome o = satisfies(rules, t);    // any framework: bool(o), o.explanation
//
// A Trace is built the way a reader builds one: the builder writes a native record and reads it
// with TraceParser, so names are normalized and results stored exactly as they would be when read
// from a file. Explanations render a failing trace as `trajcheck check` prints it (its FAIL line,
// each violated rule with its severity, message, source and witness steps).
//
// Unlike the rest of the API, these helpers throw (std::invalid_argument for a builder argument
// that is not JSON or a record the reader rejects, RulesError for rules that do not compile): a
// test wants to stop there with the message. Rules objects are immutable and thread-safe; a
// TraceBuilder and a Trace belong to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck::testing {

// A trajectory that owns its tool table: what TraceBuilder::build() and read_trace() return.
class Trace {
 public:
  Trace();
  Trace(Trace&&) noexcept;
  Trace& operator=(Trace&&) noexcept;
  ~Trace();

  const Trajectory& trajectory() const { return *trajectory_; }
  operator const Trajectory&() const { return *trajectory_; }  // NOLINT: passes where a Trajectory does
  // The native record the trace was read from (TraceBuilder) or the record given to read_trace().
  const std::string& record() const { return record_; }

 private:
  friend Trace read_trace(std::string_view, const NormalizeOptions&);
  std::unique_ptr<ToolTable> tools_;
  std::unique_ptr<Trajectory> trajectory_;
  std::string record_;
};

// Reads one trajectory in any supported format (TRACES.md) from its JSON text; throws
// std::invalid_argument with the reader's located message when the record is rejected.
Trace read_trace(std::string_view json, const NormalizeOptions& options = {});

// Builds a native record step by step. Every argument called `json` must be one JSON value
// (checked: std::invalid_argument names the step otherwise); text arguments are plain strings.
class TraceBuilder {
 public:
  TraceBuilder& id(std::string_view trace_id);       // default "trace"
  TraceBuilder& context(std::string_view json);      // the trace context object (`context.*`)
  TraceBuilder& user(std::string_view text);
  TraceBuilder& assistant(std::string_view text);
  TraceBuilder& system(std::string_view text);
  TraceBuilder& final_answer(std::string_view text);
  // A tool call; `arguments_json` empty means no arguments.
  TraceBuilder& call(std::string_view tool, std::string_view arguments_json = {});
  // The result of the last call, as JSON (`R"({"status":"ok"})"`, `R"("done")"`) …
  TraceBuilder& result(std::string_view json);
  // … or as text (stored as a JSON string; text that is itself a JSON object is read as one).
  TraceBuilder& result_text(std::string_view text);
  // The last call failed (status `error`); a non-empty `message` becomes its result text.
  TraceBuilder& fails(std::string_view message = {});
  TraceBuilder& approval_request(std::string_view tool_call_id = {});
  TraceBuilder& approval(std::string_view decision, std::string_view tool_call_id = {});
  // Sets one field of the last step (`id`, `latency_ms`, `turn`, `parent_id`, …) to a JSON value.
  TraceBuilder& set(std::string_view key, std::string_view json);
  // Any native step, as a JSON object (`{"type":"retrieval","query":"policy"}`).
  TraceBuilder& step(std::string_view json);

  // The native record built so far, one line.
  std::string json() const;
  // Reads json() like any record (normalization, aliases and error patterns of `options`).
  Trace build(const NormalizeOptions& options = {}) const;

 private:
  struct PendingStep {
    std::vector<std::pair<std::string, std::string>> fields;  // key -> JSON text
    void put(std::string_view key, std::string json);
  };
  PendingStep& last(std::string_view what);
  TraceBuilder& message(std::string_view type, std::string_view text);
  std::string trace_id_ = "trace";
  std::string context_;
  std::vector<PendingStep> steps_;
};

// Rules that did not compile; what() is the compiler's text (`trajcheck lint`'s).
class RulesError : public std::runtime_error {
 public:
  RulesError(const std::string& text, std::vector<Diagnostic> diagnostics)
      : std::runtime_error(text), diagnostics_(std::move(diagnostics)) {}
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Compiled rules files (a RuleSet). Immutable; share it between tests and threads.
class Rules {
 public:
  // Compiled once per test binary: later calls with the same path(s) (or text and name) return
  // the same object. Throw RulesError when the rules cannot be read or do not compile.
  static const Rules& file(const std::string& path);
  static const Rules& files(const std::vector<std::string>& paths);
  static const Rules& text(const std::string& text, const std::string& name = "<rules>");
  // Compiles afresh (no cache).
  static Rules compile(Source source, const CompileOptions& options = {});

  explicit Rules(std::shared_ptr<const RuleSet> rules) : rules_(std::move(rules)) {}
  const std::shared_ptr<const RuleSet>& rule_set() const { return rules_; }
  // The global id of the rule named `name`, or -1.
  int find(std::string_view name) const;

 private:
  std::shared_ptr<const RuleSet> rules_;
};

// What a check found, and for people the reason it passed or failed.
struct CheckOutcome {
  bool ok = false;
  std::vector<RuleResult> results;  // one entry per rule (per binding), rules-file order
  std::string explanation;          // empty when ok
  explicit operator bool() const { return ok; }
};

// Every rule holds: no result at or above `fail_on` is violated (by default, none at all).
CheckOutcome satisfies(const Rules& rules, const Trajectory& trace,
                       RuleSeverity fail_on = RuleSeverity::info);
// The rule named `rule` is violated. Not ok when it holds, or when the rules have no such rule
// (the explanation lists the names they have).
CheckOutcome violates(const Rules& rules, const Trajectory& trace, std::string_view rule);
// The trace's report as `trajcheck check` prints it in text (empty when no rule is violated).
std::string explain(const Rules& rules, const Trajectory& trace,
                    RuleSeverity fail_on = RuleSeverity::error);

}  // namespace trajcheck::testing

// doctest assertions whose failure message is the explanation. Defined only when doctest was
// included first; any other framework uses the functions above (`EXPECT_TRUE(o) << o.explanation`).
#ifdef DOCTEST_LIBRARY_INCLUDED
#define TRAJCHECK_DETAIL_ASSERT(kind, call, text)                                      \
  do {                                                                                  \
    ::trajcheck::testing::CheckOutcome trajcheck_outcome_ = call;                       \
    if (!trajcheck_outcome_.ok)                                                         \
      DOCTEST_ADD_FAIL_##kind##AT(__FILE__, __LINE__, (text " failed\n" + trajcheck_outcome_.explanation)); \
  } while (false)
#define TRAJCHECK_CHECK_SATISFIES(rules, trace)                                      \
  TRAJCHECK_DETAIL_ASSERT(CHECK_, ::trajcheck::testing::satisfies(rules, trace),      \
                          "TRAJCHECK_CHECK_SATISFIES(" #rules ", " #trace ")")
#define TRAJCHECK_REQUIRE_SATISFIES(rules, trace)                                    \
  TRAJCHECK_DETAIL_ASSERT(, ::trajcheck::testing::satisfies(rules, trace),            \
                          "TRAJCHECK_REQUIRE_SATISFIES(" #rules ", " #trace ")")
#define TRAJCHECK_CHECK_VIOLATES(rules, trace, rule)                                 \
  TRAJCHECK_DETAIL_ASSERT(CHECK_, ::trajcheck::testing::violates(rules, trace, rule), \
                          "TRAJCHECK_CHECK_VIOLATES(" #rules ", " #trace ", " #rule ")")
#define TRAJCHECK_REQUIRE_VIOLATES(rules, trace, rule)                               \
  TRAJCHECK_DETAIL_ASSERT(, ::trajcheck::testing::violates(rules, trace, rule),       \
                          "TRAJCHECK_REQUIRE_VIOLATES(" #rules ", " #trace ", " #rule ")")
#endif
