// The grammar on its own: PEGTL's analyze() finds no loops, keywords are whole words, and
// every example of docs/language.md parses verbatim.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "language/frontend.hpp"
#include "language/grammar.hpp"

namespace g = trajcheck::language::grammar;
namespace pegtl = tao::pegtl;

namespace {

bool line_parses(const std::string& text) {
  pegtl::memory_input<> in(text, "test");
  try {
    return pegtl::parse<g::line>(in);
  } catch (const pegtl::parse_error&) {
    return false;
  }
}

template <typename Rule>
bool full_match(const std::string& text) {
  pegtl::memory_input<> in(text, "test");
  try {
    return pegtl::parse<pegtl::seq<Rule, pegtl::eof>>(in);
  } catch (const pegtl::parse_error&) {
    return false;
  }
}

std::string errors_of(const std::string& text) {
  trajcheck::Source src("t.rules", text);
  auto r = trajcheck::language::parse_rules(src);
  return trajcheck::format_diagnostics(src, r.diagnostics);
}

}  // namespace

TEST_CASE("analyze finds no problems in the grammar") {
  CHECK(pegtl::analyze<g::line>(1) == 0);
  CHECK(pegtl::analyze<g::path_line>(1) == 0);
}

TEST_CASE("keywords are whole words") {
  CHECK(full_match<g::tool_name>("order_id"));
  CHECK(full_match<g::tool_name>("or_else"));
  CHECK(full_match<g::tool_name>("forbidden_tool"));
  CHECK(full_match<g::tool_name>("notify"));
  CHECK(full_match<g::tool_name>("wherever"));
  CHECK_FALSE(full_match<g::tool_name>("forbid"));
  CHECK_FALSE(full_match<g::tool_name>("where"));
  CHECK_FALSE(full_match<g::tool_name>("or"));
  CHECK(full_match<g::type_keyword>("approval"));
  CHECK_FALSE(full_match<g::type_keyword>("approval_request_x"));
  CHECK(full_match<g::type_keyword>("approval_request"));
  // A keyword used as a tool name is written quoted.
  CHECK(line_parses("forbid \"forbid\""));
  CHECK(line_parses("\"where\" at most 1"));
  CHECK_FALSE(line_parses("forbid where"));
  // Statement keywords inside names do not split them.
  CHECK(line_parses("forbidden_tool at most 1"));
  CHECK(line_parses("forbid or_else | order_id"));
  CHECK(line_parses("only_this precedes never_that"));
}

TEST_CASE("tool names: letters, digits, _ . : / - and globs") {
  CHECK(full_match<g::tool_name>("functions.search"));
  CHECK(full_match<g::tool_name>("mcp__github__create_issue"));
  CHECK(full_match<g::tool_name>("github/create-issue"));
  CHECK(full_match<g::tool_name>("mcp:server:tool"));
  CHECK(full_match<g::tool_name>("delete_*"));
  CHECK(full_match<g::tool_name>("get_?"));
  CHECK(full_match<g::tool_name>("*"));
  CHECK_FALSE(full_match<g::tool_name>("a b"));
  CHECK(line_parses("after approval: forbid refund_order"));  // ':' ends the name
}

TEST_CASE("every example of docs/language.md parses verbatim") {
  const char* lines[] = {
      "workflow \"refunds\"                     # optional: the name used in reports",
      "catalog \"catalog/tools-v3.json\"        # optional: the versioned tool catalog (see §7)",
      "alias search = search_documents        # observed name -> canonical name (applied to traces first)",
      "group lookup = customer_get | order_search_by_email     # a named pattern",
      "forbid delete_*",
      "order_get at most 1",
      "approval precedes refund_order",
      "rule refund_needs_approval [critical]:",
      "approval where decision == \"approved\" precedes refund_order",
      "message \"refund issued without an approved approval\"",
      "transfer_to_human_agents is never followed by tool_call",
      "between login and logout:",
      "db_write at most 3",
      "forbid \"forbid\"",
      "forbid get_?",
      "forbid order_get | order_list",
      "forbid order_get or order_list",
      "forbid not order_get",
      "forbid any",
      "forbid tool_call",
      "forbid step",
      "forbid user_message | assistant_message | approval_request | approval | final_answer",
      "forbid failed order_get",
      "forbid lookup",
      "forbid (web_fetch | http_request) where arguments.url matches /^http:/",
      "require order_get",
      "order_get at most 2 times",
      "order_get at least 1",
      "order_get exactly 3",
      "order_get between 1 and 3",
      "order_get at most once",
      "order_get exactly twice",
      "order_get between 1 and 3 times",
      "approval immediately precedes refund_order",
      "order_get is followed by refund_order",
      "order_get followed by refund_order",
      "order_get is immediately followed by refund_order",
      "refund_order requires approval",
      "order_get excludes refund_order",
      "starts with user_message",
      "ends with final_answer",
      "only order_get | order_list | refund_order",
      "no duplicate order_get",
      "order_get at most 2 in a row",
      "retries of order_get at most 2",
      "expect customer_get -> order_get",
      "expect exactly customer_get -> order_get",
      "approval immediately precedes refund_order ignoring assistant_message",
      "expect {profile_get, settings_get} -> render",
      "expect (customer_get -> order_list | order_search_by_email) -> order_get -> refund_order",
      "expect a -> b? -> c* -> d+",
      "after login: forbid delete_*",
      "before approval: forbid refund_order",
      "between login and logout: db_write at most 3",
      "after login until logout: db_write at most 3",
      "between (login where arguments.admin == true) and logout:",
      "approval where arguments.order_id == $o precedes refund_order where arguments.order_id == $o",
      "order_get where arguments.order_id == $o at most 1",
      "forbid refund_order where not seen(arguments.order_id)",
      "forbid send_money where not seen(arguments.recipient, user)",
      "forbid refund_order where not seen(arguments.order_id, result | context)",
      "approval_request where arguments.order_id == $o immediately precedes approval where arguments.order_id == $o",
      "order_get where arguments.order_id == $o at most 1 in a row",
      "forbid x where args.x == 1 and result.items[0].id != \"a\" or context.user_id exists",
      "forbid x where arguments.tags contains \"vip\"",
      "forbid x where arguments.kind in [\"a\", \"b\", 3]",
      "forbid x where not arguments.y exists",
      "forbid x where latency_ms > 1000 and status == \"error\"",
      "forbid x where arguments.a == arguments.b",
      "forbid x where 1 == 1.0",
      "rule r [warning]: forbid x",
      "tag a, b",
      "case sensitive",
  };
  for (const char* l : lines) {
    INFO(l);
    CHECK(line_parses(l));
  }
}

TEST_CASE("the docs/language.md sample file compiles without errors") {
  const char* text = R"(# refunds.rules — invariants for the refund workflow
workflow "refunds"                     # optional: the name used in reports
catalog "catalog/tools-v3.json"        # optional: the versioned tool catalog (see §7)

alias search = search_documents        # observed name -> canonical name (applied to traces first)
group lookup = customer_get | order_search_by_email     # a named pattern

forbid delete_*
order_get at most 1
approval precedes refund_order

rule refund_needs_approval [critical]:
    approval where decision == "approved" precedes refund_order
    message "refund issued without an approved approval"

transfer_to_human_agents is never followed by tool_call

between login and logout:
    db_write at most 3
)";
  trajcheck::Source src("refunds.rules", text);
  auto r = trajcheck::language::parse_rules(src);
  INFO(trajcheck::format_diagnostics(src, r.diagnostics));
  CHECK_FALSE(trajcheck::has_errors(r.diagnostics));
  CHECK(r.module.rules.size() == 6);
}

TEST_CASE("syntax errors point at the offending text") {
  std::string e = errors_of("forbid\n");
  CHECK(e.find("t.rules:1:7: error[E001]: expected a step pattern") != std::string::npos);
  e = errors_of("order_get at mostt 1\n");
  CHECK(e.find("t.rules:1:14: error[E001]: expected 'most' or 'least' after 'at'") != std::string::npos);
  e = errors_of("forbid x where arguments.y == \n");
  CHECK(e.find("1:31: error[E001]: expected a value") != std::string::npos);
  e = errors_of("forbid x y\n");
  CHECK(e.find("1:10: error[E001]: unexpected text") != std::string::npos);
  e = errors_of("forbid \"abc\n");
  CHECK(e.find("unterminated string") != std::string::npos);
}

TEST_CASE("grammar/trajcheck.peg and grammar.hpp name the same rules") {
  auto read = [](const std::string& rel) {
    std::ifstream in(std::string(TRAJCHECK_SOURCE_DIR) + "/" + rel);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::string peg = read("grammar/trajcheck.peg");
  std::string hpp = read("src/language/grammar.hpp");
  REQUIRE_FALSE(peg.empty());
  REQUIRE_FALSE(hpp.empty());
  std::set<std::string> peg_rules, hpp_rules;
  std::istringstream pl(peg);
  for (std::string l; std::getline(pl, l);) {
    auto arrow = l.find(" <-");
    if (l.empty() || l[0] == '#' || l[0] == ' ' || arrow == std::string::npos) continue;
    std::string name = l.substr(0, l.find(' '));
    if (name.rfind("KW(", 0) == 0) continue;
    peg_rules.insert(name);
  }
  std::istringstream hl(hpp);
  for (std::string l; std::getline(hl, l);) {
    if (l.rfind("struct ", 0) != 0) continue;
    std::string name = l.substr(7, l.find_first_of(" ;", 7) - 7);
    if (name.rfind("kw_", 0) == 0 || name == "Errors") continue;
    hpp_rules.insert(name);
  }
  for (const auto& r : peg_rules) {
    INFO("in trajcheck.peg but not grammar.hpp: " << r);
    CHECK(hpp_rules.count(r) == 1);
  }
  for (const auto& r : hpp_rules) {
    INFO("in grammar.hpp but not trajcheck.peg: " << r);
    CHECK(peg_rules.count(r) == 1);
  }
  CHECK(peg_rules.size() > 100);
}
