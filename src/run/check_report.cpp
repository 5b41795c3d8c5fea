// The five output formats of `trajcheck check`. Per-trace parts are rendered by the
// workers into their batch text; the summary is rendered once, from merged counters.
#include "trajcheck/report.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "run/pipeline.hpp"
#include "run/text.hpp"
#include "trajcheck/json_string.hpp"
#include "json/swar.hpp"
#include "util/warnings_note.hpp"
#include "util/xml_escape.hpp"

namespace trajcheck {

using namespace std::string_view_literals;

namespace {

// Text output shows this many witnesses of one result, and this many results (bindings)
// of one rule, before "… and N more": a loop that calls a forbidden tool 500 times should
// not bury the other violations.
constexpr std::size_t kMaxWitnesses = 3;
constexpr std::size_t kMaxResultsPerRule = 3;
// Markdown (a CI job summary has a size limit) lists at most this many violation rows.
constexpr std::size_t kMaxMarkdownRows = 200;

const char* kReset = "\033[0m";
const char* kBold = "\033[1m";
const char* kDim = "\033[2m";
const char* kRed = "\033[31m";
const char* kGreen = "\033[32m";
const char* kYellow = "\033[33m";
const char* kCyan = "\033[36m";

const char* severity_color(RuleSeverity s) {
  switch (s) {
    case RuleSeverity::critical:
    case RuleSeverity::error: return kRed;
    case RuleSeverity::warning: return kYellow;
    case RuleSeverity::info: return kCyan;
  }
  return kReset;
}

// Where a record was read, "FILE:LINE", appended (the text report writes it for every failing
// trace) or as a string.
void append_origin(std::string& out, const RecordOrigin& o) {
  (out += o.file) += ':';
  const fmt::format_int line(o.line);
  out.append(line.data(), line.size());
}
std::string origin_text(const RecordOrigin& o) {
  std::string out;
  append_origin(out, o);
  return out;
}

}  // namespace

bool parse_check_format(std::string_view name, CheckFormat* out) {
  static constexpr std::pair<std::string_view, CheckFormat> kNames[] = {
      {"text", CheckFormat::text},   {"json", CheckFormat::json},
      {"jsonl", CheckFormat::jsonl}, {"junit", CheckFormat::junit},
      {"markdown", CheckFormat::markdown}};
  for (const auto& [n, f] : kNames)
    if (n == name) {
      *out = f;
      return true;
    }
  return false;
}

std::string_view to_string(CheckFormat f) {
  switch (f) {
    case CheckFormat::text: return "text";
    case CheckFormat::json: return "json";
    case CheckFormat::jsonl: return "jsonl";
    case CheckFormat::junit: return "junit";
    case CheckFormat::markdown: return "markdown";
  }
  return "text";
}

// ---------------------------------------------------------------------------------------
// Escaping and step descriptions

namespace {
// The first byte of `s` at or after `i` that `stop` accepts, or s.size(): eight bytes at a
// time through `mask` (SWAR marks of a superset of those bytes, the lowest exact), then one by
// one. Printed witness steps are most of a failing trace's report.
template <class Mask, class Stop>
std::size_t scan(std::string_view s, std::size_t i, Mask mask, Stop stop) {
  while (i + 8 <= s.size()) {
    if (const std::uint64_t m = mask(swar::load(s.data() + i))) {
      i += swar::first(m);
      if (stop(s[i])) return i;
      ++i;
    } else {
      i += 8;
    }
  }
  while (i < s.size() && !stop(s[i])) ++i;
  return i;
}
}  // namespace

namespace detail {
void append_printable(std::string& out, std::string_view s) {
  auto plain = [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 && c != 0x7f;
  };
  auto marks = [](std::uint64_t w) { return swar::less(w, 0x20) | swar::equal(w, 0x7f); };
  // Names and ids are printable: the words are checked without stopping (the last one
  // overlapping), then appended in one piece. A mark (a superset) sends the text the long way.
  std::uint64_t any = 0;
  if (s.size() >= 8) {
    for (std::size_t i = 0; i + 8 <= s.size(); i += 8) any |= marks(swar::load(s.data() + i));
    any |= marks(swar::load(s.data() + s.size() - 8));
  } else {
    for (const char ch : s) any |= !plain(ch);
  }
  if (any == 0) {
    out.append(s);
    return;
  }
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t j = scan(
        s, i, marks, [&](char c) { return !plain(c); });
    out.append(s.data() + i, j - i);  // a run of printable bytes in one piece
    if (j == s.size()) break;
    const auto c = static_cast<unsigned char>(s[j]);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else fmt::format_to(std::back_inserter(out), FMT_COMPILE("\\x{:02x}"), c);
    i = j + 1;
  }
}

std::string printable(std::string_view s) {
  std::string out;
  append_printable(out, s);
  return out;
}

std::string truncate_utf8(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "…";
}
}  // namespace detail

namespace {
// Appends one line of text, however the message was written: blanks trimmed and runs of them
// made one space; when that is longer than `max` bytes, its first `max` (cut back to a UTF-8
// boundary) and "…".
void append_one_line(std::string& out, std::string_view s, std::size_t max) {
  const std::size_t start = out.size();
  auto blank = [](char c) { return c == '\n' || c == '\r' || c == '\t' || c == ' '; };
  bool space = false;
  for (std::size_t i = 0; i < s.size();) {
    if (blank(s[i])) {
      space = out.size() > start;
      ++i;
      continue;
    }
    // A run of text, single spaces between words included: it is appended in one piece.
    std::size_t j = i;
    for (;;) {
      j = scan(s, j, [](std::uint64_t w) { return swar::less(w, 0x21); }, blank);
      if (j + 1 >= s.size() || s[j] != ' ' || blank(s[j + 1])) break;
      j += 2;  // one space, then a byte that is not blank
    }
    if (space) out += ' ';
    space = false;
    // One byte past `max` decides the cut: the run is appended up to there.
    std::size_t room = max + 1 - std::min(max + 1, out.size() - start);
    if (j - i >= room) {
      out.append(s.data() + i, room);
      break;
    }
    out.append(s.data() + i, j - i);
    i = j;
  }
  if (out.size() - start <= max) return;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(out[start + cut]) & 0xC0) == 0x80) --cut;
  out.resize(start + cut);
  out += "…";
}
}  // namespace

void append_step(std::string& out, const Trajectory& t, std::uint32_t index, std::size_t max_bytes) {
  if (index >= t.steps().size()) {
    out += "(end of trace)"sv;
    return;
  }
  const Step& s = t.steps()[index];
  if (s.type == StepType::tool_call) {
    detail::append_printable(out, t.tool_name(s));
    if (!s.arguments.empty()) {
      out += ' ';
      append_one_line(out, t.text(s.arguments), max_bytes);
    }
    if (s.status == StepStatus::error) out += " -> error"sv;
    return;
  }
  if (s.type == StepType::other) detail::append_printable(out, t.text(s.type_name));
  else out += to_string(s.type);
  if (!s.content.empty()) {
    thread_local std::string line;  // a witness is printed for every failing trace: no allocation each
    line.clear();
    append_one_line(line, t.text(s.content), max_bytes);
    out += ' ';
    append_json_string(out, line);
  } else if (!s.extra.empty()) {
    out += ' ';
    append_one_line(out, t.text(s.extra), max_bytes);
  }
}

std::string describe_step(const Trajectory& t, std::uint32_t index, std::size_t max_bytes) {
  std::string out;
  append_step(out, t, index, max_bytes);
  return out;
}

// ---------------------------------------------------------------------------------------
// Per trace

CheckReport::CheckReport(std::shared_ptr<const RuleSet> rules, CheckReportOptions options)
    : rules_(std::move(rules)), options_(options) {}

bool CheckReport::buffered() const {
  return options_.format == CheckFormat::json || options_.format == CheckFormat::junit ||
         options_.format == CheckFormat::markdown;
}

void CheckReport::trace(const Trajectory& t, const TraceVerdict& v, std::string& out) const {
  switch (options_.format) {
    case CheckFormat::text:
      // A passing trace may still break rules below --fail-on; show those too.
      {
        bool any = false;
        for (const RuleResult& r : v.results) any |= r.status == VerdictStatus::violated || r.bindings_dropped != 0;
        if (any) trace_text(t, v, out);
      }
      break;
    case CheckFormat::json:
      out += ",\n";  // the first element's separator is dropped in finish()
      trace_json(t, v, out);
      break;
    case CheckFormat::jsonl:
      trace_json(t, v, out);
      out += '\n';
      break;
    case CheckFormat::junit: trace_junit(t, v, out); break;
    case CheckFormat::markdown: trace_markdown(t, v, out); break;
  }
}

void CheckReport::trace_text(const Trajectory& t, const TraceVerdict& v, std::string& out) const {
  // Appended piece by piece, without a format call per line: a failing trace's report is
  // written for every failing trace, and formatting measured most of writing it.
  const bool c = options_.color;
  const bool failed = v.failed;
  auto append_decimal = [&](std::uint64_t n) {
    const fmt::format_int digits(n);
    out.append(digits.data(), digits.size());
  };
  auto append_steps = [&](std::size_t n) {  // "N step" / "N steps"
    append_decimal(n);
    out += n == 1 ? " step"sv : " steps"sv;
  };
  if (c) (out += kBold) += failed ? kRed : kYellow;
  out += failed ? "FAIL "sv : "WARN "sv;
  detail::append_printable(out, t.trace_id());
  if (c) out += kReset;
  out += "  "sv;
  if (c) out += kDim;
  out += '(';
  append_origin(out, t.origin);
  out += ", "sv;
  append_steps(t.steps().size());
  out += ')';
  if (c) out += kReset;
  out += '\n';
  // Results of one rule are adjacent (rules-file order), so capping counts a run.
  std::uint32_t run_rule = 0xffffffffu;
  std::size_t run_count = 0;
  auto flush_run = [&] {
    if (run_count > kMaxResultsPerRule)
      fmt::format_to(std::back_inserter(out), FMT_COMPILE("    … and {} more violations of this rule (other bindings)\n"),
                         run_count - kMaxResultsPerRule);
  };
  for (const RuleResult& r : v.results) {
    const std::uint32_t g = r.rule;
    if (r.status != VerdictStatus::violated) continue;
    if (g != run_rule) {
      flush_run();
      run_rule = g;
      run_count = 0;
    }
    if (++run_count > kMaxResultsPerRule) continue;
    const RuleInfo& info = *rules_->rules()[g].info;
    out += "  "sv;
    if (c) out += severity_color(info.severity);
    out += to_string(info.severity);
    if (c) out += kReset;
    out += ' ';
    if (c) out += kBold;
    out += info.name;
    if (c) out += kReset;
    if (!r.binding.empty()) {
      out += " ["sv;
      for (std::size_t i = 0; i < r.binding.size(); ++i) {
        if (i) out += ", "sv;
        ((out += '$') += r.binding[i].first) += '=';
        out += r.binding[i].second;
      }
      out += ']';
    }
    if (!info.message.empty()) (out += ": "sv) += info.message;
    out += "  "sv;
    if (c) out += kDim;
    out += info.location;
    if (c) out += kReset;
    out += '\n';
    if (r.steps.empty()) {
      out += "      at end of trace ("sv;
      append_steps(t.steps().size());
      out += ")\n"sv;
      continue;
    }
    std::uint32_t shown_until = 0;  // steps below this index were already printed
    bool first = true;
    for (std::size_t w = 0; w < r.steps.size() && w < kMaxWitnesses; ++w) {
      std::uint32_t s = r.steps[w];
      // The step before gives context (what the agent had just done or been told).
      // (Appended piece by piece: these lines are most of a report, and a format_to call
      // per line measured a tenth of writing it.)
      if (s > 0 && (first || s - 1 >= shown_until) &&
          !(w > 0 && r.steps[w - 1] == s - 1)) {
        out += "      "sv;
        if (c) out += kDim;
        out += '#';
        append_decimal(s - 1);
        out += ' ';
        append_step(out, t, s - 1);
        if (c) out += kReset;
        out += '\n';
      }
      out += "    "sv;
      if (c) out += kBold;
      out += "> #"sv;
      append_decimal(s);
      out += ' ';
      append_step(out, t, s);
      if (c) out += kReset;
      out += '\n';
      if (w < r.details.size() && !r.details[w].empty()) ((out += "        "sv) += r.details[w]) += '\n';
      shown_until = s + 1;
      first = false;
    }
    if (r.steps.size() > kMaxWitnesses) {  // "    … and N more (#a, #b, …)"
      out += "    … and "sv;
      append_decimal(r.steps.size() - kMaxWitnesses);
      out += " more ("sv;
      std::size_t listed = 0;
      for (std::size_t w = kMaxWitnesses; w < r.steps.size() && listed < 8; ++w, ++listed) {
        if (listed) out += ", "sv;
        out += '#';
        append_decimal(r.steps[w]);
      }
      if (r.steps.size() - kMaxWitnesses > 8) out += ", …"sv;
      out += ")\n"sv;
    }
  }
  flush_run();
  // A parametric rule that reached its bindings limit checked only part of the trace: say so.
  std::uint32_t noted = 0xffffffffu;
  for (const RuleResult& r : v.results) {
    if (r.bindings_dropped == 0 || r.rule == noted) continue;
    noted = r.rule;
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("  note: {}: {} binding{} of values past the bindings limit not checked\n"),
                       rules_->rules()[r.rule].info->name, r.bindings_dropped, r.bindings_dropped == 1 ? "" : "s");
  }
}

void CheckReport::trace_json(const Trajectory& t, const TraceVerdict& v, std::string& out) const {
  out += "{\"trace_id\":";
  append_json_string(out, t.trace_id());
  out += v.failed ? ",\"status\":\"fail\",\"results\":[" : ",\"status\":\"pass\",\"results\":[";
  bool first = true;
  for (const RuleResult& r : v.results) {
    if (r.rule >= rules_->rules().size()) continue;
    const RuleInfo& info = *rules_->rules()[r.rule].info;
    if (!first) out += ',';
    first = false;
    out += "{\"rule\":";
    append_json_string(out, info.name);
    out += ",\"severity\":\"";
    out += to_string(info.severity);
    out += "\",\"status\":\"";
    out += to_string(r.status);
    out += "\",\"steps\":[";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(r.steps[i]);
    }
    out += ']';
    if (r.bindings_dropped != 0) out += fmt::format(",\"bindings_dropped\":{}", r.bindings_dropped);
    if (!r.details.empty()) {  // valid(…): the catalog error of each witness that has one
      out += ",\"details\":[";
      bool first_detail = true;
      for (std::size_t i = 0; i < r.details.size(); ++i) {
        if (r.details[i].empty()) continue;
        out += first_detail ? "{\"step\":" : ",{\"step\":";
        first_detail = false;
        out += std::to_string(r.steps[i]);
        out += ",\"error\":";
        append_json_string(out, r.details[i]);
        out += '}';
      }
      out += ']';
    }
    if (!info.message.empty()) {
      out += ",\"message\":";
      append_json_string(out, info.message);
    }
    out += ",\"source\":";
    append_json_string(out, info.location);
    if (!r.binding.empty()) {
      out += ",\"binding\":{";
      for (std::size_t i = 0; i < r.binding.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, r.binding[i].first);
        out += ':';
        out += r.binding[i].second;  // already JSON
      }
      out += '}';
    }
    out += '}';
  }
  out += ']';
  if (v.has_catalog) {
    const CatalogTraceReport* catalog = &v.catalog;
    out += fmt::format(",\"catalog\":{{\"calls\":{},\"writes\":{},\"invalid\":[", catalog->calls, catalog->write_calls);
    for (std::size_t i = 0; i < catalog->invalid.size(); ++i) {
      const CatalogCallErrors& call = catalog->invalid[i];
      out += fmt::format("{}{{\"step\":{},\"errors\":[", i ? "," : "", call.step);
      for (std::size_t k = 0; k < call.errors.size(); ++k) {
        out += k ? ",{\"path\":" : "{\"path\":";
        append_json_string(out, call.errors[k].path);
        out += ",\"reason\":";
        append_json_string(out, call.errors[k].reason);
        out += '}';
      }
      out += "]}";
    }
    out += "],\"unknown\":[";
    for (std::size_t i = 0; i < catalog->unknown.size(); ++i) {
      if (i) out += ',';
      append_json_string(out, catalog->unknown[i]);
    }
    out += "]}";
  }
  out += '}';
}

void CheckReport::trace_junit(const Trajectory& t, const TraceVerdict& v, std::string& out) const {
  out += "    <testcase name=\"";
  append_xml_escaped(out, t.trace_id());
  out += "\" classname=\"";
  append_xml_escaped(out, origin_text(t.origin));
  out += '"';
  std::string detail;
  std::size_t violations = 0;
  for (const RuleResult& r : v.results) {
    if (r.status != VerdictStatus::violated) continue;
    const RuleInfo& info = *rules_->rules()[r.rule].info;
    ++violations;
    detail += fmt::format("[{}] {}", to_string(info.severity), info.name);
    if (!info.message.empty()) detail += fmt::format(": {}", info.message);
    detail += fmt::format(" ({})", info.location);
    if (!r.binding.empty()) {
      detail += " binding";
      for (const auto& [k, v] : r.binding) detail += fmt::format(" ${}={}", k, v);
    }
    detail += '\n';
    if (r.steps.empty()) detail += "  at end of trace\n";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      detail += fmt::format("  #{} {}\n", r.steps[i], describe_step(t, r.steps[i]));
      if (i < r.details.size() && !r.details[i].empty()) detail += fmt::format("    {}\n", r.details[i]);
    }
  }
  if (violations == 0) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  // Violations below --fail-on do not fail the test case; they stay visible as output.
  if (v.failed) {
    out += fmt::format("      <failure message=\"{} violation{}\" type=\"violation\">",
                       violations, violations == 1 ? "" : "s");
    append_xml_escaped(out, detail);
    out += "</failure>\n";
  } else {
    out += "      <system-out>";
    append_xml_escaped(out, detail);
    out += "</system-out>\n";
  }
  out += "    </testcase>\n";
}

namespace {
// Markdown table cells cannot hold '|' or newlines.
std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '`') {
      out += '\'';
    } else {
      detail::append_printable(out, std::string_view(&c, 1));
    }
  }
  return out;
}
}  // namespace

void CheckReport::trace_markdown(const Trajectory& t, const TraceVerdict& v, std::string& out) const {
  // One table row per violation, one line each, so finish() can cap by lines.
  for (const RuleResult& r : v.results) {
    if (r.status != VerdictStatus::violated) continue;
    const RuleInfo& info = *rules_->rules()[r.rule].info;
    std::string steps;
    for (std::size_t i = 0; i < r.steps.size() && i < kMaxWitnesses; ++i)
      steps += fmt::format("{}#{}", i ? ", " : "", r.steps[i]);
    if (r.steps.size() > kMaxWitnesses) steps += fmt::format(" (+{})", r.steps.size() - kMaxWitnesses);
    if (r.steps.empty()) steps = "end";
    std::string first = r.steps.empty() ? std::string() : describe_step(t, r.steps[0], 60);
    if (!r.details.empty() && !r.details[0].empty()) first += " — " + r.details[0];
    out += fmt::format("| `{}` | `{}` | {} | {} | {} | {} |\n", md_cell(t.trace_id()),
                       md_cell(info.name), to_string(info.severity), steps,
                       first.empty() ? std::string() : "`" + md_cell(first) + "`",
                       md_cell(info.message));
  }
}

void CheckReport::rejected(const RecordError& e, std::string& out) const {
  const RecordOrigin& where = e.where;
  const std::string& message = e.message;
  switch (options_.format) {
    case CheckFormat::text:
    case CheckFormat::markdown: break;  // already on standard error, counted in the summary
    case CheckFormat::json:
    case CheckFormat::jsonl:
      if (options_.format == CheckFormat::json) out += ",\n";
      out += "{\"record\":";
      append_json_string(out, origin_text(where));
      out += ",\"error\":";
      append_json_string(out, message);
      out += '}';
      if (options_.format == CheckFormat::jsonl) out += '\n';
      break;
    case CheckFormat::junit:
      out += "    <testcase name=\"";
      append_xml_escaped(out, origin_text(where));
      out += "\" classname=\"rejected\">\n      <error message=\"";
      append_xml_escaped(out, message);
      out += "\" type=\"rejected-record\"/>\n    </testcase>\n";
      break;
  }
}

// ---------------------------------------------------------------------------------------
// Summaries

void CheckReport::summary_text(const CheckStats& st, bool interrupted, std::string& out) const {
  const bool c = options_.color;
  std::size_t never = 0;
  if (!options_.quiet && !rules_->rules().empty()) {
    std::size_t width = 4;
    for (const auto& e : rules_->rules()) width = std::max(width, std::min<std::size_t>(e.info->name.size(), 60));
    // A blank line parts the table from the traces listed above it, if any.
    if (st.flagged > 0) out += '\n';
    out += fmt::format("{:<{}}  {:<8}  {:>10}  {:>6}  {:>9}  {}\n", "rule", width, "severity",
                       "violations", "traces", "activated", "source");
    for (std::size_t i = 0; i < rules_->rules().size(); ++i) {
      const RuleInfo& info = *rules_->rules()[i].info;
      const RuleStats& rs = i < st.rules.size() ? st.rules[i] : RuleStats{};
      std::string activated = fmt::format("{}/{}", rs.activated, st.traces);
      bool none = rs.activated == 0 && st.traces > 0;
      out += fmt::format("{:<{}}  {}{:<8}{}  {:>10}  {:>6}  {}{:>9}{}  {}{}\n",
                         detail::truncate_utf8(info.name, 60), width,
                         c && rs.violations ? severity_color(info.severity) : "",
                         to_string(info.severity), c && rs.violations ? kReset : "", rs.violations,
                         rs.violated_traces, c && none ? kYellow : "", activated,
                         c && none ? kReset : "", info.location,
                         none ? "  (never activated)" : "");
    }
  }
  for (std::size_t i = 0; i < rules_->rules().size(); ++i)
    if (st.traces > 0 && (i >= st.rules.size() || st.rules[i].activated == 0)) ++never;
  std::string sev;
  std::uint64_t total = 0;
  for (RuleSeverity s : {RuleSeverity::critical, RuleSeverity::error, RuleSeverity::warning,
                         RuleSeverity::info}) {
    std::uint64_t n = st.violations_of(*rules_, s);
    total += n;
    if (n) sev += fmt::format("{}{} {}", sev.empty() ? "" : ", ", n, to_string(s));
  }
  out += fmt::format("{}{} trace{}{} from {} record{}: {}{} passed{}, {}{} failed{}, {} rejected{}; ",
                     c ? kBold : "", st.traces, st.traces == 1 ? "" : "s", c ? kReset : "",
                     st.records, st.records == 1 ? "" : "s",
                     c ? kGreen : "", st.passed, c ? kReset : "",
                     c && st.failed ? kRed : "", st.failed, c && st.failed ? kReset : "",
                     st.rejected, warnings_note(st.warnings));
  out += fmt::format("{} violation{}{}", total, total == 1 ? "" : "s",
                     sev.empty() ? "" : " (" + sev + ")");
  if (st.traces == 0)
    out += st.records == 0 ? "; no trace was checked: the input holds no records" : "; no trace was checked";
  else
    out += fmt::format("; {} of {} rule{} never activated", never, rules_->rules().size(),
                       rules_->rules().size() == 1 ? "" : "s");
  if (options_.fail_on.never) out += " (--fail-on never)";
  out += '\n';
  if (interrupted) out += "interrupted: the input was not read to its end; these counts cover the records read before\n";
  if (rules_->catalog()) {
    const CatalogStats& cs = st.catalog;
    out += fmt::format("catalog {}: {} tool call{}, argument validity {} ({} of {} calls of catalog tools "
                       "valid), {} state-changing, {} call{} of unknown tools",
                       rules_->catalog()->version(), cs.calls, cs.calls == 1 ? "" : "s",
                       cs.known_calls ? fmt::format("{:.1f}%", 100.0 * double(cs.known_calls - cs.invalid_calls) /
                                                                   double(cs.known_calls))
                                      : std::string("n/a"),
                       cs.known_calls - cs.invalid_calls, cs.known_calls, cs.write_calls, cs.unknown_calls,
                       cs.unknown_calls == 1 ? "" : "s");
    std::string names;
    for (const auto& [name, n] : cs.unknown_tools) names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", detail::printable(name), n);
    if (!names.empty()) out += ": " + names;
    out += '\n';
  }
}

void CheckReport::summary_json(const CheckStats& st, std::string& out) const {
  out += fmt::format(
      "\"summary\":{{\"records\":{},\"traces\":{},\"passed\":{},\"failed\":{},\"rejected\":{},"
      "\"warnings\":{},\"fail_on\":\"{}\",\"violations\":{{",
      st.records, st.traces, st.passed, st.failed, st.rejected, st.warnings, options_.fail_on.name());
  bool first = true;
  for (RuleSeverity s : {RuleSeverity::critical, RuleSeverity::error, RuleSeverity::warning,
                         RuleSeverity::info}) {
    out += fmt::format("{}\"{}\":{}", first ? "" : ",", to_string(s), st.violations_of(*rules_, s));
    first = false;
  }
  out += "},\"rules\":[";
  for (std::size_t i = 0; i < rules_->rules().size(); ++i) {
    const RuleInfo& info = *rules_->rules()[i].info;
    const RuleStats& rs = i < st.rules.size() ? st.rules[i] : RuleStats{};
    if (i) out += ',';
    out += "\n  {\"rule\":";
    append_json_string(out, info.name);
    out += fmt::format(",\"severity\":\"{}\",\"source\":", to_string(info.severity));
    append_json_string(out, info.location);
    out += fmt::format(",\"violations\":{},\"violated_traces\":{},\"activated\":{}}}",
                       rs.violations, rs.violated_traces, rs.activated);
  }
  out += ']';
  if (rules_->catalog()) {
    const CatalogStats& cs = st.catalog;
    out += ",\"catalog\":";
    append_json_string(out, rules_->catalog()->version());
    out += ",\"catalog_file\":";
    append_json_string(out, rules_->catalog()->path());
    out += fmt::format(",\"tool_calls\":{},\"catalog_calls\":{},\"invalid_calls\":{},\"argument_validity\":{},"
                       "\"write_calls\":{},\"unknown_calls\":{},\"unknown_tools\":[",
                       cs.calls, cs.known_calls, cs.invalid_calls,
                       cs.known_calls ? fmt::format("{}", double(cs.known_calls - cs.invalid_calls) /
                                                               double(cs.known_calls))
                                      : std::string("null"),
                       cs.write_calls, cs.unknown_calls);
    bool first = true;
    for (const auto& [name, n] : cs.unknown_tools) {
      out += first ? "{\"tool\":" : ",{\"tool\":";
      first = false;
      append_json_string(out, name);
      out += fmt::format(",\"calls\":{}}}", n);
    }
    out += ']';
  }
  out += '}';
}

void CheckReport::summary_markdown(const CheckStats& st, bool interrupted, std::string& out) const {
  out += fmt::format("## trajcheck: {} of {} traces failed\n\n", st.failed, st.traces);
  if (interrupted)
    out += "**Interrupted**: the input was not read to its end; the counts below cover the records read before.\n\n";
  out += "| records | traces | passed | failed | rejected | warnings | fail on |\n"
         "|---:|---:|---:|---:|---:|---:|---|\n";
  out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n\n", st.records, st.traces, st.passed,
                     st.failed, st.rejected, st.warnings, options_.fail_on.name());
  out += "| rule | severity | violations | traces violating | activated | source |\n"
         "|---|---|---:|---:|---:|---|\n";
  for (std::size_t i = 0; i < rules_->rules().size(); ++i) {
    const RuleInfo& info = *rules_->rules()[i].info;
    const RuleStats& rs = i < st.rules.size() ? st.rules[i] : RuleStats{};
    out += fmt::format("| `{}` | {} | {} | {} | {}/{}{} | {} |\n", md_cell(info.name),
                       to_string(info.severity), rs.violations, rs.violated_traces, rs.activated,
                       st.traces, rs.activated == 0 && st.traces ? " ⚠ never" : "",
                       md_cell(info.location));
  }
  if (rules_->catalog()) {
    const CatalogStats& cs = st.catalog;
    out += fmt::format("\n| catalog | tool calls | argument validity | state-changing | unknown-tool calls |\n"
                       "|---|---:|---:|---:|---:|\n| `{}` | {} | {} | {} | {} |\n",
                       md_cell(rules_->catalog()->version()), cs.calls,
                       cs.known_calls ? fmt::format("{:.1f}% ({}/{})",
                                                    100.0 * double(cs.known_calls - cs.invalid_calls) / double(cs.known_calls),
                                                    cs.known_calls - cs.invalid_calls, cs.known_calls)
                                      : std::string("n/a"),
                       cs.write_calls, cs.unknown_calls);
  }
}

namespace {
void copy_file(std::FILE* from, std::FILE* to, std::size_t skip) {
  std::rewind(from);
  char buf[1 << 16];
  for (;;) {
    std::size_t n = std::fread(buf, 1, sizeof buf, from);
    if (n == 0) break;
    std::size_t off = std::min(skip, n);
    skip -= off;
    if (n > off) std::fwrite(buf + off, 1, n - off, to);
  }
}

// Copies at most `max` lines; returns how many lines were left out.
std::uint64_t copy_lines(std::FILE* from, std::FILE* to, std::size_t max) {
  std::rewind(from);
  std::uint64_t lines = 0, dropped = 0;
  int ch;
  bool at_start = true;
  while ((ch = std::fgetc(from)) != EOF) {
    if (at_start) {
      at_start = false;
      if (lines >= max) ++dropped;
    }
    if (lines < max) std::fputc(ch, to);
    if (ch == '\n') {
      ++lines;
      at_start = true;
    }
  }
  return dropped;
}
}  // namespace

void CheckReport::finish(const CheckStats& st, std::FILE* body, std::FILE* out, bool interrupted) const {
  std::string s;
  switch (options_.format) {
    case CheckFormat::text:
      summary_text(st, interrupted, s);
      detail::write_all(out, s);
      break;
    case CheckFormat::jsonl: break;
    case CheckFormat::json: {
      detail::write_all(out, "{\"traces\":[");
      // Every element was written as ",\n{…}": drop the first comma.
      if (body) copy_file(body, out, 1);
      s = "\n],\n";
      if (interrupted) s += "\"interrupted\":true,\n";
      summary_json(st, s);
      s += "}\n";
      detail::write_all(out, s);
      break;
    }
    case CheckFormat::junit: {
      const auto& programs = rules_->programs();
      std::string name = programs.size() == 1 && !programs[0]->workflow().empty()
                             ? programs[0]->workflow()
                             : "trajcheck";
      s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"";
      append_xml_escaped(s, name);
      s += fmt::format("\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
                       st.traces + st.rejected, st.failed, st.rejected);
      if (interrupted)
        s += "    <properties>\n      <property name=\"interrupted\" value=\"true\"/>\n    </properties>\n";
      detail::write_all(out, s);
      if (body) copy_file(body, out, 0);
      detail::write_all(out, "  </testsuite>\n</testsuites>\n");
      break;
    }
    case CheckFormat::markdown: {
      summary_markdown(st, interrupted, s);
      detail::write_all(out, s);
      bool any = body && std::ftell(body) > 0;
      if (any) {
        detail::write_all(out,
                          "\n### Violations\n\n| trace | rule | severity | steps | first witness | message |\n"
                          "|---|---|---|---|---|---|\n");
        std::uint64_t dropped = copy_lines(body, out, kMaxMarkdownRows);
        if (dropped) detail::write_all(out, fmt::format("\n… and {} more violations (see `--format jsonl`)\n", dropped));
      }
      break;
    }
  }
}

}  // namespace trajcheck
