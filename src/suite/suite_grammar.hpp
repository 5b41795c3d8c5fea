// The `.suite` statements of docs/eval.md as PEGTL rules, built on the lexical rules of the rule
// language (strings, numbers, identifiers, comments, keywords, step patterns) so both files
// share one front end. Like the rules grammar it describes ONE logical line.
#pragma once

#include "language/grammar.hpp"

namespace trajcheck::suite::grammar {

namespace pegtl = tao::pegtl;
namespace lg = trajcheck::language::grammar;
using pegtl::eof;
using pegtl::must;
using pegtl::one;
using pegtl::opt;
using pegtl::seq;
using pegtl::sor;
using pegtl::star;
using pegtl::string;

#define TRAJCHECK_SUITE_KEYWORD(id, text) \
  struct kw_##id : seq<TAO_PEGTL_KEYWORD(text), lg::word_end> {}
TRAJCHECK_SUITE_KEYWORD(suite, "suite");
TRAJCHECK_SUITE_KEYWORD(cases, "cases");
TRAJCHECK_SUITE_KEYWORD(runs, "runs");
TRAJCHECK_SUITE_KEYWORD(rules, "rules");
TRAJCHECK_SUITE_KEYWORD(baseline, "baseline");
TRAJCHECK_SUITE_KEYWORD(segment, "segment");
TRAJCHECK_SUITE_KEYWORD(control, "control");
TRAJCHECK_SUITE_KEYWORD(gate, "gate");
TRAJCHECK_SUITE_KEYWORD(per, "per");
TRAJCHECK_SUITE_KEYWORD(order, "order");
TRAJCHECK_SUITE_KEYWORD(min, "min");
TRAJCHECK_SUITE_KEYWORD(length, "length");
TRAJCHECK_SUITE_KEYWORD(overall, "overall");
TRAJCHECK_SUITE_KEYWORD(weights, "weights");
TRAJCHECK_SUITE_KEYWORD(if, "if");
TRAJCHECK_SUITE_KEYWORD(data, "data");
TRAJCHECK_SUITE_KEYWORD(from, "from");
TRAJCHECK_SUITE_KEYWORD(fixtures, "fixtures");
TRAJCHECK_SUITE_KEYWORD(version, "version");
TRAJCHECK_SUITE_KEYWORD(grader, "grader");
TRAJCHECK_SUITE_KEYWORD(command, "command");
TRAJCHECK_SUITE_KEYWORD(timeout, "timeout");
TRAJCHECK_SUITE_KEYWORD(variation, "variation");
#undef TRAJCHECK_SUITE_KEYWORD

using lg::ws;

struct path_string : lg::string_lit {};
struct string_list : seq<path_string, star<lg::ws, one<','>, lg::ws, must<path_string>>> {};

struct decl_suite : seq<kw_suite, ws, must<lg::string_lit>> {};
struct decl_cases : seq<kw_cases, ws, must<string_list>> {};
struct decl_runs : seq<kw_runs, ws, must<string_list>> {};
struct decl_rules : seq<kw_rules, ws, must<string_list>> {};
struct decl_catalog : seq<lg::kw_catalog, ws, must<lg::string_lit>> {};
struct decl_baseline : seq<kw_baseline, ws, must<lg::string_lit>> {};
// `case rules from "DIR", …`: folders outside the suite's own that cases' `rules` may name.
struct rules_dirs : string_list {};
struct decl_case_rules : seq<lg::kw_case, ws, must<kw_rules>, ws, must<kw_from>, ws, must<rules_dirs>> {};

// `fixtures "DIR" [version "V"]`: where the cases' environment fixtures live, and their version.
struct fixtures_dir : lg::string_lit {};
struct fixtures_version : lg::string_lit {};
struct decl_fixtures : seq<kw_fixtures, ws, must<fixtures_dir>, opt<ws, kw_version, ws, must<fixtures_version>>> {};

// `grader NAME command "…" [timeout 30s]`: an external command that grades each judged case.
struct grader_name : lg::identifier {};
struct grader_command : lg::string_lit {};
struct timeout_value : seq<pegtl::plus<pegtl::digit>, opt<one<'.'>, pegtl::plus<pegtl::digit>>> {};
struct timeout_unit : sor<string<'m', 's'>, one<'s'>> {};
struct grader_timeout : seq<kw_timeout, ws, must<timeout_value>, must<timeout_unit>> {};
struct decl_grader : seq<kw_grader, ws, must<grader_name>, ws, must<kw_command>, ws, must<grader_command>,
                         opt<ws, grader_timeout>> {};
// `variation NAME command "…" [timeout 30s]`: an external command that `case vary` runs to vary
// a case's input (a paraphrase needs a model). The same parts as a grader's after the name.
struct variation_name : lg::identifier {};
struct variation_command : lg::string_lit {};
struct decl_variation : seq<kw_variation, ws, must<variation_name>, ws, must<kw_command>, ws,
                            must<variation_command>, opt<ws, grader_timeout>> {};

struct segment_field : lg::identifier {};
struct segment_list : seq<segment_field, star<ws, one<','>, ws, must<segment_field>>> {};
struct decl_segment : seq<kw_segment, ws, must<lg::kw_by>, ws, must<segment_list>> {};

// `control NAME = PATTERN`: the pattern is the rule language's step pattern.
struct control_name : lg::identifier {};
struct control_pattern : lg::pattern {};
struct decl_control : seq<kw_control, ws, must<control_name>, ws, must<lg::equals>, ws,
                          must<control_pattern>> {};

// gate METRIC OP VALUE [per FIELD]
struct metric_name : lg::identifier {};
struct metric_severity : lg::identifier {};
struct metric_index : seq<one<'['>, ws, must<metric_severity>, ws, must<lg::close_bracket>> {};
struct metric_ref : seq<metric_name, opt<ws, metric_index>> {};
struct metric_arg : metric_ref {};
struct metric_call : seq<metric_name, ws, one<'('>, ws, must<metric_arg>, ws, must<lg::close_paren>> {};
struct gate_metric : sor<metric_call, metric_ref> {};
struct gate_op : sor<string<'=', '='>, string<'!', '='>, string<'<', '='>, string<'>', '='>,
                     one<'<'>, one<'>'>> {};
// A number, optionally a percentage (`95%` is 0.95). Not lg::number_lit: `%` ends a word.
struct gate_number : seq<opt<one<'-'>>, pegtl::plus<pegtl::digit>,
                         opt<one<'.'>, pegtl::plus<pegtl::digit>>> {};
struct percent : one<'%'> {};
struct gate_value : seq<gate_number, opt<percent>> {};
struct baseline_op : one<'*', '+', '-'> {};
struct baseline_factor : seq<baseline_op, ws, must<gate_value>> {};
struct gate_baseline : seq<kw_baseline, opt<ws, baseline_factor>> {};
struct gate_rhs : sor<gate_baseline, gate_value> {};
struct per_field : lg::identifier {};
struct gate_per : seq<kw_per, ws, must<per_field>> {};
// `if data`: the gate holds when it has no value (no case applies, the baseline lacks the metric).
struct gate_if_data : seq<kw_if, ws, must<kw_data>> {};
struct decl_gate : seq<kw_gate, ws, must<gate_metric>, ws, must<gate_op>, ws, must<gate_rhs>,
                       opt<ws, gate_per>, opt<ws, gate_if_data>> {};

// `order min length N`: score's --min-order-length for the order dimension.
struct order_length : pegtl::plus<pegtl::digit> {};
struct decl_order : seq<kw_order, ws, must<kw_min>, ws, must<kw_length>, ws, must<order_length>> {};
// `overall weights S, O`: score's --weights for the `overall` gate metric.
struct weight : gate_number {};
struct weight_comma : one<','> {};
struct decl_weights : seq<kw_overall, ws, must<kw_weights>, ws, must<weight>, ws, must<weight_comma>, ws,
                          must<weight>> {};

struct line_body : sor<decl_suite, decl_cases, decl_runs, decl_rules, decl_catalog, decl_baseline, decl_case_rules, decl_fixtures, decl_grader,
                       decl_variation, decl_segment, decl_control, decl_gate, decl_order, decl_weights> {};
struct statement_start : line_body {};
struct line : seq<ws, must<statement_start>, must<lg::line_end>> {};

template <typename Rule> inline constexpr const char* error_message = lg::error_message<Rule>;
#define TRAJCHECK_SUITE_MESSAGE(rule, text) \
  template <> inline constexpr const char* error_message<rule> = text
TRAJCHECK_SUITE_MESSAGE(statement_start, "expected a suite statement: suite, cases, runs, rules, catalog, baseline, case rules from, fixtures, grader, variation, segment by, control, gate, order min length or overall weights");
TRAJCHECK_SUITE_MESSAGE(kw_rules, "expected 'rules from \"DIR\"' after 'case'");
TRAJCHECK_SUITE_MESSAGE(kw_from, "expected 'from \"DIR\"' after 'case rules'");
TRAJCHECK_SUITE_MESSAGE(rules_dirs, "expected the quoted folders cases' rules files may come from");
TRAJCHECK_SUITE_MESSAGE(path_string, "expected a quoted file name or glob after ','");
TRAJCHECK_SUITE_MESSAGE(string_list, "expected a quoted file name or glob");
TRAJCHECK_SUITE_MESSAGE(fixtures_dir, "expected the quoted folder of the cases' fixtures, like: fixtures \"fixtures/\" version \"v3\"");
TRAJCHECK_SUITE_MESSAGE(fixtures_version, "expected the fixtures' version, a quoted string, after 'version'");
TRAJCHECK_SUITE_MESSAGE(grader_name, "expected the grader's name, like: grader helpfulness command \"python3 graders/helpful.py\" timeout 30s");
TRAJCHECK_SUITE_MESSAGE(kw_command, "expected 'command \"…\"' after the name");
TRAJCHECK_SUITE_MESSAGE(variation_name, "expected the variation's name, like: variation paraphrase command \"python3 vary/paraphrase.py\" timeout 60s");
TRAJCHECK_SUITE_MESSAGE(variation_command, "expected the variation's command, a quoted string");
TRAJCHECK_SUITE_MESSAGE(grader_command, "expected the grader's command, a quoted string");
TRAJCHECK_SUITE_MESSAGE(timeout_value, "expected a duration after 'timeout', like 30s or 500ms");
TRAJCHECK_SUITE_MESSAGE(timeout_unit, "expected a unit after the timeout: s or ms");
TRAJCHECK_SUITE_MESSAGE(segment_field, "expected a case field name");
TRAJCHECK_SUITE_MESSAGE(segment_list, "expected the case fields to segment by, like: segment by task_type, severity");
TRAJCHECK_SUITE_MESSAGE(lg::kw_by, "expected 'by' after 'segment'");
TRAJCHECK_SUITE_MESSAGE(control_name, "expected a control-flow name (handoff, clarify or refuse)");
TRAJCHECK_SUITE_MESSAGE(control_pattern, "expected a step pattern after '=' (the rule language's patterns)");
TRAJCHECK_SUITE_MESSAGE(metric_severity, "expected a severity (critical, error, warning, info), a rule name or a tag");
TRAJCHECK_SUITE_MESSAGE(metric_arg, "expected a metric name inside '( )', like p95(calls_per_success)");
TRAJCHECK_SUITE_MESSAGE(gate_metric, "expected a metric after 'gate', like selection or p95(calls_per_success)");
TRAJCHECK_SUITE_MESSAGE(gate_op, "expected a comparison: ==, !=, <=, >=, < or >");
TRAJCHECK_SUITE_MESSAGE(gate_value, "expected a number or a percentage");
TRAJCHECK_SUITE_MESSAGE(gate_rhs, "expected a threshold: a number, a percentage or 'baseline' [* factor]");
TRAJCHECK_SUITE_MESSAGE(per_field, "expected a case field after 'per'");
TRAJCHECK_SUITE_MESSAGE(kw_data, "expected 'data' after 'if': a gate ending in 'if data' holds when it has no data");
TRAJCHECK_SUITE_MESSAGE(kw_min, "expected 'min length N' after 'order'");
TRAJCHECK_SUITE_MESSAGE(kw_length, "expected 'length N' after 'order min'");
TRAJCHECK_SUITE_MESSAGE(order_length, "expected the shortest expected sequence to give an order, a whole number");
TRAJCHECK_SUITE_MESSAGE(kw_weights, "expected 'weights S, O' after 'overall'");
TRAJCHECK_SUITE_MESSAGE(weight_comma, "expected ',' between the selection and order weights");
TRAJCHECK_SUITE_MESSAGE(weight, "expected two weights, selection and order, like: overall weights 0.6, 0.4");
#undef TRAJCHECK_SUITE_MESSAGE

}  // namespace trajcheck::suite::grammar
