// `.suite` text -> Suite: PEGTL (the rule language's lexical rules and step patterns) on each
// logical line, checks with S-codes, and the control patterns compiled by the rule compiler
// from a position-preserving rewrite of the suite text, so their diagnostics point into it.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

#include "language/control.hpp"
#include "language/parser.hpp"
#include "suite/suite.hpp"
#include "suite/suite_grammar.hpp"

namespace trajcheck::suite {

namespace pegtl = tao::pegtl;
namespace g = grammar;
namespace lg = trajcheck::language::grammar;

std::string_view to_string(GateOp op) {
  switch (op) {
    case GateOp::eq: return "==";
    case GateOp::ne: return "!=";
    case GateOp::le: return "<=";
    case GateOp::ge: return ">=";
    case GateOp::lt: return "<";
    case GateOp::gt: return ">";
  }
  return "?";
}

namespace {

using K = MetricKind;
constexpr GateMetric kGateMetrics[] = {
    {"selection", K::share, "the tool selection score against the cases' expected tools or path (mean over cases, 0–1)", {}},
    {"arguments", K::share, "the share of calls of tools named in `expected.arguments` whose arguments match the expected ones and the catalog schema", {}},
    {"argument_validity", K::share, "the share of calls of catalog tools whose arguments their tool's JSON Schema accepts (every call, expected or not)", {}},
    {"order", K::share, "the ordering score against the expected tools or path (mean over cases)", {}},
    {"recovery", K::share, "on cases with a failed call: the share where every `recovery` rule holds and the control flow is the expected one", {}},
    {"outcome", K::share, "the share of cases with a successful outcome", {}},
    {"completion", K::share, "the share of cases with a successful outcome (same as `outcome`)", "outcome"},
    {"overall", K::share, "the mean of the cases' weighted overall score, (S × selection + O × order) / (S + O)", {}},
    {"pass_at_k", K::share, "pass@k: the share of cases with a passing run among their k runs (one run: the share of cases that pass)", {}},
    {"pass_all_k", K::share, "pass^k: the share of cases whose k runs all pass (one run: the share of cases that pass)", {}},
    {"pass_rate", K::share, "the mean over cases of the share of their runs that pass", {}},
    {"violations", K::number, "the number of violated rule results in judged runs (`violations[critical]`: of that severity; `violations[RULE]`: of that rule)", {}},
    {"duplicates_per_100", K::number, "duplicate calls per 100 successful, gate-passing cases", {}},
    {"duplicates_per_100_calls", K::number, "duplicate calls per 100 calls, over successful, gate-passing cases", {}},
    {"write_share", K::share, "the share of calls to `effect: write` catalog tools, over successful, gate-passing cases", {}},
    {"unused_read_share", K::share, "the share of `effect: read` calls none of whose result values is used later", {}},
    {"calls_per_success", K::series, "tool calls per successful, gate-passing case (a series: mean, or p50…p99, max)", {}},
    {"cost_per_success", K::series, "cost per successful, gate-passing case (a series)", {}},
    {"tokens_per_success", K::series, "tokens per successful, gate-passing case (a series)", {}},
    {"latency_per_success", K::series, "latency per successful, gate-passing case (a series)", {}},
    {"retries_per_success", K::series, "retries per successful, gate-passing case (a series)", {}},
    {"loop_depth", K::series, "the longest run of one tool called in a row (a series)", {}},
    {"read_volume_per_success", K::series, "bytes of `effect: read` results per successful, gate-passing case (a series)", {}},
};

constexpr const char* kFunctions[] = {"mean", "p50", "p90", "p95", "p99", "max"};
constexpr const char* kSeverities[] = {"critical", "error", "warning", "info"};
constexpr const char* kControls[] = {"handoff", "clarify", "refuse"};

template <std::size_t N>
bool one_of(std::string_view s, const char* const (&list)[N]) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* x) { return s == x; });
}

// must<> messages of the suite grammar (the rule grammar's, plus its own), for the shared
// control (language/control.hpp).
struct Messages {
  template <typename Rule>
  static constexpr const char* message = g::error_message<Rule>;
};
constexpr std::uint32_t kMaxNesting = 256;

template <typename Rule>
using Selector = pegtl::parse_tree::selector<
    Rule, pegtl::parse_tree::store_content::on<
              g::decl_suite, g::decl_cases, g::decl_runs, g::decl_rules, g::decl_catalog,
              g::decl_baseline, g::decl_case_rules, g::decl_fixtures, g::fixtures_dir, g::fixtures_version,
              g::decl_grader, g::grader_name, g::grader_command, g::decl_variation, g::variation_name, g::variation_command, g::timeout_value, g::timeout_unit, g::decl_segment, g::decl_control, g::decl_gate, g::path_string,
              g::segment_field, g::control_name, g::control_pattern, g::metric_call, g::metric_ref, g::metric_arg,
              g::metric_name, g::metric_severity, g::gate_op, g::gate_number, g::percent,
              g::baseline_op, g::gate_baseline, g::gate_value, g::per_field, g::gate_if_data, g::decl_order,
              g::order_length, g::decl_weights, g::weight>>;
using Node = pegtl::parse_tree::node;

using language::detail::decode_string;
using language::detail::make_error;

class LineParser {
 public:
  LineParser(const Source& src, Suite& suite, std::vector<Diagnostic>& diags)
      : src_(src), base_(src.text().data()), suite_(suite), diags_(diags) {}

  SourceRange range(const Node& n) const {
    return {static_cast<std::uint32_t>(n.m_begin.data - base_),
            static_cast<std::uint32_t>(n.m_end.data - base_)};
  }

  void parse_line(std::uint32_t b, std::uint32_t e) {
    auto failure = language::parse_line<g::line, Selector, Messages>(src_, b, e, kMaxNesting, [&](const Node& root) {
      for (const auto& c : root.children) statement(*c, b, e);
    });
    if (!failure) return;
    switch (failure->kind) {
      case language::LineFailure::Kind::no_match:
      case language::LineFailure::Kind::raised:
        diags_.push_back(make_error("S001", failure->range, std::move(failure->message)));
        break;
      case language::LineFailure::Kind::internal:
        diags_.push_back(make_error("S001", failure->range, fmt::format("cannot parse this line ({})", failure->message)));
        break;
      case language::LineFailure::Kind::nesting:
        diags_.push_back(make_error("S001", failure->range, fmt::format("nesting is deeper than {} levels", kMaxNesting)));
        break;
    }
  }

  // Control lines, for the compiler pass: the statement's range and its pattern's range.
  struct ControlLine {
    SourceRange line, pattern;
  };
  std::vector<ControlLine> control_lines;

 private:
  void once(std::optional<Located>& slot, const Node& n, const char* what) {
    if (slot) {
      auto d = make_error("S002", range(n), fmt::format("'{}' is declared twice", what));
      d.notes.push_back({slot->range, "first declared here"});
      diags_.push_back(std::move(d));
      return;
    }
    slot = Located{decode_string(n.children.at(0)->string_view()), range(*n.children[0])};
  }

  // A number of the suite (a gate's threshold, a weight, a timeout); one too large for a double
  // is S013, never a silent 0 or infinity.
  std::optional<double> number(const Node& n) {
    std::string_view t = n.string_view();
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || end != t.data() + t.size() || !std::isfinite(v)) {
      diags_.push_back(make_error("S013", range(n), fmt::format("the number {} is out of range", shorten(t))));
      return std::nullopt;
    }
    return v;
  }
  static std::string shorten(std::string_view t) {
    return t.size() > 24 ? fmt::format("{}… ({} digits)", t.substr(0, 12), t.size()) : std::string(t);
  }

  void strings(std::vector<Located>& out, const Node& n) {
    for (const auto& c : n.children) out.push_back({decode_string(c->string_view()), range(*c)});
  }

  void statement(const Node& n, std::uint32_t b, std::uint32_t e) {
    if (n.is_type<g::decl_suite>()) {
      std::optional<Located> name;
      if (!suite_name_seen_) {
        suite_.name = decode_string(n.string_view().substr(n.string_view().find('"')));
        suite_name_range_ = range(n);
        suite_name_seen_ = true;
      } else {
        auto d = make_error("S002", range(n), "'suite' is declared twice");
        d.notes.push_back({suite_name_range_, "first declared here"});
        diags_.push_back(std::move(d));
      }
    } else if (n.is_type<g::decl_cases>()) {
      strings(suite_.cases, n);
    } else if (n.is_type<g::decl_runs>()) {
      strings(suite_.runs, n);
    } else if (n.is_type<g::decl_rules>()) {
      strings(suite_.rules, n);
    } else if (n.is_type<g::decl_case_rules>()) {
      strings(suite_.case_rules_from, n);
    } else if (n.is_type<g::decl_fixtures>()) {
      const bool first = !suite_.fixtures;
      once(suite_.fixtures, n, "fixtures");
      if (first && n.children.size() > 1) suite_.fixtures_version = decode_string(n.children[1]->string_view());
    } else if (n.is_type<g::decl_grader>() || n.is_type<g::decl_variation>()) {
      const bool grader = n.is_type<g::decl_grader>();
      const char* what = grader ? "grader" : "variation";
      Grader gr;
      gr.name = n.children.at(0)->string();
      gr.range = range(*n.children[0]);
      gr.command = decode_string(n.children.at(1)->string_view());
      if (n.children.size() > 3) {
        std::optional<double> v = number(*n.children[2]);
        if (!v) return;
        gr.timeout_seconds = n.children[3]->string_view() == "ms" ? *v / 1000.0 : *v;
        if (gr.timeout_seconds <= 0 || gr.timeout_seconds > 3600) {
          diags_.push_back(make_error("S014", range(*n.children[2]), fmt::format("a {}'s timeout is above 0 and at most 3600s", what)));
          return;
        }
      }
      if (grader && is_gate_metric(gr.name)) {
        diags_.push_back(make_error("S014", gr.range, fmt::format("grader '{}' has the name of a gate metric; name it otherwise", gr.name)));
        return;
      }
      std::vector<Grader>& list = grader ? suite_.graders : suite_.variations;
      for (const auto& o : list) {
        if (o.name == gr.name) {
          auto d = make_error("S002", gr.range, fmt::format("{} '{}' is declared twice", what, gr.name));
          d.notes.push_back({o.range, "first declared here"});
          diags_.push_back(std::move(d));
          return;
        }
      }
      list.push_back(std::move(gr));
    } else if (n.is_type<g::decl_catalog>() || n.is_type<g::decl_baseline>()) {
      // The string literal is not a stored node here: take it from the text.
      std::string_view s = n.string_view();
      auto q = s.find('"');
      Located v{decode_string(s.substr(q)), {range(n).begin + static_cast<std::uint32_t>(q), range(n).end}};
      auto& slot = n.is_type<g::decl_catalog>() ? suite_.catalog : suite_.baseline;
      if (slot) {
        auto d = make_error("S002", range(n),
                       fmt::format("'{}' is declared twice", n.is_type<g::decl_catalog>() ? "catalog" : "baseline"));
        d.notes.push_back({slot->range, "first declared here"});
        diags_.push_back(std::move(d));
      } else {
        slot = v;
      }
    } else if (n.is_type<g::decl_segment>()) {
      for (const auto& c : n.children) {
        Located f{c->string(), range(*c)};
        bool dup = std::any_of(suite_.segments.begin(), suite_.segments.end(),
                               [&](const Located& x) { return x.text == f.text; });
        if (dup) diags_.push_back(make_error("S002", f.range, fmt::format("segment field '{}' is listed twice", f.text)));
        else suite_.segments.push_back(std::move(f));
      }
    } else if (n.is_type<g::decl_control>()) {
      Control c;
      c.name = n.children.at(0)->string();
      c.range = range(*n.children[0]);
      const Node& p = *n.children.at(1);
      c.pattern_text = p.string();
      if (!one_of(c.name, kControls)) {
        diags_.push_back(make_error("S003", c.range,
                               fmt::format("unknown control flow '{}': a suite defines handoff, clarify and refuse "
                                           "(act and answer follow from the tool calls)",
                                           c.name)));
        return;
      }
      for (const auto& o : suite_.controls) {
        if (o.name == c.name) {
          auto d = make_error("S004", c.range, fmt::format("control '{}' is defined twice", c.name));
          d.notes.push_back({o.range, "first defined here"});
          diags_.push_back(std::move(d));
          return;
        }
      }
      control_lines.push_back({{range(n).begin, e}, range(p)});
      suite_.controls.push_back(std::move(c));
      (void)b;
    } else if (n.is_type<g::decl_gate>()) {
      gate(n);
    } else if (n.is_type<g::decl_order>() || n.is_type<g::decl_weights>()) {
      setting(n);
    }
  }

  void setting(const Node& n) {
    const bool order = n.is_type<g::decl_order>();
    std::optional<SourceRange>& slot = order ? suite_.order_range : suite_.weights_range;
    if (slot) {
      auto d = make_error("S002", range(n), fmt::format("'{}' is declared twice", order ? "order min length" : "overall weights"));
      d.notes.push_back({*slot, "first declared here"});
      diags_.push_back(std::move(d));
      return;
    }
    slot = range(n);
    if (order) {
      std::optional<double> v = number(*n.children.at(0));
      if (!v) return;
      if (*v > 1e6) {
        diags_.push_back(make_error("S013", range(*n.children[0]), "order min length is at most 1000000"));
        return;
      }
      suite_.order_min_length = static_cast<std::uint32_t>(*v);
      return;
    }
    std::optional<double> s = number(*n.children.at(0)), o = number(*n.children.at(1));
    if (!s || !o) return;
    // (S × selection + O × order) / (S + O): the sum must be a finite number above 0.
    if (*s < 0 || *o < 0 || *s + *o <= 0 || !std::isfinite(*s + *o)) {
      diags_.push_back(make_error("S013", range(n), "overall weights are two non-negative numbers, not both 0, with a finite sum"));
      return;
    }
    suite_.selection_weight = *s;
    suite_.order_weight = *o;
  }

  void gate(const Node& n) {
    Gate gt;
    gt.range = range(n);
    std::size_t i = 0;
    const Node& m = *n.children.at(i++);
    const Node* ref = &m;
    if (m.is_type<g::metric_call>()) {
      gt.function = m.children.at(0)->string();
      ref = m.children.at(1).get();
      if (!one_of(gt.function, kFunctions)) {
        diags_.push_back(make_error("S007", range(*m.children[0]),
                               fmt::format("unknown function '{}': use mean, p50, p90, p95, p99 or max", gt.function)));
        return;
      }
    }
    gt.metric = ref->children.at(0)->string();
    SourceRange metric_range = range(*ref->children[0]);
    if (gt.metric == "completion") gt.metric = "outcome";
    if (ref->children.size() > 1) {
      std::string index = ref->children[1]->string();
      if (gt.metric != "violations") {
        diags_.push_back(make_error("S006", range(*ref->children[1]),
                               "only 'violations' takes an index: a severity, a rule or a tag, like violations[critical]"));
        return;
      }
      // A severity word is a severity; any other name is a rule or a tag, resolved by eval
      // against the compiled rules files (an unknown one is S006 there).
      (one_of(index, kSeverities) ? gt.severity : gt.rule) = std::move(index);
      gt.index_range = range(*ref->children[1]);
    }
    if (!is_gate_metric(gt.metric) && gt.severity.empty() && gt.rule.empty()) {
      // Maybe a grader, declared anywhere in the suite: decided once every line is read.
      gt.grader = true;
      grader_gates_.emplace_back(suite_.gates.size(), metric_range);
    } else if (!is_gate_metric(gt.metric)) {
      diags_.push_back(unknown_metric(metric_range, gt.metric));
      return;
    }
    if (!gt.function.empty() && !gt.grader && find_gate_metric(gt.metric)->kind != MetricKind::series) {
      diags_.push_back(make_error("S007", metric_range,
                             fmt::format("{}(…) needs a per-case series such as calls_per_success; '{}' is one number",
                                         gt.function, gt.metric)));
      return;
    }
    std::string_view op = n.children.at(i++)->string_view();
    gt.op = op == "==" ? GateOp::eq : op == "!=" ? GateOp::ne : op == "<=" ? GateOp::le
          : op == ">=" ? GateOp::ge : op == "<" ? GateOp::lt : GateOp::gt;
    const Node& rhs = *n.children.at(i++);
    const Node* value = &rhs;
    if (rhs.is_type<g::gate_baseline>()) {
      gt.baseline = true;
      if (!suite_.baseline) baseline_gates_.push_back(range(rhs));
      value = nullptr;
      if (!rhs.children.empty()) {
        gt.baseline_op = rhs.children.at(0)->string_view()[0];
        value = rhs.children.at(1).get();
      }
    }
    if (value) {
      std::optional<double> v = number(*value->children.at(0));
      if (!v) return;
      gt.percent = value->children.size() > 1;
      gt.value = gt.percent ? *v / 100.0 : *v;
    }
    for (; i < n.children.size(); ++i) {
      if (n.children[i]->is_type<g::per_field>()) gt.per = n.children[i]->string();
      else if (n.children[i]->is_type<g::gate_if_data>()) gt.if_data = true;
    }
    gt.text = std::string(n.string_view().substr(std::string_view("gate").size()));
    while (!gt.text.empty() && (gt.text.front() == ' ' || gt.text.front() == '\t')) gt.text.erase(0, 1);
    suite_.gates.push_back(std::move(gt));
  }

 public:
  std::vector<SourceRange> baseline_gates_;
  std::vector<std::pair<std::size_t, SourceRange>> grader_gates_;  // gates whose metric may be a grader

  static Diagnostic unknown_metric(SourceRange r, const std::string& name) {
    return make_error("S005", r,
                 fmt::format("unknown gate metric '{}' (docs/eval.md lists them: selection, arguments, "
                             "order, recovery, outcome, violations, duplicates_per_100, calls_per_success, …)",
                             name));
  }

 private:
  const Source& src_;
  const char* base_;
  Suite& suite_;
  std::vector<Diagnostic>& diags_;
  bool suite_name_seen_ = false;
  SourceRange suite_name_range_;
};

}  // namespace

std::span<const GateMetric> gate_metrics() { return kGateMetrics; }

const GateMetric* find_gate_metric(std::string_view name) {
  for (const GateMetric& m : kGateMetrics)
    if (m.name == name) return &m;
  return nullptr;
}

bool is_gate_metric(std::string_view name) { return find_gate_metric(name) != nullptr; }

SuiteResult parse_suite(Source source) {
  SuiteResult out;
  out.source = std::move(source);
  const Source& src = out.source;
  Suite& suite = out.suite;
  auto& diags = out.diagnostics;
  {
    const std::string& name = src.name();
    auto slash = name.find_last_of('/');
    suite.directory = slash == std::string::npos ? "." : name.substr(0, slash == 0 ? 1 : slash);
  }
  LineParser parser(src, suite, diags);
  const char* base = src.text().data();
  std::uint32_t lines = src.line_count();
  for (std::uint32_t ln = 1; ln <= lines; ++ln) {
    std::string_view lt = src.line_text(ln);
    auto b = static_cast<std::uint32_t>(lt.data() - base);
    auto e = static_cast<std::uint32_t>(b + lt.size());
    std::size_t skip = 0;
    while (skip < lt.size() && (lt[skip] == ' ' || lt[skip] == '\t')) ++skip;
    if (skip == lt.size() || lt[skip] == '#') continue;
    if (skip > 0) {
      diags.push_back(make_error("S008", {b, b + static_cast<std::uint32_t>(skip)},
                            "unexpected indentation: suite statements start at the beginning of the line"));
      continue;
    }
    parser.parse_line(b, e);
  }
  // Gates on graders: the metric must be a grader the suite declares.
  for (auto it = parser.grader_gates_.rbegin(); it != parser.grader_gates_.rend(); ++it) {
    const std::string& name = suite.gates[it->first].metric;
    bool declared = std::any_of(suite.graders.begin(), suite.graders.end(), [&](const Grader& g) { return g.name == name; });
    if (declared) continue;
    diags.push_back(LineParser::unknown_metric(it->second, name));
    suite.gates.erase(suite.gates.begin() + static_cast<std::ptrdiff_t>(it->first));
  }
  for (SourceRange r : parser.baseline_gates_)
    diags.push_back(make_error("S009", r, "this gate compares with 'baseline' but the suite declares no baseline \"FILE\""));
  if (suite.cases.empty() && !has_errors(diags))
    diags.push_back(make_error("S010", {0, 0}, "the suite declares no cases: add a line like cases \"cases/*.jsonl\""));

  // Control patterns: the same text at the same offsets, each control line rewritten to
  // `forbid PATTERN`, compiled by the rule compiler; the diagnostics then point into the suite.
  if (!parser.control_lines.empty() && !has_errors(diags)) {
    std::string text = src.text();
    for (char& c : text)
      if (c != '\n' && c != '\r') c = ' ';
    for (const auto& cl : parser.control_lines) {
      std::memcpy(text.data() + cl.line.begin, "forbid", 6);
      std::memcpy(text.data() + cl.pattern.begin, src.text().data() + cl.pattern.begin,
                  cl.line.end - cl.pattern.begin);
    }
    CompileResult cr = compile(Source(src.name(), std::move(text)));
    for (auto& d : cr.diagnostics) {
      if (d.severity == Severity::warning) continue;  // e.g. "never violated": meaningless here
      diags.push_back(std::move(d));
    }
    suite.control_program = cr.program;
  }
  sort_diagnostics(diags);
  return out;
}

}  // namespace trajcheck::suite
