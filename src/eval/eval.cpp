// run_eval: load the suite, its cases, catalog, baseline and rules; read the runs through the
// record pipeline, judge each run against its case, then aggregate and apply the gates.
#include "eval/eval.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/program.hpp"
#include "json/located_parse.hpp"
#include "eval/eval_internal.hpp"
#include "language/frontend.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/reader.hpp"
#include "run/pipeline.hpp"
#include "util/suggest.hpp"
#include "util/glob_files.hpp"
#include "util/read_file.hpp"

namespace trajcheck::eval {

using detail::glob_files;
using nlohmann::json;

namespace {

std::string join_path(const std::string& dir, const std::string& p) {
  if (p.empty() || p[0] == '/' || dir.empty() || dir == ".") return p;
  return dir + "/" + p;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(none)";
  return v.dump();
}


// Reads the suite or a cases file; on failure appends "PATH: error: reason" to `errors`.
bool read_file(const std::string& path, std::string& out, std::string& errors) {
  std::string why;
  if (read_regular_file(path, kMaxSourceBytes, out, why)) return true;
  errors += fmt::format("{}: error: {}\n", path, why);
  return false;
}

// The problems of a run, in the order found (run_eval's caller formats them).
class Problems {
 public:
  explicit Problems(std::vector<EvalProblem>& out) : out_(out) {}
  // A whole message line.
  Problems& operator+=(std::string text) {
    if (!text.empty()) out_.push_back(EvalProblem{nullptr, {}, std::move(text)});
    return *this;
  }
  void add(const Source& src, const std::vector<Diagnostic>& diags) {
    if (diags.empty()) return;
    auto shared = std::make_shared<const Source>(src);
    for (const Diagnostic& d : diags) out_.push_back(EvalProblem{shared, d, {}});
  }
  // An error of `code` at `r` of `src`.
  void add_at(const Source& src, SourceRange r, const char* code, const std::string& msg) {
    Diagnostic d;
    d.code = code;
    d.range = r;
    d.message = msg;
    add(src, {d});
  }
  // The files a suite line's pattern names; what it matched that is not a regular file is
  // a warning at the line (a directory or a FIFO named like a case file is not read).
  std::vector<std::string> files_of(const Source& src, const suite::Located& pattern, const std::string& directory) {
    std::vector<std::string> skipped;
    std::vector<std::string> files = glob_files(join_path(directory, pattern.text), &skipped);
    for (const std::string& why : skipped) {
      Diagnostic d;
      d.severity = Severity::warning;
      d.code = "S011";
      d.range = pattern.range;
      d.message = why + ": skipped";
      add(src, {d});
    }
    return files;
  }
  bool empty() const { return out_.empty(); }
  // Whether any problem says "error" (some loaders report notes and warnings too).
  bool any_error() const { return format_problems(out_).find("error") != std::string::npos; }

 private:
  std::vector<EvalProblem>& out_;
};

constexpr const char* kControlFlows[] = {"act", "answer", "clarify", "refuse", "retry", "handoff"};

// The 1-based column of byte `offset` of the string value of `"key":` in a case's JSON line
// (searched after `from`), when the value is written without escapes up to there; else the
// column of the value's opening quote, or 1 when it cannot be found.
std::uint64_t value_column(std::string_view line, std::string_view key, std::size_t from, std::size_t offset) {
  std::string quoted = fmt::format("\"{}\"", key);
  for (std::size_t k = line.find(quoted, from); k != std::string_view::npos; k = line.find(quoted, k + 1)) {
    std::size_t i = line.find_first_not_of(" \t", k + quoted.size());
    if (i == std::string_view::npos || line[i] != ':') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line[i] != '"') continue;
    std::string_view raw = line.substr(i + 1);
    bool plain = raw.substr(0, std::min(offset, raw.size())).find_first_of("\\\"") == std::string_view::npos;
    return plain && offset <= raw.size() ? i + 2 + offset : i + 1;
  }
  return 1;
}

// Why `path` is no PATH of the rule language, and where (a byte offset into it); empty when it is one.
// Its warnings (the PATH traps, W009/W010/W011 of docs/language.md) go to `warnings`.
std::string path_error(const std::string& path, std::size_t& offset, std::vector<Diagnostic>* warnings = nullptr) {
  ir::Module module;
  std::vector<Diagnostic> diags;
  ir::Id root = language::parse_path_expression(Source("expected.path", path), module, diags);
  if (warnings)
    for (const Diagnostic& d : diags)
      if (d.severity == Severity::warning) warnings->push_back(d);
  for (const Diagnostic& d : diags) {
    if (d.severity != Severity::error) continue;
    offset = d.range.begin;
    return d.message;
  }
  offset = 0;
  return root == ir::kNone ? "not a PATH" : "";
}

// Loads one cases file (JSONL); problems are appended to `errors`, its digest to `inputs`.
void load_case_file(const std::string& path, std::vector<CaseSpec>& cases, Problems& errors,
                std::vector<InputDigest>& inputs) {
  std::string text, err;
  if (!read_file(path, text, err)) {
    errors += err;
    return;
  }
  inputs.push_back({"cases", path, sha256_hex(text)});
  std::size_t pos = 0;
  std::uint64_t line = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    ++line;
    std::string_view l(text.data() + pos, nl - pos);
    std::size_t start = pos;
    pos = nl + 1;
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto fail = [&](std::uint64_t col, const std::string& msg) {
      errors += fmt::format("{}:{}:{}: error: {}\n", path, line, col, msg);
    };
    json j;
    if (auto failure = trajcheck::json::parse_located(l, j)) {
      fail(failure->offset + 1, "a case is one JSON object per line: " + failure->reason);
      continue;
    }
    if (!j.is_object()) {
      fail(1, "a case is a JSON object");
      continue;
    }
    CaseSpec c;
    c.origin = fmt::format("{}:{}", path, line);
    c.record = j.dump();
    (void)start;
    auto id = j.find("case_id");
    if (id == j.end() || !(id->is_string() || id->is_number_integer())) {
      fail(1, "a case needs a \"case_id\" (a string)");
      continue;
    }
    c.id = scalar_text(*id);
    c.split = j.contains("split") && j["split"].is_string() ? j["split"].get<std::string>() : "designed";
    if (j.contains("catalog_version") && j["catalog_version"].is_string())
      c.catalog_version = j["catalog_version"].get<std::string>();
    if (j.contains("fixture")) {
      if (!j["fixture"].is_string() || j["fixture"].get<std::string>().empty()) {
        fail(1, "\"fixture\" must be the file name of the case's environment fixture (a JSON document)");
        continue;
      }
      c.fixture_path = j["fixture"].get<std::string>();
    }
    if (j.contains("inject")) {
      const json& in = j["inject"];
      const char* shape =
          "\"inject\" must be a list of {\"tool\": NAME, \"attempt\": N (1, 2, …), \"error\": {\"class\": NAME, "
          "\"retryable\": BOOL}}";
      bool bad = !in.is_array();
      for (const json& x : bad ? json::array() : in) {
        const json* err = x.is_object() && x.contains("error") ? &x["error"] : nullptr;
        if (!x.is_object() || !x.contains("tool") || !x["tool"].is_string() || x["tool"].get<std::string>().empty() ||
            (x.contains("attempt") && !(x["attempt"].is_number_unsigned() && x["attempt"].get<std::uint64_t>() >= 1 &&
                                        x["attempt"].get<std::uint64_t>() <= 1000000)) ||
            err == nullptr || !err->is_object() || !err->contains("class") || !(*err)["class"].is_string() ||
            (*err)["class"].get<std::string>().empty() ||
            (err->contains("retryable") && !(*err)["retryable"].is_boolean()) ||
            (err->contains("uncertain") && !(*err)["uncertain"].is_boolean())) {
          bad = true;
          break;
        }
        Injection injection;
        injection.tool = normalize_tool_name(x["tool"].get<std::string>());
        injection.attempt = x.contains("attempt") ? x["attempt"].get<std::uint32_t>() : 1;
        injection.cls = (*err)["class"].get<std::string>();
        if (err->contains("retryable")) injection.retryable = (*err)["retryable"].get<bool>();
        if (err->contains("uncertain")) injection.uncertain = (*err)["uncertain"].get<bool>();
        c.inject.push_back(std::move(injection));
      }
      if (bad) {
        fail(1, shape);
        continue;
      }
    }
    if (j.contains("fixture_version")) {
      if (!j["fixture_version"].is_string()) {
        fail(1, "\"fixture_version\" must be a string, like \"v3\"");
        continue;
      }
      c.fixture_version = j["fixture_version"].get<std::string>();
    }
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!it.value().is_object() && !it.value().is_array()) c.fields[it.key()] = scalar_text(it.value());
    if (j.contains("expected")) {
      const json& e = j["expected"];
      if (!e.is_object()) {
        fail(1, "\"expected\" must be an object");
        continue;
      }
      bool bad = false;
      if (e.contains("tools")) {
        if (!e["tools"].is_array()) {
          fail(1, "\"expected.tools\" must be a list of tool names");
          continue;
        }
        c.has_tools = true;
        for (const auto& t : e["tools"]) {
          if (!t.is_string()) {
            bad = true;
            break;
          }
          c.tools.push_back(t.get<std::string>());
        }
        if (bad) {
          fail(1, "\"expected.tools\" must be a list of tool names");
          continue;
        }
      }
      if (e.contains("path")) {
        if (!e["path"].is_string()) {
          fail(1, "\"expected.path\" must be a PATH string like \"a -> b\"");
          continue;
        }
        c.path = e["path"].get<std::string>();
        std::size_t at = 0;
        std::vector<Diagnostic> path_warnings;
        if (std::string why = path_error(c.path, at, &path_warnings); !why.empty()) {
          fail(value_column(l, "path", l.find("\"expected\""), at),
               fmt::format("\"expected.path\" is not a PATH of the rule language: {}", why));
          continue;
        }
        for (const Diagnostic& w : path_warnings)
          errors += fmt::format("{}:{}:{}: warning[{}]: \"expected.path\": {}\n", path, line,
                                value_column(l, "path", l.find("\"expected\""), w.range.begin), w.code, w.message);
      }
      if (e.contains("arguments")) {
        if (!e["arguments"].is_object()) {
          fail(1, "\"expected.arguments\" must map tool names to argument objects");
          continue;
        }
        for (auto it = e["arguments"].begin(); it != e["arguments"].end(); ++it) {
          if (!it.value().is_object()) {
            bad = true;
            break;
          }
          c.arguments.emplace_back(normalize_tool_name(it.key()), it.value().dump());
        }
        if (bad) {
          fail(1, "\"expected.arguments\" must map tool names to argument objects");
          continue;
        }
      }
      if (e.contains("control")) {
        c.control = e["control"].is_string() ? e["control"].get<std::string>() : "";
        if (std::find(std::begin(kControlFlows), std::end(kControlFlows), c.control) == std::end(kControlFlows)) {
          fail(1, fmt::format("\"expected.control\" must be one of act, answer, clarify, refuse, retry, handoff; got {}",
                              e["control"].dump()));
          continue;
        }
      }
      if (e.contains("output")) {
        const json& o = e["output"];
        const json* required = o.is_object() && o.contains("required") ? &o["required"] : nullptr;
        if (!o.is_object() || (required && !(required->is_array() && std::all_of(required->begin(), required->end(),
                                                                                 [](const json& f) { return f.is_string(); })))) {
          fail(1, "\"expected.output\" must be an object: {\"required\": [field names…], field: value…}");
          continue;
        }
        c.output = o.dump();
      }
      if (e.contains("rules")) {
        const json& r = e["rules"];
        if (!r.is_array() || !std::all_of(r.begin(), r.end(), [](const json& f) { return f.is_string() && !f.get<std::string>().empty(); })) {
          fail(1, "\"expected.rules\" must be a list of rules file names");
          continue;
        }
        for (const auto& f : r) c.rules.push_back(f.get<std::string>());
      }
      if (e.contains("invariants")) {
        const json& r = e["invariants"];
        if (!r.is_array() || !std::all_of(r.begin(), r.end(), [](const json& f) { return f.is_string() && !f.get<std::string>().empty(); })) {
          fail(1, "\"expected.invariants\" must be a list of rule names");
          continue;
        }
        for (const auto& f : r) c.invariants.push_back(f.get<std::string>());
      }
    }
    cases.push_back(std::move(c));
  }
}

// The recovery tables (per error class, per tool) over the judged cases' failed calls, the
// error classes outside the catalog's vocabulary and the injections no run met.
void recovery_tables(const EvalContext& ctx, EvalReport& report) {
  report.show_recovery = std::any_of(ctx.cases.begin(), ctx.cases.end(), [](const CaseSpec& c) { return !c.inject.empty(); });
  if (ctx.catalog)
    for (const CatalogTool& t : ctx.catalog->tools()) report.show_recovery |= !t.errors.empty();
  std::map<std::string, RecoveryRow> by_class, by_tool;
  for (const CaseResult& c : report.cases) {
    const std::vector<const CaseResult*> runs = runs_of(c);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const CaseResult& r = *runs[k];
      const std::string id = run_name(c, k);
      for (const FailureEvent& f : r.failures) {
        for (RecoveryRow* row : {&by_class[f.error_class], &by_tool[f.tool]}) {
          ++row->failures;
          row->injected += f.injected;
          if (f.recovered) {
            ++row->judged;
            row->recovered += *f.recovered;
          }
        }
      }
      for (const std::string& u : r.unknown_errors) report.unknown_errors[u].push_back(id);
      for (const InjectionResult& in : r.injections)
        if (!in.observed)
          report.injections_not_observed.push_back(fmt::format("{}: {} attempt {} ({}): {}", id, in.tool, in.attempt,
                                                               in.error_class, fmt::join(in.problems, "; ")));
    }
  }
  for (auto& [key, row] : by_class) {
    row.key = key;
    report.recovery_by_class.push_back(row);
  }
  for (auto& [key, row] : by_tool) {
    row.key = key;
    report.recovery_by_tool.push_back(row);
  }
}

}  // namespace

std::optional<double> percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  if (rank < 1) rank = 1;
  return values[std::min(rank, values.size()) - 1];
}

Dimensions aggregate(const std::vector<const CaseResult*>& cases) {
  Dimensions d;
  double sel = 0, ord = 0, overall = 0;
  std::uint64_t am = 0, at = 0, rec = 0, out = 0, sv = 0, sc = 0;
  double tokens = 0, cost = 0, latency = 0;
  std::uint32_t tokens_n = 0, cost_n = 0, latency_n = 0;
  Efficiency& e = d.efficiency;
  double pass_any = 0, pass_all = 0, pass_rate = 0;
  std::vector<const CaseResult*> runs;  // every judged run: each case's first, then its repeats
  for (const CaseResult* k : cases) {
    if (k->status != CaseStatus::judged) continue;
    ++d.cases;
    const std::uint32_t n = k->runs(), passed = k->runs_passed();
    pass_any += passed > 0;
    pass_all += passed == n;
    pass_rate += static_cast<double>(passed) / n;
    d.flaky += k->flaky();
    runs.push_back(k);
    for (const CaseResult& r : k->repeats) runs.push_back(&r);
  }
  d.runs = static_cast<std::uint32_t>(runs.size());
  if (d.cases) {
    d.pass_at_k = pass_any / d.cases;
    d.pass_all_k = pass_all / d.cases;
    d.pass_rate = pass_rate / d.cases;
  }
  for (const CaseResult* c : runs) {
    if (c->selection) {
      sel += *c->selection;
      ++d.selection_n;
    }
    if (c->overall) {
      overall += *c->overall;
      ++d.overall_n;
    }
    am += c->arguments_matched;
    at += c->arguments_total;
    sv += c->schema_valid;
    sc += c->schema_calls;
    if (c->order) {
      ord += *c->order;
      ++d.order_n;
    }
    if (c->recovery) {
      rec += *c->recovery;
      ++d.recovery_n;
    }
    if (c->outcome) {
      out += *c->outcome;
      ++d.outcome_n;
    }
    for (const auto& v : c->violations) {
      ++d.violations[v.severity];
      ++d.violations_by_rule[v.rule];
      for (const std::string& tag : v.tags) ++d.violations_by_tag[tag];
    }
    // Efficiency is over successful, gate-passing runs: a run without an outcome (no
    // success, reward or expected output to judge it by) is not a success.
    if (!c->pass || !c->outcome.value_or(false)) continue;
    ++e.cases;
    e.calls += c->calls;
    e.duplicates += c->duplicates;
    e.retries += c->retries;
    e.write_calls += c->write_calls;
    e.read_calls += c->read_calls;
    e.unused_reads += c->unused_reads;
    if (c->read_volume) e.read_volume_series.push_back(static_cast<double>(*c->read_volume));
    e.loop_depth = std::max(e.loop_depth, c->loop_depth);
    for (const auto& [k, v] : c->retries_by_class) e.retries_by_class[k] += v;
    e.calls_series.push_back(c->calls);
    e.retries_series.push_back(c->retries);
    e.loop_series.push_back(c->loop_depth);
    if (c->tokens) {
      tokens += *c->tokens;
      ++tokens_n;
      e.tokens_series.push_back(*c->tokens);
    }
    if (c->cost) {
      cost += *c->cost;
      ++cost_n;
      e.cost_series.push_back(*c->cost);
    }
    if (c->latency_ms) {
      latency += *c->latency_ms;
      ++latency_n;
      e.latency_series.push_back(*c->latency_ms);
    }
  }
  for (const CaseResult* c : runs) {
    for (const GraderResult& g : c->graders) {
      GraderDimension& gd = d.graders[g.grader];
      ++gd.cases;
      if (!g.error.empty()) ++gd.errors;
      else if (g.pass) ++(*g.pass ? gd.passed : gd.failed);
      if (g.score) gd.scores.push_back(*g.score);
    }
  }
  for (auto& [name, gd] : d.graders) {
    if (gd.passed + gd.failed) gd.pass_share = static_cast<double>(gd.passed) / (gd.passed + gd.failed);
    if (!gd.scores.empty()) {
      double s = 0;
      for (double v : gd.scores) s += v;
      gd.mean_score = s / static_cast<double>(gd.scores.size());
    }
  }
  if (d.selection_n) d.selection = sel / d.selection_n;
  if (d.overall_n) d.overall = overall / d.overall_n;
  d.arguments_n = static_cast<std::uint32_t>(at);
  if (at) d.arguments = static_cast<double>(am) / static_cast<double>(at);
  d.argument_validity_n = static_cast<std::uint32_t>(sc);
  if (sc) d.argument_validity = static_cast<double>(sv) / static_cast<double>(sc);
  if (d.order_n) d.order = ord / d.order_n;
  if (d.recovery_n) d.recovery = static_cast<double>(rec) / d.recovery_n;
  if (d.outcome_n) d.outcome = static_cast<double>(out) / d.outcome_n;
  if (e.cases) {
    e.calls_per_success = static_cast<double>(e.calls) / e.cases;
    e.retries_per_success = static_cast<double>(e.retries) / e.cases;
    e.duplicates_per_100 = 100.0 * static_cast<double>(e.duplicates) / e.cases;
    if (e.calls) {
      e.duplicates_per_100_calls = 100.0 * static_cast<double>(e.duplicates) / static_cast<double>(e.calls);
      e.write_share = static_cast<double>(e.write_calls) / static_cast<double>(e.calls);
    } else {
      e.duplicates_per_100_calls = 0.0;
    }
    if (e.read_calls) e.unused_read_share = static_cast<double>(e.unused_reads) / static_cast<double>(e.read_calls);
  }
  if (tokens_n) e.tokens_per_success = tokens / tokens_n;
  if (!e.read_volume_series.empty()) {
    double v = 0;
    for (double x : e.read_volume_series) v += x;
    e.read_volume_per_success = v / static_cast<double>(e.read_volume_series.size());
  }
  if (cost_n) e.cost_per_success = cost / cost_n;
  if (latency_n) e.latency_per_success = latency / latency_n;
  return d;
}

std::optional<double> metric_value(const Dimensions& d, const suite::Gate& g) {
  const std::string& m = g.metric;
  const Efficiency& e = d.efficiency;
  if (g.grader) {  // bare: the share of graded cases it passes; mean(…), pNN(…), max(…): its scores
    auto it = d.graders.find(m);
    if (it == d.graders.end()) return std::nullopt;
    if (g.function.empty()) return it->second.pass_share;
    const std::vector<double>& s = it->second.scores;
    if (s.empty()) return std::nullopt;
    if (g.function == "mean") return it->second.mean_score;
    if (g.function == "max") return *std::max_element(s.begin(), s.end());
    const std::string& f = g.function;
    return percentile(s, f == "p50" ? 50 : f == "p90" ? 90 : f == "p95" ? 95 : 99);
  }
  if (m == "violations") {
    if (!g.rule.empty() || !g.tag.empty()) {
      const auto& counts = g.rule.empty() ? d.violations_by_tag : d.violations_by_rule;
      auto it = counts.find(g.rule.empty() ? g.tag : g.rule);
      return it == counts.end() ? 0.0 : static_cast<double>(it->second);
    }
    double n = 0;
    for (const auto& [sev, count] : d.violations)
      if (g.severity.empty() || sev == g.severity) n += count;
    return n;
  }
  if (m == "selection") return d.selection;
  if (m == "arguments") return d.arguments;
  if (m == "argument_validity") return d.argument_validity;
  if (m == "order") return d.order;
  if (m == "recovery") return d.recovery;
  if (m == "outcome") return d.outcome;
  if (m == "overall") return d.overall;
  if (m == "pass_at_k") return d.pass_at_k;
  if (m == "pass_all_k") return d.pass_all_k;
  if (m == "pass_rate") return d.pass_rate;
  if (m == "duplicates_per_100") return e.duplicates_per_100;
  if (m == "duplicates_per_100_calls") return e.duplicates_per_100_calls;
  if (m == "unused_read_share") return e.unused_read_share;
  if (m == "write_share") return e.write_share;
  const std::vector<double>* series = m == "calls_per_success"     ? &e.calls_series
                                    : m == "cost_per_success"      ? &e.cost_series
                                    : m == "tokens_per_success"    ? &e.tokens_series
                                    : m == "latency_per_success"   ? &e.latency_series
                                    : m == "retries_per_success"   ? &e.retries_series
                                    : m == "loop_depth"            ? &e.loop_series
                                    : m == "read_volume_per_success" ? &e.read_volume_series
                                                                   : nullptr;
  if (!series) return std::nullopt;
  if (series->empty()) return std::nullopt;
  const std::string& f = g.function;
  if (f.empty() || f == "mean") {
    double s = 0;
    for (double v : *series) s += v;
    return s / static_cast<double>(series->size());
  }
  if (f == "max") return *std::max_element(series->begin(), series->end());
  double p = f == "p50" ? 50 : f == "p90" ? 90 : f == "p95" ? 95 : 99;
  return percentile(*series, p);
}

std::string gate_metric_text(const suite::Gate& g) {
  std::string m = g.metric;
  if (!g.severity.empty()) m += "[" + g.severity + "]";
  if (!g.rule.empty()) m += "[" + g.rule + "]";
  if (!g.tag.empty()) m += "[" + g.tag + "]";
  if (!g.function.empty()) m = g.function + "(" + m + ")";
  return m;
}

// ---- run_eval ----------------------------------------------------------------------------

namespace {

struct Worker {
  const EvalContext* ctx;
  TraceParser* parser;
  ToolTable tools;
  Trajectory scratch{&tools};
  CaseJudge judge;
  std::vector<RunOutcome> outcomes;
  std::vector<std::pair<std::uint64_t, std::string>> unmatched;
  std::uint64_t records = 0, rejected = 0, warnings = 0;

  TraceJoiner* joiner = nullptr;
  Trajectory joined{&tools};

  Worker(const EvalContext* c, TraceParser* p, TraceJoiner* j) : ctx(c), parser(p), judge(*c), joiner(j) {}

  // One run: matched to its case and judged. `sub` orders the runs of one record.
  void judge_run(Trajectory& t, const RecordOrigin& at, std::uint32_t sub, std::string& err) {
    for (const std::string& w : t.warnings) (err += w) += '\n';
    warnings += t.warnings.size();
    std::string key;
    json meta = t.metadata().empty() ? json::object() : json::parse(t.metadata(), nullptr, false);
    if (meta.is_object() && meta.contains("case_id")) key = scalar_text(meta["case_id"]);
    else key = std::string(t.trace_id());
    auto it = ctx->case_index.find(key);
    std::string where = fmt::format("{}:{}", at.file, at.line);
    std::uint64_t order = at.record * 1024 + sub;
    if (it == ctx->case_index.end()) {
      unmatched.emplace_back(order, fmt::format("{} ({})", where, key));
      return;
    }
    RunOutcome ro;
    ro.order = order;
    ro.case_index = it->second;
    if (!ctx->suite->graders.empty()) write_normalized_json(t, ro.run_json);
    judge.judge(ctx->cases[it->second], t, meta.is_object() ? meta : json::object(), where, ro.result);
    outcomes.push_back(std::move(ro));
  }

  void process(const RawRecord& rec, std::string& out, std::string& err) {
    (void)out;
    if (rec.skipped()) {
      ++warnings;
      (err += rec.skip_warning) += '\n';
      return;
    }
    scratch.set_tools(&tools);  // workers are moved into a vector after construction
    joined.set_tools(&tools);
    ++records;
    if (!rec.container_error.empty()) {
      ++rejected;
      err += fmt::format("{}:{}:{}: error: {}\n", rec.origin.file, rec.origin.line, rec.origin.column,
                         rec.container_error);
      return;
    }
    std::uint32_t sub = 0;
    const TraceParser::Emit joined_run = [&](Trajectory& t) { judge_run(t, t.origin, sub++, err); };
    ParseOutcome o = parser->parse(rec, scratch, [&](Trajectory& t) {
      // An OTLP trace is judged once its spans are all read (TraceJoiner).
      if (!joiner->offer(t, joined, joined_run)) judge_run(t, rec.origin, sub++, err);
    });
    if (!o.ok()) {
      ++rejected;
      for (const auto& e : o.errors)
        err += fmt::format("{}:{}:{}: error: {}\n", e.where.file, e.where.line, e.where.column, e.message);
    }
  }
};

}  // namespace

std::string format_problems(const std::vector<EvalProblem>& problems, bool color) {
  std::string out;
  for (const EvalProblem& p : problems) out += p.source ? format_diagnostic(*p.source, p.diagnostic, color) : p.text;
  return out;
}

namespace {

// One run of a suite, phase by phase: each phase reads what the earlier ones set and adds
// its problems; run_eval() calls them in order and stops where one says the input is bad.
class SuiteRun {
 public:
  SuiteRun(const EvalOptions& options, EvalReport& report, std::vector<EvalProblem>& problems)
      : options_(options), report_(report), errors_(problems) {}

  // The suite file, parsed; its name and segment fields into the report.
  bool load_suite();
  // The catalog: its version (staleness), read and write tools, and the argument validator.
  bool load_catalog();
  // The baseline report, an earlier `eval --format json`.
  bool load_baseline();
  // The cases files, and no case id twice.
  bool load_cases();
  // The suite's rules files, then each case's own (compiled once per file).
  bool compile_rules();
  // Each case's environment fixture (read once per file).
  bool load_fixtures();
  // Every expected invariant names a rule of the suite's or the case's rules files.
  bool check_invariants();
  // violations[NAME] gates: NAME resolved to a rule or a tag; the report's violation keys.
  bool resolve_violation_gates();
  // Cases whose catalog or fixture version differs from the suite's.
  void mark_stale();
  // The rules files' aliases joined to --alias; the cases' tool names renamed alike.
  void apply_aliases();
  // The run files (--runs, else the suite's `runs`), read and judged; false on bad input.
  bool judge_runs();
  // Each case's run (the first one; later ones are listed as unmatched), stale and unanswered
  // cases, and the case fields of every result.
  void assign_runs();
  // Graders, recovery tables, tables and gates.
  void finish();

 private:
  int compile_file(const std::string& path, const suite::Located* at);
  // Whether `path` lies in the suite's folder, a `case rules from` folder or the fixtures folder.
  bool inside_roots(const std::string& path) const;

  const EvalOptions& options_;
  EvalReport& report_;
  Problems errors_;
  suite::SuiteResult sr_;
  EvalContext ctx_;
  json baseline_;
  NormalizeOptions reading_;
  std::vector<std::filesystem::path> roots_;
  std::vector<RunOutcome> outcomes_;
  std::vector<std::pair<std::uint64_t, std::string>> unmatched_;
  std::vector<std::vector<std::string>> run_json_;  // per case, per run (graders)
};

bool SuiteRun::load_suite() {
  std::string suite_text, ferr;
  if (!read_file(options_.suite_path, suite_text, ferr)) {
    errors_ += ferr;
    return false;
  }
  sr_ = suite::parse_suite(Source(options_.suite_path, std::move(suite_text)));
  errors_.add(sr_.source, sr_.diagnostics);
  if (!sr_.ok()) return false;
  report_.suite_name = sr_.suite.name;
  report_.suite_file = options_.suite_path;
  for (const auto& s : sr_.suite.segments) report_.segment_fields.push_back(s.text);
  ctx_.suite = &sr_.suite;
  return true;
}

bool SuiteRun::load_catalog() {
  const suite::Suite& st = sr_.suite;
  if (!st.catalog) return true;
  std::string path = join_path(st.directory, st.catalog->text);
  // The same loader as `check --catalog`: located errors, and one compiled schema per tool.
  CatalogLoad cat = trajcheck::load_catalog(path);
  if (!cat.ok()) {
    errors_.add_at(sr_.source, st.catalog->range, "S011", fmt::format("cannot use the catalog {}", path));
    errors_.add(cat.source, cat.diagnostics);
    return false;
  }
  report_.catalog_version = cat.catalog->version();
  report_.inputs.push_back({"catalog", path, sha256_hex(cat.source.text())});
  ctx_.catalog = cat.catalog;
  for (const CatalogTool& t : cat.catalog->tools())
    (t.effect == ToolEffect::write ? ctx_.write_tools : ctx_.read_tools).insert(t.name);
  ctx_.validate_arguments = [c = cat.catalog](std::string_view tool, std::string_view args) -> std::optional<bool> {
    if (!c->find(tool)) return std::nullopt;
    return c->validate(tool, args, nullptr);
  };
  return true;
}

bool SuiteRun::load_baseline() {
  const suite::Suite& st = sr_.suite;
  std::string baseline_path = options_.baseline;
  if (baseline_path.empty() && st.baseline) baseline_path = join_path(st.directory, st.baseline->text);
  if (baseline_path.empty()) return true;
  std::string text, reason;
  if (!read_regular_file(baseline_path, kMaxReportBytes, text, reason)) {
    if (st.baseline && options_.baseline.empty())
      errors_.add_at(sr_.source, st.baseline->range, "S011",
                     fmt::format("cannot read the baseline {}: {}", baseline_path, reason));
    else
      errors_ += fmt::format("{}: error: {}\n", baseline_path, reason);
    return false;
  }
  std::string why;
  if (!parse_report(baseline_path, text, baseline_, why)) {
    errors_ += why;
    return false;
  }
  return true;
}

bool SuiteRun::load_cases() {
  const suite::Suite& st = sr_.suite;
  bool ok = true;
  for (const auto& pat : st.cases) {
    auto files = errors_.files_of(sr_.source, pat, st.directory);
    if (files.empty()) {
      errors_.add_at(sr_.source, pat.range, "S011", fmt::format("no case file matches {}", pat.text));
      ok = false;
    }
    for (const auto& f : files) load_case_file(f, ctx_.cases, errors_, report_.inputs);
  }
  if (!errors_.empty() && errors_.any_error()) ok = false;
  for (std::size_t i = 0; i < ctx_.cases.size(); ++i) {
    auto [it, fresh] = ctx_.case_index.emplace(ctx_.cases[i].id, i);
    if (!fresh) {
      errors_ += fmt::format("{}: error: case_id '{}' repeats the case at {}\n", ctx_.cases[i].origin,
                             ctx_.cases[i].id, ctx_.cases[it->second].origin);
      ok = false;
    }
  }
  return ok;
}

int SuiteRun::compile_file(const std::string& path, const suite::Located* at) {
  auto found = ctx_.program_index.find(path);
  if (found != ctx_.program_index.end()) return static_cast<int>(found->second);
  std::string text, reason;
  if (!read_regular_file(path, kMaxSourceBytes, text, reason)) {
    if (at) errors_.add_at(sr_.source, at->range, "S011", fmt::format("cannot read the rules file {}: {}", path, reason));
    else errors_ += fmt::format("{}: error: {}\n", path, reason);
    return -1;
  }
  std::string digest = sha256_hex(text);
  // A rule's name that --alias renames means its canonical tool, as in `check`.
  CompileOptions copts;
  copts.command_line_aliases = options_.reading.aliases;
  CompileResult cr = compile(Source(path, std::move(text)), copts);
  errors_.add(cr.source, cr.diagnostics);
  if (!cr.ok()) return -1;
  ctx_.programs.push_back(cr.program);
  ctx_.program_index[path] = ctx_.programs.size() - 1;
  report_.rules_files.push_back(path);
  report_.inputs.push_back({"rules", path, std::move(digest)});
  return static_cast<int>(ctx_.programs.size() - 1);
}

bool SuiteRun::inside_roots(const std::string& path) const {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  if (ec) return false;
  for (const auto& root : roots_) {
    auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    if (r == root.end()) return true;
  }
  return false;
}

bool SuiteRun::compile_rules() {
  const suite::Suite& st = sr_.suite;
  bool ok = true;
  for (const auto& r : st.rules) {
    auto files = errors_.files_of(sr_.source, r, st.directory);
    for (const auto& f : files) {
      int i = compile_file(f, &r);
      if (i < 0) ok = false;
      else ctx_.suite_programs.push_back(static_cast<std::uint32_t>(i));
    }
    if (files.empty()) {
      errors_.add_at(sr_.source, r.range, "S011", fmt::format("no rules file matches {}", r.text));
      ok = false;
    }
  }
  // A case's rules files come from the suite's folder, or from the folders the suite names in
  // `case rules from`: a case line cannot make eval read (and quote) any file on the machine.
  auto add_root = [&](const std::string& dir) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
    if (!ec && !p.empty()) roots_.push_back(std::move(p));
  };
  add_root(st.directory);
  for (const auto& f : st.case_rules_from) add_root(join_path(st.directory, f.text));
  if (st.fixtures) add_root(join_path(st.directory, st.fixtures->text));
  for (auto& c : ctx_.cases) {
    for (const auto& r : c.rules) {
      if (!inside_roots(join_path(st.directory, r))) {
        errors_ += fmt::format("{}: error: expected.rules {} is outside the suite's folder (a suite names more "
                               "folders with: case rules from \"DIR\")\n",
                               c.origin, nlohmann::json(r).dump());
        ok = false;
        continue;
      }
      int i = compile_file(join_path(st.directory, r), nullptr);
      if (i < 0) {
        errors_ += fmt::format("{}: note: rules file {} is listed in this case's expected.rules\n", c.origin, r);
        ok = false;
      } else {
        c.programs.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  return ok;
}

bool SuiteRun::load_fixtures() {
  // From the suite's folder or its `fixtures` folder only.
  const suite::Suite& st = sr_.suite;
  bool ok = true;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> fixtures;
  for (auto& c : ctx_.cases) {
    if (c.fixture_path.empty()) continue;
    std::string path = join_path(st.directory, c.fixture_path);
    if (!inside_roots(path)) {
      errors_ += fmt::format("{}: error: fixture {} is outside the suite's folder and its fixtures folder\n", c.origin,
                             nlohmann::json(c.fixture_path).dump());
      ok = false;
      continue;
    }
    auto& slot = fixtures[path];
    if (!slot) {
      std::string text, reason;
      if (!read_regular_file(path, kMaxSourceBytes, text, reason)) {
        errors_ += fmt::format("{}: error: cannot read the fixture {}: {}\n", c.origin, path, reason);
        ok = false;
        continue;
      }
      json doc = json::parse(text, nullptr, false);
      if (doc.is_discarded()) {
        errors_ += fmt::format("{}: error: the fixture {} is not a JSON document\n", c.origin, path);
        ok = false;
        continue;
      }
      report_.inputs.push_back({"fixture", path, sha256_hex(text)});
      slot = std::make_shared<const std::string>(doc.dump());
    }
    c.fixture = slot;
  }
  return ok;
}

bool SuiteRun::check_invariants() {
  bool ok = true;
  for (const auto& c : ctx_.cases) {
    for (const std::string& name : c.invariants) {
      bool found = false;
      auto has = [&](std::uint32_t p) {
        for (const RuleInfo& info : ctx_.programs[p]->rules()) found |= info.name == name;
      };
      for (std::uint32_t p : ctx_.suite_programs) has(p);
      for (std::uint32_t p : c.programs) has(p);
      if (!found) {
        errors_ += fmt::format("{}: error: expected.invariants names {}, which is no rule of the suite's or the "
                               "case's rules files\n",
                               c.origin, nlohmann::json(name).dump());
        ok = false;
      }
    }
  }
  return ok;
}

bool SuiteRun::resolve_violation_gates() {
  // violations[NAME]: a rule of the suite's or a case's rules files, else a tag of such rules.
  // A name that is neither is an error (a gate that counted nothing would always pass).
  bool ok = true;
  std::map<std::string, bool> rule_critical, tag_critical;  // name -> every such rule is critical
  for (const auto& program : ctx_.programs) {
    for (const RuleInfo& info : program->rules()) {
      const bool critical = info.severity == RuleSeverity::critical;
      auto [r, fresh] = rule_critical.emplace(info.name, critical);
      if (!fresh) r->second = r->second && critical;
      for (const std::string& tag : info.tags) {
        auto [t, new_tag] = tag_critical.emplace(tag, critical);
        if (!new_tag) t->second = t->second && critical;
      }
    }
  }
  for (suite::Gate& g : sr_.suite.gates) {
    if (g.rule.empty()) continue;
    if (auto r = rule_critical.find(g.rule); r != rule_critical.end()) {
      g.rule_critical = r->second;
    } else if (auto t = tag_critical.find(g.rule); t != tag_critical.end()) {
      g.tag = std::move(g.rule);
      g.rule.clear();
      g.rule_critical = t->second;
    } else {
      std::vector<std::string> names;  // rules first (they win ties), then tags
      for (const auto* known : {&rule_critical, &tag_critical})
        for (const auto& entry : *known) names.push_back(entry.first);
      const std::string best = detail::did_you_mean(g.rule, names);
      Diagnostic d;
      d.code = "S006";
      d.range = g.index_range;
      d.message = fmt::format("violations[{}]: '{}' is no severity, rule or tag of the suite's rules files{}", g.rule,
                              g.rule, best.empty() ? "" : fmt::format("; did you mean '{}'?", best));
      if (rule_critical.empty()) d.message += " (the suite has no rules)";
      errors_.add(sr_.source, {d});
      ok = false;
    }
  }
  report_.violation_keys.clear();
  for (const auto& program : ctx_.programs)
    for (const RuleInfo& info : program->rules()) {
      report_.violation_keys.emplace_back(info.name, false);
      for (const std::string& tag : info.tags) report_.violation_keys.emplace_back(tag, true);
    }
  std::sort(report_.violation_keys.begin(), report_.violation_keys.end());
  report_.violation_keys.erase(std::unique(report_.violation_keys.begin(), report_.violation_keys.end()),
                               report_.violation_keys.end());
  return ok;
}

void SuiteRun::mark_stale() {
  const suite::Suite& st = sr_.suite;
  for (auto& c : ctx_.cases) {
    if (st.catalog && !c.catalog_version.empty() && !report_.catalog_version.empty() &&
        c.catalog_version != report_.catalog_version)
      c.stale = fmt::format("catalog_version {} differs from the suite's catalog {}", c.catalog_version,
                            report_.catalog_version);
    else if (!st.fixtures_version.empty() && !c.fixture_path.empty() && c.fixture_version.empty())
      c.stale = fmt::format("fixture {} has no fixture_version; the suite's fixtures are {}", c.fixture_path,
                            st.fixtures_version);
    else if (!st.fixtures_version.empty() && !c.fixture_version.empty() && c.fixture_version != st.fixtures_version)
      c.stale = fmt::format("fixture_version {} differs from the suite's fixtures {}", c.fixture_version,
                            st.fixtures_version);
  }
}

void SuiteRun::apply_aliases() {
  // The rules files' aliases rename the runs' tool names before anything is judged, as `check`
  // renames them before checking: scoring, arguments, the catalog and the graders see the
  // canonical names the rules see. A name given with --alias keeps the given meaning; the
  // cases' own tool names (expected tools, arguments, injections) are renamed alike.
  reading_ = options_.reading;
  {
    std::set<std::string> given;
    for (const auto& alias : reading_.aliases) given.insert(normalize_tool_name(alias.first, reading_.case_sensitive));
    for (const auto& program : ctx_.programs)
      for (const auto& alias : program->tool_aliases())
        if (!given.count(normalize_tool_name(alias.first, reading_.case_sensitive))) reading_.aliases.push_back(alias);
  }
  std::map<std::string, std::string> renames;
  for (const auto& [observed, canonical] : reading_.aliases) {
    std::string from = normalize_tool_name(observed, reading_.case_sensitive);
    std::string to = normalize_tool_name(canonical, reading_.case_sensitive);
    if (from != to) renames.emplace(from, to);
  }
  if (renames.empty()) return;
  auto canonical_name = [&](const std::string& name) {
    std::string n = normalize_tool_name(name, reading_.case_sensitive);
    for (std::size_t steps = 0; steps <= renames.size(); ++steps) {  // chains; a cycle is the parser's error
      auto it = renames.find(n);
      if (it == renames.end()) break;
      n = it->second;
    }
    return n;
  };
  for (auto& c : ctx_.cases) {
    for (std::string& t : c.tools) t = canonical_name(t);
    for (auto& a : c.arguments) a.first = canonical_name(a.first);
    for (Injection& in : c.inject) in.tool = canonical_name(in.tool);
  }
}

bool SuiteRun::judge_runs() {
  const suite::Suite& st = sr_.suite;
  std::vector<std::string> runs = options_.runs;
  if (runs.empty()) {
    for (const auto& r : st.runs) {
      auto files = errors_.files_of(sr_.source, r, st.directory);
      if (files.empty()) {
        errors_.add_at(sr_.source, r.range, "S011", fmt::format("no run file matches {}", r.text));
        return false;
      }
      runs.insert(runs.end(), files.begin(), files.end());
    }
  }
  if (runs.empty()) {
    errors_ += fmt::format("{}: error: no runs: declare runs \"FILE\" in the suite or pass --runs\n", options_.suite_path);
    return false;
  }
  TraceParser parser(reading_);
  if (!parser.option_error().empty()) {
    const std::string& why = parser.option_error();
    const bool alias = why.rfind("conflicting aliases", 0) == 0 || why.rfind("alias cycle", 0) == 0;
    errors_ += fmt::format("error: {}{}\n", why, alias ? " (the rules files' `alias` lines and --alias together)" : "");
    return false;
  }
  RecordSource source(runs, options_.reading.format);
  std::FILE* err_file = std::tmpfile();
  TraceJoiner joiner;
  std::vector<Worker> workers = process_records<Worker>(
      source, std::max(1u, options_.jobs), [&] { return Worker(&ctx_, &parser, &joiner); }, stdout,
      err_file ? err_file : stderr);
  {
    // The OTLP traces whose spans came in several records, now complete.
    Worker& w0 = workers.front();
    w0.scratch.set_tools(&w0.tools);
    w0.joined.set_tools(&w0.tools);
    std::string err;
    joiner.finish(w0.joined, [&](Trajectory& t) { w0.judge_run(t, t.origin, 1023, err); });
    if (!err.empty()) std::fwrite(err.data(), 1, err.size(), err_file ? err_file : stderr);
  }
  if (err_file) {
    std::rewind(err_file);
    char buf[4096];
    std::size_t n;
    std::string text;
    while ((n = std::fread(buf, 1, sizeof buf, err_file)) > 0) text.append(buf, n);
    // One problem per line, as the workers wrote them.
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t nl = text.find('\n', pos);
      nl = nl == std::string::npos ? text.size() : nl + 1;
      errors_ += text.substr(pos, nl - pos);
      pos = nl;
    }
    std::fclose(err_file);
  }
  for (auto& w : workers) {
    report_.records += w.records;
    report_.rejected += w.rejected;
    report_.warnings += w.warnings;
    for (auto& o : w.outcomes) outcomes_.push_back(std::move(o));
    for (auto& u : w.unmatched) unmatched_.push_back(std::move(u));
  }
  std::sort(outcomes_.begin(), outcomes_.end(), [](const RunOutcome& a, const RunOutcome& b) { return a.order < b.order; });
  std::sort(unmatched_.begin(), unmatched_.end());
  return true;
}

void SuiteRun::assign_runs() {
  const suite::Suite& st = sr_.suite;
  report_.cases.resize(ctx_.cases.size());
  std::vector<bool> answered(ctx_.cases.size(), false);
  run_json_.assign(ctx_.cases.size(), {});
  // Several runs of one case are its k runs, in the order read: the first is the case's
  // result, the others its repeats.
  for (auto& o : outcomes_) {
    CaseResult& r = report_.cases[o.case_index];
    if (answered[o.case_index]) r.repeats.push_back(std::move(o.result));
    else r = std::move(o.result);
    answered[o.case_index] = true;
    run_json_[o.case_index].push_back(std::move(o.run_json));
  }
  for (auto& u : unmatched_) report_.unmatched_runs.push_back(std::move(u.second));
  for (std::size_t i = 0; i < ctx_.cases.size(); ++i) {
    const CaseSpec& c = ctx_.cases[i];
    CaseResult& r = report_.cases[i];
    if (!answered[i]) {
      r = CaseResult{};
      r.status = CaseStatus::unmatched;
    } else if (!c.stale.empty()) {
      std::string run = r.run;
      r = CaseResult{};
      r.run = run;
      r.status = CaseStatus::stale;
      r.problems.push_back(c.stale);
      run_json_[i].clear();
    }
    auto fill = [&](CaseResult& x) {
      x.case_id = c.id;
      x.split = c.split;
      x.fixture = c.fixture_path;
      x.expected_control = c.control;
      x.fields = c.fields;
      x.segments.clear();
      for (const auto& s : st.segments) {
        auto f = c.fields.find(s.text);
        x.segments.emplace_back(s.text, f == c.fields.end() ? "(none)" : f->second);
      }
    };
    fill(r);
    for (CaseResult& x : r.repeats) fill(x);
  }
  // k: the most runs of a judged case. A case with fewer is judged on the runs it has (its
  // pass@k and pass^k over them), and each is a warning at its line.
  for (const CaseResult& r : report_.cases) {
    if (r.status != CaseStatus::judged) continue;
    report_.k = std::max(report_.k, r.runs());
    report_.k_fewest = report_.k_fewest == 0 ? r.runs() : std::min(report_.k_fewest, r.runs());
  }
  if (report_.k_fewest == report_.k) return;
  for (std::size_t i = 0; i < ctx_.cases.size(); ++i) {
    const CaseResult& r = report_.cases[i];
    if (r.status != CaseStatus::judged || r.runs() == report_.k) continue;
    ++report_.warnings;
    errors_ += fmt::format("{}: warning: case '{}' has {} run{}, other cases up to {} (k = {}): its pass@k and "
                           "pass^k are over the runs it has\n",
                           ctx_.cases[i].origin, r.case_id, r.runs(), r.runs() == 1 ? "" : "s", report_.k,
                           report_.k);
  }
}

void SuiteRun::finish() {
  const suite::Suite& st = sr_.suite;
  std::string cache = options_.grader_cache == "-" ? ""
                      : options_.grader_cache.empty() ? join_path(st.directory, ".trajcheck-cache/graders")
                                                      : options_.grader_cache;
  run_graders(ctx_, run_json_, cache, std::max(1u, options_.jobs), report_);
  recovery_tables(ctx_, report_);
  finish_report(st, baseline_, report_);
}

}  // namespace

bool run_eval(const EvalOptions& options, EvalReport& report, std::vector<EvalProblem>& problems) {
  SuiteRun run(options, report, problems);
  if (!run.load_suite() || !run.load_catalog() || !run.load_baseline()) return false;
  if (!run.load_cases()) return false;
  // Each of these reports all its problems, whatever the others found.
  bool ok = run.compile_rules();
  ok = run.load_fixtures() && ok;
  ok = run.check_invariants() && ok;
  ok = run.resolve_violation_gates() && ok;
  if (!ok) return false;
  run.mark_stale();
  run.apply_aliases();
  if (!run.judge_runs()) return false;
  run.assign_runs();
  run.finish();
  return true;
}

}  // namespace trajcheck::eval
