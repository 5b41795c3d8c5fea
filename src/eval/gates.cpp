// The tables (overall, per segment, per split) and the gates: each evaluated overall or on
// every value of its `per` field, against a literal threshold or the baseline report.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"

namespace trajcheck::eval {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::vector<GroupRow> group_by(const std::vector<CaseResult>& cases, const std::string& field,
                               const std::vector<std::string>& first) {
  std::vector<std::string> values = first;
  for (const auto& c : cases) {
    if (c.status != CaseStatus::judged) continue;
    std::string v = field == "split" ? c.split : (c.fields.count(field) ? c.fields.at(field) : "(none)");
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  std::vector<GroupRow> rows;
  for (const auto& v : values) {
    std::vector<const CaseResult*> members;
    for (const auto& c : cases) {
      std::string cv = field == "split" ? c.split : (c.fields.count(field) ? c.fields.at(field) : "(none)");
      if (cv == v) members.push_back(&c);
    }
    Dimensions d = aggregate(members);
    if (d.cases == 0 && std::find(first.begin(), first.end(), v) == first.end()) continue;
    rows.push_back({field, v, std::move(d)});
  }
  return rows;
}

bool compare(double a, suite::GateOp op, double b) {
  constexpr double eps = 1e-9;
  switch (op) {
    case suite::GateOp::eq: return std::fabs(a - b) <= eps;
    case suite::GateOp::ne: return std::fabs(a - b) > eps;
    case suite::GateOp::le: return a <= b + eps;
    case suite::GateOp::ge: return a + eps >= b;
    case suite::GateOp::lt: return a < b - eps;
    case suite::GateOp::gt: return a > b + eps;
  }
  return false;
}

// The baseline's value of `metric` overall, or on the row field=value.
std::optional<double> baseline_value(const json& baseline, const std::string& metric, const std::string& field,
                                     const std::string& value) {
  const json* dims = nullptr;
  if (field.empty()) {
    dims = &baseline["overall"];
  } else {
    for (const char* table : {"segments", "splits", "groups"}) {
      if (!baseline.contains(table)) continue;
      for (const auto& row : baseline[table])
        if (row.value("field", "") == field && row.value("value", "") == value) dims = &row;
    }
  }
  if (!dims || !dims->contains("metrics")) return std::nullopt;
  const json& m = (*dims)["metrics"];
  if (!m.contains(metric) || !m[metric].is_number()) return std::nullopt;
  return m[metric].get<double>();
}

}  // namespace

ordered_json metrics_json(const Dimensions& d, const std::vector<std::pair<std::string, bool>>& violation_keys) {
  ordered_json m;
  auto put = [&](const std::string& name, std::optional<double> v) { m[name] = number_or_null(v); };
  suite::Gate g;
  for (const suite::GateMetric& metric : suite::gate_metrics()) {
    if (!metric.alias_of.empty()) continue;  // `completion` is `outcome`
    g.metric = std::string(metric.name);
    g.function.clear();
    g.severity.clear();
    put(g.metric, metric_value(d, g));
    if (metric.name == "violations") {
      for (const char* sev : {"critical", "error", "warning", "info"}) {
        g.severity = sev;
        put(fmt::format("violations[{}]", sev), metric_value(d, g));
      }
      g.severity.clear();
      // Every rule and tag; a severity word, then a rule's name, wins over a tag of that name.
      for (const auto& [key, is_tag] : violation_keys) {
        if (m.contains(fmt::format("violations[{}]", key))) continue;
        (is_tag ? g.tag : g.rule) = key;
        put(fmt::format("violations[{}]", key), metric_value(d, g));
        g.rule.clear();
        g.tag.clear();
      }
    } else if (metric.kind == suite::MetricKind::series) {
      for (const char* f : {"p50", "p90", "p95", "p99", "max"}) {
        g.function = f;
        put(gate_metric_text(g), metric_value(d, g));
      }
    }
  }
  g.severity.clear();
  for (const auto& [name, gd] : d.graders) {  // each grader: its pass share and its scores
    g.metric = name;
    g.grader = true;
    for (const char* f : {"", "mean", "p50", "p90", "p95", "p99", "max"}) {
      g.function = f;
      put(gate_metric_text(g), metric_value(d, g));
    }
  }
  return m;
}

void finish_report(const suite::Suite& st, const json& baseline, EvalReport& report) {
  std::vector<const CaseResult*> all;
  for (const auto& c : report.cases) all.push_back(&c);
  report.overall = aggregate(all);
  for (const auto& f : st.segments) {
    auto rows = group_by(report.cases, f.text, {});
    report.segments.insert(report.segments.end(), rows.begin(), rows.end());
  }
  report.splits = group_by(report.cases, "split", {"designed", "production", "synthetic"});

  std::vector<GateResult> critical, others;
  for (const auto& g : st.gates) {
    // `d` null: a per-field gate on a run that judged no case (one row, without data).
    auto evaluate = [&](const Dimensions* d, const std::string& field, const std::string& value) {
      GateResult r;
      r.text = g.text;
      r.metric = gate_metric_text(g);
      r.critical = g.critical();
      r.percent = g.percent;
      r.grader_share = g.grader && g.function.empty();
      std::optional<GateStatus> status;  // decided before the comparison: no data
      if (!d) {
        status = GateStatus::no_data;
        r.note = fmt::format("no case was judged, so no value of '{}' to gate on", field);
      } else {
        if (!field.empty()) r.segment = field + "=" + value;
        r.value = metric_value(*d, g);
      }
      if (d && g.baseline) {
        auto b = baseline_value(baseline, r.metric, field, value);
        if (!b) {
          status = GateStatus::no_data;
          r.note = "the baseline has no value for this metric";
        } else {
          double t = *b;
          if (g.baseline_op == '*') t *= g.value;
          else if (g.baseline_op == '+') t += g.value;
          else if (g.baseline_op == '-') t -= g.value;
          r.threshold = t;
        }
      } else if (!g.baseline) {
        r.threshold = g.value;
      }
      if (!status && !r.value) {
        status = GateStatus::no_data;
        r.note = "no case in this group has a value for the metric";
      }
      if (!status) status = compare(*r.value, g.op, *r.threshold) ? GateStatus::pass : GateStatus::fail;
      r.status = *status;
      // A release gate does not pass on nothing: without a value it fails unless written `if data`.
      if (r.status == GateStatus::no_data && !g.if_data) {
        r.status = GateStatus::fail;
        r.note += "; a gate without data fails unless written 'if data'";
      }
      (r.critical ? critical : others).push_back(std::move(r));
    };
    if (g.per.empty()) {
      evaluate(&report.overall, "", "");
    } else {
      auto rows = group_by(report.cases, g.per, {});
      for (const auto& row : rows) evaluate(&row.dims, g.per, row.value);
      if (rows.empty()) evaluate(nullptr, g.per, "");
    }
  }
  report.gates = std::move(critical);
  report.gates.insert(report.gates.end(), others.begin(), others.end());
}

}  // namespace trajcheck::eval
