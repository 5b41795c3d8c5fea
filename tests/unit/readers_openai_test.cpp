#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "readers/json_util.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

TEST_CASE("openai: tool calls join their results by tool_call_id") {
  ReadResult r = read_file("formats/openai.json");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "case_17");
  CHECK(t.metadata() == R"({"id":"case_17","reward":0.0})");
  // system dropped; user, call, assistant text + 2 calls, assistant, user, call, assistant
  REQUIRE(t.steps().size() == 9);
  std::vector<StepType> types;
  for (const Step& s : t.steps()) types.push_back(s.type);
  CHECK(types == std::vector<StepType>{StepType::user_message, StepType::tool_call, StepType::assistant_message,
                                       StepType::tool_call, StepType::tool_call, StepType::assistant_message,
                                       StepType::user_message, StepType::tool_call, StepType::assistant_message});
  CHECK(tool_of(t, 1) == "find_user_id_by_name_zip");
  CHECK(args_of(t, 1) == R"({"first_name":"Ana","last_name":"Silva","zip":"94110"})");
  CHECK(result_of(t, 1) == R"("ana_silva_4410")");
  CHECK(t.steps()[1].status == StepStatus::ok);

  // Results arrive in the other order; each still joins its own call.
  CHECK(id_of(t, 3) == "call_b1");
  CHECK(result_of(t, 3).find(R"("status":"pending")") != std::string::npos);
  CHECK(id_of(t, 4) == "call_b2");
  CHECK(result_of(t, 4) == R"({"name":{"first_name":"Ana","last_name":"Silva"},"orders":["#W1234567"]})");
  // Calls of one assistant message share its turn; the text step too.
  CHECK(t.steps()[2].turn == t.steps()[3].turn);
  CHECK(t.steps()[3].turn == t.steps()[4].turn);
  CHECK(t.steps()[1].turn != t.steps()[3].turn);

  // An empty assistant text makes no assistant_message step.
  CHECK(t.steps()[7].type == StepType::tool_call);
  CHECK(t.steps()[7].status == StepStatus::ok);  // no pattern given
}

TEST_CASE("openai: function.arguments that are not JSON are kept raw, flagged and warned about") {
  ReadResult r = read_file("formats/openai.json");
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  const Step& s = t.steps()[4];
  CHECK(tool_of(t, 4) == "get_user_details");
  CHECK(t.text(s.raw_tool) == "Get_User_Details");
  CHECK(s.arguments_invalid);
  CHECK(args_of(t, 4) == R"("{\"user_id\": \"ana_silva_4410\"")");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("formats/openai.json:13:99: warning: arguments of 'Get_User_Details' are not valid JSON") !=
        std::string::npos);
  CHECK(r.warnings[0].find("kept as a string") != std::string::npos);
}

TEST_CASE("openai: error patterns over result text set status") {
  NormalizeOptions opts;
  opts.error_patterns = {"^Error"};
  ReadResult r = read_file("formats/openai.json", opts);
  const Trajectory& t = r.traces[0];
  CHECK(t.steps()[7].status == StepStatus::error);
  CHECK(result_of(t, 7) == R"("Error: non-pending order cannot be cancelled")");
  CHECK(t.steps()[1].status == StepStatus::ok);
}

TEST_CASE("openai: a bare array of messages; content parts; legacy function_call") {
  ReadResult r = read_text(R"([
    {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"http://x/a.png"}}]},
    {"role":"assistant","content":null,"function_call":{"name":"Describe_Image","arguments":"{\"detail\":\"high\"}"}},
    {"role":"function","name":"Describe_Image","content":"a cat"},
    {"role":"assistant","content":"It is a cat.","name":"helper"}])");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "mem:1");
  REQUIRE(t.steps().size() == 3);
  CHECK(content_of(t, 0) == "look");
  CHECK(extra_of(t, 0) == R"({"content_blocks":[{"type":"image_url","image_url":{"url":"http://x/a.png"}}]})");
  CHECK(tool_of(t, 1) == "describe_image");
  CHECK(args_of(t, 1) == R"({"detail":"high"})");
  CHECK(result_of(t, 1) == R"("a cat")");
  CHECK(extra_of(t, 2) == R"({"name":"helper"})");
}

TEST_CASE("openai: a tool result with no call is kept as a call step, with a warning") {
  ReadResult r = read_file("bad/orphan_result.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  REQUIRE(t.steps().size() == 3);
  CHECK(t.steps()[1].type == StepType::tool_call);
  CHECK(tool_of(t, 1) == "order_get");
  CHECK(id_of(t, 1) == "call_x");
  CHECK(t.steps()[1].arguments.empty());
  CHECK(result_of(t, 1) == R"({"status":"shipped"})");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("orphan_result.jsonl:1:42: warning: tool result for call 'call_x' matches no earlier tool call") !=
        std::string::npos);
}

TEST_CASE("openai: a call with no result is fine") {
  ReadResult r = read_file("bad/call_without_result.jsonl");
  REQUIRE(r.rejected == 0);
  CHECK(r.warnings.empty());
  const Trajectory& t = r.traces[0];
  REQUIRE(t.steps().size() == 2);
  CHECK(tool_of(t, 1) == "cancel_order");
  CHECK(t.steps()[1].result.empty());
  CHECK(t.steps()[1].status == StepStatus::ok);
}

TEST_CASE("tau-bench: every record reads, every result joins its call, tool names are the retail tools") {
  ReadResult names = read_file("tau-bench-retail/tool_names.json");
  REQUIRE(names.traces.size() == 1);
  std::set<std::string> known;
  for (std::size_t i = 0; i < names.traces[0].steps().size(); ++i) known.insert(tool_of(names.traces[0], i));
  CHECK(known.size() == 16);

  NormalizeOptions opts;
  opts.error_patterns = {"^Error"};
  ReadResult r = read_file("tau-bench-retail/trajectories.json", opts);
  CHECK(r.records == 5);
  CHECK(r.rejected == 0);
  CHECK(r.warnings.empty());
  REQUIRE(r.traces.size() == 5);
  std::vector<std::string> ids;
  std::size_t calls = 0, errors = 0;
  for (const Trajectory& t : r.traces) {
    ids.emplace_back(t.trace_id());
    CHECK(t.metadata().find(R"("reward":)") != std::string_view::npos);
    CHECK(t.metadata().find(R"("info":{"task":)") != std::string_view::npos);
    for (std::size_t i = 0; i < t.steps().size(); ++i) {
      const Step& s = t.steps()[i];
      if (s.type != StepType::tool_call) continue;
      ++calls;
      CAPTURE(tool_of(t, i));
      CHECK(known.count(tool_of(t, i)) == 1);
      CHECK(!s.result.empty());       // joined
      CHECK(!s.arguments_invalid);
      if (s.status == StepStatus::error) {
        ++errors;
        CHECK(result_of(t, i).rfind("\"Error", 0) == 0);
      }
    }
  }
  CHECK(ids == std::vector<std::string>{"0", "1", "8", "2", "3"});
  CHECK(calls > 20);
  CHECK(errors >= 1);
  // tau-bench results that are JSON text are stored parsed: result.order_id is reachable.
  bool parsed_order = false;
  for (const Trajectory& t : r.traces)
    for (std::size_t i = 0; i < t.steps().size(); ++i)
      if (tool_of(t, i) == "get_order_details" && result_of(t, i).rfind("{\"order_id\":", 0) == 0) parsed_order = true;
  CHECK(parsed_order);
}

TEST_CASE("openai: message shape errors") {
  ReadResult r = read_text(R"({"messages":[{"content":"no role"}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "message has no \"role\"");
  CHECK(r.errors[0].where.column == 14);

  r = read_text(R"({"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}]})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "tool call has no function name");

  r = read_text(R"({"messages":{"role":"user"}})");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "\"messages\" must be an array of messages");
  CHECK(r.errors[0].where.column == 13);
}

TEST_CASE("openai: arguments written before the name still warn with the tool's name") {
  ReadResult r = read_text(R"([{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{bad","name":"Lookup"}}]}])");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rfind("mem:1:70: warning: arguments of 'Lookup' are not valid JSON", 0) == 0);
  CHECK(args_of(r.traces[0], 0) == R"("{bad")");
}

// Every unmatched result has a warning at its own line and column, found from one index of
// the record's newlines (not a scan from the record's start per warning).
TEST_CASE("openai: many unmatched tool results, each warned about at its position") {
  constexpr int kResults = 3000;
  std::string text = "[";
  for (int i = 0; i < kResults; ++i)
    text += fmt::format("{}\n  {{\"role\": \"tool\", \"tool_call_id\": \"c{}\", \"content\": \"x\"}}", i ? "," : "", i);
  text += "]";
  ReadResult r = read_text(text);
  REQUIRE(r.rejected == 0);
  REQUIRE(r.warnings.size() == kResults);
  for (int i : {0, 1, 1234, kResults - 1})
    CHECK(r.warnings[i] == fmt::format("mem:{}:3: warning: tool result for call 'c{}' matches no earlier tool call; "
                                       "kept as a tool_call step without arguments", i + 2, i));
}

TEST_CASE("LineIndex places offsets, in any order, as locate() does, reading the text once") {
  std::string text = "ab\n\ncd\r\nefg\n";
  for (int i = 0; i < 500; ++i) text += i % 7 ? "xy" : "\n";
  const RecordOrigin origin{"f", 5, 9, 0};
  detail::LineIndex index;
  std::vector<std::size_t> offsets;
  for (std::size_t off = 0; off <= text.size() + 2; ++off) offsets.push_back(off);
  std::reverse(offsets.begin(), offsets.end());
  std::rotate(offsets.begin(), offsets.begin() + offsets.size() / 3, offsets.end());
  for (std::size_t off : offsets) {
    CAPTURE(off);
    const RecordOrigin want = detail::locate(origin, text, off), got = index.locate(origin, text, off);
    CHECK(got.line == want.line);
    CHECK(got.column == want.column);
  }
  CHECK(index.bytes_scanned() == text.size());
}
