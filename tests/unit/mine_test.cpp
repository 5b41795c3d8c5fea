// The miner against the checker: every mined rule, compiled and checked over the traces it
// was mined from, is violated on exactly the traces the miner counted as not holding, and
// (for the families whose activation the checker reports) activated on the same traces.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "trajcheck/mine.hpp"
#include "trajcheck/run.hpp"

using namespace trajcheck;

namespace {

std::string mine_test_trace(std::mt19937& rng, int id, int tools, bool with_turns) {
  std::uniform_int_distribution<int> len(0, 9), tool(0, tools - 1), coin(0, 3), val(0, 2);
  std::string s = "{\"trace_id\":\"t" + std::to_string(id) + "\",\"steps\":[";
  int n = len(rng), turn = 0;
  for (int i = 0; i < n; ++i) {
    if (i) s += ",";
    int kind = coin(rng);
    if (kind == 0 && coin(rng) == 0) {
      s += coin(rng) < 2 ? "{\"type\":\"approval\",\"decision\":\"approved\"" : "{\"type\":\"final_answer\",\"content\":\"y\"";
    } else if (kind == 0) {
      s += "{\"type\":\"assistant_message\",\"content\":\"x\"";
    } else {
      int t = tool(rng);
      s += "{\"type\":\"tool_call\",\"tool\":\"" + std::string(1, static_cast<char>('a' + t)) + "_tool\"";
      s += ",\"arguments\":{\"k\":" + std::to_string(val(rng)) + (val(rng) ? ",\"s\":\"v\"" : "") +
           ",\"id\":\"o" + std::to_string(val(rng)) + "\"}";
      if (coin(rng) != 0)
        s += ",\"result\":{\"order\":{\"id\":\"o" + std::to_string(val(rng)) + "\"},\"n\":" + std::to_string(val(rng)) + "}";
    }
    if (with_turns) {
      if (coin(rng) != 0) ++turn;
      s += ",\"turn\":" + std::to_string(turn);
    }
    s += "}";
  }
  return s + "]}";
}

void mine_test_against_checker(bool with_turns, unsigned seed) {
  std::mt19937 rng(seed);
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  std::vector<Trajectory> traces;
  Miner miner, first_half, second_half;
  for (int i = 0; i < 60; ++i) {
    Trajectory t(&table);
    std::string text = mine_test_trace(rng, i, 4, with_turns);
    ParseOutcome o = parser.parse_value(text, RecordOrigin{}, t);
    REQUIRE_MESSAGE(o.ok(), text);
    t.own();
    miner.add(t);
    (i % 2 ? second_half : first_half).add(t);
    traces.push_back(std::move(t));
  }
  MineOptions mo;
  mo.min_support = 0;
  mo.min_confidence = 0;
  mo.prune = false;
  std::vector<MinedRule> rules = miner.rules(mo);
  REQUIRE(rules.size() > 50);
  std::string text = format_mined_rules(rules, mo, miner.traces());
  // Miners of parts of a corpus merge into the miner of the whole.
  first_half.merge(second_half);
  CHECK(format_mined_rules(first_half.rules(mo), mo, first_half.traces()) == text);
  std::vector<Source> src;
  src.emplace_back("<mined>", text);
  RuleSetResult rs = compile_rule_set(std::move(src));
  REQUIRE_MESSAGE(rs.ok(), rs.format_diagnostics());
  REQUIRE(rs.rules->rules().size() == rules.size());
  RuleSetChecker checker(rs.rules);
  std::vector<std::uint64_t> violated(rules.size()), activated(rules.size());
  for (const Trajectory& t : traces) {
    const TraceVerdict& v = checker.check(t);
    if (std::getenv("MINE_DEBUG"))
      for (const RuleResult& r : v.results)
        if (rules[r.rule].statement == std::getenv("MINE_DEBUG")) {
          std::string js;
          write_normalized_json(t, js);
          MESSAGE(js << " -> " << int(r.status));
        }
    // A parametric rule has one entry per violated binding: count traces, not entries.
    std::vector<char> viol(rules.size(), 0), act(rules.size(), 0);
    for (const RuleResult& r : v.results) {
      if (r.status == VerdictStatus::violated) viol[r.rule] = 1;
      if (r.status != VerdictStatus::vacuous) act[r.rule] = 1;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) {
      violated[i] += viol[i];
      activated[i] += act[i];
    }
  }
  std::size_t families_seen = 0;
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const MinedRule& r = rules[i];
    mask |= 1u << static_cast<int>(r.family);
    CHECK_MESSAGE(violated[i] == r.counts.activated - r.counts.held, r.statement);
    if (r.family == MineFamily::precedes || r.family == MineFamily::response || r.family == MineFamily::chain ||
        r.family == MineFamily::excludes || r.family == MineFamily::flow)
      CHECK_MESSAGE(activated[i] == r.counts.activated, r.statement);
  }
  for (int f = 0; f < kMineFamilyCount; ++f) families_seen += (mask >> f) & 1u;
  CHECK(families_seen == kMineFamilyCount - 1);  // all but forbid, which needs a catalog
  CHECK(((mask >> static_cast<int>(MineFamily::flow)) & 1u) == 1u);
  bool symbol_rule = false;  // steps of other types are symbols of the order families
  for (const MinedRule& r : rules) symbol_rule = symbol_rule || r.statement.rfind("approval precedes", 0) == 0;
  CHECK(symbol_rule);
}

}  // namespace

TEST_CASE("mine: every mined rule holds exactly where check says it holds, without turns") {
  mine_test_against_checker(false, 1);
  mine_test_against_checker(false, 2);
}

TEST_CASE("mine: every mined rule holds exactly where check says it holds, with turns") {
  mine_test_against_checker(true, 3);
  mine_test_against_checker(true, 4);
  mine_test_against_checker(true, 5);
}

TEST_CASE("mine: a tool named like a step type, or with a control character, stays a tool") {
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  Miner miner;
  const char* text =
      R"({"trace_id":"1","steps":[{"type":"tool_call","tool":"approval"},{"type":"approval","decision":"approved"},)"
      R"({"type":"tool_call","tool":"\u0001approval"},{"type":"tool_call","tool":"refund"}]})";
  Trajectory t(&table);
  REQUIRE(parser.parse_value(text, RecordOrigin{}, t).ok());
  miner.add(t);
  MineOptions mo;
  mo.families = 1u << static_cast<int>(MineFamily::precedes);
  mo.prune = false;
  std::vector<std::string> got;
  for (const MinedRule& r : miner.rules(mo)) got.push_back(r.statement);
  CHECK(std::find(got.begin(), got.end(), "\"approval\" precedes approval") != got.end());
  CHECK(std::find(got.begin(), got.end(), "approval precedes \"\\u0001approval\"") != got.end());
  CHECK(std::find(got.begin(), got.end(), "approval precedes refund") != got.end());
  std::vector<Source> src;
  src.emplace_back("<mined>", format_mined_rules(miner.rules(mo), mo, miner.traces()));
  RuleSetResult rs = compile_rule_set(std::move(src));
  CHECK_MESSAGE(rs.ok(), rs.format_diagnostics());
}

TEST_CASE("mine: thresholds, pruning and ranking") {
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  Miner miner;
  const char* texts[] = {
      R"({"trace_id":"1","steps":[{"type":"tool_call","tool":"login"},{"type":"tool_call","tool":"read"},{"type":"tool_call","tool":"logout"}]})",
      R"({"trace_id":"2","steps":[{"type":"tool_call","tool":"login"},{"type":"tool_call","tool":"read"},{"type":"tool_call","tool":"logout"}]})",
      R"({"trace_id":"3","steps":[{"type":"tool_call","tool":"login"},{"type":"tool_call","tool":"logout"}]})",
  };
  for (const char* s : texts) {
    Trajectory t(&table);
    REQUIRE(parser.parse_value(s, RecordOrigin{}, t).ok());
    miner.add(t);
  }
  MineOptions mo;
  mo.families = (1u << static_cast<int>(MineFamily::precedes)) | (1u << static_cast<int>(MineFamily::chain));
  std::vector<MinedRule> rules = miner.rules(mo);
  std::vector<std::string> texts_out;
  for (const MinedRule& r : rules) texts_out.push_back(r.statement);
  // login precedes logout is implied by login precedes read? No: read is absent from trace 3.
  // login immediately precedes read (2/2) makes login precedes read redundant.
  CHECK(std::find(texts_out.begin(), texts_out.end(), "login precedes read") == texts_out.end());
  CHECK(std::find(texts_out.begin(), texts_out.end(), "login immediately precedes read ignoring not tool_call") !=
        texts_out.end());
  CHECK(std::find(texts_out.begin(), texts_out.end(), "login precedes logout") != texts_out.end());
  // read precedes logout holds on 2 of 3 activations: below confidence 1.
  CHECK(std::find(texts_out.begin(), texts_out.end(), "read precedes logout") == texts_out.end());
  mo.min_confidence = 0.6;
  rules = miner.rules(mo);
  bool found = false;
  // read immediately precedes logout holds wherever read precedes logout does: only the chain is kept.
  for (const MinedRule& r : rules) CHECK(r.statement != "read precedes logout");
  for (const MinedRule& r : rules)
    if (r.statement == "read immediately precedes logout ignoring not tool_call") {
      found = true;
      CHECK(r.counts.activated == 3);
      CHECK(r.counts.held == 2);
    }
  CHECK(found);
  // Ranked: confidence first.
  for (std::size_t i = 1; i < rules.size(); ++i)
    CHECK(rules[i - 1].counts.confidence() >= rules[i].counts.confidence());
  std::string error;
  std::uint32_t mask = 0;
  CHECK_FALSE(parse_mine_families("precedes,bogus", &mask, &error));
  CHECK(error.find("bogus") != std::string::npos);
  CHECK(mined_tool_name("order_get") == "order_get");
  CHECK(mined_tool_name("approval") == "\"approval\"");
  CHECK(mined_tool_name("forbid") == "\"forbid\"");
  CHECK(mined_tool_name("cancel order") == "\"cancel order\"");
}
