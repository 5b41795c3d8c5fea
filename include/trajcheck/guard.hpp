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
// the proxy sits between it and the client on its own stdin/stdout. A client message is
// forwarded only when the proxy could read it whole (strict JSON: UTF-8, no duplicate keys,
// finite numbers, at most 512 levels) and, for a `tools/call`, decide it: a call a rule denies
// gets an MCP tool error carrying the rule's message, one that cannot be decided a JSON-RPC
// error, and the server sees neither. Each call is decided against every call forwarded
// before it, answered or not. Calls and their results become the steps of a trace
// (RuleSetMonitor), appended to --trace-out as they are known; a call never answered is a
// step with status error. Server messages go to the client unchanged. See docs/guard.md.
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
  bool deny = true;         // enforce: answer a denied call; false: observe (forward it, log it)
  std::string trace_out;    // append the recorded trace here (native JSONL, one line per session)
  std::string trace_id;     // the trace's id; empty: "guard-<client>-<UTC time>-<pid>"
  std::string context;      // the trace's context, a JSON object text, or empty
  // The longest message (one line) the client may send; a longer one is refused unread.
  std::size_t max_message_bytes = std::size_t{64} << 20;
  // Decision log: one JSON line per decision on a tools/call, when not null.
  std::FILE* decision_log = nullptr;
  bool log_arguments = false;          // false: every argument value is masked ("***")
  std::vector<std::string> mask_args;  // with log_arguments: these keys' values masked, at any depth
  std::string rules_digest;            // named in each decision (e.g. "sha256:…" of the rules files)
  // Each decision also as an OpenTelemetry event (gen_ai.guardrail.result) sent to this OTLP/HTTP
  // endpoint (http://HOST:PORT, as OTEL_EXPORTER_OTLP_ENDPOINT; /v1/logs is added), when not empty.
  std::string otlp_endpoint;
};

struct GuardStats {
  std::uint64_t calls = 0, denied = 0, results = 0, malformed = 0;
  std::uint64_t refused = 0;          // client messages not forwarded because they could not be read or decided
  std::uint64_t unanswered = 0;       // calls forwarded and never answered (steps with status error)
  std::uint64_t batches_refused = 0;  // JSON-RPC batches holding a tools/call, not forwarded
  std::uint64_t violated_at_end = 0;  // rules (and bindings) violated by the recorded trace
};

// The proxy's decisions without processes: bytes from the client in, what to forward to the
// server and what to answer the client out; bytes from the server in (already forwarded by
// the caller), the calls' results recorded. The client's bytes are split into messages on
// `\n`, `\r\n` and a lone `\r` (as the MCP Python SDK's server reads them); each message
// forwarded goes out as its own bytes and a `\n`. What cannot be parsed or decided is never
// forwarded. client_*() and server_*() may be called from two threads.
class GuardSession {
 public:
  GuardSession(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, std::FILE* log);
  ~GuardSession();
  GuardSession(const GuardSession&) = delete;
  GuardSession& operator=(const GuardSession&) = delete;

  // Opens options.trace_out for appending and the OTLP exporter (before any server runs);
  // false with *error.
  bool open_trace(std::string* error);

  struct Output {
    std::string to_server;  // messages to forward, each ending in \n
    std::string to_client;  // answers of the proxy itself, each ending in \n
  };
  void client_bytes(std::string_view bytes, Output& out);
  void client_end(Output& out);  // the client closed its side: a last unterminated message
  // Bytes the server wrote (the caller forwards them to the client unchanged).
  void server_bytes(std::string_view bytes);
  void server_end();
  // The end: calls never answered become steps with status error, the trace record is
  // closed, the decision events sent, the summary logged. False when the trace could not be
  // written or an event could not be exported.
  bool finish(GuardStats* stats = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs `command` and proxies between it and (`in`, `out`) until both sides are done, or
// SIGTERM/SIGINT arrives (the server is then stopped and the trace completed); the log
// (denials, violations, refused messages, the summary) goes to `log`. Returns the child's
// exit status (128+N for a signal N), 2 when it could not be started, the trace not written or
// a decision event not exported.
int run_guard(std::shared_ptr<const RuleSet> rules, const GuardOptions& options, const std::vector<std::string>& command,
              std::FILE* in, std::FILE* out, std::FILE* log, GuardStats* stats = nullptr);

}  // namespace trajcheck
