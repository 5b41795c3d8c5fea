// The counters of a check run: added trace by trace, merged over workers and corpus parts,
// carried between processes as JSON.
#include <fmt/format.h>
#include <simdjson.h>

#include "trajcheck/run.hpp"
#include "trajcheck/json_string.hpp"
#include "run/stats_json.hpp"

namespace trajcheck {

void CatalogStats::add(const CatalogTraceReport& r) {
  calls += r.calls;
  known_calls += r.known_calls;
  invalid_calls += r.invalid.size();
  write_calls += r.write_calls;
  unknown_calls += r.unknown_calls;
  for (std::size_t i = 0; i < r.unknown.size() && i < r.unknown_counts.size(); ++i)
    unknown_tools[r.unknown[i]] += r.unknown_counts[i];
}

void CatalogStats::merge(const CatalogStats& o) {
  calls += o.calls;
  known_calls += o.known_calls;
  invalid_calls += o.invalid_calls;
  write_calls += o.write_calls;
  unknown_calls += o.unknown_calls;
  for (const auto& [name, n] : o.unknown_tools) unknown_tools[name] += n;
}

void CheckStats::add(const TraceVerdict& v, std::size_t trace_warnings) {
  ++traces;
  warnings += trace_warnings;
  // The entries of one rule are adjacent (a parametric rule has one per violating binding):
  // a trace counts once per rule for `activated` and `violated_traces`.
  const std::size_t n = v.results.size();
  for (std::size_t i = 0; i < n;) {
    const std::uint32_t g = v.results[i].rule;
    bool active = false, violated = false;
    std::uint64_t count = 0;
    for (; i < n && v.results[i].rule == g; ++i) {
      const VerdictStatus s = v.results[i].status;
      active = active || s != VerdictStatus::vacuous;
      if (s == VerdictStatus::violated) {
        violated = true;
        ++count;
      }
    }
    if (g >= rules.size()) continue;  // a checker bug must not crash the report
    RuleStats& rs = rules[g];
    rs.activated += active;
    rs.violations += count;
    rs.violated_traces += violated;
  }
  ++(v.failed ? failed : passed);
  flagged += v.flagged;
  if (v.has_catalog) catalog.add(v.catalog);
}

void CheckStats::merge(const CheckStats& o) {
  records += o.records;
  traces += o.traces;
  passed += o.passed;
  failed += o.failed;
  rejected += o.rejected;
  flagged += o.flagged;
  warnings += o.warnings;
  otlp_parts += o.otlp_parts;
  if (rules.size() < o.rules.size()) rules.resize(o.rules.size());
  for (std::size_t i = 0; i < o.rules.size(); ++i) {
    rules[i].violations += o.rules[i].violations;
    rules[i].violated_traces += o.rules[i].violated_traces;
    rules[i].activated += o.rules[i].activated;
  }
  catalog.merge(o.catalog);
}

std::uint64_t CheckStats::violations_of(const RuleSet& set, RuleSeverity s) const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < rules.size() && i < set.rules().size(); ++i)
    if (set.rules()[i].info->severity == s) n += rules[i].violations;
  return n;
}

std::string CheckStats::to_json() const {
  std::string out = fmt::format(
      "{{\"records\":{},\"traces\":{},\"passed\":{},\"failed\":{},\"rejected\":{},\"flagged\":{},"
      "\"warnings\":{},\"otlp_parts\":{},\"rules\":[",
      records, traces, passed, failed, rejected, flagged, warnings, otlp_parts);
  for (std::size_t i = 0; i < rules.size(); ++i)
    out += fmt::format("{}[{},{},{}]", i ? "," : "", rules[i].violations, rules[i].violated_traces, rules[i].activated);
  out += fmt::format("],\"catalog\":{{\"calls\":{},\"known_calls\":{},\"invalid_calls\":{},\"write_calls\":{},"
                     "\"unknown_calls\":{},\"unknown_tools\":",
                     catalog.calls, catalog.known_calls, catalog.invalid_calls, catalog.write_calls,
                     catalog.unknown_calls);
  detail::append_count_object(out, catalog.unknown_tools);
  out += "}}";
  return out;
}

bool CheckStats::from_json(std::string_view json, CheckStats* out, std::string* error) {
  detail::CountersJson in("check stats", error);
  if (!in.parse(json)) return false;
  const simdjson::dom::element root = in.root();
  CheckStats s;
  auto u64 = [](simdjson::dom::element parent, const char* key, std::uint64_t* v) {
    return parent[key].get_uint64().get(*v) == simdjson::SUCCESS;
  };
  if (!u64(root, "records", &s.records) || !u64(root, "traces", &s.traces) || !u64(root, "passed", &s.passed) ||
      !u64(root, "failed", &s.failed) || !u64(root, "rejected", &s.rejected) || !u64(root, "flagged", &s.flagged) ||
      !u64(root, "warnings", &s.warnings) || !u64(root, "otlp_parts", &s.otlp_parts))
    return in.fail("a counter is missing or not a non-negative integer");
  simdjson::dom::array rules;
  if (root["rules"].get_array().get(rules)) return in.fail("\"rules\" is not an array");
  for (simdjson::dom::element r : rules) {
    simdjson::dom::array a;
    RuleStats rs;
    if (r.get_array().get(a) || a.size() != 3 || a.at(0).get_uint64().get(rs.violations) ||
        a.at(1).get_uint64().get(rs.violated_traces) || a.at(2).get_uint64().get(rs.activated))
      return in.fail("a rule's stats are not [violations, violated_traces, activated]");
    s.rules.push_back(rs);
  }
  simdjson::dom::element cat;
  if (root["catalog"].get(cat) || !u64(cat, "calls", &s.catalog.calls) ||
      !u64(cat, "known_calls", &s.catalog.known_calls) || !u64(cat, "invalid_calls", &s.catalog.invalid_calls) ||
      !u64(cat, "write_calls", &s.catalog.write_calls) || !u64(cat, "unknown_calls", &s.catalog.unknown_calls))
    return in.fail("\"catalog\" is not the catalog counters");
  switch (detail::read_count_object(cat, "unknown_tools", &s.catalog.unknown_tools)) {
    case detail::CountObjectRead::ok: break;
    case detail::CountObjectRead::not_object: return in.fail("\"catalog\" is not the catalog counters");
    case detail::CountObjectRead::bad_count: return in.fail("an unknown tool's calls are not a non-negative integer");
  }
  *out = std::move(s);
  return true;
}

namespace detail {

bool CountersJson::parse(std::string_view json) {
  if (parser_.parse(json.data(), json.size()).get(root_)) return fail("not JSON");
  return true;
}

bool CountersJson::fail(std::string_view why) const {
  *error_ = fmt::format("{}: {}", what_, why);
  return false;
}

void append_count_object(std::string& out, const CountMap& counts) {
  out += '{';
  bool first = true;
  for (const auto& [name, n] : counts) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, name);
    fmt::format_to(std::back_inserter(out), ":{}", n);
  }
  out += '}';
}

CountObjectRead read_count_object(simdjson::dom::element parent, const char* key, CountMap* out) {
  simdjson::dom::object o;
  if (parent[key].get_object().get(o)) return CountObjectRead::not_object;
  for (auto [name, n] : o) {
    std::uint64_t count;
    if (n.get_uint64().get(count)) return CountObjectRead::bad_count;
    (*out)[std::string(name)] = count;
  }
  return CountObjectRead::ok;
}

}  // namespace detail

}  // namespace trajcheck
