// Lowering to the IR: desugaring, groups, aliases, normalization, rule naming and shape,
// variables, balanced or-chains, parse_path_expression, and hostile inputs.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "language/frontend.hpp"

using namespace trajcheck;
using language::parse_rules;

namespace {

language::FrontendResult compile(const std::string& text) {
  Source src("t.rules", text);
  auto r = parse_rules(src);
  return r;
}

std::string diags(const std::string& text) {
  Source src("t.rules", text);
  auto r = parse_rules(src);
  return format_diagnostics(src, r.diagnostics);
}

const ir::Pattern& pat(const ir::Module& m, ir::Id id) { return m.patterns.at(id); }

}  // namespace

TEST_CASE("a bare statement is a rule named by its canonical text, severity error") {
  auto r = compile("order_get   at most   once\n");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.module.rules.size() == 1);
  const ir::Rule& rule = r.module.rules[0];
  CHECK(rule.name == "order_get at most 1");
  CHECK(rule.severity == RuleSeverity::error);
  CHECK(rule.scope.kind == ir::ScopeKind::global);
  REQUIRE(rule.statements.size() == 1);
  const ir::Statement& s = rule.statements[0];
  CHECK(s.kind == ir::StatementKind::count);
  CHECK(s.lo == 0);
  CHECK(s.hi == 1);
  CHECK(pat(r.module, s.a).kind == ir::Pattern::Kind::tool);
  CHECK(pat(r.module, s.a).name == "order_get");
}

TEST_CASE("synonyms desugar to one statement kind") {
  auto r = compile("never x\nforbid y\na followed by b\nc is followed by d\ne at least twice\nf exactly 3\ng between 2 and 4\n");
  REQUIRE(r.module.rules.size() == 7);
  CHECK(r.module.rules[0].statements[0].kind == ir::StatementKind::forbid);
  CHECK(r.module.rules[0].name == "forbid x");
  CHECK(r.module.rules[2].statements[0].kind == ir::StatementKind::followed_by);
  CHECK(r.module.rules[2].name == "a is followed by b");
  CHECK(r.module.rules[4].statements[0].lo == 2);
  CHECK(r.module.rules[4].statements[0].hi == ir::kUnbounded);
  CHECK(r.module.rules[5].statements[0].lo == 3);
  CHECK(r.module.rules[5].statements[0].hi == 3);
  CHECK(r.module.rules[6].statements[0].lo == 2);
  CHECK(r.module.rules[6].statements[0].hi == 4);
}

TEST_CASE("every statement kind lowers") {
  using K = ir::StatementKind;
  struct Case {
    const char* text;
    K kind;
  } cases[] = {
      {"forbid a", K::forbid},
      {"require a", K::require},
      {"a at most 2", K::count},
      {"a precedes b", K::precedes},
      {"a immediately precedes b", K::immediately_precedes},
      {"a is followed by b", K::followed_by},
      {"a is immediately followed by b", K::immediately_followed_by},
      {"a requires b", K::requires_},
      {"a is never followed by b", K::never_followed_by},
      {"a excludes b", K::excludes},
      {"starts with a", K::starts_with},
      {"ends with a", K::ends_with},
      {"only a", K::only},
      {"no duplicate a", K::no_duplicate},
      {"a at most 2 in a row", K::in_a_row},
      {"retries of a at most 2", K::retries},
      {"expect a -> b", K::expect},
      {"expect exactly a -> b", K::expect_exactly},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = compile(std::string(c.text) + "\n");
    REQUIRE(r.diagnostics.empty());
    REQUIRE(r.module.rules.size() == 1);
    CHECK(r.module.rules[0].statements[0].kind == c.kind);
    CHECK(r.module.rules[0].name == c.text);
  }
  auto r = compile("retries of a at most 2\n");
  CHECK(r.module.rules[0].statements[0].hi == 2);
  r = compile("a at most 3 in a row\n");
  CHECK(r.module.rules[0].statements[0].hi == 3);
}

TEST_CASE("step patterns lower to IR pattern kinds") {
  auto r = compile("forbid any | tool_call | step | approval | failed x | not y | delete_* | \"Quoted Name\"\n");
  REQUIRE(r.diagnostics.empty());
  const ir::Module& m = r.module;
  std::map<ir::Pattern::Kind, int> kinds;
  for (const auto& p : m.patterns) kinds[p.kind]++;
  CHECK(kinds[ir::Pattern::Kind::any_tool] == 1);  // any and tool_call hash-cons to one
  CHECK(kinds[ir::Pattern::Kind::any_step] == 1);
  CHECK(kinds[ir::Pattern::Kind::step_type] == 1);
  CHECK(kinds[ir::Pattern::Kind::failed] == 1);
  CHECK(kinds[ir::Pattern::Kind::not_] == 1);
  CHECK(kinds[ir::Pattern::Kind::glob] == 1);
  bool quoted = false;
  for (const auto& p : m.patterns)
    if (p.kind == ir::Pattern::Kind::tool && p.name == "quoted name") quoted = true;
  CHECK(quoted);  // quoted names are normalized too (case-folded)
}

TEST_CASE("groups are inlined and aliases resolved; names normalized") {
  auto r = compile("alias Search = search_documents\ngroup lookup = customer_get | ORDER_SEARCH\nforbid Lookup\nforbid search\n");
  REQUIRE(r.diagnostics.empty());
  const ir::Module& m = r.module;
  REQUIRE(m.aliases.size() == 1);
  CHECK(m.aliases[0].first == "search");
  CHECK(m.aliases[0].second == "search_documents");
  const ir::Pattern& g = pat(m, m.rules[0].statements[0].a);
  REQUIRE(g.kind == ir::Pattern::Kind::or_);
  CHECK(pat(m, g.a).name == "customer_get");
  CHECK(pat(m, g.b).name == "order_search");
  CHECK(pat(m, m.rules[1].statements[0].a).name == "search_documents");
}

TEST_CASE("case sensitive keeps the case of names") {
  auto r = compile("case sensitive\nforbid Order_Get\n");
  REQUIRE(r.diagnostics.empty());
  CHECK(r.module.case_sensitive);
  CHECK(pat(r.module, r.module.rules[0].statements[0].a).name == "Order_Get");
}

TEST_CASE("alias chains resolve to the final canonical name") {
  auto r = compile("alias a = b\nalias b = c\nforbid a\n");
  REQUIRE_FALSE(has_errors(r.diagnostics));
  CHECK(pat(r.module, r.module.rules[0].statements[0].a).name == "c");
}

TEST_CASE("where lowers to a condition; chained where conjoins; paths and literals") {
  auto r = compile("forbid x where args.a.b == \"v\" where result.items[0].id != 3 where context.u exists where status == \"error\"\n");
  REQUIRE(r.diagnostics.empty());
  const ir::Module& m = r.module;
  const ir::Pattern& w = pat(m, m.rules[0].statements[0].a);
  REQUIRE(w.kind == ir::Pattern::Kind::where);
  std::vector<const ir::Cond*> leaves;
  std::vector<ir::Id> stack{w.b};
  while (!stack.empty()) {
    const ir::Cond& c = m.conds[stack.back()];
    stack.pop_back();
    if (c.kind == ir::Cond::Kind::and_) {
      stack.push_back(c.rhs);
      stack.push_back(c.lhs);
    } else {
      leaves.push_back(&c);
    }
  }
  REQUIRE(leaves.size() == 4);
  CHECK(leaves[0]->a.path.root == ir::FieldPath::Root::arguments);
  CHECK(leaves[0]->a.path.text == "arguments.a.b");
  REQUIRE(leaves[0]->a.path.segments.size() == 2);
  CHECK(leaves[0]->b.literal.string == "v");
  CHECK(leaves[1]->a.path.root == ir::FieldPath::Root::result);
  REQUIRE(leaves[1]->a.path.segments.size() == 3);
  CHECK(leaves[1]->a.path.segments[1].index == 0);
  CHECK(leaves[1]->op == ir::CompareOp::ne);
  CHECK(leaves[1]->b.literal.number == 3);
  CHECK(leaves[2]->kind == ir::Cond::Kind::exists);
  CHECK(leaves[2]->a.path.root == ir::FieldPath::Root::context);
  CHECK(leaves[3]->a.path.root == ir::FieldPath::Root::step);
  REQUIRE(leaves[3]->a.path.segments.size() == 1);
  CHECK(leaves[3]->a.path.segments[0].key == "status");
}

TEST_CASE("where binds tighter than | and or") {
  auto r = compile("forbid a | b where x == 1\n");
  const ir::Module& m = r.module;
  const ir::Pattern& top = pat(m, m.rules[0].statements[0].a);
  REQUIRE(top.kind == ir::Pattern::Kind::or_);
  CHECK(pat(m, top.a).kind == ir::Pattern::Kind::tool);
  CHECK(pat(m, top.b).kind == ir::Pattern::Kind::where);
  r = compile("forbid (a | b) where x == 1\n");
  CHECK(pat(r.module, r.module.rules[0].statements[0].a).kind == ir::Pattern::Kind::where);
  // `or` continues a condition when a condition follows, and ends it otherwise.
  r = compile("forbid a where x == 1 or y == 2\n");
  CHECK(pat(r.module, r.module.rules[0].statements[0].a).kind == ir::Pattern::Kind::where);
  r = compile("forbid a where x == 1 or b\n");
  CHECK(pat(r.module, r.module.rules[0].statements[0].a).kind == ir::Pattern::Kind::or_);
}

TEST_CASE("conditions: matches, contains, in, seen, variables") {
  auto r = compile(
      "approval where arguments.order_id == $o precedes refund_order where arguments.order_id == $o and "
      "arguments.note matches /x+/ and arguments.tags contains \"a\" and arguments.k in [\"a\", 2, true, null] "
      "and seen(arguments.order_id) and arguments.n contains $v\n");
  REQUIRE(r.diagnostics.empty());
  const ir::Rule& rule = r.module.rules[0];
  CHECK(rule.variables == std::vector<std::string>{"o", "v"});
  std::map<ir::Cond::Kind, int> kinds;
  for (const auto& c : r.module.conds) kinds[c.kind]++;
  CHECK(kinds[ir::Cond::Kind::matches] == 1);
  CHECK(kinds[ir::Cond::Kind::contains] == 2);
  CHECK(kinds[ir::Cond::Kind::in] == 1);
  CHECK(kinds[ir::Cond::Kind::seen] == 1);
  for (const auto& c : r.module.conds) {
    if (c.kind == ir::Cond::Kind::in) {
      REQUIRE(c.b.list.size() == 4);
      CHECK(c.b.list[1].kind == ir::Literal::Kind::number);
      CHECK(c.b.list[2].kind == ir::Literal::Kind::boolean);
      CHECK(c.b.list[3].kind == ir::Literal::Kind::null);
    }
    if (c.kind == ir::Cond::Kind::matches) CHECK(c.regex == "x+");
    if (c.kind == ir::Cond::Kind::compare) {
      CHECK(c.b.kind == ir::Operand::Kind::variable);
      CHECK(c.b.variable == "o");
    }
  }
}

TEST_CASE("seen(PATH, sources) lowers to a mask; an unknown source is an error") {
  auto r = compile("forbid a where not seen(arguments.x, user) and seen(arguments.y, result | context) and seen(arguments.z)\n");
  REQUIRE(r.diagnostics.empty());
  std::vector<std::uint8_t> masks;
  for (const auto& c : r.module.conds)
    if (c.kind == ir::Cond::Kind::seen) masks.push_back(c.sources);
  CHECK(masks == std::vector<std::uint8_t>{ir::kSeenUser, ir::kSeenResult | ir::kSeenContext, ir::kSeenAll});
  auto bad = compile("forbid a where seen(arguments.x, tool)\n");
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "E001");
  CHECK(bad.diagnostics[0].message == "expected a source of seen(...): user, result or context");
  auto empty = compile("forbid a where seen(arguments.x, )\n");
  REQUIRE(empty.diagnostics.size() == 1);
  CHECK(empty.diagnostics[0].message == "expected a source of seen(...): user, result or context");
}

TEST_CASE("scopes: bare blocks give one rule each; a named rule holds its block") {
  auto r = compile(
      "between login and logout:\n    db_write at most 3\n    forbid drop\n"
      "rule r [critical]:\n    after (login where arguments.admin == true) until logout:\n        forbid a\n        b at most 1\n"
      "    message \"m\"\n    tag x, y\n"
      "before approval: forbid refund_order\n");
  INFO(diags("x"));
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.module.rules.size() == 4);
  CHECK(r.module.rules[0].name == "between login and logout: db_write at most 3");
  CHECK(r.module.rules[0].scope.kind == ir::ScopeKind::between);
  CHECK(r.module.rules[1].name == "between login and logout: forbid drop");
  const ir::Rule& named = r.module.rules[2];
  CHECK(named.name == "r");
  CHECK(named.severity == RuleSeverity::critical);
  CHECK(named.scope.kind == ir::ScopeKind::after_until);
  CHECK(named.scope.text == "after (login where arguments.admin == true) until logout");
  CHECK(named.statements.size() == 2);
  CHECK(named.message == "m");
  CHECK(named.tags == std::vector<std::string>{"x", "y"});
  CHECK(r.module.rules[3].scope.kind == ir::ScopeKind::before);
  CHECK(pat(r.module, r.module.rules[3].scope.r).kind == ir::Pattern::Kind::step_type);
}

TEST_CASE("workflow, catalog, ignoring") {
  auto r = compile("workflow \"w\"\ncatalog \"c/t.json\"\napproval immediately precedes refund ignoring assistant_message\n");
  REQUIRE(r.diagnostics.empty());
  CHECK(r.module.workflow == "w");
  CHECK(r.module.catalog == "c/t.json");
  CHECK(r.module.rules[0].statements[0].ignoring != ir::kNone);
}

TEST_CASE("expect lowers to PATH nodes") {
  auto r = compile("expect (a -> b | c) -> {d, e}? -> f* -> g+\n");
  REQUIRE(r.diagnostics.empty());
  const ir::Module& m = r.module;
  const ir::PathExpr& root = m.paths.at(m.rules[0].statements[0].path);
  REQUIRE(root.kind == ir::PathExpr::Kind::seq);
  REQUIRE(root.children.size() == 4);
  CHECK(m.paths[root.children[0]].kind == ir::PathExpr::Kind::alt);
  CHECK(m.paths[root.children[1]].kind == ir::PathExpr::Kind::optional);
  CHECK(m.paths[m.paths[root.children[1]].children[0]].kind == ir::PathExpr::Kind::all_of);
  CHECK(m.paths[root.children[2]].kind == ir::PathExpr::Kind::star);
  CHECK(m.paths[root.children[3]].kind == ir::PathExpr::Kind::plus);
}

TEST_CASE("parse_path_expression appends to a module") {
  ir::Module m;
  std::vector<Diagnostic> d;
  ir::Id id = language::parse_path_expression(Source("path", "Customer_Get -> (order_list | order_search)"), m, d);
  REQUIRE(d.empty());
  REQUIRE(id != ir::kNone);
  CHECK(m.paths[id].kind == ir::PathExpr::Kind::seq);
  bool found = false;
  for (const auto& p : m.patterns) found |= p.name == "customer_get";
  CHECK(found);
  ir::Id bad = language::parse_path_expression(Source("path", "a -> -> b"), m, d);
  CHECK(bad == ir::kNone);
  REQUIRE(d.size() == 1);
  CHECK(d[0].code == "E001");
}

TEST_CASE("dump_ir is stable and readable") {
  auto r = compile("forbid a | b\n");
  std::string dump = language::dump_ir(r.module);
  CHECK(dump ==
        "case_sensitive false\n"
        "p0 = tool \"a\"\n"
        "p1 = tool \"b\"\n"
        "p2 = or p0 p1\n"
        "rule \"forbid a | b\" [error]\n"
        "  scope global\n"
        "  forbid a=p2  # forbid a | b\n");
  CHECK(r.ast_dump.find("statement @1: forbid a | b") != std::string::npos);
}

TEST_CASE("hostile: 100 000 nested parentheses give a diagnostic, not a crash") {
  std::string text = "forbid " + std::string(100000, '(') + "x" + std::string(100000, ')') + "\n";
  text += "forbid x where " + std::string(100000, '(') + "a == 1" + std::string(100000, ')') + "\n";
  text += "expect " + std::string(100000, '{') + "a" + std::string(100000, '}') + "\n";
  auto r = compile(text);
  REQUIRE(r.diagnostics.size() == 3);
  for (const auto& d : r.diagnostics) CHECK(d.code == "E010");
}

// Refused before it is parsed: one diagnostic, none from the 2.6 million statements in it.
TEST_CASE("hostile: a 50 MB file is refused cleanly") {
  std::string line = "order_get at most 1\n";
  std::string text;
  text.reserve(50u << 20);
  while (text.size() < (50u << 20)) text += line;
  auto r = compile(text);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E011");
  CHECK(r.module.rules.empty());
  CHECK(r.ast_dump.empty());
}

TEST_CASE("hostile: a large file below the limit is handled") {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "tool_" + std::to_string(i) + " at most " + std::to_string(i % 7) + "\n";
  text += "forbid " ;
  for (int i = 0; i < 100000; ++i) text += (i ? " | t" : "t") + std::to_string(i);
  text += "\n";
  auto r = compile(text);
  CHECK(r.diagnostics.empty());
  CHECK(r.module.rules.size() == 20001);
}

TEST_CASE("hostile: counts near 2^63") {
  auto r = compile("a at most 9223372036854775807\n");
  CHECK(r.diagnostics.empty());
  CHECK(r.module.rules[0].statements[0].hi == 9223372036854775807ull);
  r = compile("a at most 9223372036854775808\nb at least 18446744073709551616\nc between 1 and 99999999999999999999999999999\n");
  REQUIRE(r.diagnostics.size() == 3);
  for (const auto& d : r.diagnostics) CHECK(d.code == "E009");
  r = compile("forbid a where result.items[99999999999999999999].id exists\n");
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E009");
}

TEST_CASE("hostile: a PATH that would explode as an automaton just parses") {
  std::string path = "expect ";
  for (int i = 0; i < 40; ++i) path += (i ? " -> " : "") + std::string("(a | b)* -> {c, d, e, f}");
  auto r = compile(path + "\n");
  CHECK(r.diagnostics.empty());
  CHECK(r.module.rules.size() == 1);
}

TEST_CASE("all errors of a file are reported, sorted") {
  auto r = compile("forbid\nforbid x where arguments.a matches /(/\ngroup g = a\ngroup g = b\nforbid g\n");
  REQUIRE(r.diagnostics.size() == 3);
  CHECK(r.diagnostics[0].code == "E001");
  CHECK(r.diagnostics[1].code == "E008");
  CHECK(r.diagnostics[2].code == "E003");
}

TEST_CASE("hostile: groups nesting into each other are bounded, not a stack overflow") {
  std::string text;
  for (int i = 1; i <= 5000; ++i)
    text += "group g" + std::to_string(i) + " = not not not not (g" + std::to_string(i - 1) + ")\n";
  text += "group g0 = x\nforbid g5000\n";
  auto r = compile(text);
  bool e010 = false;
  for (const auto& d : r.diagnostics) e010 |= d.code == "E010";
  CHECK(e010);
  // Depth within the limit is fine.
  text.clear();
  for (int i = 1; i <= 20; ++i) text += "group g" + std::to_string(i) + " = not g" + std::to_string(i - 1) + "\n";
  text += "group g0 = x\nforbid g20\n";
  r = compile(text);
  CHECK(r.diagnostics.empty());
}

TEST_CASE("variables inside a group make every rule that uses it parametric") {
  auto r = compile("group by_order = order_get where arguments.order_id == $o\nby_order at most 1\nrule r: by_order at most 2\nforbid x\n");
  REQUIRE(r.diagnostics.empty());
  REQUIRE(r.module.rules.size() == 3);
  CHECK(r.module.rules[0].variables == std::vector<std::string>{"o"});
  CHECK(r.module.rules[1].variables == std::vector<std::string>{"o"});
  CHECK(r.module.rules[2].variables.empty());
}

TEST_CASE("unknown group: typos of a group name, never real-looking tool names") {
  auto r = compile("group lookup = a | b\ngroup auth = c\nforbid lookup\nforbid auth\nforbid lokup\nforbid lookups\nforbid oauth\n"
                   "forbid \"lokup\"\nforbid bookup\n");
  std::vector<std::string> flagged;
  for (const auto& d : r.diagnostics) {
    CHECK(d.code == "E002");
    flagged.push_back(r.module.rules.empty() ? "" : d.message);
  }
  REQUIRE(flagged.size() == 1);
  CHECK(flagged[0] == "unknown group 'lokup'");
}
