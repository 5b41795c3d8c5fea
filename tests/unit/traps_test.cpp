// The documented traps of the language are warned (W009 a glob-looking name before a PATH's
// `*`/`?`, W010 `where` after an alternation, W011 a `where` path no step has): once per
// place, with the fix, and never for the spellings that say what they mean.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "language/frontend.hpp"

using namespace trajcheck;

namespace {

std::vector<Diagnostic> traps_lint(const std::string& text) {
  return language::parse_rules(Source("t.rules", text)).diagnostics;
}

std::vector<std::string> traps_codes(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diags) out.push_back(d.code);
  return out;
}

using Codes = std::vector<std::string>;

}  // namespace

TEST_CASE("W009: a name ending in a separator before `*` or `?` in a PATH") {
  auto d = traps_lint("expect search_* -> book_*\n");
  REQUIRE(traps_codes(d) == Codes{"W009", "W009"});
  CHECK(d[0].range.begin == 7);
  CHECK(d[0].range.end == 15);  // `search_*`, the operator included
  CHECK(d[0].message.find("'search_*' is the tool 'search_' repeated") != std::string::npos);
  REQUIRE(d[0].notes.size() == 1);
  CHECK(d[0].notes[0].message.find("`group search_any = search_*`") != std::string::npos);
  CHECK(traps_codes(traps_lint("expect a -> mcp__github__?\n")) == Codes{"W009"});
  CHECK(traps_codes(traps_lint("expect exactly functions.* -> b\n")) == Codes{"W009"});
  // What says what it means: apart, in parentheses, `+`, a whole name, a group, a quoted name,
  // a glob outside a PATH.
  CHECK(traps_lint("expect search_ * -> (book_)* -> book_+\n").empty());
  CHECK(traps_lint("expect login -> search* -> refund_order? -> log*\n").empty());
  CHECK(traps_lint("group search_ = search_flights | search_hotels\nexpect search_* -> b\n").empty());
  CHECK(traps_lint("expect \"search_\"* -> b\n").empty());
  CHECK(traps_lint("forbid search_*\nsearch_* at most 2\n").empty());
}

TEST_CASE("W009 in an expected PATH of score and eval (parse_path_expression)") {
  ir::Module m;
  std::vector<Diagnostic> d;
  ir::Id root = language::parse_path_expression(Source("expected.path", "search_* -> book"), m, d);
  CHECK(root != ir::kNone);  // a warning, not an error: the PATH still means what it says
  CHECK(traps_codes(d) == Codes{"W009"});
}

TEST_CASE("fmt writes the repetition apart, so its output never warns and keeps the IR") {
  std::vector<Diagnostic> d;
  std::string out = language::format_rules(Source("t.rules", "expect search_*->book_? -> log*\n"), d);
  CHECK(out == "expect search_ * -> book_ ? -> log*\n");
  CHECK(traps_lint(out).empty());
  auto before = language::parse_rules(Source("t.rules", "expect search_*->book_? -> log*\n"));
  auto after = language::parse_rules(Source("t.rules", out));
  CHECK(language::dump_ir(before.module) == language::dump_ir(after.module));
}

TEST_CASE("W010: `where` after an alternation conditions the last alternative only") {
  auto d = traps_lint("forbid web_fetch | http_request where arguments.url matches /x/\n");
  REQUIRE(traps_codes(d) == Codes{"W010"});
  CHECK(d[0].range.begin == 32);  // at `where`
  REQUIRE(d[0].notes.size() == 1);
  CHECK(d[0].notes[0].message ==
        "to condition every alternative, write `(web_fetch | http_request) where arguments.url matches /x/`; to keep "
        "this meaning without the warning, write `web_fetch | (http_request where arguments.url matches /x/)`");
  CHECK(traps_codes(traps_lint("forbid a or b where arguments.x == 1\n")) == Codes{"W010"});
  CHECK(traps_codes(traps_lint("expect a | b where arguments.x == 1\n")) == Codes{"W010"});
  CHECK(traps_lint("forbid (a | b) where arguments.x == 1\n").empty());
  CHECK(traps_lint("forbid a | (b where arguments.x == 1)\n").empty());
  CHECK(traps_lint("forbid a where arguments.x == 1 | b where arguments.y == 2\n").empty());
  CHECK(traps_lint("forbid a where arguments.x == 1 | b\n").empty());
}

TEST_CASE("W010 in a group used many times is reported once, at the group") {
  auto d = traps_lint("group g = a | b where arguments.x == 1\nforbid g\ng at most 1\nafter g: forbid c\n"
                      "expect g -> c\n");
  REQUIRE(traps_codes(d) == Codes{"W010"});
  CHECK(d[0].range.begin == 16);
}

TEST_CASE("W011: a `where` path that no step has") {
  auto d = traps_lint("refund_order where amount > 100 precedes final_answer\n");
  REQUIRE(traps_codes(d) == Codes{"W011"});
  CHECK(d[0].range.begin == 19);
  CHECK(d[0].range.end == 25);
  CHECK(d[0].message.find("did you mean 'arguments.amount'?") != std::string::npos);
  auto near = traps_lint("forbid a where stauts == \"error\" or seen(order_id)\n");
  REQUIRE(traps_codes(near) == Codes{"W011", "W011"});
  CHECK(near[0].message.find("did you mean 'status'?") != std::string::npos);
  CHECK(near[1].message.find("did you mean 'arguments.order_id'?") != std::string::npos);
  CHECK(traps_codes(traps_lint("forbid a where arguments.x == limit.max\n")) == Codes{"W011"});
  // Tool calls through groups, `|`, `failed`, `any` and PATH atoms; not approvals or steps,
  // whose data are fields of the step.
  CHECK(traps_codes(traps_lint("group g = a | failed b*\nforbid g where amount > 1\n")) == Codes{"W011"});
  CHECK(traps_codes(traps_lint("forbid any where amount > 1\n")) == Codes{"W011"});
  CHECK(traps_codes(traps_lint("expect a -> b where amount > 1\n")) == Codes{"W011"});
  CHECK(traps_lint("approval where order_id == $o precedes refund_order where arguments.order_id == $o\n").empty());
  CHECK(traps_lint("forbid step where amount > 1\nforbid (not a) where amount > 1\n").empty());
  CHECK(traps_codes(traps_lint("forbid not a where amount > 1\n")) == Codes{"W011"});  // not (a where …)
  CHECK(traps_lint("group g = a | approval\nforbid g where order_id == \"x\"\n").empty());
  // A group cycle (E018) or a deep chain of groups is decided without recursing without end.
  std::string chain = "group g0 = a\n";
  for (int i = 1; i <= 3000; ++i)
    chain += "group g" + std::to_string(i) + " = g" + std::to_string(i - 1) + " | g" + std::to_string(i - 1) + "\n";
  CHECK(traps_codes(traps_lint(chain + "forbid g3000 where arguments.x == 1\n")).size() <= 1);
  auto cyc = traps_lint("group g = h | a\ngroup h = g\nforbid g where amount > 1\n");
  for (const Diagnostic& d : cyc) CHECK(d.code != "W011");
  CHECK(traps_lint("forbid a where type == \"tool_call\" and status == \"error\" and latency_ms > 5 and "
                   "decision == \"approved\" and tool_call_id == id and arguments.a == result.b and "
                   "context.user == fixture.user and args.x exists and valid(arguments)\n")
            .empty());
}
