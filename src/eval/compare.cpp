// Comparison of two eval reports: per dimension and group the two values and their delta,
// a seeded paired bootstrap over the cases both runs judged, and the cases that flipped.
#include "trajcheck/eval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eval/eval_internal.hpp"
#include "eval/report_util.hpp"
#include "json/located_parse.hpp"
#include "run/text.hpp"
#include "util/read_file.hpp"

namespace trajcheck::eval {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

struct Part {
  double num = 0, den = 0;
  bool present = false;
};

// One run's contribution to a dimension's aggregate (sum num / sum den); `passed`: the run's own.
Part run_part(const json& c, std::string_view dim, bool passed) {
  Part p;
  auto num = [&](const char* k) -> std::optional<double> {
    if (!c.contains(k) || c[k].is_null()) return std::nullopt;
    if (c[k].is_boolean()) return c[k].get<bool>() ? 1.0 : 0.0;
    if (c[k].is_number()) return c[k].get<double>();
    return std::nullopt;
  };
  if (dim == "arguments") {  // a share of calls, not a mean of cases
    auto m = num("arguments_matched"), t = num("arguments_calls");
    if (m && t && *t > 0) p = {*m, *t, true};
    return p;
  }
  if (dim == "argument_validity") {
    // Every case judged with a catalog pairs, calls or not: a run that made no call beside one
    // that broke its schemas is the regression this row is for.
    auto m = num("schema_valid"), t = num("schema_calls");
    if (m && t) p = {*m, *t, true};
    return p;
  }
  // The efficiency figures are per success, as the report's efficiency table: a run counts
  // only when it passed with a successful outcome (so a pair, only when both were successes).
  struct PerSuccess {
    const char* dim;
    const char* field;
    double scale;
  };
  for (auto [d, field, scale] : {PerSuccess{"calls_per_success", "calls", 1}, PerSuccess{"duplicates_per_100", "duplicates", 100},
                                 PerSuccess{"tokens_per_success", "tokens", 1}, PerSuccess{"cost_per_success", "cost", 1},
                                 PerSuccess{"latency_per_success", "latency_ms", 1}})
    if (dim == d) {
      if (!passed || num("outcome").value_or(0) < 1) return p;  // a success: passed, with a successful outcome
      if (auto v = num(field)) p = {*v * scale, 1, true};
      return p;
    }
  if (auto v = num(std::string(dim).c_str())) p = {*v, 1, true};
  return p;
}

// A case's contribution: the sum of its runs'. Its fields are its first run's; a case run k
// times lists the other runs under "repeats", each run's own pass under "run_passes", and its
// "pass" is the case's verdict (every run passes). pass_at_k, pass_all_k and pass_rate are per
// case (one run: its pass).
Part part(const json& c, std::string_view dim) {
  const bool pass = c.value("pass", false);
  const double runs = c.contains("runs") && c["runs"].is_number() ? c["runs"].get<double>() : 1.0;
  const double passed = c.contains("runs_passed") && c["runs_passed"].is_number() ? c["runs_passed"].get<double>()
                                                                                 : pass ? 1.0 : 0.0;
  if (dim == "pass_at_k") return {passed > 0 ? 1.0 : 0.0, 1, true};
  if (dim == "pass_all_k") return {pass ? 1.0 : 0.0, 1, true};
  if (dim == "pass_rate") return {runs > 0 ? passed / runs : 0.0, 1, true};
  const json* passes = c.contains("run_passes") && c["run_passes"].is_array() && !c["run_passes"].empty()
                           ? &c["run_passes"] : nullptr;
  Part p = run_part(c, dim, passes && (*passes)[0].is_boolean() ? (*passes)[0].get<bool>() : pass);
  if (c.contains("repeats") && c["repeats"].is_array())
    for (const json& r : c["repeats"]) {
      Part q = run_part(r, dim, r.value("pass", false));
      if (!q.present) continue;
      p.num += q.num;
      p.den += q.den;
      p.present = true;
    }
  return p;
}

// The figures compared, in their rows' order: the dimensions and `overall` (shares, higher is
// better), then the efficiency table's figures (lower is better).
struct ComparedFigure {
  const char* name;
  bool share;
};
std::vector<ComparedFigure> compared_figures() {
  std::vector<ComparedFigure> out;
  for (const char* d : kDimensions) out.push_back({d, true});
  for (const char* d : {"overall", "pass_at_k", "pass_all_k", "pass_rate"}) out.push_back({d, true});
  for (const char* d : {"calls_per_success", "duplicates_per_100", "tokens_per_success", "cost_per_success", "latency_per_success"})
    out.push_back({d, false});
  return out;
}

std::string group_of(const json& c, const std::string& field) {
  if (field == "split") return c.value("split", "");
  if (c.contains("segments") && c["segments"].contains(field)) return c["segments"][field].get<std::string>();
  return "(none)";
}

// The gate metrics of a table row (a baseline's thresholds come from them): each null or a
// number, a share from 0 to 1.
std::string metrics_error(const json& row, const std::string& where) {
  auto it = row.find("metrics");
  if (it == row.end()) return {};
  for (const auto& [metric, v] : it->items()) {
    if (v.is_null()) continue;
    if (!v.is_number()) return fmt::format("{}.metrics.{}: expected a number or null, got {}", where, metric, v.type_name());
    double x = v.get<double>();
    if (ratio_metric(metric) && !(x >= 0 && x <= 1))
      return fmt::format("{}.metrics.{}: expected a share from 0 to 1, got {}", where, metric, v.dump());
  }
  return {};
}

}  // namespace

std::string report_shape_error(const json& j) {
  if (!j.is_object() || !j.contains("overall") || !j["overall"].is_object() ||
      (j.contains("cases") && !j["cases"].is_array()))
    return "not a report of `trajcheck eval --format json`";
  auto kind = [](const json& v) -> std::string { return v.is_null() ? "null" : v.type_name(); };
  // Fields that are absent or of `want` (string, number, boolean, object; `nullable` allows null).
  auto check = [&](const json& o, const std::string& where, const char* key, json::value_t want,
                   bool nullable) -> std::string {
    auto it = o.find(key);
    if (it == o.end() || (nullable && it->is_null())) return {};
    bool ok = want == json::value_t::number_float ? it->is_number() : it->type() == want;
    if (ok) return {};
    const char* name = want == json::value_t::string ? "a string" : want == json::value_t::boolean ? "true or false"
                     : want == json::value_t::object ? "an object" : "a number";
    return fmt::format("{}.{}: expected {}{}, got {}", where, key, name, nullable ? " or null" : "", kind(*it));
  };
  // A number of a report that is not within [0, max] (a share above 1, a count below 0)
  // would carry into every aggregate as `inf%` or a negative share.
  auto range = [&](const json& o, const std::string& where, const char* key, double max) -> std::string {
    auto it = o.find(key);
    if (it == o.end() || !it->is_number()) return {};
    double v = it->get<double>();
    if (v >= 0 && v <= max) return {};
    return max == 1 ? fmt::format("{}.{}: expected a share from 0 to 1, got {}", where, key, it->dump())
                    : fmt::format("{}.{}: expected a count of 0 or more, got {}", where, key, it->dump());
  };
  constexpr double kAnyCount = std::numeric_limits<double>::max();
  const std::size_t cases = j.contains("cases") ? j["cases"].size() : 0;  // a baseline may have none
  // The fields of one run: the case's own (its first run), or one of its repeats.
  auto run_error = [&](const json& c, const std::string& where) -> std::string {
    if (auto e = check(c, where, "pass", json::value_t::boolean, false); !e.empty()) return e;
    for (const char* k : {"selection", "order", "arguments_matched", "arguments_calls", "schema_valid", "schema_calls"})
      if (auto e = check(c, where, k, json::value_t::number_float, true); !e.empty()) return e;
    for (const char* k : {"recovery", "outcome"}) {
      auto it = c.find(k);
      if (it != c.end() && !it->is_null() && !it->is_boolean() && !it->is_number())
        return fmt::format("{}.{}: expected true, false, a number or null, got {}", where, k, kind(*it));
    }
    for (const char* k : {"overall", "calls", "duplicates", "tokens", "cost", "latency_ms"})
      if (auto e = check(c, where, k, json::value_t::number_float, true); !e.empty()) return e;
    for (const char* k : {"selection", "order", "recovery", "outcome", "overall"})
      if (auto e = range(c, where, k, 1); !e.empty()) return e;
    for (const char* k : {"arguments_matched", "arguments_calls", "schema_valid", "schema_calls", "calls", "duplicates",
                          "tokens", "cost", "latency_ms"})
      if (auto e = range(c, where, k, kAnyCount); !e.empty()) return e;
    for (auto [part, whole] : {std::pair{"arguments_matched", "arguments_calls"}, std::pair{"schema_valid", "schema_calls"}})
      if (c.contains(part) && c[part].is_number() && c.contains(whole) && c[whole].is_number() &&
          c[part].get<double>() > c[whole].get<double>())
        return fmt::format("{}.{}: {} is more than {} {}", where, part, c[part].dump(), whole, c[whole].dump());
    return {};
  };
  std::map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < cases; ++i) {
    const json& c = j["cases"][i];
    const std::string where = fmt::format("cases[{}]", i);
    if (!c.is_object()) return fmt::format("{}: expected an object, got {}", where, kind(c));
    // Every case has its id (a case without one could be paired with nothing, silently).
    if (!c.contains("case_id")) return fmt::format("{}: has no case_id", where);
    for (const char* k : {"case_id", "status", "split"})
      if (auto e = check(c, where, k, json::value_t::string, false); !e.empty()) return e;
    if (auto [it, fresh] = ids.emplace(c["case_id"].get<std::string>(), i); !fresh)
      return fmt::format("{}.case_id: {} is also the id of cases[{}]", where, c["case_id"].dump(), it->second);
    if (auto e = run_error(c, where); !e.empty()) return e;
    for (const char* k : {"runs", "runs_passed"}) {
      if (auto e = check(c, where, k, json::value_t::number_float, false); !e.empty()) return e;
      if (auto e = range(c, where, k, kAnyCount); !e.empty()) return e;
    }
    if (c.contains("repeats")) {
      if (!c["repeats"].is_array()) return fmt::format("{}.repeats: expected a list, got {}", where, kind(c["repeats"]));
      for (std::size_t r = 0; r < c["repeats"].size(); ++r) {
        const json& rep = c["repeats"][r];
        const std::string at = fmt::format("{}.repeats[{}]", where, r);
        if (!rep.is_object()) return fmt::format("{}: expected an object, got {}", at, kind(rep));
        if (auto e = run_error(rep, at); !e.empty()) return e;
      }
    }
    if (auto e = check(c, where, "segments", json::value_t::object, false); !e.empty()) return e;
    if (c.contains("segments"))
      for (const auto& [f, v] : c["segments"].items())
        if (!v.is_string()) return fmt::format("{}.segments.{}: expected a string, got {}", where, f, kind(v));
  }
  if (j.contains("inputs")) {
    if (!j["inputs"].is_array()) return fmt::format("inputs: expected a list, got {}", kind(j["inputs"]));
    for (std::size_t i = 0; i < j["inputs"].size(); ++i) {
      const json& in = j["inputs"][i];
      const std::string where = fmt::format("inputs[{}]", i);
      if (!in.is_object()) return fmt::format("{}: expected an object, got {}", where, kind(in));
      for (const char* k : {"kind", "file", "sha256"}) {
        if (!in.contains(k)) return fmt::format("{}: has no {}", where, k);
        if (auto e = check(in, where, k, json::value_t::string, false); !e.empty()) return e;
      }
    }
  }
  for (const char* table : {"segments", "splits", "groups"}) {
    if (!j.contains(table)) continue;
    if (!j[table].is_array()) return fmt::format("{}: expected a list, got {}", table, kind(j[table]));
    for (std::size_t i = 0; i < j[table].size(); ++i) {
      const json& row = j[table][i];
      const std::string where = fmt::format("{}[{}]", table, i);
      if (!row.is_object()) return fmt::format("{}: expected an object, got {}", where, kind(row));
      for (const char* k : {"field", "value"})
        if (auto e = check(row, where, k, json::value_t::string, false); !e.empty()) return e;
      if (auto e = check(row, where, "metrics", json::value_t::object, false); !e.empty()) return e;
      if (auto e = metrics_error(row, where); !e.empty()) return e;
    }
  }
  if (auto e = check(j["overall"], "overall", "metrics", json::value_t::object, false); !e.empty()) return e;
  return metrics_error(j["overall"], "overall");
}

bool parse_report(const std::string& name, std::string_view text, json& out, std::string& error) {
  if (auto failure = trajcheck::json::parse_located(text, out)) {
    // FILE:LINE:COL, the column in bytes, as every other JSON error of trajcheck.
    std::string_view before = text.substr(0, std::min(failure->offset, text.size()));
    std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    std::size_t nl = before.rfind('\n');
    std::size_t column = before.size() - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    error = fmt::format("{}:{}:{}: error: invalid JSON: {}\n", name, line, column, failure->reason);
    return false;
  }
  if (std::string why = report_shape_error(out); !why.empty()) {
    error = fmt::format("{}: error: {}\n", name, why);
    return false;
  }
  return true;
}

bool read_report_file(const std::string& path, std::string& out, std::string& error) {
  return read_regular_file(path, kMaxReportBytes, out, error);
}

bool compare_reports(const std::string& a_name, const std::string& a_text, const std::string& b_name,
                     const std::string& b_text, const CompareOptions& options, CompareReport& out,
                     std::string& error) {
  if (options.resamples > kMaxResamples) {
    error = fmt::format("error: --resamples {} is more than the limit of {}\n", options.resamples, kMaxResamples);
    return false;
  }
  json a, b;
  for (const auto& [name, text, j] : {std::tuple{&a_name, &a_text, &a}, std::tuple{&b_name, &b_text, &b}}) {
    if (!parse_report(*name, *text, *j, error)) return false;
    if (!j->contains("cases")) {
      error = fmt::format("{}: error: not a report of `trajcheck eval --format json` (no cases)\n", *name);
      return false;
    }
  }
  out = CompareReport{};
  out.a_name = a_name;
  out.b_name = b_name;
  out.options = options;

  // The inputs both reports were computed from: the same (kind, file) with the same digest.
  {
    using Key = std::pair<std::string, std::string>;
    std::map<Key, std::pair<std::string, std::string>> digests;  // -> (A's, B's); empty: absent
    for (int side = 0; side < 2; ++side) {
      const json& r = side == 0 ? a : b;
      if (!r.contains("inputs")) continue;
      for (const auto& in : r["inputs"]) {
        auto& d = digests[{in["kind"].get<std::string>(), in["file"].get<std::string>()}];
        (side == 0 ? d.first : d.second) = in["sha256"].get<std::string>();
      }
    }
    for (int side = 0; side < 2; ++side)
      if (!(side == 0 ? a : b).contains("inputs"))
        out.input_differences.push_back(fmt::format("{} has no input digests (a report of an older trajcheck)",
                                                    side == 0 ? "A" : "B"));
    if (a.contains("inputs") && b.contains("inputs"))
      for (const auto& [key, d] : digests) {
        const auto& [kind, file] = key;
        if (d.first == d.second) continue;
        if (d.first.empty()) out.input_differences.push_back(fmt::format("{} {}: only B was computed from it", kind, file));
        else if (d.second.empty()) out.input_differences.push_back(fmt::format("{} {}: only A was computed from it", kind, file));
        else out.input_differences.push_back(fmt::format("{} {}: the files differ (sha256 {}… in A, {}… in B)", kind, file,
                                                         d.first.substr(0, 12), d.second.substr(0, 12)));
      }
    if (options.require_same && !out.input_differences.empty()) {
      error = "error: the reports were not computed from the same inputs (--require-same):\n";
      for (const auto& d : out.input_differences) error += "  " + detail::printable(d) + "\n";
      return false;
    }
  }

  // Cases both runs judged, in A's order.
  std::map<std::string, const json*> b_cases;
  for (const auto& c : b["cases"])
    if (c.value("status", "") == "judged") b_cases[c.value("case_id", "")] = &c;
  std::vector<std::pair<const json*, const json*>> pairs;
  for (const auto& c : a["cases"]) {
    if (c.value("status", "") != "judged") continue;
    auto it = b_cases.find(c.value("case_id", ""));
    if (it == b_cases.end()) continue;
    pairs.emplace_back(&c, it->second);
    bool pa = c.value("pass", false), pb = it->second->value("pass", false);
    if (pa && !pb) out.pass_to_fail.push_back(c.value("case_id", ""));
    if (!pa && pb) out.fail_to_pass.push_back(c.value("case_id", ""));
  }
  out.paired_cases = pairs.size();

  // Groups: overall, every segment row of A (then B's new ones), every split.
  std::vector<std::pair<std::string, std::string>> groups{{"", ""}};
  for (const json* r : {&a, &b})
    for (const char* table : {"segments", "splits"})
      if (r->contains(table))
        for (const auto& row : (*r)[table]) {
          std::pair<std::string, std::string> g{row.value("field", ""), row.value("value", "")};
          if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
        }

  std::mt19937_64 rng(options.seed);
  for (const auto& [field, value] : groups) {
    std::vector<std::pair<const json*, const json*>> members;
    for (const auto& p : pairs)
      if (field.empty() || group_of(*p.first, field) == value) members.push_back(p);
    for (const auto& [dim, share] : compared_figures()) {
      CompareRow row;
      row.dimension = dim;
      row.share = share;
      row.lower_is_better = !share;
      row.group = field.empty() ? "overall" : field + "=" + value;
      std::vector<std::pair<Part, Part>> parts;
      for (const auto& [ca, cb] : members) {
        Part pa = part(*ca, dim), pb = part(*cb, dim);
        if (pa.present && pb.present) parts.emplace_back(pa, pb);
      }
      row.paired = parts.size();
      // A, B and the delta are the statistic the bootstrap resamples: each run's aggregate
      // over the same pairs (cases both judged, with a value in both), so delta = B - A.
      double na = 0, da = 0, nb = 0, db = 0;
      for (const auto& [pa, pb] : parts) {
        na += pa.num;
        da += pa.den;
        nb += pb.num;
        db += pb.den;
      }
      if (da > 0) row.a = na / da;
      if (db > 0) row.b = nb / db;
      if (row.a && row.b) row.delta = *row.b - *row.a;
      if (!parts.empty() && options.resamples > 0) {
        std::vector<double> deltas;
        deltas.reserve(options.resamples);
        const std::size_t n = parts.size();
        for (unsigned s = 0; s < options.resamples; ++s) {
          double na = 0, da = 0, nb = 0, db = 0;
          for (std::size_t k = 0; k < n; ++k) {
            const auto& [pa, pb] = parts[rng() % n];
            na += pa.num;
            da += pa.den;
            nb += pb.num;
            db += pb.den;
          }
          if (da > 0 && db > 0) deltas.push_back(nb / db - na / da);
        }
        if (!deltas.empty()) {
          std::sort(deltas.begin(), deltas.end());
          double tail = (1.0 - options.confidence) / 2.0;
          auto at = [&](double q) {
            auto i = static_cast<std::size_t>(std::floor(q * static_cast<double>(deltas.size() - 1) + 0.5));
            return deltas[std::min(i, deltas.size() - 1)];
          };
          row.lo = at(tail);
          row.hi = at(1.0 - tail);
          row.regressed = row.lower_is_better ? *row.lo > 0 : *row.hi < 0;
        }
      }
      if (row.regressed && field.empty()) out.regressions.push_back(row.dimension);
      out.rows.push_back(std::move(row));
    }
  }
  return true;
}

namespace {

// A share in % and its delta in points; an efficiency figure in its own unit.
std::string val(const CompareRow& r, const std::optional<double>& v) { return fmt_value(v, r.share); }
std::string pts(const CompareRow& r) {
  if (!r.delta) return "n/a";
  return r.share ? fmt::format("{:+.1f} pt", *r.delta * 100) : fmt::format("{:+.2f}", *r.delta);
}
std::string ci(const CompareRow& r) {
  if (!(r.lo && r.hi)) return "n/a";
  return r.share ? fmt::format("[{:+.1f}, {:+.1f}]", *r.lo * 100, *r.hi * 100) : fmt::format("[{:+.2f}, {:+.2f}]", *r.lo, *r.hi);
}
std::string worse(const CompareRow& r) { return r.regressed ? " !" : ""; }

}  // namespace

std::string compare_text(const CompareReport& r) {
  std::string o = fmt::format("compare A={} B={}: {} paired cases, {:.0f}% paired-bootstrap CI ({} resamples, seed {})\n\n",
                              r.a_name, r.b_name, r.paired_cases, r.options.confidence * 100, r.options.resamples,
                              r.options.seed);
  o += fmt::format("  {:<32} {:<19} {:>8} {:>8} {:>10} {:>18} {:>6}\n", "group", "dimension", "A", "B", "delta",
                   "CI", "pairs");
  for (const auto& row : r.rows)
    o += fmt::format("  {:<32} {:<19} {:>8} {:>8} {:>10} {:>18} {:>6}{}\n", detail::printable(row.group), row.dimension,
                     val(row, row.a), val(row, row.b), pts(row), ci(row), row.paired, worse(row));
  o += "\n  shares: A, B in %, delta and CI in points; per-success figures (cases both passed) in their unit, lower is better;\n"
       "  ! the interval lies entirely on the worse side of 0\n";
  if (!r.input_differences.empty()) {
    o += "\nwarning: the reports were not computed from the same inputs:\n";
    for (const auto& d : r.input_differences) o += "  " + detail::printable(d) + "\n";
  }
  o += fmt::format("\nregressions ({}):", r.regressions.size());
  for (const auto& d : r.regressions) o += " " + d;
  o += fmt::format("\npass -> fail ({}):", r.pass_to_fail.size());
  for (const auto& c : r.pass_to_fail) o += " " + detail::printable(c);
  o += fmt::format("\nfail -> pass ({}):", r.fail_to_pass.size());
  for (const auto& c : r.fail_to_pass) o += " " + detail::printable(c);
  o += "\n";
  return o;
}

std::string compare_json(const CompareReport& r) {
  ordered_json j;
  j["a"] = r.a_name;
  j["b"] = r.b_name;
  j["paired_cases"] = r.paired_cases;
  j["bootstrap"] = {{"seed", r.options.seed}, {"resamples", r.options.resamples}, {"confidence", r.options.confidence}};
  ordered_json rows = ordered_json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"group", row.group}, {"dimension", row.dimension}, {"a", number_or_null(row.a)},
                    {"b", number_or_null(row.b)}, {"delta", number_or_null(row.delta)},
                    {"ci_low", number_or_null(row.lo)}, {"ci_high", number_or_null(row.hi)}, {"paired", row.paired},
                    {"lower_is_better", row.lower_is_better}, {"regressed", row.regressed}});
  j["rows"] = rows;
  j["regressions"] = r.regressions;
  j["pass_to_fail"] = r.pass_to_fail;
  j["fail_to_pass"] = r.fail_to_pass;
  j["regressed"] = compare_regressed(r);
  j["same_inputs"] = r.input_differences.empty();
  j["input_differences"] = r.input_differences;
  return j.dump(1) + "\n";
}

std::string compare_markdown(const CompareReport& r) {
  std::string o = fmt::format("## trajcheck compare: `{}` → `{}`\n\n{} paired cases; {:.0f}% paired-bootstrap CI ({} resamples, seed {}).\n\n",
                              r.a_name, r.b_name, r.paired_cases, r.options.confidence * 100, r.options.resamples,
                              r.options.seed);
  o += "| group | dimension | A | B | delta | CI | pairs |\n|---|---|---|---|---|---|---|\n";
  for (const auto& row : r.rows)
    o += fmt::format("| {} | {} | {} | {} | {} | {}{} | {} |\n", row.group, row.dimension, val(row, row.a), val(row, row.b),
                     pts(row), ci(row), row.regressed ? " **worse**" : "", row.paired);
  o += "\nShares: A and B in %, delta and CI in points. Per-success figures (over cases both runs passed): in their unit, lower is better. "
       "**worse**: the interval lies entirely on the worse side of 0.\n";
  if (!r.input_differences.empty()) {
    o += "\n**Warning: the reports were not computed from the same inputs:**\n\n";
    for (const auto& d : r.input_differences) o += "- " + detail::printable(d) + "\n";
  }
  o += fmt::format("\n**regressions** ({}): {}\n", r.regressions.size(), fmt::join(r.regressions, ", "));
  o += fmt::format("\n**pass → fail** ({}): {}\n\n**fail → pass** ({}): {}\n", r.pass_to_fail.size(),
                   fmt::join(r.pass_to_fail, ", "), r.fail_to_pass.size(), fmt::join(r.fail_to_pass, ", "));
  return o;
}

std::string compare_html(const CompareReport& r) {
  std::string b = fmt::format("<h1>trajcheck compare</h1>\n<p class=muted>A = {}, B = {}: {} paired cases; {:.0f}% "
                              "paired-bootstrap confidence intervals ({} resamples, seed {}).</p>\n",
                              html_escape(r.a_name), html_escape(r.b_name), r.paired_cases, r.options.confidence * 100,
                              r.options.resamples, r.options.seed);
  std::vector<DeltaRow> overall, groups;
  for (const auto& row : r.rows) {
    if (!row.share) continue;  // the chart is in points; the per-success figures are in the table
    DeltaRow d{row.group == "overall" ? row.dimension : row.group + " " + row.dimension, row.delta, row.lo, row.hi};
    (row.group == "overall" ? overall : groups).push_back(d);
  }
  b += "<div class=charts>\n" + svg_deltas(overall, "Delta B - A per dimension (overall), 95% CI whiskers");
  if (!groups.empty()) b += svg_deltas(groups, "Delta B - A per segment and dimension");
  b += "</div>\n<h2>Values</h2>\n<table><tr><th>group</th><th>dimension</th><th>A</th><th>B</th><th>delta</th><th>CI</th><th>pairs</th></tr>\n";
  for (const auto& row : r.rows)
    b += fmt::format("<tr><td>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
                     "<td class=num>{}</td><td class=num>{}</td></tr>\n",
                     html_escape(row.group), row.dimension, val(row, row.a), val(row, row.b), pts(row),
                     ci(row) + (row.regressed ? " <b>worse</b>" : ""), row.paired);
  b += "</table>\n<p class=muted>Shares: A and B in %, delta and CI in points. Per-success figures (over cases both runs "
       "passed): in their unit, lower is better. <b>worse</b>: the interval lies entirely on the worse side of 0.</p>\n";
  if (!r.input_differences.empty()) {
    b += "<h2>Warning: the reports were not computed from the same inputs</h2>\n<ul>\n";
    for (const auto& d : r.input_differences) b += "<li>" + html_escape(d) + "</li>\n";
    b += "</ul>\n";
  }
  b += fmt::format("<h2>Regressions</h2>\n<p>({}): {}</p>\n", r.regressions.size(),
                   html_escape(fmt::format("{}", fmt::join(r.regressions, ", "))));
  b += "<h2>Flipped cases</h2>\n";
  b += fmt::format("<p><b>pass &#8594; fail</b> ({}): {}</p>\n<p><b>fail &#8594; pass</b> ({}): {}</p>\n",
                   r.pass_to_fail.size(), html_escape(fmt::format("{}", fmt::join(r.pass_to_fail, ", "))),
                   r.fail_to_pass.size(), html_escape(fmt::format("{}", fmt::join(r.fail_to_pass, ", "))));
  return html_page("trajcheck compare", b);
}

}  // namespace trajcheck::eval
