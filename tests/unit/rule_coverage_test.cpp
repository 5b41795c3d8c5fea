// Coverage of rules by traces (checker/coverage.hpp, `trajcheck test --coverage`): statements
// of a rule checked one by one, and the positions and transitions of an `expect` automaton a
// trace takes, compared with what the checker itself decides on the same traces.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "checker/coverage.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using trajcheck::testing::TraceBuilder;

namespace {

const char* kCoverageRules = R"(workflow "cov"

rule two [error]:
    forbid delete_*
    forbid drop_* where arguments.force == true

rule path [warning]:
    expect (lookup -> list | search)? -> get* -> refund

rule scoped:
    after start:
        expect a -> b

rule per_order:
    forbid refund where arguments.order_id == $o and arguments.amount > 100
    lookup where arguments.order_id == $o precedes refund where arguments.order_id == $o
    forbid wipe
)";

struct CovFixture {
  Source source{"cov.rules", kCoverageRules};
  detail::CoverageProbe probe{source, CompileOptions{}};
};

testing::Trace calls(const std::vector<std::string>& tools) {
  TraceBuilder b;
  for (const std::string& t : tools) b.call(t, t == "drop_table" ? R"({"force":true})" : "");
  return b.build();
}

// The transitions of statement (r, k) taken on a trace, as "from>to" (1-based, s/e: start/end).
std::vector<std::string> taken(CovFixture& f, const testing::Trace& t, std::uint32_t r, std::uint32_t k) {
  detail::TraceCoverage tc;
  f.probe.observe(t, "", tc);
  std::vector<std::string> out;
  const auto& tr = f.probe.statements()[r][k].transitions;
  for (std::size_t e = 0; e < tr.size(); ++e) {
    if (!tc.taken[r][k][e]) continue;
    auto name = [](std::uint32_t p) {
      return p == detail::kPathStart ? std::string("s") : p == detail::kPathEnd ? std::string("e") : std::to_string(p + 1);
    };
    out.push_back(name(tr[e].first) + ">" + name(tr[e].second));
  }
  return out;
}

}  // namespace

TEST_CASE("the statements and automata a probe follows") {
  CovFixture f;
  REQUIRE(f.probe.ok());
  const auto& st = f.probe.statements();
  REQUIRE(st.size() == 4);
  REQUIRE(st[0].size() == 2);
  CHECK(st[0][0].split);
  CHECK(st[0][1].split);
  CHECK_FALSE(st[0][0].path);
  REQUIRE(st[1].size() == 1);
  CHECK_FALSE(st[1][0].split);  // one statement: the rule's own verdict is the statement's
  CHECK(st[1][0].path);
  CHECK(st[1][0].atoms == std::vector<std::string>{"lookup", "list", "search", "get", "refund"});
  // start->lookup, start->search, start->get, start->refund; lookup->list; list->get, list->refund;
  // search->get, search->refund; get->get, get->refund; refund->end.
  CHECK(st[1][0].transitions.size() == 12);
  CHECK(st[2][0].is_expect);
  CHECK_FALSE(st[2][0].path);  // scoped: not followed
  CHECK(f.probe.scoped(2));
  CHECK_FALSE(f.probe.parametric(0));
  CHECK(f.probe.parametric(3));
  REQUIRE(st[3].size() == 3);
  CHECK(st[3][0].split);
  CHECK(st[3][1].split);
  CHECK_FALSE(st[3][2].split);  // binds nothing: alone it would not be the rule's statement
}

TEST_CASE("each statement of a parametric rule, in its own slices") {
  CovFixture f;
  detail::TraceCoverage tc;
  TraceBuilder big;
  big.call("lookup", R"({"order_id":"o1"})").call("refund", R"({"order_id":"o1","amount":500})");
  f.probe.observe(big.build(), "", tc);
  CHECK(tc.violated[3] == std::vector<std::uint8_t>{1, 0, 0});
  TraceBuilder unread;
  unread.call("lookup", R"({"order_id":"o1"})").call("refund", R"({"order_id":"o2","amount":5})");
  f.probe.observe(unread.build(), "", tc);
  CHECK(tc.violated[3] == std::vector<std::uint8_t>{0, 1, 0});
}

TEST_CASE("each statement's own verdict") {
  CovFixture f;
  detail::TraceCoverage tc;
  f.probe.observe(calls({"delete_user"}), "", tc);
  CHECK(tc.violated[0] == std::vector<std::uint8_t>{1, 0});
  f.probe.observe(calls({"drop_table"}), "", tc);
  CHECK(tc.violated[0] == std::vector<std::uint8_t>{0, 1});
  f.probe.observe(calls({"get"}), "", tc);
  CHECK(tc.violated[0] == std::vector<std::uint8_t>{0, 0});
}

TEST_CASE("positions and transitions taken by a trace") {
  CovFixture f;
  // lookup -> list -> get -> get -> refund, accepted.
  CHECK(taken(f, calls({"lookup", "list", "get", "get", "refund"}), 1, 0) ==
        std::vector<std::string>{"s>1", "1>2", "2>4", "4>4", "4>5", "5>e"});
  // The optional part skipped, no repeat.
  CHECK(taken(f, calls({"other", "refund"}), 1, 0) == std::vector<std::string>{"s>5", "5>e"});
  // A call no word continues with: the walk stops there, as the checker's does; no end taken.
  CHECK(taken(f, calls({"search", "lookup", "refund"}), 1, 0) == std::vector<std::string>{"s>3"});
  // Ended early (not accepted): the transitions taken, but not the exit.
  CHECK(taken(f, calls({"search", "get"}), 1, 0) == std::vector<std::string>{"s>3", "3>4"});
  detail::TraceCoverage tc;
  f.probe.observe(calls({"search", "get"}), "", tc);
  CHECK(tc.reached[1][0] == std::vector<std::uint8_t>{0, 0, 1, 1, 0});
}

TEST_CASE("a rules text that does not compile gives a probe that is not ok") {
  detail::CoverageProbe p(Source("bad.rules", "rule r:\n    forbid (\n"), CompileOptions{});
  CHECK_FALSE(p.ok());
  CHECK(p.statements().empty());
}
