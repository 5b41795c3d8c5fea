// Several rules files compiled together, and one trace's verdicts over all of them.
#include <set>
#include <utility>

#include <fmt/format.h>

#include "trajcheck/guard.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

RuleSet::RuleSet(std::vector<std::string> files, std::vector<std::shared_ptr<const Program>> programs)
    : files_(std::move(files)), programs_(std::move(programs)), case_sensitive_(!programs_.empty()) {
  files_.resize(programs_.size());
  for (std::size_t p = 0; p < programs_.size(); ++p) {
    const Program& program = *programs_[p];
    first_rule_.push_back(static_cast<std::uint32_t>(rules_.size()));
    for (const RuleInfo& info : program.rules()) rules_.push_back(Rule{&info, static_cast<std::uint32_t>(p)});
    // A file's aliases rename observed tool names before any rule of any file sees them.
    for (const auto& alias : program.tool_aliases()) aliases_.push_back(alias);
    case_sensitive_ = case_sensitive_ && program.case_sensitive_names();
    if (catalog_file_ < 0)
      if (auto c = program.catalog()) {
        catalog_ = std::move(c);
        catalog_file_ = static_cast<int>(p);
      }
  }
}

NormalizeOptions RuleSet::reading_options(NormalizeOptions given) const {
  // The given aliases win over the files' for the same observed name; all of them chain.
  std::set<std::string> renamed;
  for (const auto& [observed, canonical] : given.aliases) renamed.insert(normalize_tool_name(observed, case_sensitive_));
  for (const auto& alias : aliases_)
    if (!renamed.count(normalize_tool_name(alias.first, case_sensitive_))) given.aliases.push_back(alias);
  given.case_sensitive = case_sensitive_;
  return given;
}

std::string RuleSetResult::format_diagnostics(bool color, bool warnings) const {
  std::string out;
  for (const RuleFile& f : files) {
    if (!f.read_error.empty()) {
      out += f.read_error;
      out += '\n';
    } else if (!f.ok() || (warnings && !f.diagnostics.empty())) {
      out += trajcheck::format_diagnostics(f.source, f.diagnostics, color);
    }
  }
  return out;
}

namespace {
RuleSetResult compile_sources(std::vector<std::optional<Source>> sources, std::vector<std::string> names,
                              std::vector<std::string> read_errors, const CompileOptions& options) {
  RuleSetResult out;
  std::vector<std::shared_ptr<const Program>> programs;
  std::vector<std::string> files;
  bool ok = true;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    RuleFile f;
    f.name = names[i];
    if (!sources[i]) {
      f.read_error = std::move(read_errors[i]);
      ok = false;
      out.files.push_back(std::move(f));
      continue;
    }
    CompileResult r = compile(std::move(*sources[i]), options);
    f.source = std::move(r.source);
    f.diagnostics = std::move(r.diagnostics);
    if (r.ok()) {
      programs.push_back(std::move(r.program));
      files.push_back(f.name);
    } else {
      ok = false;
    }
    out.files.push_back(std::move(f));
  }
  // Every file's aliases rename the traces' tool names for all the files (RuleSet): a file's
  // rule that names a tool another file renames would never see it under that name. Each file
  // that has such a name in reach is compiled again with the others' aliases, so that the name
  // means the canonical one there too, as it does in the file that declares the alias.
  if (ok && programs.size() > 1) {
    for (std::size_t p = 0; p < programs.size(); ++p) {
      CompileOptions again = options;
      for (std::size_t q = 0; q < programs.size(); ++q)
        if (q != p)
          for (const auto& alias : programs[q]->tool_aliases()) again.other_files_aliases.push_back(alias);
      if (again.other_files_aliases.empty()) continue;
      RuleFile& f = out.files[p];  // every file compiled, so files and programs line up
      CompileResult r = compile(f.source, again);
      if (!r.ok()) continue;  // cannot happen (the same text compiled); keep the first
      f.diagnostics = std::move(r.diagnostics);
      programs[p] = std::move(r.program);
    }
  }
  if (ok) out.rules = std::make_shared<const RuleSet>(std::move(files), std::move(programs));
  return out;
}
}  // namespace

RuleSetResult compile_rule_set(const std::vector<std::string>& paths, const CompileOptions& options) {
  std::vector<std::optional<Source>> sources;
  std::vector<std::string> errors(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) sources.push_back(Source::from_file(paths[i], &errors[i]));
  return compile_sources(std::move(sources), paths, std::move(errors), options);
}

RuleSetResult compile_rule_set(std::vector<Source> sources, const CompileOptions& options) {
  std::vector<std::optional<Source>> in;
  std::vector<std::string> names;
  for (Source& s : sources) {
    names.push_back(s.name());
    in.emplace_back(std::move(s));
  }
  return compile_sources(std::move(in), std::move(names), std::vector<std::string>(names.size()), options);
}

// ---------------------------------------------------------------------------------------

std::string_view FailOn::name() const { return never ? "never" : to_string(severity); }

bool parse_fail_on(std::string_view name, FailOn* out) {
  if (name == "never") {
    *out = FailOn{true, out->severity};
    return true;
  }
  RuleSeverity s;
  if (!parse_rule_severity(name, &s)) return false;
  *out = FailOn{false, s};
  return true;
}

struct RuleSetChecker::Impl {
  std::shared_ptr<const RuleSet> rules;
  FailOn fail_on;
  std::vector<Checker> checkers;
  std::vector<RuleResult> file_results;  // one file's results, for rule sets of several files
  TraceVerdict verdict;
};

RuleSetChecker::RuleSetChecker(std::shared_ptr<const RuleSet> rules, FailOn fail_on)
    : impl_(std::make_unique<Impl>()) {
  impl_->fail_on = fail_on;
  for (const auto& p : rules->programs()) impl_->checkers.emplace_back(p);
  impl_->rules = std::move(rules);
}
RuleSetChecker::~RuleSetChecker() = default;
RuleSetChecker::RuleSetChecker(RuleSetChecker&&) noexcept = default;
RuleSetChecker& RuleSetChecker::operator=(RuleSetChecker&&) noexcept = default;

namespace {
// `v.results` holds every file's results with global ids: the rest of the verdict.
void complete_verdict(const RuleSet& rs, FailOn fail_on, const Trajectory& trace, TraceVerdict& v) {
  v.failed = v.flagged = false;
  for (const RuleResult& r : v.results) {
    if (r.status != VerdictStatus::violated || r.rule >= rs.rules().size()) continue;
    v.flagged = true;
    v.failed = v.failed || fail_on.fails(rs.rules()[r.rule].info->severity);
  }
  v.has_catalog = rs.catalog_file() >= 0 &&
                  check_catalog(*rs.programs()[static_cast<std::size_t>(rs.catalog_file())], trace, v.catalog);
}

// Appends one file's results with their ids made global.
void append_results(const RuleSet& rs, std::size_t file, std::vector<RuleResult>& from, std::vector<RuleResult>& to) {
  for (RuleResult& r : from) {
    r.rule += rs.first_rule()[file];
    to.push_back(std::move(r));
  }
}
}  // namespace

const TraceVerdict& RuleSetChecker::check(const Trajectory& trace) {
  Impl& m = *impl_;
  TraceVerdict& v = m.verdict;
  const RuleSet& rs = *m.rules;
  if (m.checkers.size() == 1) {
    m.checkers[0].check(trace, v.results);  // global ids are the file's own
  } else {
    v.results.clear();
    for (std::size_t p = 0; p < m.checkers.size(); ++p) {
      m.checkers[p].check(trace, m.file_results);
      append_results(rs, p, m.file_results, v.results);
    }
  }
  complete_verdict(rs, m.fail_on, trace, v);
  return v;
}

struct RuleSetMonitor::Impl {
  std::shared_ptr<const RuleSet> rules;
  std::vector<Monitor> monitors;
  std::vector<Violation> found;
  std::vector<Obligation> open;
  std::vector<RuleResult> file_results;
  TraceVerdict verdict;

  // Runs `f(monitor, its results)` on each file's monitor, then makes the ids global.
  template <class T, class F>
  void each(std::vector<T>& out, std::vector<T>& scratch, F&& f) {
    out.clear();
    for (std::size_t p = 0; p < monitors.size(); ++p) {
      f(monitors[p], scratch);
      for (T& x : scratch) {
        x.rule += rules->first_rule()[p];
        out.push_back(std::move(x));
      }
    }
  }
};

RuleSetMonitor::RuleSetMonitor(std::shared_ptr<const RuleSet> rules, std::string_view context)
    : impl_(std::make_unique<Impl>()) {
  for (const auto& p : rules->programs()) impl_->monitors.emplace_back(p, context);
  impl_->rules = std::move(rules);
}
RuleSetMonitor::~RuleSetMonitor() = default;
RuleSetMonitor::RuleSetMonitor(RuleSetMonitor&&) noexcept = default;
RuleSetMonitor& RuleSetMonitor::operator=(RuleSetMonitor&&) noexcept = default;

void RuleSetMonitor::reset(std::string_view context) {
  for (Monitor& m : impl_->monitors) m.reset(context);
}
void RuleSetMonitor::observe(const Trajectory& from, std::size_t index, std::vector<Violation>& out) {
  impl_->each(out, impl_->found, [&](Monitor& m, std::vector<Violation>& v) { m.observe(from, index, v); });
}
void RuleSetMonitor::check(const Trajectory& from, std::size_t index, std::vector<Violation>& out) {
  impl_->each(out, impl_->found, [&](Monitor& m, std::vector<Violation>& v) { m.check(from, index, v); });
}
void RuleSetMonitor::pending(std::vector<Obligation>& out) {
  impl_->each(out, impl_->open, [&](Monitor& m, std::vector<Obligation>& v) { m.pending(v); });
}
const TraceVerdict& RuleSetMonitor::finish(FailOn fail_on) {
  Impl& m = *impl_;
  m.verdict.results.clear();
  for (std::size_t p = 0; p < m.monitors.size(); ++p) {
    m.monitors[p].finish(m.file_results);
    append_results(*m.rules, p, m.file_results, m.verdict.results);
  }
  complete_verdict(*m.rules, fail_on, trace(), m.verdict);
  return m.verdict;
}
const Trajectory& RuleSetMonitor::trace() const {
  static const Trajectory none;
  return impl_->monitors.empty() ? none : impl_->monitors[0].trace();
}
const RuleSet& RuleSetMonitor::rules() const { return *impl_->rules; }

int exit_status(const CheckStats& stats) {
  if (stats.rejected > 0 || stats.traces == 0) return 2;
  if (stats.failed > 0) return 1;
  return 0;
}

}  // namespace trajcheck
