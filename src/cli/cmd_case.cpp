// `trajcheck case new --from-trace RUN --case-id ID --note "…"`: turn a corrected
// production trace into a regression case (one JSONL record on standard output).
#include <fmt/format.h>

#include "command.hpp"
#include "trajcheck/eval.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::cli {
namespace {

struct CaseSettings {
  std::string trace, case_id, note, split = "production", catalog_version, suite, input_format = "auto";
  std::string fixture, fixture_version;
  std::vector<std::string> fields, invariants;
  bool vary = false;  // `case vary` was chosen
};

int run_new(const CaseSettings& s) {
  eval::CaseNewOptions o;
  o.case_id = s.case_id;
  o.note = s.note;
  o.split = s.split;
  o.catalog_version = s.catalog_version;
  for (const auto& f : s.fields) {
    auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      fmt::print(stderr, "trajcheck case new: error: --field '{}': expected NAME=VALUE\n", f);
      return kBadInput;
    }
    o.fields.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  eval::SuiteFile suite;
  if (!s.suite.empty()) {
    std::string err;
    auto src = Source::from_file(s.suite, &err);
    if (!src) {
      fmt::print(stderr, "{}: error: {}\n", s.suite, err);
      return kBadInput;
    }
    suite = eval::parse_suite_file(std::move(*src));
    fmt::print(stderr, "{}", format_diagnostics(suite.source, suite.diagnostics));
    if (!suite.ok()) return kBadInput;
    o.suite = suite.suite.get();
    std::string errors;
    bool compiled = eval::compile_suite_rules(suite, o.rules, errors);
    fmt::print(stderr, "{}", errors);
    if (!compiled) return kBadInput;
  }
  o.invariants = s.invariants;
  if (!s.fixture.empty()) {
    std::string error;
    if (!eval::copy_case_fixture(suite, s.fixture, s.fixture_version, o, error)) {
      fmt::print(stderr, "trajcheck case new: error: {}\n", error);
      return kBadInput;
    }
    fmt::print(stderr, "trajcheck case new: the fixture is {} (version {})\n", o.fixture_path,
               o.fixture_version.empty() ? "none" : o.fixture_version);
  }
  NormalizeOptions no;
  if (!parse_input_format(s.input_format, &no.format)) return kBadInput;
  TraceParser parser(no);
  RecordSource source({s.trace}, no.format);
  RawRecord rec;
  ToolTable tools;
  Trajectory t(&tools);
  bool done = false;
  while (!done && source.next(rec)) {
    if (rec.skipped()) {
      fmt::print(stderr, "{}\n", rec.skip_warning);
      continue;
    }
    if (!rec.container_error.empty()) {
      fmt::print(stderr, "{}:{}:{}: error: {}\n", rec.origin.file, rec.origin.line, rec.origin.column, rec.container_error);
      return kBadInput;
    }
    ParseOutcome po = parser.parse(rec, t, [&](Trajectory& tr) {
      if (done) return;
      std::string line = eval::case_from_trace(tr, o);
      std::fwrite(line.data(), 1, line.size(), stdout);
      done = true;
    });
    for (const auto& e : po.errors)
      fmt::print(stderr, "{}:{}:{}: error: {}\n", e.where.file, e.where.line, e.where.column, e.message);
    if (!po.ok()) return kBadInput;
  }
  if (!done) {
    fmt::print(stderr, "{}: error: no trajectory in the file\n", s.trace);
    return kBadInput;
  }
  return kPass;
}

const bool case_registered = register_command({"case", 32, [](CLI::App& app) -> std::function<int()> {
  auto s = std::make_shared<CaseSettings>();
  auto* sub = app.add_subcommand("case", "manage evaluation cases");
  sub->require_subcommand(1);
  auto* nw = sub->add_subcommand("new", "turn a (corrected) trace into a regression case, printed as one JSONL record");
  nw->add_option("--from-trace", s->trace, "the trace file (its first trajectory is used)")->required();
  nw->add_option("--case-id", s->case_id, "the new case's id")->required();
  nw->add_option("--note", s->note, "the reviewer's note");
  nw->add_option("--split", s->split, "designed|production|synthetic (default production)");
  nw->add_option("--catalog-version", s->catalog_version, "the catalog version the case was written for");
  nw->add_option("--field", s->fields, "an extra case field NAME=VALUE, e.g. task_type=refund (repeatable)");
  nw->add_option("--suite", s->suite,
                 "a suite whose control patterns classify the trace's control flow, whose rules that held become "
                 "the case's expected invariants, and whose fixtures folder receives --fixture");
  nw->add_option("--fixture", s->fixture, "the environment fixture (JSON) the trace ran against, copied into the suite's fixtures folder as CASE-ID.json");
  nw->add_option("--fixture-version", s->fixture_version, "the fixture's version (default: the suite's fixtures version)");
  nw->add_option("--invariant", s->invariants, "a rule the case's runs must never violate (repeatable; default: the suite's rules that held on the trace)");
  nw->add_option("--input-format", s->input_format,
                 "a trace format (default auto): " + fmt::format("{}", fmt::join(input_format_names(), "|")));
  auto vs = std::make_shared<eval::VaryOptions>();
  auto* vary = sub->add_subcommand("vary", "derive synthetic cases from designed ones, deterministically (same seed, same bytes)");
  vary->add_option("suite", vs->suite_path, "the suite whose cases, catalog and fixtures are read")->required();
  vary->add_option("--from", vs->from, "the ids of the cases to derive from")->required();
  vary->add_option("--kinds", vs->kinds, "variation kinds, comma-separated (default all, and the suite's variation commands): " +
                                             fmt::format("{}", fmt::join(eval::variation_kinds(), ", ")))
      ->delimiter(',');
  vary->add_option("--seed", vs->seed, "the seed of every seeded choice (default 1)");
  vary->add_option("--out", vs->out_dir, "the folder to write synthetic.jsonl, fixtures/ and review.md into")->required();
  vary->add_option("--sample", vs->sample, "derived cases in the review sample (default 5)");
  vary->add_option("--per-kind", vs->per_kind, "fixture-missing: fields removed per source case (default 3)");
  vary->add_option("--cache", vs->cache,
                   "where the suite's variation commands' answers are kept (default: .trajcheck-cache/variations "
                   "beside the suite; - for none)");
  vary->callback([s, vs] { s->vary = true; (void)vs; });
  return [s, vs]() -> int {
    if (!s->vary) return run_new(*s);
    eval::VaryResult r;
    std::string errors;
    bool ok = eval::vary_cases(*vs, r, errors);
    fmt::print(stderr, "{}", errors);
    if (!ok) return kBadInput;
    fmt::print("wrote {} synthetic case{} to {}/synthetic.jsonl ({} fixture{} in {}/fixtures), a review sample of {} "
               "in {}/review.md\n",
               r.cases, r.cases == 1 ? "" : "s", vs->out_dir, r.fixtures, r.fixtures == 1 ? "" : "s", vs->out_dir,
               r.sampled, vs->out_dir);
    return r.cases > 0 ? kPass : kFail;
  };
}});

}  // namespace
}  // namespace trajcheck::cli
