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
  std::vector<std::string> fields;
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

const bool registered = register_command({"case", 32, [](CLI::App& app) -> std::function<int()> {
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
  nw->add_option("--suite", s->suite, "a suite whose control patterns classify the trace's control flow");
  nw->add_option("--input-format", s->input_format,
                 "a trace format (default auto): " + fmt::format("{}", fmt::join(input_format_names(), "|")));
  return [s] { return run_new(*s); };
}});

}  // namespace
}  // namespace trajcheck::cli
