// trajcheck/serve.hpp — `trajcheck serve`: an OTLP/HTTP receiver that checks traces as they
// complete. The core (ServeCore) takes export request bodies and a clock, without sockets;
// run_serve puts it behind an HTTP server (cpp-httplib) with signals, a timer and the outputs.
//
//   trajcheck::ServeCore core(rules, {}, [](const trajcheck::ServeVerdict& v) { … v.jsonl … });
//   trajcheck::ServeReply r = core.post_traces("application/json", body);   // 200, 400, 415, 503…
//   core.poll();      // a timer: checks the traces complete by now (root ended, idle)
//   core.finish();    // shutdown: checks every open trace
//   std::string text = core.metrics();   // Prometheus text exposition
//
// Spans are read by the OTLP JSON reader (TraceParser) and joined by traceId (TraceJoiner). A
// trace is checked once its root span has ended and no span of it arrived for idle_ms, when it
// is evicted (caps below; checked as it is, with a warning saying so), or at finish(). Every
// verdict is one `check --format jsonl` record. All members are safe to call from any thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/run.hpp"

namespace trajcheck {

struct ServeOptions {
  std::uint64_t idle_ms = 5000;            // a trace whose root ended is complete after this quiet time
  std::size_t max_open_traces = 10000;     // traces held at once (see post_traces)
  std::size_t max_spans_per_trace = 10000; // past it the trace is evicted: checked as it is
  std::uint64_t max_body_bytes = std::uint64_t{16} << 20;  // a bigger request: 413
  std::size_t max_waiting_requests = 64;   // requests waiting for the core beyond this: 429
  FailOn fail_on;
  // Milliseconds from a steady clock (tests give their own); null: std::chrono::steady_clock.
  std::function<std::uint64_t()> clock;
};

// One checked trace, handed to the sink in the order traces are checked.
struct ServeVerdict {
  const Trajectory* trace = nullptr;
  const TraceVerdict* verdict = nullptr;
  const RuleSet* rules = nullptr;
  std::string jsonl;     // the `check --format jsonl` record, with its newline
  std::string warnings;  // the trace's located warnings, one per line ("" if none)
};

struct ServeReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body = "{}";     // OTLP: an ExportTraceServiceResponse, or a Status with the reason
  int retry_after_s = 0;       // > 0: send a Retry-After header (429, 503)
};

class ServeCore {
 public:
  using Sink = std::function<void(const ServeVerdict&)>;
  // `sink` is called with the core's lock held (verdicts never interleave).
  ServeCore(std::shared_ptr<const RuleSet> rules, ServeOptions options, Sink sink);
  ~ServeCore();
  ServeCore(const ServeCore&) = delete;
  ServeCore& operator=(const ServeCore&) = delete;

  // One OTLP/HTTP export request (POST /v1/traces), JSON (application/json) or protobuf
  // (application/x-protobuf: decoded to the OTLP JSON of the same request, then read alike;
  // answered in protobuf). Read whole or not at all — a body that is not an OTLP trace export
  // is answered 400 with the reason (and counted); another media type 415 (protobuf too in a
  // build without protobuf); over max_body_bytes 413. When the request would open more traces
  // than max_open_traces, traces idle for idle_ms or more are evicted to make room; if that is
  // not enough, 503 with Retry-After (nothing of the request is kept: the exporter sends it
  // again). After draining() every request is 503.
  ServeReply post_traces(std::string_view content_type, std::string_view body);
  // Checks the traces complete by now; returns how many.
  std::size_t poll();
  // Checks every open trace (shutdown); returns how many.
  std::size_t finish();
  // From now on requests are refused (503): shutdown has begun.
  void drain();
  // Rules used for the traces checked from now on (those held are checked with them too).
  void reload(std::shared_ptr<const RuleSet> rules);

  // Prometheus text exposition format 0.0.4.
  std::string metrics() const;

  struct Counters {
    std::uint64_t requests = 0, spans = 0, traces_checked = 0, traces_failed = 0;
    std::uint64_t protobuf_requests = 0;  // of `requests`, those in protobuf
    std::uint64_t rejected = 0;  // requests answered 4xx/5xx
    std::uint64_t evicted = 0;   // traces checked before they were complete
    std::uint64_t reloads = 0;
    std::size_t open_traces = 0, spans_held = 0;
  };
  Counters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How the decision log shows a call's arguments: masked (every value "***", keys and shape
// kept) unless `full`; with `full`, the values of the keys in `mask` are still masked.
struct DecisionLogArguments {
  bool full = false;
  std::vector<std::string> mask;
};

// A verdict as lines of the decision log `trajcheck guard --decision-log` writes (docs/guard.md):
// one per violated rule — verdict "deny", mode "observe", forwarded true (serve sees spans after
// the fact; nothing was stopped), the call of the rule's last witness step (its id, tool and
// arguments; null when that step is not a tool call), the rule and its message — or, when no
// rule was violated, one "allow" line whose call and rule are null. decision_id is
// TRACE_ID:N; rules_digest as given (rules_digest() of the rules files).
std::string serve_decision_lines(const ServeVerdict& verdict, std::string_view rules_digest,
                                 const DecisionLogArguments& arguments = {});

// `trajcheck serve`: the HTTP server around ServeCore until SIGTERM or SIGINT (then: stop
// accepting, check every open trace, flush; exit 0). SIGHUP compiles `rules_files` again; a
// file that does not compile keeps the old rules, with the reason on `err`.
struct ServeRunOptions {
  std::vector<std::string> rules_files;
  CompileOptions compile;
  std::string listen = "127.0.0.1:4318";  // HOST:PORT; port 0 picks a free one (printed on err)
  std::string out = "-";                  // jsonl verdicts: a file (appended to) or "-" for stdout
  std::string otlp_endpoint;              // gen_ai.evaluation.result events, when set
  // Decision-log lines (serve_decision_lines): a file (appended to), "-" for standard error,
  // "" for none. Rules reloaded by SIGHUP are named by their own digest.
  std::string decision_log;
  DecisionLogArguments log_arguments;
  ServeOptions core;
};
int run_serve(const ServeRunOptions& options, std::FILE* err);

// Resident set size of this process in bytes (0 when unknown).
std::uint64_t resident_bytes();

}  // namespace trajcheck
