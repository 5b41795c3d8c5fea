// The text, json, markdown and junit forms of an eval report. json is the machine record
// (and the next run's baseline); the others are views of the same numbers.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"
#include "eval/report_util.hpp"
#include "run/text.hpp"

namespace trajcheck::eval {

using nlohmann::ordered_json;

namespace {

// A table's title as a heading: its first letter upper case ("per split" -> "Per split").
std::string capitalized(std::string title) {
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  return title;
}

ordered_json dims_json(const Dimensions& d, const std::vector<std::pair<std::string, bool>>& keys) {
  ordered_json j;
  j["cases"] = d.cases;
  j["runs"] = d.runs;
  j["selection"] = number_or_null(d.selection);
  j["selection_cases"] = d.selection_n;
  j["arguments"] = number_or_null(d.arguments);
  j["arguments_calls"] = d.arguments_n;
  j["argument_validity"] = number_or_null(d.argument_validity);
  j["argument_validity_calls"] = d.argument_validity_n;
  j["order"] = number_or_null(d.order);
  j["order_cases"] = d.order_n;
  j["recovery"] = number_or_null(d.recovery);
  j["recovery_cases"] = d.recovery_n;
  j["outcome"] = number_or_null(d.outcome);
  j["outcome_cases"] = d.outcome_n;
  j["overall"] = number_or_null(d.overall);
  j["pass_at_k"] = number_or_null(d.pass_at_k);
  j["pass_all_k"] = number_or_null(d.pass_all_k);
  j["pass_rate"] = number_or_null(d.pass_rate);
  j["flaky"] = d.flaky;
  const Efficiency& e = d.efficiency;
  ordered_json ej;
  ej["cases"] = e.cases;
  ej["calls"] = e.calls;
  ej["calls_per_success"] = number_or_null(e.calls_per_success);
  ej["duplicates"] = e.duplicates;
  ej["duplicates_per_100"] = number_or_null(e.duplicates_per_100);
  ej["duplicates_per_100_calls"] = number_or_null(e.duplicates_per_100_calls);
  ej["tokens_per_success"] = number_or_null(e.tokens_per_success);
  ej["cost_per_success"] = number_or_null(e.cost_per_success);
  ej["latency_per_success"] = number_or_null(e.latency_per_success);
  ej["retries"] = e.retries;
  ej["retries_by_class"] = ordered_json::object();
  for (const auto& [k, v] : e.retries_by_class) ej["retries_by_class"][k] = v;
  ej["loop_depth"] = e.loop_depth;
  ej["write_calls"] = e.write_calls;
  ej["write_share"] = number_or_null(e.write_share);
  ej["read_calls"] = e.read_calls;
  ej["read_volume_per_success"] = number_or_null(e.read_volume_per_success);
  ej["unused_read_share"] = number_or_null(e.unused_read_share);
  ej["calls_histogram"] = ordered_json::object();
  for (const auto& [k, v] : calls_histogram(e)) ej["calls_histogram"][std::to_string(k)] = v;
  j["efficiency"] = ej;
  j["violations"] = ordered_json::object();
  for (const char* sev : {"critical", "error", "warning", "info"})
    j["violations"][sev] = d.violations.count(sev) ? d.violations.at(sev) : 0;
  if (!d.graders.empty()) {
    ordered_json g = ordered_json::object();
    for (const auto& [name, gd] : d.graders)
      g[name] = {{"cases", gd.cases},           {"passed", gd.passed},       {"failed", gd.failed},
                 {"errors", gd.errors},         {"pass_share", number_or_null(gd.pass_share)}, {"mean_score", number_or_null(gd.mean_score)}};
    j["graders"] = g;
  }
  j["metrics"] = metrics_json(d, keys);
  return j;
}

ordered_json rows_json(const std::vector<GroupRow>& rows, const std::vector<std::pair<std::string, bool>>& keys) {
  ordered_json a = ordered_json::array();
  for (const auto& r : rows) {
    ordered_json j;
    j["field"] = r.field;
    j["value"] = r.value;
    ordered_json d = dims_json(r.dims, keys);
    for (auto& [k, v] : d.items()) j[k] = v;
    a.push_back(std::move(j));
  }
  return a;
}

// The fields of one judged run (a case's first run, or a repeat), after its `pass`.
void run_json_fields(const CaseResult& x, ordered_json& o) {
  o["control"] = x.control;
  o["expected_control"] = x.expected_control.empty() ? ordered_json(nullptr) : ordered_json(x.expected_control);
  o["selection"] = number_or_null(x.selection);
  o["arguments_matched"] = x.arguments_matched;
  o["arguments_calls"] = x.arguments_total;
  o["schema_valid"] = x.schema_valid;
  o["schema_calls"] = x.schema_calls;
  o["order"] = number_or_null(x.order);
  o["overall"] = number_or_null(x.overall);
  o["failed_call"] = x.failed_call;
  o["recovery"] = x.recovery ? ordered_json(*x.recovery) : ordered_json(nullptr);
  o["outcome"] = x.outcome ? ordered_json(*x.outcome) : ordered_json(nullptr);
  o["calls"] = x.calls;
  o["duplicates"] = x.duplicates;
  o["retries"] = x.retries;
  o["loop_depth"] = x.loop_depth;
  if (x.read_volume) {
    o["read_calls"] = x.read_calls;
    o["read_volume"] = *x.read_volume;
    o["unused_reads"] = x.unused_reads;
  }
  o["tokens"] = number_or_null(x.tokens);
  o["cost"] = number_or_null(x.cost);
  o["latency_ms"] = number_or_null(x.latency_ms);
  ordered_json vs = ordered_json::array();
  for (const auto& v : x.violations)
    vs.push_back({{"rule", v.rule}, {"severity", v.severity}, {"source", v.source}, {"steps", v.steps}});
  o["violations"] = vs;
  o["tools"] = {{"missing", x.missing_tools}, {"extra", x.extra_tools}, {"misordered", x.misordered_tools}};
  o["explanation"] = x.explanation;
  if (!x.injections.empty()) {
    ordered_json in = ordered_json::array();
    for (const InjectionResult& i : x.injections)
      in.push_back({{"tool", i.tool}, {"attempt", i.attempt}, {"error_class", i.error_class},
                    {"retryable", i.retryable}, {"uncertain", i.uncertain}, {"observed", i.observed},
                    {"recovered", i.observed ? ordered_json(i.recovered) : ordered_json(nullptr)},
                    {"problems", i.problems}});
    o["injections"] = in;
  }
  if (!x.unknown_errors.empty()) o["unknown_errors"] = x.unknown_errors;
  if (!x.graders.empty()) {
    ordered_json gs = ordered_json::array();
    for (const GraderResult& g : x.graders) {
      ordered_json e;
      e["grader"] = g.grader;
      e["score"] = number_or_null(g.score);
      e["pass"] = g.pass ? ordered_json(*g.pass) : ordered_json(nullptr);
      e["reason"] = g.reason;
      if (!g.error.empty()) e["error"] = g.error;
      e["cached"] = g.cached;
      gs.push_back(std::move(e));
    }
    o["graders"] = gs;
  }
}

std::string status_word(const EvalReport& r) { return r.passed() ? "pass" : "fail"; }

// A junit test case's <system-out>: each run's tools against the expected ones; empty when
// they agree.
std::string tools_out(const CaseResult& c) {
  std::string text;
  const std::vector<const CaseResult*> runs = runs_of(c);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (!runs[k]->tools_differ()) continue;
    text += (runs.size() > 1 ? fmt::format("run {}: ", k + 1) : std::string()) + "tools: " + tools_difference(*runs[k]) + "\n";
  }
  return text.empty() ? text : "<system-out>" + xml_escaped(text) + "</system-out>";
}

}  // namespace

// Why a case does not pass: its run's problems; for a case run k times, those of each failing
// run, named ("run 2: outcome: …").
std::string case_problems(const CaseResult& x) {
  std::string why;
  const std::vector<const CaseResult*> runs = runs_of(x);
  if (runs.size() <= 1) {
    for (std::size_t i = 0; i < x.problems.size(); ++i) why += (i ? "; " : "") + x.problems[i];
    return why;
  }
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (runs[k]->pass) continue;
    why += fmt::format("{}run {}: {}", why.empty() ? "" : "; ", k + 1, fmt::join(runs[k]->problems, "; "));
  }
  return why;
}

// ", 9 runs (7 pass), k = 3" when some case was run more than once; else nothing.
std::string runs_note(const EvalReport& r, const ReportCounts& c) {
  if (r.k <= 1) return {};
  return fmt::format(", {} runs ({} pass), k = {}", c.runs, c.runs_passed, r.k);
}

std::map<std::uint32_t, std::uint32_t> calls_histogram(const Efficiency& e) {
  std::map<std::uint32_t, std::uint32_t> h;
  for (double v : e.calls_series) ++h[static_cast<std::uint32_t>(v)];
  return h;
}

DimensionCells dimension_cells(const Dimensions& d) {
  return {std::to_string(d.cases),
          fmt_value(d.selection, true),
          fmt_value(d.arguments, true),
          fmt_value(d.argument_validity, true),
          fmt_value(d.order, true),
          fmt_value(d.recovery, true),
          fmt_value(d.outcome, true),
          fmt_value(d.efficiency.calls_per_success, false),
          std::to_string(d.violations.count("critical") ? d.violations.at("critical") : 0)};
}

std::vector<DimensionTable> dimension_tables(const EvalReport& r) {
  std::vector<DimensionTable> out;
  out.push_back({"dimensions", {{"overall", &r.overall}}});
  if (!r.segments.empty()) {
    DimensionTable& t = out.emplace_back(DimensionTable{"per segment", {}});
    for (const auto& s : r.segments) t.rows.emplace_back(s.field + "=" + s.value, &s.dims);
  }
  DimensionTable& t = out.emplace_back(DimensionTable{"per split", {}});
  for (const auto& s : r.splits) t.rows.emplace_back(s.value, &s.dims);
  return out;
}

std::string fmt_value(const std::optional<double>& v, bool ratio) {
  if (!v) return "n/a";
  if (ratio) return fmt::format("{:.1f}%", *v * 100.0);
  if (std::fabs(*v - std::round(*v)) < 1e-9) return fmt::format("{}", static_cast<long long>(std::llround(*v)));
  if (std::fabs(*v) < 0.1) return fmt::format("{:.4g}", *v);
  return fmt::format("{:.2f}", *v);
}

bool ratio_metric(std::string_view m) {
  const suite::GateMetric* g = suite::find_gate_metric(m);
  return g != nullptr && g->kind == suite::MetricKind::share;
}

std::string_view to_string(CaseStatus status) {
  switch (status) {
    case CaseStatus::judged: return "judged";
    case CaseStatus::stale: return "stale";
    case CaseStatus::unmatched: return "unmatched";
  }
  return "?";
}

std::string_view to_string(GateStatus status) {
  switch (status) {
    case GateStatus::pass: return "pass";
    case GateStatus::fail: return "fail";
    case GateStatus::no_data: return "no data";
  }
  return "?";
}

ReportCounts counts(const EvalReport& r) {
  ReportCounts c;
  c.cases = r.cases.size();
  for (const auto& x : r.cases) {
    if (x.status == CaseStatus::judged) {
      ++c.judged;
      c.passed += x.pass_all();
      c.runs += x.runs();
      c.runs_passed += x.runs_passed();
      c.flaky += x.flaky();
    } else if (x.status == CaseStatus::stale) {
      ++c.stale;
    } else {
      ++c.unmatched;
    }
  }
  for (const auto& g : r.gates) {
    if (g.status == GateStatus::pass) ++c.gates_passed;
    else if (g.status == GateStatus::fail) ++c.gates_failed;
    else ++c.gates_no_data;
  }
  return c;
}

std::string nothing_judged(const EvalReport& r) {
  ReportCounts c = counts(r);
  if (c.judged > 0) return {};
  return fmt::format("no case was judged: {} case{}, {} without a run, {} stale; {} run record{} read", c.cases,
                     c.cases == 1 ? "" : "s", c.unmatched, c.stale, r.records, r.records == 1 ? "" : "s");
}

std::string report_json(const EvalReport& r) {
  ordered_json j;
  ReportCounts c = counts(r);
  j["suite"] = r.suite_name;
  j["suite_file"] = r.suite_file;
  j["catalog_version"] = r.catalog_version.empty() ? ordered_json(nullptr) : ordered_json(r.catalog_version);
  j["status"] = status_word(r);
  if (std::string why = nothing_judged(r); !why.empty()) j["reason"] = why;
  j["summary"] = {{"cases", c.cases},           {"judged", c.judged},
                  {"passed", c.passed},         {"stale", c.stale},
                  {"unmatched_cases", c.unmatched}, {"unmatched_runs", r.unmatched_runs.size()},
                  {"records", r.records},       {"rejected", r.rejected}, {"warnings", r.warnings},
                  {"gates_passed", c.gates_passed}, {"gates_failed", c.gates_failed},
                  {"gates_no_data", c.gates_no_data}, {"runs", c.runs},
                  {"runs_passed", c.runs_passed}, {"k", r.k},
                  {"flaky", c.flaky}};
  j["rules"] = r.rules_files;
  ordered_json inputs = ordered_json::array();
  for (const InputDigest& in : r.inputs) inputs.push_back({{"kind", in.kind}, {"file", in.file}, {"sha256", in.sha256}});
  j["inputs"] = inputs;
  ordered_json gates = ordered_json::array();
  for (const auto& g : r.gates) {
    ordered_json x;
    x["gate"] = g.text;
    x["metric"] = g.metric;
    x["segment"] = g.segment.empty() ? ordered_json(nullptr) : ordered_json(g.segment);
    x["value"] = number_or_null(g.value);
    x["threshold"] = number_or_null(g.threshold);
    x["status"] = to_string(g.status);
    x["critical"] = g.critical;
    if (!g.note.empty()) x["note"] = g.note;
    gates.push_back(std::move(x));
  }
  j["gates"] = gates;
  j["overall"] = dims_json(r.overall, r.violation_keys);
  j["segment_by"] = r.segment_fields;
  j["segments"] = rows_json(r.segments, r.violation_keys);
  j["splits"] = rows_json(r.splits, r.violation_keys);
  ordered_json cases = ordered_json::array();
  for (const auto& x : r.cases) {
    ordered_json k;
    k["case_id"] = x.case_id;
    k["status"] = to_string(x.status);
    k["split"] = x.split;
    ordered_json seg = ordered_json::object();
    for (const auto& [f, v] : x.segments) seg[f] = v;
    k["segments"] = seg;
    k["run"] = x.run.empty() ? ordered_json(nullptr) : ordered_json(x.run);
    if (x.status == CaseStatus::judged) {
      k["pass"] = x.pass_all();  // the case's verdict: every run passes
      run_json_fields(x, k);
      if (x.runs() > 1) {
        k["runs"] = x.runs();
        k["runs_passed"] = x.runs_passed();
        k["pass_rate"] = static_cast<double>(x.runs_passed()) / x.runs();
        k["flaky"] = x.flaky();
        ordered_json passes = ordered_json::array();
        for (const CaseResult* run : runs_of(x)) passes.push_back(run->pass);
        k["run_passes"] = passes;
        ordered_json repeats = ordered_json::array();
        for (const CaseResult& rep : x.repeats) {
          ordered_json o;
          o["run"] = rep.run;
          o["pass"] = rep.pass;
          run_json_fields(rep, o);
          o["problems"] = rep.problems;
          repeats.push_back(std::move(o));
        }
        k["repeats"] = repeats;
      }
    }
    if (!x.fixture.empty()) k["fixture"] = x.fixture;
    k["problems"] = x.problems;
    cases.push_back(std::move(k));
  }
  j["cases"] = cases;
  j["unmatched_runs"] = r.unmatched_runs;
  ordered_json flaky = ordered_json::array();  // cases with a passing and a failing run
  for (const auto& x : r.cases)
    if (x.flaky()) flaky.push_back({{"case_id", x.case_id}, {"runs", x.runs()}, {"runs_passed", x.runs_passed()}});
  j["flaky_cases"] = flaky;
  if (r.show_recovery) {
    auto rows = [](const std::vector<RecoveryRow>& rs, const char* key) {
      ordered_json a = ordered_json::array();
      for (const RecoveryRow& row : rs)
        a.push_back({{key, row.key}, {"failures", row.failures}, {"injected", row.injected}, {"judged", row.judged},
                     {"recovered", row.recovered}, {"recovery", number_or_null(row.share())}});
      return a;
    };
    ordered_json rec;
    rec["by_class"] = rows(r.recovery_by_class, "error_class");
    rec["by_tool"] = rows(r.recovery_by_tool, "tool");
    rec["unknown_errors"] = ordered_json::array();
    for (const auto& [k, cs] : r.unknown_errors) rec["unknown_errors"].push_back({{"error", k}, {"cases", cs}});
    rec["injections_not_observed"] = r.injections_not_observed;
    j["recovery"] = rec;
  }
  return j.dump(1) + "\n";
}

std::string report_text(const EvalReport& r) {
  std::string o;
  ReportCounts c = counts(r);
  // Case ids, fields, rule messages and run ids come from the suite's data and the runs: their
  // control characters are written escaped (`\n`, `\x1b`), so they cannot forge lines or
  // drive the terminal.
  using detail::printable;
  o += fmt::format("suite {}: {} ({} gate{} failed)\n", printable(r.suite_name), status_word(r) == "pass" ? "PASS" : "FAIL",
                   c.gates_failed, c.gates_failed == 1 ? "" : "s");
  if (std::string why = nothing_judged(r); !why.empty()) o += "FAIL: " + why + "\n";
  o += "\ngates (critical first):\n";
  for (const auto& g : r.gates) {
    bool ratio = ratio_metric(g.metric) || g.grader_share;
    o += fmt::format("  {:<7} {}{}{}  value {}  threshold {}{}\n",
                     g.status == GateStatus::pass ? "pass" : g.status == GateStatus::fail ? "FAIL" : "no data", g.critical ? "[critical] " : "",
                     g.text, g.segment.empty() ? "" : "  [" + printable(g.segment) + "]", fmt_value(g.value, ratio),
                     fmt_value(g.threshold, ratio), g.note.empty() ? "" : "  (" + printable(g.note) + ")");
  }
  for (const DimensionTable& t : dimension_tables(r)) {
    o += fmt::format("\n{}\n", t.title);
    std::size_t w = 28;
    for (const auto& row : t.rows) w = std::max(w, printable(row.first).size());
    o += fmt::format("  {:<{}} {:>5} {:>9} {:>9} {:>12} {:>9} {:>9} {:>9} {:>11} {:>9}\n", "", w, "cases", "selection",
                     "arguments", "arg validity", "order", "recovery", "outcome", "calls/succ", "critical");
    for (const auto& [name, d] : t.rows) {
      const DimensionCells c = dimension_cells(*d);
      o += fmt::format("  {:<{}} {:>5} {:>9} {:>9} {:>12} {:>9} {:>9} {:>9} {:>11} {:>9}\n", printable(name), w, c[0],
                       c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
    }
  }
  const Efficiency& e = r.overall.efficiency;
  o += fmt::format("\nefficiency over {} successful, gate-passing case{}: calls/success {}, duplicates/100 cases {}, "
                   "duplicates/100 calls {}, tokens/success {}, cost/success {}, latency/success {} ms, retries {}, "
                   "loop depth {}, write share {}, read bytes/success {}, unused reads {}\n",
                   e.cases, e.cases == 1 ? "" : "s", fmt_value(e.calls_per_success, false),
                   fmt_value(e.duplicates_per_100, false), fmt_value(e.duplicates_per_100_calls, false),
                   fmt_value(e.tokens_per_success, false), fmt_value(e.cost_per_success, false),
                   fmt_value(e.latency_per_success, false), e.retries, e.loop_depth, fmt_value(e.write_share, true),
                   fmt_value(e.read_volume_per_success, false), fmt_value(e.unused_read_share, true));
  if (!e.retries_by_class.empty()) {
    o += "  retries by error class:";
    for (const auto& [k, v] : e.retries_by_class) o += fmt::format(" {}={}", printable(k), v);
    o += "\n";
  }
  for (const Table& t : recovery_tables(r)) o += table_text(t);
  for (const Table& t : grader_tables(r)) o += table_text(t);
  for (const Table& t : runs_tables(r)) o += table_text(t);
  for (const Table& t : tools_tables(r)) o += table_text(t);
  o += "\ncases:\n";
  for (const auto& x : r.cases) {
    if (x.status != CaseStatus::judged) {
      o += fmt::format("  {:<7} {}{}\n", to_string(x.status), printable(x.case_id), x.problems.empty() ? "" : ": " + printable(x.problems[0]));
      continue;
    }
    o += fmt::format("  {:<7} {} [{}] control {}{}", x.pass_all() ? "pass" : "FAIL", printable(x.case_id),
                     printable(x.split), x.control,
                     x.expected_control.empty() || x.expected_control == x.control
                         ? ""
                         : " (expected " + printable(x.expected_control) + ")");
    if (x.runs() > 1) o += fmt::format(" runs {}/{} pass{}", x.runs_passed(), x.runs(), x.flaky() ? " (flaky)" : "");
    const std::string why = case_problems(x);
    if (!why.empty()) o += ": " + printable(why);
    o += "\n";
  }
  if (!r.unmatched_runs.empty()) {
    o += "\nruns that match no case:\n";
    for (const auto& u : r.unmatched_runs) o += "  " + printable(u) + "\n";
  }
  o += fmt::format("\n{} cases: {} judged ({} pass){}, {} stale, {} without a run; {} runs match no case; "
                   "{} records read, {} rejected{}; gates: {} pass, {} fail, {} no data\n",
                   c.cases, c.judged, c.passed, runs_note(r, c), c.stale, c.unmatched, r.unmatched_runs.size(), r.records,
                   r.rejected, warnings_note(r.warnings), c.gates_passed, c.gates_failed, c.gates_no_data);
  return o;
}

std::string report_markdown(const EvalReport& r) {
  std::string o;
  ReportCounts c = counts(r);
  o += fmt::format("## trajcheck eval: {} — {}\n\n", detail::printable(r.suite_name), r.passed() ? "✅ pass" : "❌ fail");
  if (std::string why = nothing_judged(r); !why.empty()) o += "**Failed: " + why + ".**\n\n";
  o += fmt::format("{} cases: {} judged ({} pass){}, {} stale, {} without a run; {} runs match no case.\n\n", c.cases,
                   c.judged, c.passed, runs_note(r, c), c.stale, c.unmatched, r.unmatched_runs.size());
  o += "### Gates (critical first)\n\n| | gate | segment | value | threshold |\n|---|---|---|---|---|\n";
  for (const auto& g : r.gates) {
    bool ratio = ratio_metric(g.metric) || g.grader_share;
    o += fmt::format("| {} | {}`{}` | {} | {} | {} |\n",
                     g.status == GateStatus::pass ? "✅" : g.status == GateStatus::fail ? "❌" : "➖", g.critical ? "**critical** " : "",
                     g.text, g.segment.empty() ? "overall" : detail::printable(g.segment), fmt_value(g.value, ratio),
                     fmt_value(g.threshold, ratio));
  }
  for (const DimensionTable& t : dimension_tables(r)) {
    o += fmt::format("\n### {}\n\n| | cases | selection | arguments | argument validity | order | recovery | outcome | "
                     "calls/success | critical |\n|---|---|---|---|---|---|---|---|---|---|\n", capitalized(t.title));
    for (const auto& [name, d] : t.rows) {
      const DimensionCells c = dimension_cells(*d);
      o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", detail::printable(name), c[0], c[1], c[2],
                       c[3], c[4], c[5], c[6], c[7], c[8]);
    }
  }
  for (const Table& t : recovery_tables(r)) o += table_markdown(t);
  for (const Table& t : grader_tables(r)) o += table_markdown(t);
  for (const Table& t : runs_tables(r)) o += table_markdown(t);
  for (const Table& t : tools_tables(r)) o += table_markdown(t);
  std::string failing;
  for (const auto& x : r.cases) {
    if (x.status == CaseStatus::judged && x.pass_all()) continue;
    std::string status(x.status == CaseStatus::judged ? std::string_view("fail") : to_string(x.status));
    if (x.runs() > 1) status += fmt::format(" ({}/{} runs pass)", x.runs_passed(), x.runs());
    failing += fmt::format("| {} | {} | {} |\n", detail::printable(x.case_id), status,
                           detail::printable(case_problems(x)));
  }
  if (!failing.empty()) o += "\n### Cases that do not pass\n\n| case | status | why |\n|---|---|---|\n" + failing;
  if (!r.unmatched_runs.empty()) {
    o += "\n### Runs that match no case\n\n";
    for (const auto& u : r.unmatched_runs) o += "- " + detail::printable(u) + "\n";
  }
  return o;
}

std::string report_junit(const EvalReport& r) {
  ReportCounts c = counts(r);
  std::string cases_xml, gates_xml;
  std::size_t case_failures = 0, gate_failures = 0, skipped = 0;
  for (const auto& x : r.cases) {
    cases_xml += fmt::format("    <testcase classname=\"{}.cases\" name=\"{}\"", xml_escaped(r.suite_name), xml_escaped(x.case_id));
    if (x.status != CaseStatus::judged) {
      ++skipped;
      cases_xml += fmt::format("><skipped message=\"{}\"/></testcase>\n", xml_escaped(to_string(x.status)));
    } else if (!x.pass_all()) {
      ++case_failures;
      std::string why = case_problems(x);
      if (x.runs() > 1)
        why = fmt::format("{}/{} runs pass{}: {}", x.runs_passed(), x.runs(), x.flaky() ? " (flaky)" : "", why);
      cases_xml += fmt::format("><failure message=\"{}\"/>{}</testcase>\n", xml_escaped(why), tools_out(x));
    } else {
      const std::string out = tools_out(x);
      cases_xml += out.empty() ? "/>\n" : ">" + out + "</testcase>\n";
    }
  }
  for (const auto& g : r.gates) {
    std::string name = g.text + (g.segment.empty() ? "" : " [" + g.segment + "]");
    gates_xml += fmt::format("    <testcase classname=\"{}.gates\" name=\"{}\"", xml_escaped(r.suite_name), xml_escaped(name));
    bool ratio = ratio_metric(g.metric) || g.grader_share;
    if (g.status == GateStatus::fail) {
      ++gate_failures;
      gates_xml += fmt::format("><failure message=\"value {} against threshold {}{}\"/></testcase>\n",
                               xml_escaped(fmt_value(g.value, ratio)), xml_escaped(fmt_value(g.threshold, ratio)),
                               g.note.empty() ? "" : xml_escaped(" (" + g.note + ")"));
    } else if (g.status == GateStatus::no_data) {
      ++skipped;
      gates_xml += fmt::format("><skipped message=\"{}\"/></testcase>\n", xml_escaped(g.note));
    } else {
      gates_xml += "/>\n";
    }
  }
  std::string recovery_xml;
  std::size_t recovery_tests = 0, recovery_failures = 0;
  for (const auto& [rows, what] : {std::pair{&r.recovery_by_class, "error class"}, std::pair{&r.recovery_by_tool, "tool"}}) {
    if (!r.show_recovery) break;
    for (const RecoveryRow& row : *rows) {
      ++recovery_tests;
      recovery_xml += fmt::format("    <testcase classname=\"{}.recovery\" name=\"{} {}\"", xml_escaped(r.suite_name), what,
                                  xml_escaped(row.key));
      if (row.recovered < row.judged) {
        ++recovery_failures;
        recovery_xml += fmt::format("><failure message=\"{} of {} failures recovered ({} injected)\"/></testcase>\n",
                                    row.recovered, row.judged, row.injected);
      } else if (row.judged == 0) {
        recovery_xml += "><skipped message=\"not judged on recovery\"/></testcase>\n";
      } else {
        recovery_xml += "/>\n";
      }
    }
  }
  std::string graders_xml;
  std::size_t grader_tests = 0, grader_failures = 0, grader_errors = 0;
  for (const auto& c : r.cases) {
    const std::vector<const CaseResult*> runs = runs_of(c);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      for (const GraderResult& g : runs[k]->graders) {
        ++grader_tests;
        graders_xml += fmt::format("    <testcase classname=\"{}.graders.{}\" name=\"{}\"", xml_escaped(r.suite_name),
                                   xml_escaped(g.grader), xml_escaped(run_name(c, k)));
        if (!g.error.empty()) {
          ++grader_errors;
          graders_xml += fmt::format("><error message=\"{}\"/></testcase>\n", xml_escaped(g.error));
        } else if (g.pass && !*g.pass) {
          ++grader_failures;
          graders_xml += fmt::format("><failure message=\"{}\"/></testcase>\n", xml_escaped(g.reason));
        } else {
          graders_xml += "/>\n";
        }
      }
    }
  }
  std::size_t case_tests = c.cases;
  if (std::string why = nothing_judged(r); !why.empty()) {  // a failure of its own, so CI sees it
    ++case_tests;
    ++case_failures;
    cases_xml += fmt::format("    <testcase classname=\"{}.cases\" name=\"judged cases\"><failure message=\"{}\"/></testcase>\n",
                             xml_escaped(r.suite_name), xml_escaped(why));
  }
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += fmt::format("<testsuites name=\"trajcheck eval\" tests=\"{}\" failures=\"{}\">\n",
                   case_tests + r.gates.size() + recovery_tests + grader_tests,
                   case_failures + gate_failures + recovery_failures + grader_failures);
  o += fmt::format("  <testsuite name=\"{}.gates\" tests=\"{}\" failures=\"{}\">\n{}  </testsuite>\n",
                   xml_escaped(r.suite_name), r.gates.size(), gate_failures, gates_xml);
  o += fmt::format("  <testsuite name=\"{}.cases\" tests=\"{}\" failures=\"{}\">\n{}  </testsuite>\n",
                   xml_escaped(r.suite_name), case_tests, case_failures, cases_xml);
  if (!r.graders.empty())
    o += fmt::format("  <testsuite name=\"{}.graders\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}  </testsuite>\n",
                     xml_escaped(r.suite_name), grader_tests, grader_failures, grader_errors, graders_xml);
  if (r.show_recovery)
    o += fmt::format("  <testsuite name=\"{}.recovery\" tests=\"{}\" failures=\"{}\">\n{}  </testsuite>\n",
                     xml_escaped(r.suite_name), recovery_tests, recovery_failures, recovery_xml);
  o += "</testsuites>\n";
  (void)skipped;
  return o;
}

}  // namespace trajcheck::eval

namespace trajcheck::eval {

std::vector<Table> recovery_tables(const EvalReport& r) {
  std::vector<Table> out;
  if (!r.show_recovery) return out;
  auto rows = [&](const char* id, const char* title, const char* key, const std::vector<RecoveryRow>& rs) {
    Table t{id, title, {key, "failures", "injected", "judged", "recovered", "recovery"}, {}};
    for (const RecoveryRow& row : rs)
      t.rows.push_back({row.key, std::to_string(row.failures), std::to_string(row.injected), std::to_string(row.judged),
                        std::to_string(row.recovered), fmt_value(row.share(), true)});
    out.push_back(std::move(t));
  };
  rows("recovery-by-class", "recovery per error class", "error class", r.recovery_by_class);
  rows("recovery-by-tool", "recovery per tool", "tool", r.recovery_by_tool);
  if (!r.unknown_errors.empty()) {
    Table t{"unknown-errors", "error classes outside the catalog's vocabulary", {"tool: class", "cases"}, {}};
    for (const auto& [k, cases] : r.unknown_errors) t.rows.push_back({k, fmt::format("{}", fmt::join(cases, ", "))});
    out.push_back(std::move(t));
  }
  if (!r.injections_not_observed.empty()) {
    Table t{"injections-not-observed", "injections not observed (not judged on recovery)", {"case: injection: what the run did"}, {}};
    for (const auto& s : r.injections_not_observed) t.rows.push_back({s});
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Table> grader_tables(const EvalReport& r) {
  std::vector<Table> out;
  if (r.graders.empty()) return out;
  Table t{"graders", "graders (each its own dimension)", {"group", "grader", "cases", "pass", "fail", "no answer", "pass share", "mean score"}, {}};
  auto rows = [&](const std::string& group, const Dimensions& d) {
    for (const std::string& name : r.graders) {
      auto it = d.graders.find(name);
      if (it == d.graders.end()) continue;
      const GraderDimension& g = it->second;
      t.rows.push_back({group, name, std::to_string(g.cases), std::to_string(g.passed), std::to_string(g.failed),
                        std::to_string(g.errors), fmt_value(g.pass_share, true), fmt_value(g.mean_score, false)});
    }
  };
  rows("overall", r.overall);
  for (const auto& s : r.splits) rows("split=" + s.value, s.dims);
  out.push_back(std::move(t));
  Table problems{"grader-problems", "grader failures (no answer for these cases)", {"case", "grader", "what happened"}, {}};
  for (const auto& c : r.cases) {
    const std::vector<const CaseResult*> runs = runs_of(c);
    for (std::size_t k = 0; k < runs.size(); ++k)
      for (const GraderResult& g : runs[k]->graders)
        if (!g.error.empty()) problems.rows.push_back({run_name(c, k), g.grader, g.error});
  }
  if (!problems.rows.empty()) out.push_back(std::move(problems));
  return out;
}

std::string tools_difference(const CaseResult& x) {
  std::vector<std::string> parts;
  if (!x.missing_tools.empty()) parts.push_back(fmt::format("missing {}", fmt::join(x.missing_tools, ", ")));
  if (!x.extra_tools.empty()) parts.push_back(fmt::format("extra {}", fmt::join(x.extra_tools, ", ")));
  if (!x.misordered_tools.empty()) parts.push_back(fmt::format("misordered {}", fmt::join(x.misordered_tools, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<Table> tools_tables(const EvalReport& r) {
  Table t{"tools", "tools against the expected ones", {"case", "missing", "extra", "misordered"}, {}};
  for (const auto& c : r.cases) {
    const std::vector<const CaseResult*> runs = runs_of(c);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const CaseResult& x = *runs[k];
      if (!x.tools_differ()) continue;
      t.rows.push_back({run_name(c, k), fmt::format("{}", fmt::join(x.missing_tools, ", ")),
                        fmt::format("{}", fmt::join(x.extra_tools, ", ")),
                        fmt::format("{}", fmt::join(x.misordered_tools, ", "))});
    }
  }
  std::vector<Table> out;
  if (!t.rows.empty()) out.push_back(std::move(t));
  return out;
}

std::vector<Table> runs_tables(const EvalReport& r) {
  std::vector<Table> out;
  if (r.k <= 1) return out;
  Table t{"runs", fmt::format("runs per case (k = {}{})", r.k, r.k_fewest < r.k ? fmt::format(", fewest {}", r.k_fewest) : ""),
          {"group", "cases", "runs", "pass@k", "pass^k", "pass rate", "flaky"}, {}};
  auto row = [&](const std::string& group, const Dimensions& d) {
    t.rows.push_back({group, std::to_string(d.cases), std::to_string(d.runs), fmt_value(d.pass_at_k, true),
                      fmt_value(d.pass_all_k, true), fmt_value(d.pass_rate, true), std::to_string(d.flaky)});
  };
  row("overall", r.overall);
  for (const auto& s : r.segments) row(s.field + "=" + s.value, s.dims);
  for (const auto& s : r.splits) row("split=" + s.value, s.dims);
  out.push_back(std::move(t));
  Table flaky{"flaky", "flaky cases (some runs pass, some fail)", {"case", "runs", "pass", "pass rate", "failing runs"}, {}};
  for (const auto& c : r.cases) {
    if (!c.flaky()) continue;
    std::vector<std::string> failing;
    const std::vector<const CaseResult*> runs = runs_of(c);
    for (std::size_t k = 0; k < runs.size(); ++k)
      if (!runs[k]->pass) failing.push_back(fmt::format("{} ({})", k + 1, runs[k]->run));
    flaky.rows.push_back({c.case_id, std::to_string(c.runs()), std::to_string(c.runs_passed()),
                          fmt_value(static_cast<double>(c.runs_passed()) / c.runs(), true),
                          fmt::format("{}", fmt::join(failing, ", "))});
  }
  if (!flaky.rows.empty()) out.push_back(std::move(flaky));
  return out;
}

std::string table_text(const Table& t_in) {
  Table t = t_in;  // cells hold case ids, tool names, a grader's words: written escaped
  for (auto& row : t.rows)
    for (auto& cell : row) cell = detail::printable(cell);
  std::vector<std::size_t> w(t.head.size(), 0);
  for (std::size_t i = 0; i < t.head.size(); ++i) w[i] = t.head[i].size();
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], row[i].size());
  // Numbers (counts, shares, "n/a") right-aligned, text left-aligned.
  std::vector<bool> numeric(t.head.size(), !t.rows.empty());
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < numeric.size(); ++i)
      numeric[i] = numeric[i] && (row[i] == "n/a" || (!row[i].empty() && row[i].find_first_not_of("0123456789.%-") ==
                                                                              std::string::npos));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string o = " ";
    for (std::size_t i = 0; i < cells.size() && i < w.size(); ++i)
      o += numeric[i] ? fmt::format(" {:>{}}", cells[i], w[i]) : fmt::format(" {:<{}}", cells[i], w[i]);
    while (!o.empty() && o.back() == ' ') o.pop_back();
    return o + "\n";
  };
  std::string o = "\n" + t.title + ":\n" + line(t.head);
  for (const auto& row : t.rows) o += line(row);
  return o;
}

std::string table_markdown(const Table& t) {
  auto cell = [](std::string_view raw) {  // one line of a table row: control characters escaped
    std::string s = detail::printable(raw);
    for (std::size_t p = s.find('|'); p != std::string::npos; p = s.find('|', p + 2)) s.replace(p, 1, "\\|");
    return s;
  };
  const std::string title = capitalized(t.title);
  std::string o = "\n### " + title + "\n\n|";
  for (const auto& h : t.head) o += " " + cell(h) + " |";
  o += "\n|";
  for (std::size_t i = 0; i < t.head.size(); ++i) o += "---|";
  o += "\n";
  for (const auto& row : t.rows) {
    o += "|";
    for (const auto& c : row) o += " " + cell(c) + " |";
    o += "\n";
  }
  return o;
}

std::string table_html(const Table& t) {
  const std::string title = capitalized(t.title);
  std::string o = fmt::format("<h2>{}</h2>\n<table id=\"{}\"><tr>", html_escape(title), t.id);
  for (const auto& h : t.head) o += "<th>" + html_escape(h) + "</th>";
  o += "</tr>\n";
  for (const auto& row : t.rows) {
    o += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) o += (i ? "<td class=num>" : "<td>") + html_escape(row[i]) + "</td>";
    o += "</tr>\n";
  }
  return o + "</table>\n";
}

}  // namespace trajcheck::eval
