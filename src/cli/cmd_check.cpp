// `trajcheck check -r RULES… TRACES…`: compile the rules files into one rule set, check every
// trace with the corpus runner, report in the chosen format.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "input.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> rules_files;
  std::string format = "text";
  std::string fail_on = "error";
  std::string tool_catalog;  // --catalog: the tool catalog JSON
  bool allow_no_rules = false;
  bool strict = false;  // --strict: the rules files' warnings are errors (W008 included)
  std::string otlp_idle = "30s";  // --otlp-idle: when a streamed OTLP trace is complete
  TraceInputOptions input;
};

// --strict: the report's writer, also collecting the (normalized, renamed) tool names the
// traces call, for the unknown-name check once the run is over. Called from worker threads.
class ToolNameCollector : public CheckWriter {
 public:
  explicit ToolNameCollector(const CheckWriter& inner) : inner_(inner) {}
  void trace(const Trajectory& t, const TraceVerdict& v, std::string& out) const override {
    inner_.trace(t, v, out);
    std::vector<std::string_view> mine;
    for (const Step& s : t.steps())
      if (s.type == StepType::tool_call) mine.push_back(t.text(s.tool_name));
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::string_view n : mine) names_.emplace(n);
  }
  void rejected(const RecordError& e, std::string& out) const override { inner_.rejected(e, out); }
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {names_.begin(), names_.end()};
  }

 private:
  const CheckWriter& inner_;
  mutable std::mutex mutex_;
  mutable std::set<std::string, std::less<>> names_;
};

// --strict: a warning is an error; the diagnostics say so.
std::vector<Diagnostic> strict_diagnostics(std::vector<Diagnostic> diags, bool strict, std::size_t* warnings) {
  for (Diagnostic& d : diags)
    if (d.severity == Severity::warning) {
      ++*warnings;
      if (strict) d.severity = Severity::error;
    }
  return diags;
}

// A progress line on standard error for long runs on a terminal: records checked so far,
// refreshed at most every 200 ms, shown only after the first second, erased at the end.
class Progress {
 public:
  Progress() : start_(Clock::now()) {}
  void update(std::uint64_t n) {
    auto now = Clock::now();
    std::int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - start_).count();
    std::int64_t last = last_ms_.load(std::memory_order_relaxed);
    if (ms < 1000 || ms - last < 200) return;
    if (!last_ms_.compare_exchange_strong(last, ms)) return;  // another thread prints
    shown_ = true;
    std::fprintf(stderr, "\r\033[Ktrajcheck: %llu records checked (%.0f/s)",
                 static_cast<unsigned long long>(n), n * 1000.0 / static_cast<double>(ms));
  }
  void finish() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  std::atomic<std::int64_t> last_ms_{0};
  std::atomic<bool> shown_{false};
};

// SIGINT/SIGTERM during a run: no further record is read; those read are checked and written,
// the report closed, and the exit status is kInterrupted. The handler is reset on delivery,
// so a second signal ends the process at once.
std::atomic<int> g_stop_signal{0};  // lock-free: safe in a signal handler
extern "C" void on_check_stop_signal(int sig) { g_stop_signal = sig; }

class StopOnSignal {
 public:
  StopOnSignal() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_check_stop_signal;
    sigemptyset(&sa.sa_mask);
    // SA_RESTART: a write to the report in progress is never cut short by the signal.
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignal() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  static int signal() { return g_stop_signal.load(std::memory_order_relaxed); }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

int run_check(const CheckArgs& a) {
  CheckSpellings spell;
  spell.rules = a.rules_files;
  spell.catalog = a.tool_catalog;
  spell.format = a.format;
  spell.fail_on = a.fail_on;
  spell.reading = ReadingSpec{a.input.input_format, a.input.aliases, a.input.error_patterns, a.input.context};
  spell.jobs = a.input.jobs;
  spell.quiet = a.input.quiet;
  spell.color = use_color(a.input.color, stdout);
  spell.diagnostics_color = use_color(a.input.color, stderr);
  spell.strict = a.strict;
  spell.allow_no_rules = a.allow_no_rules;
  std::uint64_t idle_ms = 0;
  if (!parse_duration_ms(a.otlp_idle, &idle_ms)) {
    fmt::print(stderr, "trajcheck check: --otlp-idle '{}': expected a duration such as 30s, 500ms or 2m\n", a.otlp_idle);
    return kBadInput;
  }
  CheckSetup setup = set_up_check(spell);
  fmt::print(stderr, "{}{}", setup.diagnostics, setup.error);
  if (!setup.ok()) return kBadInput;
  CheckRunOptions run = setup.run;
  const CheckReportOptions& ro = setup.report;
  const RuleSetResult& compiled = setup.compiled;
  // A file is read to its end before its traces are complete; only a stream (standard input)
  // has traces completed by time.
  for (const std::string& in : a.input.inputs)
    if (in == "-") run.join.idle_ms = idle_ms;

  Progress progress;
  if (!a.input.quiet && ::isatty(::fileno(stderr)) != 0)
    run.progress = [&progress](std::uint64_t n) { progress.update(n); };
  CheckRunner runner(compiled.rules, run);
  if (!runner.option_error().empty()) {
    fmt::print(stderr, "trajcheck check: {}\n", runner.option_error());
    return kBadInput;
  }
  CheckReport report(compiled.rules, ro);
  buffer_bulk_output(stdout);
  std::FILE* body = nullptr;
  if (report.buffered()) {
    body = std::tmpfile();
    if (!body) {
      fmt::print(stderr, "trajcheck check: cannot create a temporary file\n");
      return kInternal;
    }
    buffer_bulk_output(body);
  }
  RecordSource source(a.input.inputs, run.reading.format);
  StopOnSignal stop;
  RecordInput input([&source](RawRecord& r) { return StopOnSignal::signal() == 0 && source.next(r); },
                    [&source] { source.read_ahead(); });
  ToolNameCollector collector(report);
  const CheckWriter& writer = a.strict ? static_cast<const CheckWriter&>(collector) : report;
  CheckStats stats = runner.run(input, writer, write_to(body ? body : stdout, stderr));
  progress.finish();
  const int sig = StopOnSignal::signal();
  report.finish(stats, body, stdout, sig != 0);
  if (body) std::fclose(body);
  std::fflush(stdout);
  if (sig != 0) {
    fmt::print(stderr, "trajcheck check: interrupted by {}: the report covers the {} record{} read before it\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM", stats.records,
               stats.records == 1 ? "" : "s");
    return kInterrupted;
  }
  if (stats.traces == 0 && stats.rejected == 0) {
    if (stats.records == 0)
      fmt::print(stderr, "trajcheck check: no trace was checked: {} hold{} no records\n",
                 fmt::join(a.input.inputs, ", "), a.input.inputs.size() == 1 ? "s" : "");
    else
      fmt::print(stderr, "trajcheck check: no trace was checked: the {} record{} read hold no trajectory\n",
                 stats.records, stats.records == 1 ? "" : "s");
  }
  int status = exit_status(stats);
  // --strict: a rule naming a tool that no checked trace calls (and no catalog has) is an
  // error. The rules compile again, now knowing those names.
  if (a.strict && stats.traces > 0) {
    CompileOptions copts;
    copts.catalog_override = a.tool_catalog;
    copts.command_line_aliases = setup.run.reading.aliases;
    copts.seen_tools = collector.names();
    RuleSetResult again = compile_rule_set(a.rules_files, copts);
    std::size_t unknown = 0;
    for (const RuleFile& f : again.files) {
      std::vector<Diagnostic> named;
      for (const Diagnostic& d : f.diagnostics)
        if (d.code == "W008") named.push_back(d);
      if (named.empty()) continue;
      fmt::print(stderr, "{}", format_diagnostics(f.source, strict_diagnostics(std::move(named), true, &unknown),
                                                  use_color(a.input.color, stderr)));
    }
    if (unknown > 0) {
      fmt::print(stderr, "trajcheck check: --strict: {} tool name{} or glob{} of the rules match{} no tool the {} trace{} called\n",
                 unknown, unknown == 1 ? "" : "s", unknown == 1 ? "" : "s", unknown == 1 ? "es" : "", stats.traces,
                 stats.traces == 1 ? "" : "s");
      status = std::max(status, static_cast<int>(kBadInput));
    }
  }
  return status;
}

const bool check_registered = register_command({"check", 10, [](CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand("check", "check traces against rules files");
  sub->add_option("-r,--rules", args->rules_files, "rules file (repeatable)")
      ->required()
      ->allow_extra_args(false);  // -r takes one file, so `-r a.rules traces.jsonl` works
  sub->add_option("--format", args->format, "text|json|jsonl|junit|markdown")
      ->check(CLI::IsMember({"text", "json", "jsonl", "junit", "markdown"}));
  sub->add_option("--fail-on", args->fail_on,
                  "lowest severity that fails a trace: critical|error|warning|info|never (default error)")
      ->check(CLI::IsMember({"critical", "error", "warning", "info", "never"}));
  sub->add_option("--catalog", args->tool_catalog, "tool catalog JSON (overrides the files' catalog line)");
  sub->add_flag("--allow-no-rules", args->allow_no_rules,
                "check even when the rules files hold no rule (every trace passes)");
  sub->add_flag("--strict", args->strict,
                "the rules files' warnings are errors, and so is a tool name no checked trace calls (W008)");
  sub->add_option("--otlp-idle", args->otlp_idle,
                  "reading standard input: an OTLP trace whose root span ended is complete when no span of it "
                  "arrived for this long (default 30s; 0 waits for the end of the input)");
  add_trace_input_options(sub, args->input);
  return [args] { return run_check(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
