// The rule language as PEGTL rules, one struct per rule of grammar/trajcheck.peg with the
// same names. The grammar describes ONE logical line (indentation already removed by the
// line pre-pass in parser.cpp); blocks are built from indentation afterwards.
#pragma once

#include <tao/pegtl.hpp>

namespace trajcheck::language::grammar {

namespace pegtl = tao::pegtl;
using pegtl::alnum;
using pegtl::alpha;
using pegtl::at;
using pegtl::digit;
using pegtl::eof;
using pegtl::if_must;
using pegtl::list;
using pegtl::must;
using pegtl::not_at;
using pegtl::not_one;
using pegtl::one;
using pegtl::opt;
using pegtl::plus;
using pegtl::ranges;
using pegtl::seq;
using pegtl::sor;
using pegtl::star;
using pegtl::string;
using pegtl::until;
using pegtl::xdigit;

// ---- lexical -------------------------------------------------------------------------
struct sp : one<' ', '\t'> {};
struct ws : star<sp> {};
struct comment : seq<one<'#'>, star<pegtl::any>> {};

// A name character; ':' only inside a name (so `after approval:` ends at the colon).
// '-' never starts the arrow `->`, so `a->b` is a PATH, not a name.
struct name_plain : sor<alnum, one<'_', '.', '/'>, seq<one<'-'>, not_at<one<'>'>>>> {};
struct name_char : sor<name_plain, seq<one<':'>, at<name_plain>>> {};
struct glob_char : one<'*', '?'> {};
// Keywords are whole words: `order_id`, `or_else`, `forbidden_tool` never split.
struct word_end : not_at<name_char> {};

#define TRAJCHECK_KEYWORD(id, text) \
  struct kw_##id : seq<TAO_PEGTL_KEYWORD(text), word_end> {}

TRAJCHECK_KEYWORD(forbid, "forbid");
TRAJCHECK_KEYWORD(never, "never");
TRAJCHECK_KEYWORD(require, "require");
TRAJCHECK_KEYWORD(precedes, "precedes");
TRAJCHECK_KEYWORD(immediately, "immediately");
TRAJCHECK_KEYWORD(is, "is");
TRAJCHECK_KEYWORD(followed, "followed");
TRAJCHECK_KEYWORD(by, "by");
TRAJCHECK_KEYWORD(requires, "requires");
TRAJCHECK_KEYWORD(excludes, "excludes");
TRAJCHECK_KEYWORD(starts, "starts");
TRAJCHECK_KEYWORD(ends, "ends");
TRAJCHECK_KEYWORD(with, "with");
TRAJCHECK_KEYWORD(only, "only");
TRAJCHECK_KEYWORD(no, "no");
TRAJCHECK_KEYWORD(duplicate, "duplicate");
TRAJCHECK_KEYWORD(at, "at");
TRAJCHECK_KEYWORD(most, "most");
TRAJCHECK_KEYWORD(least, "least");
TRAJCHECK_KEYWORD(exactly, "exactly");
TRAJCHECK_KEYWORD(between, "between");
TRAJCHECK_KEYWORD(and, "and");
TRAJCHECK_KEYWORD(times, "times");
TRAJCHECK_KEYWORD(time, "time");
TRAJCHECK_KEYWORD(once, "once");
TRAJCHECK_KEYWORD(twice, "twice");
TRAJCHECK_KEYWORD(in, "in");
TRAJCHECK_KEYWORD(a, "a");
TRAJCHECK_KEYWORD(row, "row");
TRAJCHECK_KEYWORD(retries, "retries");
TRAJCHECK_KEYWORD(of, "of");
TRAJCHECK_KEYWORD(expect, "expect");
TRAJCHECK_KEYWORD(ignoring, "ignoring");
TRAJCHECK_KEYWORD(after, "after");
TRAJCHECK_KEYWORD(before, "before");
TRAJCHECK_KEYWORD(until, "until");
TRAJCHECK_KEYWORD(rule, "rule");
TRAJCHECK_KEYWORD(message, "message");
TRAJCHECK_KEYWORD(tag, "tag");
TRAJCHECK_KEYWORD(alias, "alias");
TRAJCHECK_KEYWORD(group, "group");
TRAJCHECK_KEYWORD(workflow, "workflow");
TRAJCHECK_KEYWORD(catalog, "catalog");
TRAJCHECK_KEYWORD(case, "case");
TRAJCHECK_KEYWORD(sensitive, "sensitive");
TRAJCHECK_KEYWORD(where, "where");
TRAJCHECK_KEYWORD(or, "or");
TRAJCHECK_KEYWORD(not, "not");
TRAJCHECK_KEYWORD(failed, "failed");
TRAJCHECK_KEYWORD(matches, "matches");
TRAJCHECK_KEYWORD(contains, "contains");
TRAJCHECK_KEYWORD(exists, "exists");
TRAJCHECK_KEYWORD(seen, "seen");
TRAJCHECK_KEYWORD(valid, "valid");
TRAJCHECK_KEYWORD(true, "true");
TRAJCHECK_KEYWORD(false, "false");
TRAJCHECK_KEYWORD(null, "null");
TRAJCHECK_KEYWORD(any, "any");
TRAJCHECK_KEYWORD(step, "step");
TRAJCHECK_KEYWORD(tool_call, "tool_call");
TRAJCHECK_KEYWORD(user_message, "user_message");
TRAJCHECK_KEYWORD(assistant_message, "assistant_message");
TRAJCHECK_KEYWORD(approval_request, "approval_request");
TRAJCHECK_KEYWORD(approval, "approval");
TRAJCHECK_KEYWORD(final_answer, "final_answer");
TRAJCHECK_KEYWORD(write, "write");
#undef TRAJCHECK_KEYWORD

// Words that can start a statement or follow a pattern: never a bare tool name (quote it).
struct reserved_word
    : sor<kw_forbid, kw_never, kw_require, kw_precedes, kw_immediately, kw_is, kw_followed,
          kw_requires, kw_excludes, kw_starts, kw_ends, kw_only, kw_no, kw_at, kw_exactly,
          kw_between, kw_retries, kw_expect, kw_ignoring, kw_after, kw_before, kw_until,
          kw_rule, kw_message, kw_tag, kw_alias, kw_group, kw_workflow, kw_catalog, kw_case,
          kw_where, kw_or, kw_and, kw_not, kw_failed> {};
// Words that can start or continue a condition: never the first key of a field path.
struct cond_word : sor<kw_not, kw_seen, kw_true, kw_false, kw_null, kw_and, kw_or, kw_matches,
                       kw_contains, kw_in, kw_exists, kw_where> {};

// ---- literals ------------------------------------------------------------------------
struct unicode_escape : seq<one<'u'>, xdigit, xdigit, xdigit, xdigit> {};
struct escape_char : sor<one<'"', '\\', '/', 'n', 't', 'r', 'b', 'f'>, unicode_escape> {};
struct escape : seq<one<'\\'>, must<escape_char>> {};
struct string_char : sor<escape, not_one<'"', '\\'>> {};
struct string_body : until<one<'"'>, string_char> {};
struct string_lit : seq<one<'"'>, must<string_body>> {};

struct number_lit
    : seq<opt<one<'-'>>, plus<digit>, opt<one<'.'>, plus<digit>>,
          opt<one<'e', 'E'>, opt<one<'+', '-'>>, plus<digit>>, word_end> {};
struct count_number : seq<plus<digit>, word_end> {};
struct true_lit : kw_true {};
struct false_lit : kw_false {};
struct null_lit : kw_null {};
struct literal : sor<string_lit, number_lit, true_lit, false_lit, null_lit> {};

struct regex_char : sor<seq<one<'\\'>, pegtl::any>, not_one<'/'>> {};
struct regex_body : until<one<'/'>, regex_char> {};
struct regex_lit : seq<one<'/'>, must<regex_body>> {};

struct identifier : seq<sor<alpha, one<'_'>>, star<sor<alnum, one<'_'>>>> {};
struct variable : seq<one<'$'>, must<identifier>> {};

// ---- field paths ---------------------------------------------------------------------
struct close_bracket : one<']'> {};
struct close_paren : one<')'> {};
struct close_brace : one<'}'> {};
struct path_key : identifier {};
struct index_key : sor<count_number, string_lit> {};
struct path_index : seq<one<'['>, ws, must<index_key>, ws, must<close_bracket>> {};
struct path_member : seq<one<'.'>, must<path_key>> {};
struct field_path : seq<not_at<cond_word>, path_key, star<sor<path_member, path_index>>> {};

// ---- conditions ----------------------------------------------------------------------
struct cmp_op : sor<string<'=', '='>, string<'!', '='>, string<'<', '='>, string<'>', '='>,
                    one<'<'>, one<'>'>> {};
struct operand : sor<variable, literal, field_path> {};
struct list_item : literal {};
struct list_lit : seq<one<'['>, ws, opt<list_item, star<ws, one<','>, ws, must<list_item>>>, ws,
                      must<close_bracket>> {};

struct cond_or;
struct cond_paren : seq<one<'('>, ws, cond_or, ws, must<close_paren>> {};
struct open_paren : one<'('> {};
// seen(PATH) or seen(PATH, SOURCES): where the value appeared before (§5): `user` (earlier user
// messages), `result` (earlier tool results), `context`, several joined by '|'.
struct seen_source : sor<seq<TAO_PEGTL_KEYWORD("user"), word_end>, seq<TAO_PEGTL_KEYWORD("result"), word_end>,
                         seq<TAO_PEGTL_KEYWORD("context"), word_end>> {};
struct seen_sources : seq<one<','>, ws, must<seen_source>, star<ws, one<'|'>, ws, must<seen_source>>> {};
struct cond_seen : seq<kw_seen, ws, must<open_paren>, ws, must<field_path>, ws, opt<seen_sources, ws>,
                       must<close_paren>> {};
// valid(arguments) / valid(tool): against the catalog. Without its '(' the word is a field path.
struct valid_target : field_path {};
struct cond_valid : seq<kw_valid, ws, one<'('>, ws, must<valid_target>, ws, must<close_paren>> {};
struct cond_matches : seq<field_path, ws, kw_matches, ws, must<regex_lit>> {};
struct cond_contains : seq<field_path, ws, kw_contains, ws, must<operand>> {};
// `PATH in [literals…]`, or `PATH in PATH`: an element of the array at the right-hand path.
struct in_rhs : sor<list_lit, field_path> {};
struct cond_in : seq<field_path, ws, kw_in, ws, must<in_rhs>> {};
struct cond_exists : seq<field_path, ws, kw_exists> {};
struct cond_compare : seq<operand, ws, cmp_op, ws, must<operand>> {};
struct cond_primary : sor<cond_paren, cond_seen, cond_valid, cond_matches, cond_contains, cond_in, cond_exists,
                          cond_compare> {};
struct cond_not;
struct cond_negation : seq<kw_not, ws, cond_not> {};
struct cond_not : sor<cond_negation, cond_primary> {};
struct cond_and : seq<cond_not, star<ws, kw_and, ws, cond_not>> {};
struct cond_or : seq<cond_and, star<ws, kw_or, ws, cond_and>> {};
struct condition : cond_or {};

// ---- step patterns -------------------------------------------------------------------
struct quoted_name : string_lit {};
struct type_keyword : sor<kw_any, kw_step, kw_tool_call, kw_user_message, kw_assistant_message,
                          kw_approval_request, kw_approval, kw_final_answer, kw_write> {};
struct name_start : sor<alnum, one<'_'>, glob_char> {};
struct tool_name : seq<not_at<reserved_word>, name_start, star<sor<name_char, glob_char>>> {};

struct pattern;
struct pattern_paren : seq<one<'('>, ws, must<pattern>, ws, must<close_paren>> {};
struct pattern_primary : sor<pattern_paren, quoted_name, type_keyword, tool_name> {};
struct where_clause : seq<ws, kw_where, ws, must<condition>> {};
struct pattern_where : seq<pattern_primary, star<where_clause>> {};
struct pattern_unary;
struct pattern_not : seq<kw_not, ws, must<pattern_unary>> {};
struct pattern_failed : seq<kw_failed, ws, must<pattern_unary>> {};
struct pattern_unary : sor<pattern_not, pattern_failed, pattern_where> {};
struct or_op : sor<one<'|'>, kw_or> {};
struct pattern_or : seq<pattern_unary, star<ws, or_op, ws, must<pattern_unary>>> {};
struct pattern : pattern_or {};

// ---- PATH expressions (expect) -------------------------------------------------------
// In a PATH a trailing `*` or `?` is a postfix operator, so a name's wildcards must be
// followed by more name characters (`get_*_v2`).
struct path_name : seq<not_at<reserved_word>, star<glob_char>, sor<alnum, one<'_'>>,
                       star<sor<name_char, seq<plus<glob_char>, at<name_char>>>>> {};
struct path_expr;
struct path_atom;
struct path_not : seq<kw_not, ws, must<path_atom>> {};
struct path_failed : seq<kw_failed, ws, must<path_atom>> {};
struct path_primary : sor<quoted_name, type_keyword, path_name> {};
struct path_atom : sor<path_not, path_failed, seq<path_primary, star<where_clause>>> {};
struct path_group : seq<one<'('>, ws, must<path_expr>, ws, must<close_paren>> {};
struct path_all : seq<one<'{'>, ws, must<path_expr>, star<ws, one<','>, ws, must<path_expr>>, ws,
                      must<close_brace>> {};
struct path_unit : sor<path_group, path_all, path_atom> {};
struct path_optional : one<'?'> {};
struct path_star : one<'*'> {};
struct path_plus : one<'+'> {};
struct path_postfix : seq<path_unit, star<ws, sor<path_optional, path_star, path_plus>>> {};
struct arrow : string<'-', '>'> {};
struct path_seq : seq<path_postfix, star<ws, arrow, ws, must<path_postfix>>> {};
struct path_alt : seq<path_seq, star<ws, one<'|'>, ws, must<path_seq>>> {};
struct path_expr : path_alt {};

// ---- counts --------------------------------------------------------------------------
struct count_value : sor<seq<count_number, opt<ws, sor<kw_times, kw_time>>>, kw_once, kw_twice> {};
struct in_a_row : seq<ws, kw_in, ws, must<kw_a>, ws, must<kw_row>> {};
struct count_at_most : seq<kw_most, ws, must<count_value>, opt<in_a_row>> {};
struct count_at_least : seq<kw_least, ws, must<count_value>> {};
struct at_bound : sor<count_at_most, count_at_least> {};
struct count_at : seq<kw_at, ws, must<at_bound>> {};
struct count_exactly : seq<kw_exactly, ws, must<count_value>> {};
struct count_between : seq<kw_between, ws, must<count_number>, ws, must<kw_and>, ws, must<count_value>> {};
struct count_bound : sor<count_at, count_exactly, count_between> {};

// ---- statements ----------------------------------------------------------------------
struct stmt_forbid : seq<kw_forbid, ws, must<pattern>> {};
struct stmt_never : seq<kw_never, ws, must<pattern>> {};
struct stmt_require : seq<kw_require, ws, must<pattern>> {};
struct stmt_starts_with : seq<kw_starts, ws, must<kw_with>, ws, must<pattern>> {};
struct stmt_ends_with : seq<kw_ends, ws, must<kw_with>, ws, must<pattern>> {};
struct stmt_only : seq<kw_only, ws, must<pattern>> {};
struct stmt_no_duplicate : seq<kw_no, ws, must<kw_duplicate>, ws, must<pattern>> {};
struct stmt_retries : seq<kw_retries, ws, must<kw_of>, ws, must<pattern>, ws, must<kw_at>, ws,
                          must<kw_most>, ws, must<count_value>> {};
struct expect_exactly : kw_exactly {};
struct stmt_expect : seq<kw_expect, ws, opt<expect_exactly, ws>, must<path_expr>> {};

struct second_pattern : pattern {};
struct tail_precedes : seq<kw_precedes, ws, must<second_pattern>> {};
struct tail_immediately_precedes : seq<kw_precedes, ws, must<second_pattern>> {};
struct tail_immediately_followed : seq<kw_followed, ws, must<kw_by>, ws, must<second_pattern>> {};
struct immediately_tail : sor<tail_immediately_precedes, tail_immediately_followed> {};
struct tail_immediately : seq<kw_immediately, ws, must<immediately_tail>> {};
struct tail_never_followed : seq<kw_never, ws, must<kw_followed>, ws, must<kw_by>, ws,
                                 must<second_pattern>> {};
struct tail_followed : seq<kw_followed, ws, must<kw_by>, ws, must<second_pattern>> {};
struct is_tail : sor<tail_never_followed, tail_immediately, tail_followed> {};
struct tail_is : seq<kw_is, ws, must<is_tail>> {};
struct tail_requires : seq<kw_requires, ws, must<second_pattern>> {};
struct tail_excludes : seq<kw_excludes, ws, must<second_pattern>> {};
struct binary_tail : sor<count_bound, tail_precedes, tail_immediately, tail_is, tail_never_followed,
                         tail_followed, tail_requires, tail_excludes> {};
struct stmt_binary : seq<pattern, ws, must<binary_tail>> {};
struct ignoring_clause : seq<ws, kw_ignoring, ws, must<pattern>> {};
struct statement : seq<sor<stmt_forbid, stmt_never, stmt_require, stmt_starts_with, stmt_ends_with,
                           stmt_only, stmt_no_duplicate, stmt_retries, stmt_expect, stmt_binary>,
                       opt<ignoring_clause>> {};

// ---- scopes, rules, declarations -----------------------------------------------------
struct colon : one<':'> {};
struct scope_q : pattern {};
struct scope_r : pattern {};
struct scope_after : seq<kw_after, ws, must<scope_q>, opt<ws, kw_until, ws, must<scope_r>>> {};
struct scope_before : seq<kw_before, ws, must<scope_r>> {};
struct scope_between : seq<kw_between, ws, must<scope_q>, ws, must<kw_and>, ws, must<scope_r>> {};
struct scope_header : seq<sor<scope_after, scope_before, scope_between>, ws, must<colon>, ws,
                          opt<statement>> {};

struct rule_name : plus<name_char> {};
struct severity_name : sor<TAO_PEGTL_KEYWORD("critical"), TAO_PEGTL_KEYWORD("error"),
                           TAO_PEGTL_KEYWORD("warning"), TAO_PEGTL_KEYWORD("info")> {};
struct severity : seq<one<'['>, ws, must<severity_name>, ws, must<close_bracket>> {};
struct rule_header : seq<kw_rule, ws, must<rule_name>, ws, opt<severity>, ws, must<colon>, ws,
                         opt<sor<scope_header, statement>>> {};

struct plain_name : seq<name_start, star<sor<name_char, glob_char>>> {};
struct alias_name : sor<quoted_name, plain_name> {};
struct alias_from : alias_name {};
struct alias_to : alias_name {};
struct equals : one<'='> {};
struct decl_alias : seq<kw_alias, ws, must<alias_from>, ws, must<equals>, ws, must<alias_to>> {};
struct group_name : identifier {};
struct decl_group : seq<kw_group, ws, must<group_name>, ws, must<equals>, ws, must<pattern>> {};
struct decl_workflow : seq<kw_workflow, ws, must<string_lit>> {};
struct decl_catalog : seq<kw_catalog, ws, must<string_lit>> {};
struct decl_case : seq<kw_case, ws, must<kw_sensitive>> {};
struct message_line : seq<kw_message, ws, must<string_lit>> {};
struct tag_name : plus<name_char> {};
struct tag_line : seq<kw_tag, ws, must<tag_name>, star<ws, one<','>, ws, must<tag_name>>> {};

struct line_body : sor<decl_workflow, decl_catalog, decl_alias, decl_group, decl_case, rule_header,
                       message_line, tag_line, scope_header, statement> {};
struct line_end : seq<ws, opt<comment>, eof> {};
struct line : seq<ws, opt<line_body>, must<line_end>> {};

// A standalone PATH expression (expected paths of `trajcheck score`).
struct path_line : seq<ws, must<path_expr>, must<line_end>> {};

// The error message for every must<> point (parser.cpp's control static_asserts that
// each must<> target has one).
template <typename Rule> inline constexpr const char* error_message = nullptr;
#define TRAJCHECK_MESSAGE(rule, text) \
  template <> inline constexpr const char* error_message<rule> = text
TRAJCHECK_MESSAGE(escape_char, "invalid escape in string (use \\\" \\\\ \\/ \\n \\t \\r \\b \\f or \\uXXXX)");
TRAJCHECK_MESSAGE(string_body, "unterminated string: expected a closing '\"' on this line");
TRAJCHECK_MESSAGE(string_lit, "expected a quoted string");
TRAJCHECK_MESSAGE(regex_body, "unterminated regex: expected a closing '/' on this line");
TRAJCHECK_MESSAGE(identifier, "expected a variable name after '$'");
TRAJCHECK_MESSAGE(close_bracket, "expected ']'");
TRAJCHECK_MESSAGE(close_paren, "expected ')'");
TRAJCHECK_MESSAGE(seen_source, "expected a source of seen(...): user, result or context");
TRAJCHECK_MESSAGE(close_brace, "expected '}' or ','");
TRAJCHECK_MESSAGE(open_paren, "expected '(' after 'seen'");
TRAJCHECK_MESSAGE(valid_target, "expected 'arguments' or 'tool' inside valid(...)");
TRAJCHECK_MESSAGE(path_key, "expected a field name after '.'");
TRAJCHECK_MESSAGE(index_key, "expected an index or a quoted key inside '[ ]'");
TRAJCHECK_MESSAGE(operand, "expected a value: a field path, a literal or a $variable");
TRAJCHECK_MESSAGE(list_item, "expected a literal in the list");
TRAJCHECK_MESSAGE(in_rhs, "expected a list or a path after 'in', like [\"a\", \"b\", 3] or fixture.customer.orders");
TRAJCHECK_MESSAGE(regex_lit, "expected a regex after 'matches', like /^ord_[0-9]+$/");
TRAJCHECK_MESSAGE(field_path, "expected a field path such as arguments.order_id");
TRAJCHECK_MESSAGE(condition, "expected a condition after 'where' (a comparison, matches, contains, in, exists or seen(...))");
TRAJCHECK_MESSAGE(pattern, "expected a step pattern (a tool name, glob, step type, group or '('); a tool named like a keyword is written quoted");
TRAJCHECK_MESSAGE(pattern_unary, "expected a step pattern (a tool name, glob, step type, group or '('); a tool named like a keyword is written quoted");
TRAJCHECK_MESSAGE(second_pattern, "expected the second step pattern of the statement; a tool named like a keyword is written quoted");
TRAJCHECK_MESSAGE(scope_q, "expected the step pattern that opens the scope");
TRAJCHECK_MESSAGE(scope_r, "expected the step pattern that closes the scope");
TRAJCHECK_MESSAGE(path_expr, "expected a PATH expression (a -> b, a | b, {a, b}, a?, a*, a+)");
TRAJCHECK_MESSAGE(path_atom, "expected a step pattern in the PATH");
TRAJCHECK_MESSAGE(path_postfix, "expected a step pattern, '(' or '{' after '->'");
TRAJCHECK_MESSAGE(path_seq, "expected a PATH alternative after '|'");
TRAJCHECK_MESSAGE(count_value, "expected a count: a number, 'once' or 'twice'");
TRAJCHECK_MESSAGE(count_number, "expected a whole number");
TRAJCHECK_MESSAGE(kw_a, "expected 'a' in 'in a row'");
TRAJCHECK_MESSAGE(kw_row, "expected 'row' in 'in a row'");
TRAJCHECK_MESSAGE(kw_and, "expected 'and'");
TRAJCHECK_MESSAGE(kw_with, "expected 'with'");
TRAJCHECK_MESSAGE(kw_duplicate, "expected 'duplicate' after 'no'");
TRAJCHECK_MESSAGE(kw_of, "expected 'of' after 'retries'");
TRAJCHECK_MESSAGE(kw_at, "expected 'at most N' in 'retries of P at most N'");
TRAJCHECK_MESSAGE(kw_most, "expected 'most' in 'at most N'");
TRAJCHECK_MESSAGE(kw_by, "expected 'by' after 'followed'");
TRAJCHECK_MESSAGE(kw_followed, "expected 'followed by'");
TRAJCHECK_MESSAGE(kw_sensitive, "expected 'sensitive' after 'case'");
TRAJCHECK_MESSAGE(at_bound, "expected 'most' or 'least' after 'at'");
TRAJCHECK_MESSAGE(immediately_tail, "expected 'precedes' or 'followed by' after 'immediately'");
TRAJCHECK_MESSAGE(is_tail, "expected 'followed by', 'immediately followed by' or 'never followed by' after 'is'");
TRAJCHECK_MESSAGE(binary_tail, "expected what the pattern must do: at most/at least/exactly/between N, precedes, is followed by, requires or excludes");
TRAJCHECK_MESSAGE(colon, "expected ':'");
TRAJCHECK_MESSAGE(rule_name, "expected a rule name after 'rule'");
TRAJCHECK_MESSAGE(severity_name, "expected a severity: critical, error, warning or info");
TRAJCHECK_MESSAGE(alias_from, "expected the observed tool name after 'alias'");
TRAJCHECK_MESSAGE(alias_to, "expected the canonical tool name after '='");
TRAJCHECK_MESSAGE(equals, "expected '='");
TRAJCHECK_MESSAGE(group_name, "expected a group name after 'group'");
TRAJCHECK_MESSAGE(tag_name, "expected a tag name");
TRAJCHECK_MESSAGE(line_end, "unexpected text; expected the end of the line");
#undef TRAJCHECK_MESSAGE

}  // namespace trajcheck::language::grammar
