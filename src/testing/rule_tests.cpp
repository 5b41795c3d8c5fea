// `trajcheck test` (docs/testing-rules.md): finding the test files, reading every case's trace,
// checking it against the rules the file names, comparing with the expected verdicts, and with
// coverage, which rules, statements and PATH positions the passing cases exercised.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "checker/coverage.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/rule_tests.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {
namespace {

namespace rtfs = std::filesystem;

bool rt_ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The key a rules file is known by across test files (one coverage entry per rules file).
std::string rules_key(const std::string& path) {
  std::error_code ec;
  rtfs::path p = rtfs::weakly_canonical(rtfs::path(path), ec);
  return ec ? rtfs::path(path).lexically_normal().generic_string() : p.generic_string();
}

struct RtDiscovered {
  std::vector<std::string> test_files;
  std::vector<std::string> rules_files;  // found in directories
};

void rt_discover(const std::vector<std::string>& paths, RtDiscovered& d, RuleTestRun& run) {
  for (const std::string& path : paths) {
    std::error_code ec;
    rtfs::file_status st = rtfs::status(path, ec);
    if (ec || !rtfs::exists(st)) {
      run.errors.push_back(fmt::format("trajcheck test: {}: no such file or directory", path));
      continue;
    }
    if (rtfs::is_directory(st)) {
      std::vector<std::string> found;
      rtfs::recursive_directory_iterator it(path, rtfs::directory_options::skip_permission_denied, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_directory(ec) && !name.empty() && name[0] == '.') {
          it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file(ec)) continue;
        if (!rt_ends_with(name, ".rules.test.json") && !rt_ends_with(name, ".rules")) continue;
        std::string p = it->path().generic_string();
        if (p.rfind("./", 0) == 0) p.erase(0, 2);  // `test .` names files as people write them
        found.push_back(std::move(p));
      }
      if (ec) run.errors.push_back(fmt::format("trajcheck test: {}: {}", path, ec.message()));
      std::sort(found.begin(), found.end());
      for (std::string& f : found) (rt_ends_with(f, ".rules") ? d.rules_files : d.test_files).push_back(std::move(f));
    } else if (rt_ends_with(path, ".test.json")) {
      d.test_files.push_back(path);
    } else if (rt_ends_with(path, ".rules")) {
      const std::string t = path + ".test.json";
      if (rtfs::exists(t, ec)) d.test_files.push_back(t);
      else run.errors.push_back(fmt::format("trajcheck test: {}: no tests: {} does not exist (docs/testing-rules.md)", path, t));
    } else {
      run.errors.push_back(fmt::format("trajcheck test: {}: neither a test file (*.test.json), a rules file (*.rules) nor a directory", path));
    }
  }
  // A test file named twice (a directory and the file itself) runs once.
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (std::string& f : d.test_files)
    if (seen.insert(rules_key(f)).second) unique.push_back(std::move(f));
  d.test_files = std::move(unique);
}

struct CaseTrace {
  std::unique_ptr<ToolTable> tools = std::make_unique<ToolTable>();
  std::unique_ptr<Trajectory> trace;
};

std::string rt_location_of(const Source& src, SourceRange r) {
  LineCol lc = src.line_col(r.begin);
  return fmt::format("{}:{}:{}", src.name(), lc.line, lc.column);
}

// Reads a case's trace; false with a diagnostic on `file` when it cannot be.
bool read_case_trace(const RuleTestCase& c, const RuleSet& rules, RuleTestFile& file, CaseTrace& out) {
  NormalizeOptions given;
  given.error_patterns = c.error_patterns;
  TraceParser parser(rules.reading_options(given));
  auto fail = [&](std::string message) {
    file.diagnostics.push_back(Diagnostic{Severity::error, "E603", c.trace_at, std::move(message), {}});
    return false;
  };
  if (!parser.option_error().empty()) return fail(fmt::format("case \"{}\": {}", c.name, parser.option_error()));
  out.trace = std::make_unique<Trajectory>(out.tools.get());
  if (!c.record.empty()) {
    RecordOrigin origin;
    origin.file = file.source.name();
    ParseOutcome o = parser.parse_value(c.record, origin, *out.trace);
    if (!o.ok()) return fail(fmt::format("case \"{}\": the trace is not one the readers accept: {}", c.name, o.errors.front().message));
    if (o.traces != 1) return fail(fmt::format("case \"{}\": the trace holds {} trajectories, not one", c.name, o.traces));
    return true;
  }
  RecordSource src({c.trace_file});
  RawRecord rec;
  Trajectory scratch(out.tools.get());
  std::vector<std::unique_ptr<Trajectory>> found;
  std::size_t total = 0;
  while (src.next(rec)) {
    if (rec.skipped()) continue;
    if (!rec.container_error.empty())
      return fail(fmt::format("case \"{}\": {}:{}:{}: {}", c.name, rec.origin.file, rec.origin.line, rec.origin.column, rec.container_error));
    ParseOutcome o = parser.parse(rec, scratch, [&](Trajectory& t) {
      ++total;
      if (!c.trace_id || t.trace_id() == *c.trace_id) found.push_back(std::make_unique<Trajectory>(t));
    });
    if (!o.ok()) {
      const RecordError& e = o.errors.front();
      return fail(fmt::format("case \"{}\": {}:{}:{}: {}", c.name, e.where.file, e.where.line, e.where.column, e.message));
    }
  }
  if (c.trace_id && found.empty())
    return fail(fmt::format("case \"{}\": no trace \"{}\" in {} ({} trace{})", c.name, *c.trace_id, c.trace_file, total, total == 1 ? "" : "s"));
  if (found.empty()) return fail(fmt::format("case \"{}\": {} holds no trace", c.name, c.trace_file));
  if (found.size() > 1)
    return fail(fmt::format("case \"{}\": {} holds {} traces{}: pick one with \"trace_id\"", c.name, c.trace_file, found.size(),
                            c.trace_id ? " with that id" : ""));
  out.trace = std::move(found.front());
  return true;
}

// One rule's verdict on a trace over all its result entries (bindings).
struct RtVerdict {
  VerdictStatus status = VerdictStatus::vacuous;
  std::vector<std::uint32_t> steps;
};

bool rt_matches(const RuleCheck& c) {
  switch (c.expected) {
    case ExpectedVerdict::violated:
      return c.actual == VerdictStatus::violated && (!c.expected_steps || c.steps == c.actual_steps);
    case ExpectedVerdict::satisfied: return c.actual == VerdictStatus::satisfied;
    case ExpectedVerdict::vacuous: return c.actual == VerdictStatus::vacuous;
    case ExpectedVerdict::holds: return c.actual != VerdictStatus::violated;
  }
  return false;
}

// Coverage state of one rules file.
struct FileCoverage {
  std::string file;
  std::shared_ptr<const Program> program;
  std::unique_ptr<detail::CoverageProbe> probe;
  std::vector<RuleCoverage> rules;
  bool tested = false;
};

FileCoverage& coverage_of(std::map<std::string, FileCoverage>& cov, const std::string& file,
                          const std::shared_ptr<const Program>& program, const Source& source) {
  FileCoverage& fc = cov[rules_key(file)];
  if (fc.program) return fc;
  fc.file = file;
  fc.program = program;
  fc.probe = std::make_unique<detail::CoverageProbe>(source, CompileOptions{});
  const auto& st = fc.probe->statements();
  for (std::uint32_t r = 0; r < program->rules().size(); ++r) {
    RuleCoverage rc;
    rc.file = file;
    rc.name = program->rules()[r].name;
    rc.location = program->rules()[r].location;
    rc.parametric = fc.probe->parametric(r);
    for (const detail::StatementProbe& sp : st[r]) {
      StatementCoverage s;
      s.text = sp.text;
      s.measured = sp.split;
      s.paths_measured = sp.path;
      for (const std::string& a : sp.atoms) s.positions.push_back({a, false});
      for (const auto& [from, to] : sp.transitions) {
        PathTransitionCoverage t;
        t.from = from == detail::kPathStart ? "(start)" : sp.atoms[from];
        t.to = to == detail::kPathEnd ? "(end)" : sp.atoms[to];
        t.from_position = from == detail::kPathStart ? 0 : from + 1;
        t.to_position = to == detail::kPathEnd ? 0 : to + 1;
        s.transitions.push_back(std::move(t));
      }
      s.is_expect = sp.is_expect;
      rc.statements.push_back(std::move(s));
    }
    fc.rules.push_back(std::move(rc));
  }
  return fc;
}

void run_file(const std::string& path, const RuleTestOptions& options, RuleTestRun& run,
              std::map<std::string, FileCoverage>& cov) {
  RuleTestFileResult fr;
  fr.file = path;
  std::string read_error;
  std::optional<Source> src = Source::from_file(path, &read_error);
  if (!src) {
    run.errors.push_back(fmt::format("trajcheck test: {}", read_error));
    run.files.push_back(std::move(fr));
    return;
  }
  RuleTestFile file = parse_rule_test_file(std::move(*src));
  fr.rules = file.rules;
  auto give_up = [&] {
    sort_diagnostics(file.diagnostics);
    run.errors.push_back(format_diagnostics(file.source, file.diagnostics));
    run.files.push_back(std::move(fr));
  };
  if (!file.ok()) return give_up();

  RuleSetResult compiled = compile_rule_set(file.rules);
  for (std::size_t i = 0; i < compiled.files.size(); ++i) {
    const RuleFile& rf = compiled.files[i];
    const SourceRange at = i < file.rules_at.size() ? file.rules_at[i] : SourceRange{};
    if (!rf.read_error.empty()) {
      file.diagnostics.push_back(Diagnostic{Severity::error, "E604", at, fmt::format("rules file: {}", rf.read_error), {}});
    } else if (!rf.ok()) {
      file.diagnostics.push_back(Diagnostic{Severity::error, "E604", at,
                                            fmt::format("rules file {} does not compile (trajcheck lint {})", rf.name, rf.name), {}});
      run.errors.push_back(format_diagnostics(rf.source, rf.diagnostics));
    }
  }
  if (!compiled.ok()) return give_up();
  const RuleSet& rules = *compiled.rules;

  // Rule names: each expectation names exactly one rule.
  std::vector<std::string> names;
  for (const RuleSet::Rule& r : rules.rules()) names.push_back(r.info->name);
  std::vector<std::vector<std::uint32_t>> targets(file.cases.size());
  for (std::size_t ci = 0; ci < file.cases.size(); ++ci)
    for (const RuleExpectation& e : file.cases[ci].expect) {
      std::vector<std::uint32_t> ids;
      for (std::uint32_t g = 0; g < names.size(); ++g)
        if (names[g] == e.rule) ids.push_back(g);
      if (ids.size() == 1) {
        targets[ci].push_back(ids[0]);
        continue;
      }
      targets[ci].push_back(0);
      std::string message;
      if (ids.empty()) {
        std::string near = closest_name(e.rule, names);
        message = near.empty() ? fmt::format("unknown rule '{}': the rules are {}", e.rule,
                                             names.empty() ? std::string("none") : fmt::format("'{}'", fmt::join(names, "', '")))
                               : fmt::format("unknown rule '{}'; did you mean '{}'?", e.rule, near);
      } else {
        message = fmt::format("rule name '{}' is ambiguous: {} rules have it ({} and {})", e.rule, ids.size(),
                              rules.rules()[ids[0]].info->location, rules.rules()[ids[1]].info->location);
      }
      file.diagnostics.push_back(Diagnostic{Severity::error, "E602", e.at, std::move(message), {}});
    }
  // Every trace is read even when a name was wrong, so that one run reports every mistake.

  std::vector<CaseTrace> traces(file.cases.size());
  for (std::size_t ci = 0; ci < file.cases.size(); ++ci)
    if (read_case_trace(file.cases[ci], rules, file, traces[ci]))
      for (std::string w : traces[ci].trace->warnings) {
        // The reader's, located in the trace it read: an inline trace's positions are those of
        // its JSON text as rewritten, so only the case's own place is given.
        const std::size_t cut = w.find("warning: ");
        if (!file.cases[ci].record.empty() && cut != std::string::npos) w.erase(0, cut + 9);
        run.warnings.push_back(fmt::format("{}: warning: case \"{}\": {}", rt_location_of(file.source, file.cases[ci].at),
                                           file.cases[ci].name, w));
      }
  if (!file.ok()) return give_up();

  // Run: one Checker per rules file of the set (each with the case's fixture).
  std::vector<Checker> checkers;
  for (const auto& p : rules.programs()) checkers.emplace_back(p);
  std::vector<FileCoverage*> fcov;
  if (options.coverage)
    for (std::size_t f = 0; f < rules.programs().size(); ++f) {
      FileCoverage& fc = coverage_of(cov, rules.files()[f], rules.programs()[f], compiled.files[f].source);
      fc.tested = true;
      fcov.push_back(&fc);
    }
  std::vector<RuleResult> results;
  fr.ran = true;
  for (std::size_t ci = 0; ci < file.cases.size(); ++ci) {
    const RuleTestCase& c = file.cases[ci];
    const Trajectory& t = *traces[ci].trace;
    std::vector<RtVerdict> verdicts(rules.rules().size());
    for (std::size_t p = 0; p < checkers.size(); ++p) {
      checkers[p].set_fixture(c.fixture);
      checkers[p].check(t, results);
      for (const RuleResult& res : results) {
        RtVerdict& v = verdicts[rules.first_rule()[p] + res.rule];
        if (res.status == VerdictStatus::violated) {
          v.status = VerdictStatus::violated;
          v.steps.insert(v.steps.end(), res.steps.begin(), res.steps.end());
        } else if (res.status == VerdictStatus::satisfied && v.status == VerdictStatus::vacuous) {
          v.status = VerdictStatus::satisfied;
        }
      }
    }
    for (RtVerdict& v : verdicts) {
      std::sort(v.steps.begin(), v.steps.end());
      v.steps.erase(std::unique(v.steps.begin(), v.steps.end()), v.steps.end());
    }
    RuleTestCaseResult cr;
    cr.name = c.name;
    cr.location = rt_location_of(file.source, c.at);
    cr.passed = true;
    std::vector<std::uint8_t> named(rules.rules().size(), 0);
    std::vector<std::uint8_t> asserted_violated(rules.rules().size(), 0), asserted_held(rules.rules().size(), 0);
    auto add_check = [&](std::uint32_t g, ExpectedVerdict ex, bool has_steps, const std::vector<std::uint32_t>& steps, bool others) {
      RuleCheck rc;
      rc.rule = rules.rules()[g].info->name;
      rc.location = rules.rules()[g].info->location;
      rc.expected = ex;
      rc.expected_steps = has_steps;
      rc.steps = steps;
      rc.actual = verdicts[g].status;
      rc.actual_steps = verdicts[g].steps;
      rc.from_others = others;
      rc.passed = rt_matches(rc);
      if (rc.passed) {
        if (ex == ExpectedVerdict::violated) asserted_violated[g] = 1;
        else if (ex != ExpectedVerdict::vacuous) asserted_held[g] = 1;
      }
      if (!rc.passed) cr.passed = false;
      if (!others || !rc.passed) cr.checks.push_back(std::move(rc));
    };
    for (std::size_t k = 0; k < c.expect.size(); ++k) {
      const std::uint32_t g = targets[ci][k];
      named[g] = 1;
      add_check(g, c.expect[k].verdict, c.expect[k].has_steps, c.expect[k].steps, false);
    }
    if (c.others_hold)
      for (std::uint32_t g = 0; g < rules.rules().size(); ++g)
        if (!named[g]) add_check(g, ExpectedVerdict::holds, false, {}, true);
    std::set<std::uint32_t> mentioned;
    for (const RuleCheck& rc : cr.checks)
      if (!rc.passed) {
        mentioned.insert(rc.steps.begin(), rc.steps.end());
        mentioned.insert(rc.actual_steps.begin(), rc.actual_steps.end());
      }
    for (std::uint32_t s : mentioned) cr.steps.push_back({s, describe_step(t, s)});
    ++run.cases;
    ++(cr.passed ? run.passed : run.failed);

    if (options.coverage && cr.passed) {
      detail::TraceCoverage tc;
      for (std::size_t p = 0; p < fcov.size(); ++p) {
        FileCoverage& fc = *fcov[p];
        fc.probe->observe(t, c.fixture, tc);
        for (std::uint32_t r = 0; r < fc.rules.size(); ++r) {
          const std::uint32_t g = rules.first_rule()[p] + r;
          RuleCoverage& rc = fc.rules[r];
          if (asserted_violated[g]) rc.violated = true;
          if (asserted_held[g] && verdicts[g].status == VerdictStatus::satisfied) rc.held = true;
          for (std::size_t k = 0; k < rc.statements.size(); ++k) {
            StatementCoverage& sc = rc.statements[k];
            if (asserted_violated[g] && tc.violated[r][k]) sc.violated = true;
            for (std::size_t q = 0; q < sc.positions.size(); ++q)
              if (tc.reached[r][k][q]) sc.positions[q].reached = true;
            for (std::size_t q = 0; q < sc.transitions.size(); ++q)
              if (tc.taken[r][k][q]) sc.transitions[q].taken = true;
          }
        }
      }
    }
    fr.cases.push_back(std::move(cr));
  }
  run.files.push_back(std::move(fr));
}

void rt_summarize(RuleTestRun& run) {
  CoverageSummary& s = run.summary;
  for (const RuleCoverage& rc : run.rules) {
    ++s.rules;
    s.violated += rc.violated;
    s.held += rc.held;
    const bool several = rc.statements.size() > 1;
    for (const StatementCoverage& sc : rc.statements) {
      if (several) {
        if (sc.measured) {
          ++s.statements;
          s.statements_covered += sc.violated;
        } else {
          ++s.not_measured;
        }
      }
      if (sc.paths_measured) {
        s.positions += sc.positions.size();
        for (const PathPositionCoverage& p : sc.positions) s.positions_reached += p.reached;
        s.transitions += sc.transitions.size();
        for (const PathTransitionCoverage& t : sc.transitions) s.transitions_taken += t.taken;
      } else if (sc.is_expect) {
        ++s.not_measured;
      }
    }
  }
}

}  // namespace

double CoverageSummary::percent() const {
  if (items() == 0) return 100.0;
  const std::uint64_t tenths = covered() * 1000 / items();
  return static_cast<double>(tenths) / 10.0;
}

bool CoverageSummary::at_least(double p) const {
  if (items() == 0) return true;
  return static_cast<double>(covered()) * 100.0 >= p * static_cast<double>(items());
}

RuleTestRun run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& options) {
  RuleTestRun run;
  run.coverage = options.coverage;
  RtDiscovered d;
  rt_discover(paths, d, run);
  if (d.test_files.empty() && run.errors.empty())
    run.errors.push_back(fmt::format("trajcheck test: no test files (*.rules.test.json) in {}", fmt::join(paths, ", ")));
  std::map<std::string, FileCoverage> cov;
  std::set<std::string> tested;
  for (const std::string& f : d.test_files) {
    run_file(f, options, run, cov);
    for (const std::string& r : run.files.back().rules) tested.insert(rules_key(r));
  }
  for (const std::string& r : d.rules_files) {
    if (tested.count(rules_key(r))) continue;
    run.warnings.push_back(fmt::format("trajcheck test: warning: {} has no tests ({}.test.json)", r, r));
    if (!options.coverage) continue;
    RuleSetResult one = compile_rule_set(std::vector<std::string>{r});
    if (!one.ok()) {
      run.errors.push_back(one.format_diagnostics(false, false));
      continue;
    }
    coverage_of(cov, r, one.rules->programs()[0], one.files[0].source);
  }
  if (options.coverage) {
    for (auto& [key, fc] : cov)
      for (RuleCoverage& rc : fc.rules) {
        rc.tested = fc.tested;
        run.rules.push_back(rc);
      }
    rt_summarize(run);
  }
  return run;
}

}  // namespace trajcheck
