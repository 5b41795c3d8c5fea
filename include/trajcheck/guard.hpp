// trajcheck/guard.hpp — an MCP proxy that enforces a rule set on the tool calls it carries
// (`trajcheck guard`).
//
//   trajcheck::GuardOptions o;                          // deny, or only warn
//   int status = trajcheck::run_guard(rs.rules, o, {"npx", "some-mcp-server"}, stdin, stdout, stderr);
//
// RuleSetMonitor is guard mode over a rule set (trajcheck/monitor.hpp for one file), which
// the proxy runs; it may be used on its own too.
//
// The server runs as a child process speaking MCP over stdio (newline-delimited JSON-RPC);
// the proxy sits between it and the client on its own stdin/stdout. Every message is
// forwarded unchanged, except a `tools/call` request that a rule denies: the client gets an
// MCP tool error carrying the rule's message instead, and the server never sees the call.
// Calls and their results become the steps of a trace (RuleSetMonitor), written as native
// JSONL at the end when asked; a call never answered is a step with status error. A message
// either side sends that is not JSON is logged and forwarded as it is; one the proxy does not
// understand is forwarded untouched. A JSON-RPC batch holding a tools/call is not forwarded:
// each request in it is answered with an error (send tool calls one at a time).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/monitor.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

// Guard mode over a rule set: one Monitor per file, fed the same steps; the rule ids it
// reports are global. Steps are read like a trace's: parse them with the set's
// reading_options() (as `check` does) and give observe() / check() a step of the trajectory
// read. finish() gives what RuleSetChecker::check gives for trace().
class RuleSetMonitor {
 public:
  explicit RuleSetMonitor(std::shared_ptr<const RuleSet> rules, std::string_view context = {});
  ~RuleSetMonitor();
  RuleSetMonitor(RuleSetMonitor&&) noexcept;
  RuleSetMonitor& operator=(RuleSetMonitor&&) noexcept;

  void reset(std::string_view context = {});
  void observe(const Trajectory& from, std::size_t index, std::vector<Violation>& out);
  void check(const Trajectory& from, std::size_t index, std::vector<Violation>& out);
  void pending(std::vector<Obligation>& out);
  // The verdicts of the steps observed; valid until the next call. Ends the trace.
  const TraceVerdict& finish(FailOn fail_on = {});
  // The steps observed so far.
  const Trajectory& trace() const;
  const RuleSet& rules() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct GuardOptions {
  bool deny = true;         // false: forward every call, log the violations (warn)
  std::string trace_out;    // write the recorded trace here (native JSONL), when not empty
  std::string context;      // the trace's context, a JSON object text, or empty
};

struct GuardStats {
  std::uint64_t calls = 0, denied = 0, results = 0, malformed = 0;
  std::uint64_t unanswered = 0;       // calls forwarded and never answered (steps with status error)
  std::uint64_t batches_refused = 0;  // JSON-RPC batches holding a tools/call, not forwarded
  std::uint64_t violated_at_end = 0;  // rules (and bindings) violated by the recorded trace
};

// Runs `command` and proxies between it and (`in`, `out`) until both sides are done; the
// log (denials, violations, malformed messages, the summary) goes to `log`. Returns the
// child's exit status, 2 when it could not be started or `trace_out` not written.
int run_guard(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, const std::vector<std::string>& command,
              std::FILE* in, std::FILE* out, std::FILE* log, GuardStats* stats = nullptr);

}  // namespace trajcheck
