// `trajcheck check -r RULES… TRACES…`: compile the rules files once, check every trace on
// the record pipeline (one Checker per worker), report in the chosen format.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/input.hpp"
#include "cli/report_check.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "util/pipeline.hpp"

namespace trajcheck::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> rules;
  std::string format = "text";
  std::string fail_on = "error";
  std::string catalog;
  TraceInputOptions input;
};

// A progress line on standard error for long runs on a terminal: records checked so far,
// refreshed at most every 200 ms, shown only after the first second, erased at the end.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), start_(Clock::now()) {}
  void tick() {
    if (!enabled_) return;
    std::uint64_t n = ++records_;
    if (n % 256 != 0) return;
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
  bool enabled_;
  Clock::time_point start_;
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::int64_t> last_ms_{0};
  std::atomic<bool> shown_{false};
};

// Per-thread state: its own tool table, trajectory buffers and one Checker per rules file,
// all reused from trace to trace.
struct CheckWorker {
  const TraceParser* parser = nullptr;
  const CheckReporter* reporter = nullptr;
  Progress* progress = nullptr;
  std::unique_ptr<ToolTable> tools;
  std::unique_ptr<Trajectory> scratch;
  std::vector<Checker> checkers;
  std::vector<std::vector<RuleResult>> results;
  std::vector<std::uint32_t> base;  // global index of each rules file's first rule
  // Per rule, the number of the last trace that activated / violated it, so that per-trace
  // flags need no clearing.
  std::vector<std::uint64_t> last_activated, last_violated;
  CheckStats stats;
  // The program whose tool catalog accounts for every trace (docs/catalog.md), or null.
  const Program* catalog_program = nullptr;
  CatalogTraceReport catalog_report;
  TraceParser::Emit emit;
  std::string* cur_out = nullptr;
  std::string* cur_err = nullptr;

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    ++stats.records;
    progress->tick();
    if (!rec.container_error.empty()) {
      reject(RecordError{rec.origin, rec.container_error}, out, err);
      return;
    }
    // The emit callback captures only `this` (no allocation per record); it is made on first
    // use, once the worker has its final address.
    if (!emit) emit = [this](Trajectory& t) { check_one(t, *cur_out, *cur_err); };
    cur_out = &out;
    cur_err = &err;
    ParseOutcome o = parser->parse(rec, *scratch, emit);
    if (!o.ok()) {
      for (std::size_t i = 1; i < o.errors.size(); ++i) err += format_record_error(o.errors[i]);
      reject(o.errors[0], out, err);
    }
  }

  void reject(const RecordError& e, std::string& out, std::string& err) {
    ++stats.rejected;
    err += format_record_error(e);
    reporter->rejected(e.where, e.message, out);
  }

  void check_one(Trajectory& t, std::string& out, std::string& err) {
    const std::uint64_t n = ++stats.traces;
    stats.warnings += t.warnings.size();
    if (!reporter->options().quiet)
      for (const std::string& w : t.warnings) {
        err += w;
        if (w.empty() || w.back() != '\n') err += '\n';
      }
    bool failed = false, flagged = false;
    for (std::size_t p = 0; p < checkers.size(); ++p) checkers[p].check(t, results[p]);
    for (std::size_t p = 0; p < results.size(); ++p)
      for (const RuleResult& r : results[p]) {
        std::uint32_t g = base[p] + r.rule;
        if (g >= stats.rules.size()) continue;  // a checker bug must not crash the report
        if (r.status != VerdictStatus::vacuous && last_activated[g] != n) {
          last_activated[g] = n;
          ++stats.rules[g].activated;
        }
        if (r.status == VerdictStatus::violated) {
          flagged = true;
          ++stats.rules[g].violations;
          if (last_violated[g] != n) {
            last_violated[g] = n;
            ++stats.rules[g].violated_traces;
          }
          failed |= reporter->fails(g);
        }
      }
    ++(failed ? stats.failed : stats.passed);
    if (flagged) ++stats.flagged;
    const CatalogTraceReport* cat = nullptr;
    if (catalog_program != nullptr && check_catalog(*catalog_program, t, catalog_report)) {
      stats.catalog.add(catalog_report);
      cat = &catalog_report;
    }
    reporter->trace(t, results, failed, out, cat);
  }
};

int run_check(const CheckArgs& a) {
  ReportOptions ro;
  CheckFormat format;
  if (!parse_check_format(a.format, &format)) {
    fmt::print(stderr, "trajcheck check: unknown --format '{}'\n", a.format);
    return kBadInput;
  }
  ro.format = format;
  ro.fail_on_name = a.fail_on;
  if (a.fail_on == "never") {
    ro.has_fail_on = false;
  } else if (!parse_rule_severity(a.fail_on, &ro.fail_on)) {
    fmt::print(stderr, "trajcheck check: unknown --fail-on '{}'\n", a.fail_on);
    return kBadInput;
  }
  ro.quiet = a.input.quiet;
  ro.color = format == CheckFormat::text && use_color(a.input.color, stdout);
  const bool cur_errcolor = use_color(a.input.color, stderr);

  NormalizeOptions norm;
  std::string error;
  if (!make_normalize_options(a.input, &norm, &error)) {
    fmt::print(stderr, "trajcheck check: {}\n", error);
    return kBadInput;
  }

  // Compile every file before giving up, so one run shows every file's mistakes.
  RuleCatalog catalog;
  bool compiled = true;
  bool all_case_sensitive = !a.rules.empty();
  std::vector<std::pair<std::string, std::string>> file_aliases;
  CompileOptions copts;
  copts.catalog_override = a.catalog;
  for (const std::string& path : a.rules) {
    std::optional<Source> src = Source::from_file(path, &error);
    if (!src) {
      fmt::print(stderr, "trajcheck check: {}\n", error);
      compiled = false;
      continue;
    }
    CompileResult r = compile(std::move(*src), copts);
    bool has_warnings = !r.diagnostics.empty();
    if (!r.ok() || (has_warnings && !a.input.quiet))
      fmt::print(stderr, "{}", format_diagnostics(r.source, r.diagnostics, cur_errcolor));
    if (!r.ok()) {
      compiled = false;
      continue;
    }
    // The rules file's aliases rename observed tool names before any rule sees them.
    for (const auto& al : r.program->tool_aliases()) file_aliases.push_back(al);
    all_case_sensitive = all_case_sensitive && r.program->case_sensitive_names();
    catalog.add(path, r.program);
  }
  if (!compiled) {
    fmt::print(stderr, "trajcheck check: rules did not compile; no trace was checked\n");
    return kBadInput;
  }
  // Aliases given on the command line win over the files' (they come first).
  for (auto& al : file_aliases) norm.aliases.push_back(std::move(al));
  norm.case_sensitive = all_case_sensitive;

  TraceParser parser(norm);
  if (!parser.option_error().empty()) {
    fmt::print(stderr, "trajcheck check: {}\n", parser.option_error());
    return kBadInput;
  }
  // One catalog accounts for the calls: the first rules file's that has one (all of them,
  // with --catalog).
  const Program* catalog_program = nullptr;
  for (const auto& p : catalog.programs)
    if (auto c = program_catalog(*p)) {
      catalog_program = p.get();
      ro.catalog = std::move(c);
      break;
    }
  CheckReporter reporter(catalog, ro);

  std::FILE* body = nullptr;
  if (reporter.buffered()) {
    body = std::tmpfile();
    if (!body) {
      fmt::print(stderr, "trajcheck check: cannot create a temporary file\n");
      return kInternal;
    }
  }
  RecordSource source(a.input.inputs);
  Progress progress(!a.input.quiet && ::isatty(::fileno(stderr)) != 0);
  std::vector<CheckWorker> workers = process_records<CheckWorker>(
      source, effective_jobs(a.input.jobs),
      [&] {
        CheckWorker w;
        w.parser = &parser;
        w.reporter = &reporter;
        w.catalog_program = catalog_program;
        w.progress = &progress;
        w.tools = std::make_unique<ToolTable>();
        w.scratch = std::make_unique<Trajectory>(w.tools.get());
        for (const auto& p : catalog.programs) w.checkers.emplace_back(p);
        w.results.resize(catalog.programs.size());
        w.base = catalog.base;
        w.stats.rules.resize(catalog.rules.size());
        w.last_activated.assign(catalog.rules.size(), 0);
        w.last_violated.assign(catalog.rules.size(), 0);
        return w;
      },
      body ? body : stdout, stderr);

  progress.finish();
  CheckStats total;
  total.rules.resize(catalog.rules.size());
  for (const CheckWorker& w : workers) total.merge(w.stats);
  reporter.finish(total, body, stdout);
  if (body) std::fclose(body);
  std::fflush(stdout);

  // Rejected records win over violations: the verdict is about an incomplete input.
  if (total.rejected > 0) return kBadInput;
  if (total.failed > 0) return kFail;
  return kPass;
}

const bool registered = register_command({"check", 10, [](CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand("check", "check traces against rules files");
  sub->add_option("-r,--rules", args->rules, "rules file (repeatable)")
      ->required()
      ->allow_extra_args(false);  // -r takes one file, so `-r a.rules traces.jsonl` works
  sub->add_option("--format", args->format, "text|json|jsonl|junit|markdown")
      ->check(CLI::IsMember({"text", "json", "jsonl", "junit", "markdown"}));
  sub->add_option("--fail-on", args->fail_on,
                  "lowest severity that fails a trace: critical|error|warning|info|never (default error)")
      ->check(CLI::IsMember({"critical", "error", "warning", "info", "never"}));
  sub->add_option("--catalog", args->catalog, "tool catalog JSON (overrides the files' catalog line)");
  add_trace_input_options(sub, args->input);
  return [args] { return run_check(*args); };
}});

}  // namespace
}  // namespace trajcheck::cli
