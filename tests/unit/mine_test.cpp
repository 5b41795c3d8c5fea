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
    if (kind == 0 && coin(rng) == 1) {  // user text naming some values (provenance)
      s += std::string("{\"type\":\"user_message\",\"content\":\"") + (val(rng) ? "see o1 and v" : "nothing") + "\"";
    } else if (kind == 0 && coin(rng) == 0) {
      s += coin(rng) < 2 ? "{\"type\":\"approval\",\"decision\":\"approved\"" : "{\"type\":\"final_answer\",\"content\":\"y\"";
    } else if (kind == 0) {
      s += "{\"type\":\"assistant_message\",\"content\":\"x\"";
    } else {
      int t = tool(rng);
      s += "{\"type\":\"tool_call\",\"tool\":\"" + std::string(1, static_cast<char>('a' + t)) + "_tool\"";
      s += ",\"arguments\":{\"k\":" + std::to_string(val(rng)) + (val(rng) ? ",\"s\":\"v\"" : "") +
           ",\"id\":\"o" + std::to_string(val(rng)) + "\"" +
           (coin(rng) == 0 ? ",\"to\":[\"o" + std::to_string(val(rng)) + "\"]" : "") + "}";  // arrays: seen() element-wise
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
  mo.max_p = 1;  // every excludes candidate, significant or not
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
  bool prov_held = false;  // some provenance candidate holds somewhere: user text is searched
  for (const MinedRule& r : rules) prov_held = prov_held || (r.family == MineFamily::provenance && r.counts.held > 0);
  CHECK(prov_held);
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

namespace {
Trajectory mine_parse(TraceParser& parser, ToolTable& table, const std::string& text) {
  Trajectory t(&table);
  ParseOutcome o = parser.parse_value(text, RecordOrigin{}, t);
  REQUIRE_MESSAGE(o.ok(), text);
  t.own();
  return t;
}
// A trace of task `task` calling `tools` in order.
std::string mine_task_trace(const std::string& task, int run, const std::vector<std::string>& tools) {
  std::string s = "{\"trace_id\":\"" + task + "-" + std::to_string(run) + "\",\"metadata\":{\"task\":\"" + task +
                  "\"},\"steps\":[";
  for (std::size_t i = 0; i < tools.size(); ++i) s += std::string(i ? "," : "") + "{\"type\":\"tool_call\",\"tool\":\"" + tools[i] + "\"}";
  return s + "]}";
}
const MinedRule* mine_find(const std::vector<MinedRule>& rules, const std::string& statement) {
  for (const MinedRule& r : rules)
    if (r.statement == statement) return &r;
  return nullptr;
}
}  // namespace

TEST_CASE("mine: grouped runs are one unit for the held-out estimate of only and the test of excludes") {
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  // Four tasks, five runs each: a and b always, c in task 3 only, d in task 4 only.
  const std::vector<std::pair<std::string, std::vector<std::string>>> tasks = {
      {"t1", {"a", "b"}}, {"t2", {"a", "b"}}, {"t3", {"a", "c"}}, {"t4", {"b", "d"}}};
  Miner by_trace, by_task;
  std::string error;
  REQUIRE(by_task.set_group_by("metadata.task", &error));
  CHECK(!by_task.set_group_by("steps.task", &error));
  CHECK(error.find("metadata.KEY") != std::string::npos);
  CHECK(!by_task.set_group_by("metadata.", &error));
  REQUIRE(by_task.set_group_by("metadata.task", &error));
  for (const auto& [task, tools] : tasks)
    for (int run = 0; run < 5; ++run) {
      Trajectory t = mine_parse(parser, table, mine_task_trace(task, run, tools));
      by_trace.add(t);
      by_task.add(t);
    }
  CHECK(by_task.groups() == 4);
  CHECK(by_task.ungrouped() == 0);
  CHECK(by_trace.groups() == 20);
  MineOptions mo;
  mo.families = (1u << static_cast<int>(MineFamily::only)) | (1u << static_cast<int>(MineFamily::excludes));
  mo.min_confidence = 0;
  mo.max_p = 1;
  // only: tasks 3 and 4 call a tool no other task calls, so the rule mined without them fails
  // on them: 2 of 4 groups held out. By trace, every tool has other traces calling it: 20/20.
  std::vector<MinedRule> g = by_task.rules(mo), t = by_trace.rules(mo);
  const MinedRule* og = mine_find(g, "only a | b | c | d");
  const MinedRule* ot = mine_find(t, "only a | b | c | d");
  REQUIRE(og);
  REQUIRE(ot);
  CHECK(og->held_out.held == 2);
  CHECK(og->held_out.activated == 4);
  CHECK(og->held_out_groups);
  CHECK(ot->held_out.held == 20);
  CHECK(!ot->held_out_groups);
  mo.min_confidence = 0.6;  // the held-out share decides too
  CHECK(mine_find(by_task.rules(mo), "only a | b | c | d") == nullptr);
  CHECK(mine_find(by_trace.rules(mo), "only a | b | c | d") != nullptr);
  // c excludes d: never together, but each is in one task of four. By task that is what
  // independence gives half the time (p = 0.75); by trace the 5 + 5 runs look like evidence.
  mo.min_confidence = 1;
  const MinedRule* eg = mine_find(g, "c excludes d");
  const MinedRule* et = mine_find(t, "c excludes d");
  REQUIRE(eg);
  REQUIRE(et);
  CHECK(eg->p_value == doctest::Approx(0.75));
  CHECK(et->p_value == doctest::Approx(15.0 * 14 * 13 * 12 * 11 / (20.0 * 19 * 18 * 17 * 16)));
  mo.max_p = 0.05;
  CHECK(mine_find(by_task.rules(mo), "c excludes d") == nullptr);
  CHECK(mine_find(by_trace.rules(mo), "c excludes d") == nullptr);  // p = 0.19 by trace too
  mo.min_confidence = 0.5;
  std::string text = format_mined_rules(by_task.rules(mo), mo, by_task.traces());
  CHECK(text.find("# only: support 20 (100.0%), confidence 1.000 (20/20), held out 0.500 (2/4 groups)\n") !=
        std::string::npos);
  // A trace without the group path is a group of its own, counted.
  Miner partial;
  REQUIRE(partial.set_group_by("metadata.task", &error));
  partial.add(mine_parse(parser, table, R"({"trace_id":"x","steps":[{"type":"tool_call","tool":"a"}]})"));
  partial.add(mine_parse(parser, table, R"({"trace_id":"y","steps":[{"type":"tool_call","tool":"a"}]})"));
  CHECK(partial.groups() == 2);
  CHECK(partial.ungrouped() == 2);
}

TEST_CASE("mine: provenance holds where each value is in earlier user text, as seen(…, user) says") {
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  Miner miner;
  const char* texts[] = {
      R"({"trace_id":"1","steps":[{"type":"user_message","content":"pay alice"},{"type":"tool_call","tool":"pay","arguments":{"to":"alice","n":1}}]})",
      R"({"trace_id":"2","steps":[{"type":"tool_call","tool":"pay","arguments":{"to":"bob"}},{"type":"user_message","content":"pay bob"}]})",
      R"({"trace_id":"3","steps":[{"type":"user_message","content":"pay carol"},{"type":"tool_call","tool":"pay","arguments":{"to":"carol"}},{"type":"tool_call","tool":"pay","arguments":{"n":2}}]})",
  };
  for (const char* s : texts) miner.add(mine_parse(parser, table, s));
  MineOptions mo;
  mo.families = 1u << static_cast<int>(MineFamily::provenance);
  mo.min_confidence = 0;
  std::vector<MinedRule> rules = miner.rules(mo);
  const MinedRule* to = mine_find(rules, "forbid pay where arguments.to exists and not seen(arguments.to, user)");
  const MinedRule* n = mine_find(rules, "forbid pay where arguments.n exists and not seen(arguments.n, user)");
  REQUIRE(to);
  REQUIRE(n);
  CHECK(to->counts.activated == 3);
  CHECK(to->counts.held == 2);  // bob was said after the call
  CHECK(n->counts.activated == 2);
  CHECK(n->counts.held == 0);   // numbers are never seen in user text
}

TEST_CASE("mine: values allow seen values and the constants of the traces mined, held out by group") {
  NormalizeOptions no;
  no.format = InputFormat::native;
  TraceParser parser(no);
  ToolTable table;
  Miner miner;
  std::string error;
  REQUIRE(miner.set_group_by("metadata.task", &error));
  const char* texts[] = {
      // task A: the payee said by the user; the fee a constant
      R"({"trace_id":"1","metadata":{"task":"A"},"steps":[{"type":"user_message","content":"pay alice"},{"type":"tool_call","tool":"pay","arguments":{"to":"alice","fee":"std"}}]})",
      // task B: the payee read in a result, the participants in the user's words and a result
      R"({"trace_id":"2","metadata":{"task":"B"},"steps":[{"type":"user_message","content":"and bob"},{"type":"tool_call","tool":"lookup","result":{"iban":"X1"}},{"type":"tool_call","tool":"pay","arguments":{"to":"X1","fee":"std","cc":["X1","bob"]}}]})",
      // task C, twice: a payee nobody named (a constant of task C alone)
      R"({"trace_id":"3","metadata":{"task":"C"},"steps":[{"type":"tool_call","tool":"pay","arguments":{"to":"carol","fee":"std"}}]})",
      R"({"trace_id":"4","metadata":{"task":"C"},"steps":[{"type":"tool_call","tool":"pay","arguments":{"to":"carol","fee":"std","cc":["dan"]}}]})",
  };
  for (const char* s : texts) miner.add(mine_parse(parser, table, s));
  MineOptions mo;
  mo.families = 1u << static_cast<int>(MineFamily::values);
  mo.min_confidence = 0;
  std::vector<MinedRule> rules = miner.rules(mo);
  const MinedRule* to =
      mine_find(rules, R"(forbid pay where arguments.to exists and not seen(arguments.to) and not (arguments.to in ["carol"]))");
  const MinedRule* fee =
      mine_find(rules, R"(forbid pay where arguments.fee exists and not seen(arguments.fee) and not (arguments.fee in ["std"]))");
  const MinedRule* cc = mine_find(rules, "forbid pay where arguments.cc exists and not seen(arguments.cc)");
  REQUIRE(to);
  REQUIRE(fee);
  REQUIRE(cc);
  CHECK(to->counts.activated == 4);
  CHECK(to->counts.held == 4);
  CHECK(to->held_out.activated == 3);  // groups
  CHECK(to->held_out.held == 2);       // "carol" is task C's alone
  CHECK(fee->held_out.held == 3);      // "std" is every task's
  CHECK(cc->counts.activated == 2);
  CHECK(cc->counts.held == 1);         // ["dan"]: an array not seen has no literal
  CHECK(cc->held_out.activated == 2);
  CHECK(cc->held_out.held == 1);
  // At confidence 1 only the allow-list every group keeps to is written.
  const std::string fee_rule = fee->statement;
  mo.min_confidence = 1;
  rules = miner.rules(mo);
  REQUIRE(rules.size() == 1);
  CHECK(rules[0].statement == fee_rule);
  // The rules as written: a payee nobody named is flagged, one read in a result is not.
  mo.min_confidence = 0;
  std::vector<Source> src;
  src.emplace_back("<mined>", format_mined_rules(miner.rules(mo), mo, miner.traces()));
  RuleSetResult rs = compile_rule_set(std::move(src));
  REQUIRE_MESSAGE(rs.ok(), rs.format_diagnostics());
  RuleSetChecker checker(rs.rules);
  auto violated = [&](const char* text) {
    std::size_t n = 0;
    for (const RuleResult& r : checker.check(mine_parse(parser, table, text)).results)
      n += r.status == VerdictStatus::violated;
    return n;
  };
  CHECK(violated(R"({"trace_id":"5","steps":[{"type":"tool_call","tool":"lookup","result":{"iban":"X2"}},{"type":"tool_call","tool":"pay","arguments":{"to":"X2","fee":"std","cc":["X2"]}}]})") == 0);
  CHECK(violated(R"({"trace_id":"6","steps":[{"type":"tool_call","tool":"pay","arguments":{"to":"eve","fee":"std"}}]})") == 1);
  CHECK(violated(R"({"trace_id":"7","steps":[{"type":"tool_call","tool":"pay","arguments":{"to":"carol","fee":"std","cc":["X2"]}}]})") == 1);
}
