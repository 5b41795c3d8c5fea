// The html report: one self-contained page (inline CSS and SVG drawn here, no scripts, no
// network) with the gates, dimension bars against thresholds, a segments x dimensions heat
// map, the histogram of calls per successful task, and the case list.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"
#include "eval/report_util.hpp"

namespace trajcheck::eval {

namespace {

std::optional<double> dim(const Dimensions& d, std::string_view name) {
  if (name == "selection") return d.selection;
  if (name == "arguments") return d.arguments;
  if (name == "argument_validity") return d.argument_validity;
  if (name == "order") return d.order;
  if (name == "recovery") return d.recovery;
  return d.outcome;
}

// Red (0) -> amber -> green (1).
std::string heat_color(double v) {
  v = std::clamp(v, 0.0, 1.0);
  int r = v < 0.5 ? 220 : static_cast<int>(220 - (v - 0.5) * 2 * 170);
  int g = v < 0.5 ? static_cast<int>(60 + v * 2 * 140) : 200;
  return fmt::format("rgb({},{},70)", r, g);
}

// A dimension's label in a chart, short enough for a heat-map column.
std::string_view html_dim_label(std::string_view name) { return name == "argument_validity" ? "arg. validity" : name; }

constexpr int kHtmlDimensionCount = static_cast<int>(std::size(kDimensions));

std::string svg_dimension_bars(const EvalReport& r) {
  const int row_h = 34, left = 110, width = 420, top = 30;
  int h = top + row_h * kHtmlDimensionCount + 20;
  std::string s = fmt::format(
      "<svg class=\"chart\" id=\"chart-dimensions\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"dimensions against thresholds\">\n",
      left + width + 90, h);
  s += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">Dimensions (overall) against their gate thresholds</text>\n", 0);
  for (int t = 0; t <= 4; ++t) {
    int x = left + width * t / 4;
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"grid\"/><text x=\"{0}\" y=\"{3}\" "
                     "class=\"ax\" text-anchor=\"middle\">{4}%</text>\n",
                     x, top - 4, top + row_h * kHtmlDimensionCount, top + row_h * kHtmlDimensionCount + 14, t * 25);
  }
  int i = 0;
  for (const char* name : kDimensions) {
    int y = top + i++ * row_h;
    auto v = dim(r.overall, name);
    const GateResult* gate = nullptr;
    for (const auto& g : r.gates)
      if (g.metric == name && g.segment.empty()) gate = &g;
    std::string cls = !gate ? "bar" : gate->status == GateStatus::fail ? "bar fail" : "bar pass";
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lbl\" text-anchor=\"end\">{}</text>\n", left - 8, y + 21,
                     html_dim_label(name));
    if (v) {
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"22\" class=\"{}\"><title>{}: {}</title></rect>\n",
                       left, y + 6, width * std::clamp(*v, 0.0, 1.0), cls, name, fmt_value(v, true));
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"val\">{}</text>\n",
                       left + width * std::clamp(*v, 0.0, 1.0) + 4, y + 21, fmt_value(v, true));
    } else {
      s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"val\">n/a</text>\n", left + 4, y + 21);
    }
    if (gate && gate->threshold) {
      double tx = left + width * std::clamp(*gate->threshold, 0.0, 1.0);
      s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"thr\"><title>threshold {3}</title></line>\n",
                       tx, y + 2, y + 32, fmt_value(gate->threshold, true));
    }
  }
  s += "</svg>\n";
  return s;
}

std::string svg_heatmap(const EvalReport& r) {
  std::vector<std::pair<std::string, const Dimensions*>> rows{{"overall", &r.overall}};
  for (const auto& g : r.segments) rows.emplace_back(g.field + "=" + g.value, &g.dims);
  for (const auto& g : r.splits) rows.emplace_back("split=" + g.value, &g.dims);
  const int left = 190, cw = 86, rh = 26, top = 46;
  int h = top + rh * static_cast<int>(rows.size()) + 10;
  std::string s = fmt::format(
      "<svg class=\"chart\" id=\"chart-heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"segments by dimensions\">\n",
      left + cw * kHtmlDimensionCount + 10, h);
  s += "<text x=\"0\" y=\"18\" class=\"t\">Segments &#215; dimensions</text>\n";
  int c = 0;
  for (const char* name : kDimensions)
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"ax\" text-anchor=\"middle\">{}</text>\n", left + cw * c++ + cw / 2,
                     top - 8, html_dim_label(name));
  int i = 0;
  for (const auto& [label, d] : rows) {
    int y = top + rh * i++;
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lbl\" text-anchor=\"end\">{} ({})</text>\n", left - 8, y + 17,
                     html_escape(label), d->cases);
    c = 0;
    for (const char* name : kDimensions) {
      auto v = dim(*d, name);
      int x = left + cw * c++;
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" class=\"cell\"><title>{} {}: {}</title></rect>\n",
                       x + 1, y + 1, cw - 2, rh - 2, v ? heat_color(*v) : "#e5e7eb", html_escape(label), name,
                       fmt_value(v, true));
      s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"cellv\" text-anchor=\"middle\">{}</text>\n", x + cw / 2, y + 17,
                       fmt_value(v, true));
    }
  }
  s += "</svg>\n";
  return s;
}

std::string svg_histogram(const EvalReport& r) {
  auto hist = calls_histogram(r.overall.efficiency);
  std::uint32_t max_calls = hist.empty() ? 0 : hist.rbegin()->first;
  std::uint32_t max_n = 1;
  for (const auto& [k, v] : hist) max_n = std::max(max_n, v);
  const int left = 40, top = 30, ph = 150;
  int bw = std::max(14, std::min(40, 520 / static_cast<int>(max_calls + 1)));
  int width = left + bw * static_cast<int>(max_calls + 1) + 20;
  std::string s = fmt::format(
      "<svg class=\"chart\" id=\"chart-calls\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"calls per successful task\">\n",
      std::max(width, 360), top + ph + 40);
  s += fmt::format("<text x=\"0\" y=\"18\" class=\"t\">Tool calls per successful task ({} tasks)</text>\n",
                   r.overall.efficiency.cases);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"axis\"/>\n", left, top + ph,
                   left + bw * static_cast<int>(max_calls + 1));
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"ax\" text-anchor=\"end\">{}</text>\n", left - 4, top + 10, max_n);
  for (std::uint32_t k = 0; k <= max_calls; ++k) {
    std::uint32_t n = hist.count(k) ? hist.at(k) : 0;
    int bh = static_cast<int>(std::lround(static_cast<double>(ph) * n / max_n));
    int x = left + bw * static_cast<int>(k);
    if (n > 0)
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"hbar\"><title>{} call{}: {} task{}</title></rect>\n",
                       x + 2, top + ph - bh, bw - 4, bh, k, k == 1 ? "" : "s", n, n == 1 ? "" : "s");
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"ax\" text-anchor=\"middle\">{}</text>\n", x + bw / 2, top + ph + 14, k);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"ax\" text-anchor=\"middle\">calls</text>\n",
                   left + bw * static_cast<int>(max_calls + 1) / 2, top + ph + 32);
  s += "</svg>\n";
  return s;
}

const char* kCss = R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1f2937;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
.status{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}.status.pass{background:#15803d}.status.fail{background:#b91c1c}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #e5e7eb;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f9fafb}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.fail td:first-child{color:#b91c1c;font-weight:600}tr.pass td:first-child{color:#15803d}
.crit{background:#fee2e2;color:#991b1b;border-radius:4px;padding:0 4px;font-size:12px;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{background:#fff;border:1px solid #e5e7eb;border-radius:6px;padding:6px}
.chart .t{font-weight:600;font-size:13px}.chart .ax{font-size:11px;fill:#6b7280}.chart .lbl{font-size:12px}.chart .val{font-size:12px}
.chart .grid{stroke:#f3f4f6}.chart .axis{stroke:#9ca3af}.chart .bar{fill:#60a5fa}.chart .bar.pass{fill:#22c55e}.chart .bar.fail{fill:#ef4444}
.chart .thr{stroke:#111827;stroke-width:2;stroke-dasharray:4 2}.chart .hbar{fill:#6366f1}.chart .cellv{font-size:12px;fill:#111827}
.chart .zero{stroke:#111827}.chart .dpos{fill:#16a34a}.chart .dneg{fill:#dc2626}.chart .whisk{stroke:#111827;stroke-width:1.5}
.muted{color:#6b7280}code{background:#f3f4f6;padding:0 3px;border-radius:3px})";

std::string dims_row(const std::string& label, const Dimensions& d) {
  std::string row = fmt::format("<tr><td>{}</td>", html_escape(label));
  for (const std::string& cell : dimension_cells(d)) row += fmt::format("<td class=num>{}</td>", cell);
  return row + "</tr>\n";
}

}  // namespace

std::string svg_deltas(const std::vector<DeltaRow>& rows, const std::string& title) {
  double span = 0.05;
  for (const auto& r : rows)
    for (const auto& v : {r.delta, r.lo, r.hi})
      if (v) span = std::max(span, std::fabs(*v));
  span = std::ceil(span * 20) / 20;  // a multiple of 5 points
  const int left = 230, width = 440, rh = 24, top = 40;
  int h = top + rh * static_cast<int>(rows.size()) + 30;
  auto X = [&](double v) { return left + width / 2.0 + v / span * (width / 2.0); };
  std::string s = fmt::format(
      "<svg class=\"chart\" id=\"chart-deltas\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"deltas with confidence intervals\">\n",
      left + width + 90, h);
  s += fmt::format("<text x=\"0\" y=\"18\" class=\"t\">{}</text>\n", html_escape(title));
  for (int t = -2; t <= 2; ++t) {
    double v = span * t / 2;
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"{3}\"/><text x=\"{0:.1f}\" y=\"{4}\" "
                     "class=\"ax\" text-anchor=\"middle\">{5:+.1f} pt</text>\n",
                     X(v), top - 6, top + rh * static_cast<int>(rows.size()), t == 0 ? "zero" : "grid",
                     top + rh * static_cast<int>(rows.size()) + 16, v * 100);
  }
  int i = 0;
  for (const auto& r : rows) {
    int y = top + rh * i++;
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lbl\" text-anchor=\"end\">{}</text>\n", left - 8, y + 16,
                     html_escape(r.label));
    if (!r.delta) {
      s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"ax\">n/a</text>\n", left + 4, y + 16);
      continue;
    }
    double x0 = X(0), x1 = X(*r.delta);
    s += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"12\" class=\"{}\"><title>{}: {:+.1f} pt</title></rect>\n",
                     std::min(x0, x1), y + 6, std::max(1.0, std::fabs(x1 - x0)), *r.delta >= 0 ? "dpos" : "dneg",
                     html_escape(r.label), *r.delta * 100);
    if (r.lo && r.hi) {
      s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{2}\" x2=\"{1:.1f}\" y2=\"{2}\" class=\"whisk\"/>"
                       "<line x1=\"{0:.1f}\" y1=\"{3}\" x2=\"{0:.1f}\" y2=\"{4}\" class=\"whisk\"/>"
                       "<line x1=\"{1:.1f}\" y1=\"{3}\" x2=\"{1:.1f}\" y2=\"{4}\" class=\"whisk\"/>\n",
                       X(*r.lo), X(*r.hi), y + 12, y + 7, y + 17);
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"val\">{:+.1f} pt</text>\n", left + width + 6, y + 16, *r.delta * 100);
  }
  s += "</svg>\n";
  return s;
}

std::string html_page(const std::string& title, const std::string& body) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>\n{}\n</style>\n"
                     "</head>\n<body>\n{}</body>\n</html>\n",
                     html_escape(title), kCss, body);
}

std::string report_html(const EvalReport& r) {
  ReportCounts c = counts(r);
  std::string b;
  b += fmt::format("<h1>trajcheck eval: {} <span class=\"status {}\">{}</span></h1>\n", html_escape(r.suite_name),
                   r.passed() ? "pass" : "fail", r.passed() ? "PASS" : "FAIL");
  if (std::string why = nothing_judged(r); !why.empty()) b += "<p class=\"status fail\">" + html_escape(why) + "</p>\n";
  b += fmt::format("<p class=muted>{} cases: {} judged ({} pass){}, {} stale, {} without a run; {} runs match no case; "
                   "{} records read, {} rejected{}.{}</p>\n",
                   c.cases, c.judged, c.passed, html_escape(runs_note(r, c)), c.stale, c.unmatched, r.unmatched_runs.size(), r.records, r.rejected,
                   warnings_note(r.warnings),
                   r.catalog_version.empty() ? "" : " Catalog " + html_escape(r.catalog_version) + ".");
  b += "<h2>Gates <span class=muted>(critical first)</span></h2>\n<table id=\"gates\"><tr><th>status</th><th>gate</th>"
       "<th>segment</th><th>value</th><th>threshold</th></tr>\n";
  for (const auto& g : r.gates) {
    bool ratio = ratio_metric(g.metric) || g.grader_share;
    b += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}<code>{}</code></td><td>{}</td><td class=num>{}</td>"
                     "<td class=num>{}</td></tr>\n",
                     g.status == GateStatus::pass ? "pass" : g.status == GateStatus::fail ? "fail" : "nodata",
                     g.status == GateStatus::pass ? "pass" : g.status == GateStatus::fail ? "FAIL" : "no data",
                     g.critical ? "<span class=crit>critical</span> " : "", html_escape(g.text),
                     g.segment.empty() ? "overall" : html_escape(g.segment), fmt_value(g.value, ratio),
                     fmt_value(g.threshold, ratio));
  }
  b += "</table>\n<h2>Charts</h2>\n<div class=charts>\n";
  b += svg_dimension_bars(r);
  b += svg_heatmap(r);
  b += svg_histogram(r);
  b += "</div>\n";
  const char* head = "<tr><th></th><th>cases</th><th>selection</th><th>arguments</th><th>argument validity</th><th>order</th>"
                     "<th>recovery</th>"
                     "<th>outcome</th><th>calls/success</th><th>critical</th></tr>\n";
  b += fmt::format("<h2>Dimensions</h2>\n<table>{}{}", head, dims_row("overall", r.overall));
  for (const auto& g : r.segments) b += dims_row(g.field + "=" + g.value, g.dims);
  for (const auto& g : r.splits) b += dims_row("split=" + g.value, g.dims);
  b += "</table>\n";
  const Efficiency& e = r.overall.efficiency;
  b += fmt::format("<p>Efficiency over {} successful, gate-passing cases: calls/success {}, duplicates per 100 cases {}, "
                   "duplicates per 100 calls {}, tokens/success {}, cost/success {}, latency/success {} ms, retries {}, "
                   "loop depth {}, write share {}, read bytes/success {}, unused reads {}.</p>\n",
                   e.cases, fmt_value(e.calls_per_success, false), fmt_value(e.duplicates_per_100, false),
                   fmt_value(e.duplicates_per_100_calls, false), fmt_value(e.tokens_per_success, false),
                   fmt_value(e.cost_per_success, false), fmt_value(e.latency_per_success, false), e.retries,
                   e.loop_depth, fmt_value(e.write_share, true), fmt_value(e.read_volume_per_success, false),
                   fmt_value(e.unused_read_share, true));
  for (const Table& t : recovery_tables(r)) b += table_html(t);
  for (const Table& t : grader_tables(r)) b += table_html(t);
  for (const Table& t : runs_tables(r)) b += table_html(t);
  for (const Table& t : tools_tables(r)) b += table_html(t);
  b += "<h2>Cases</h2>\n<table id=\"cases\"><tr><th>status</th><th>case</th><th>split</th><th>control</th><th>expected</th>"
       "<th>selection</th><th>calls</th><th>why</th></tr>\n";
  for (const auto& x : r.cases) {
    std::string why = case_problems(x);
    std::string st(x.status != CaseStatus::judged ? to_string(x.status) : x.pass_all() ? "pass" : "FAIL");
    if (x.runs() > 1) st += fmt::format(" {}/{}", x.runs_passed(), x.runs());
    b += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td>"
                     "<td class=num>{}</td><td>{}</td></tr>\n",
                     x.status != CaseStatus::judged ? "nodata" : x.pass_all() ? "pass" : "fail", st, html_escape(x.case_id),
                     html_escape(x.split), html_escape(x.control), html_escape(x.expected_control),
                     fmt_value(x.selection, true), x.status == CaseStatus::judged ? std::to_string(x.calls) : "", html_escape(why));
  }
  b += "</table>\n";
  if (!r.unmatched_runs.empty()) {
    b += "<h2>Runs that match no case</h2>\n<ul>\n";
    for (const auto& u : r.unmatched_runs) b += "<li>" + html_escape(u) + "</li>\n";
    b += "</ul>\n";
  }
  return html_page("trajcheck eval: " + r.suite_name, b);
}

}  // namespace trajcheck::eval
