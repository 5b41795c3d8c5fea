// The decision log shared by guard and serve (run/decision_log.hpp): the line's fields and
// order, argument masking, the rules digest.
#include <doctest/doctest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "run/decision_log.hpp"
#include "trajcheck/run.hpp"

using namespace trajcheck;
using Json = nlohmann::json;

TEST_CASE("decision log: one line, every field, time now in UTC milliseconds") {
  detail::Decision d;
  d.decision_id = "t:1";
  d.trace_id = "t";
  d.call_id = "7";
  d.tool = "write_file";
  d.arguments = detail::masked_arguments(Json::parse(R"({"path":"/etc","n":[1,{"k":true}]})"), nullptr);
  d.verdict = "deny";
  d.mode = "enforce";
  d.forwarded = false;
  d.rule = "no_writes";
  d.message = "this agent may not change files";
  d.rules_digest = "sha256:00";
  const std::string line = detail::decision_line(detail::decision_record(d));
  REQUIRE(!line.empty());
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const Json j = Json::parse(line);
  CHECK(j.size() == 12);
  CHECK(j["arguments"] == Json::parse(R"({"path":"***","n":["***",{"k":"***"}]})"));
  CHECK(j["verdict"] == "deny");
  CHECK(j["forwarded"] == false);
  const std::string time = j["time"];
  REQUIRE(time.size() == 24);
  CHECK(time[10] == 'T');
  CHECK(time.back() == 'Z');
  // Text that is not UTF-8 is replaced, not a broken line.
  d.message = std::string("bad \xff");
  CHECK(Json::parse(detail::decision_line(detail::decision_record(d)))["message"] == "bad \xEF\xBF\xBD");
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  CHECK(detail::write_decision(f, detail::decision_record(d)));
  CHECK(std::ftell(f) > 0);
  std::fclose(f);
}

TEST_CASE("decision log: --mask-arg keys masked at any depth, the rest as called") {
  const std::vector<std::string> keys = {"token"};
  CHECK(detail::masked_arguments(Json::parse(R"({"a":1,"token":"s","o":{"token":{"x":1},"b":[2]}})"), &keys) ==
        Json::parse(R"({"a":1,"token":"***","o":{"token":"***","b":[2]}})"));
  CHECK(detail::masked_arguments(Json(), nullptr) == "***");
}

TEST_CASE("decision log: the rules digest follows the files' texts and their order") {
  auto digest = [](std::vector<std::pair<std::string, std::string>> files) {
    std::vector<Source> s;
    for (auto& [name, text] : files) s.emplace_back(name, text);
    return rules_digest(compile_rule_set(std::move(s)));
  };
  const std::string one = digest({{"a.rules", "forbid x\n"}});
  CHECK(one.rfind("sha256:", 0) == 0);
  CHECK(one.size() == 7 + 64);
  CHECK(digest({{"b.rules", "forbid x\n"}}) == one);  // names do not count, texts do
  CHECK(digest({{"a.rules", "forbid y\n"}}) != one);
  // Each text is preceded by its length: moving a line between files changes the digest.
  CHECK(digest({{"a.rules", "forbid x\n"}, {"b.rules", "forbid y\n"}}) !=
        digest({{"a.rules", "forbid x\nforbid y\n"}, {"b.rules", ""}}));
}
