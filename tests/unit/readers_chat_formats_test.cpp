// The chat-shaped formats beside OpenAI and Anthropic: AgentDojo and Inspect messages,
// Bedrock Converse, the OpenAI Responses API, Gemini and LangChain (fixtures in
// tests/data/formats/, sources in its README).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {

// The tool_call steps of a trace as "tool:status", in order.
std::string calls_of(const Trajectory& t) {
  std::string out;
  for (std::size_t i = 0; i < t.steps().size(); ++i)
    if (t.steps()[i].type == StepType::tool_call) {
      if (!out.empty()) out += ' ';
      out += tool_of(t, i) + (t.steps()[i].status == StepStatus::error ? ":error" : ":ok");
    }
  return out;
}

std::size_t nth_call(const Trajectory& t, std::size_t n) {
  for (std::size_t i = 0; i < t.steps().size(); ++i)
    if (t.steps()[i].type == StepType::tool_call && n-- == 0) return i;
  FAIL("no such call");
  return 0;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("agentdojo: a run file is one trace named by its task; calls by name and args; error classes") {
  ReadResult r = read_file("formats/agentdojo.json");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "example-model/banking/user_task_2/important_instructions/injection_task_5");
  CHECK(contains(std::string(t.metadata()), R"("suite_name":"banking")"));
  CHECK(contains(std::string(t.metadata()), R"("security":false)"));
  CHECK(calls_of(t) == "read_file:ok send_money:error update_scheduled_transaction:ok");
  std::size_t send = nth_call(t, 1);
  CHECK(id_of(t, send) == "call_02");
  CHECK(args_of(t, send) == R"({"recipient":"US133000000121212121212","amount":1000000,"subject":"Transfer","date":"2022-04-01"})");
  // The error is kept with its class; the tool message's copy of the call is not repeated.
  CHECK(extra_of(t, send) == R"({"error":"ValueError: Insufficient balance for this transaction.","error_class":"ValueError"})");
  CHECK(r.warnings.empty());
}

TEST_CASE("agentdojo: content blocks with \"content\", calls without ids joined by name in order") {
  ReadResult r = read_text(R"({"suite_name":"slack","user_task_id":"user_task_1","messages":[
    {"role":"user","content":[{"type":"text","content":"Who is in general?"}]},
    {"role":"assistant","content":[{"type":"text","content":"Checking."}],"tool_calls":[
      {"function":"get_users_in_channel","args":{"channel":"general"},"id":null,"placeholder_args":null},
      {"function":"get_users_in_channel","args":{"channel":"random"},"id":null,"placeholder_args":null}]},
    {"role":"tool","content":[{"type":"text","content":"Alice"}],"tool_call_id":null,"tool_call":{"function":"get_users_in_channel","args":{"channel":"general"},"id":null},"error":null},
    {"role":"tool","content":[{"type":"text","content":""}],"tool_call_id":null,"tool_call":{"function":"get_users_in_channel","args":{"channel":"random"},"id":null},"error":"KeyError: 'random'"}]})");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "slack/user_task_1");
  CHECK(content_of(t, 0) == "Who is in general?");
  CHECK(content_of(t, 1) == "Checking.");
  CHECK(calls_of(t) == "get_users_in_channel:ok get_users_in_channel:error");
  CHECK(result_of(t, 2) == R"("Alice")");
  CHECK(contains(extra_of(t, 3), R"("error_class":"KeyError")"));
  CHECK(r.warnings.empty());
}

TEST_CASE("inspect: arguments objects, the tool named in \"function\", error types as classes") {
  ReadResult r = read_file("formats/inspect.json");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  CHECK(calls_of(t) == "bash:ok bash:error");
  std::size_t first = nth_call(t, 0), second = nth_call(t, 1);
  CHECK(args_of(t, first) == R"({"cmd":"find /srv/app -name '*.py' | wc -l"})");
  CHECK(result_of(t, first) == R"("42\n")");
  CHECK(contains(extra_of(t, second), R"("error_class":"permission")"));
  // The assistant message's id stays on the call; the tool message's, beside it, is the result's.
  CHECK(contains(extra_of(t, second), R"("message_id":"jbeSKE4CLREJ6jPcjXqpWB")"));
  CHECK(contains(extra_of(t, second), R"("result_message_id":"5WMqzMHc8PZ4svqK7H3xCx")"));
  // Reasoning is a known block: kept, no warning.
  CHECK(contains(extra_of(t, 1), R"("content_blocks":[{"type":"reasoning")"));
  CHECK(r.warnings.empty());
}

TEST_CASE("bedrock: toolUse and toolResult blocks are calls and results, never dropped") {
  ReadResult r = read_file("formats/bedrock.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  const Trajectory& t = r.traces[0];
  CHECK(calls_of(t) == "top_song:ok top_song:error");
  std::size_t first = nth_call(t, 0), second = nth_call(t, 1);
  CHECK(id_of(t, first) == "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q");
  CHECK(args_of(t, first) == R"({"sign":"WZPZ"})");
  CHECK(result_of(t, first) == R"({"song":"Elemental Hotel","artist":"8 Storey Hike"})");
  CHECK(result_of(t, second) == R"("Station WZPA not found.")");
  CHECK(t.metadata() == R"({"modelId":"anthropic.claude-3-haiku-20240307-v1:0"})");  // "system" dropped
  // reasoningContent is known; citationLink is not: kept, with a located warning.
  REQUIRE(r.warnings.size() == 1);
  CHECK(contains(r.warnings[0], "bedrock.jsonl:1:1200: warning: content block of no known kind"));
  CHECK(contains(extra_of(t, t.steps().size() - 1), R"({"citationLink":{"url":"https://example.com"}})"));
  // The Converse response: its message, with stopReason, usage and metrics as metadata.
  const Trajectory& resp = r.traces[1];
  CHECK(calls_of(resp) == "top_song:ok");
  CHECK(contains(std::string(resp.metadata()), R"("metrics":{"latencyMs":1137})"));
}

TEST_CASE("gemini: functionResponse joins by id, else the first open call of that name") {
  ReadResult r = read_file("formats/gemini.json");
  REQUIRE(r.rejected == 0);
  const Trajectory& t = r.traces[0];
  CHECK(calls_of(t) == "set_light_values:ok play_music:error set_light_values:ok get_weather:ok");
  CHECK(result_of(t, nth_call(t, 0)) == R"({"result":{"brightness":25,"colorTemperature":"warm"}})");
  CHECK(result_of(t, nth_call(t, 2)) == R"({"result":{"brightness":10,"colorTemperature":"warm"}})");
  CHECK(result_of(t, nth_call(t, 1)) == R"({"error":"No speaker in this room."})");
  CHECK(id_of(t, nth_call(t, 3)) == "fc_2");
  CHECK(result_of(t, nth_call(t, 3)) == R"({"output":"12 °C, rain"})");
  // The thought summary is not the message's text; the part's signature stays on its call.
  CHECK(contains(extra_of(t, nth_call(t, 0)), R"("thoughtSignature":"CiwBVKhc7nX")"));
  CHECK(contains(extra_of(t, nth_call(t, 0)), R"({"text":"Setting the mood.","thought":true})"));
  CHECK(t.steps().back().type == StepType::assistant_message);
  CHECK(r.warnings.empty());
}

TEST_CASE("responses: item lists, response objects, built-in tools, approvals") {
  ReadResult r = read_file("formats/responses.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 3);
  const Trajectory& list = r.traces[0];
  CHECK(calls_of(list) == "get_weather:ok");
  std::size_t call = nth_call(list, 0);
  CHECK(id_of(list, call) == "call_12345xyz");
  CHECK(args_of(list, call) == R"({"location":"Paris, France"})");
  CHECK(result_of(list, call) == R"({"temperature_c":14,"sky":"cloudy"})");
  CHECK(content_of(list, list.steps().size() - 1) == "It is 14 °C and cloudy in Paris.");

  const Trajectory& resp = r.traces[1];
  CHECK(resp.trace_id() == "resp_67ccd3a9da748190");
  CHECK(resp.steps()[0].type == StepType::user_message);  // the request's input comes first
  CHECK(calls_of(resp) == "web_search:ok file_search:ok ask_question:ok read_wiki_structure:error computer:ok");
  CHECK(args_of(resp, nth_call(resp, 0)) == R"({"action":{"type":"search","query":"positive news today"}})");
  CHECK(contains(extra_of(resp, nth_call(resp, 3)), R"("error_class":"McpError")"));
  bool approval_request = false;
  for (const Step& s : resp.steps()) approval_request |= s.type == StepType::approval_request;
  CHECK(approval_request);
  CHECK(contains(std::string(resp.metadata()), R"("usage":{"input_tokens":328)"));

  const Trajectory& more = r.traces[2];
  CHECK(more.steps()[1].type == StepType::approval);
  CHECK(extra_of(more, 1) == R"({"decision":"approved","tool_call_id":"mcpr_682d498e"})");
  CHECK(args_of(more, 2) == R"x("print('hello world')")x");  // a custom tool's free-text input
  CHECK(result_of(more, 2) == R"("hello world")");
  REQUIRE(r.warnings.size() == 1);  // the screenshot output answers no call in its record
  CHECK(contains(r.warnings[0], "call 'call_nowhere' matches no earlier tool call"));
}

TEST_CASE("langchain: model_dump, messages_to_dict and LangGraph state") {
  ReadResult r = read_file("formats/langchain.jsonl");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 3);
  CHECK(calls_of(r.traces[0]) == "search:ok");
  CHECK(r.traces[0].steps()[0].type == StepType::user_message);
  CHECK(calls_of(r.traces[1]) == "multiply:ok add:error");
  CHECK(args_of(r.traces[1], nth_call(r.traces[1], 1)) == R"({"a":11,"b":49})");
  const Trajectory& state = r.traces[2];
  CHECK(calls_of(state) == "book_flight:ok");
  CHECK(state.metadata() == R"({"thread_id":"thread-7"})");
  CHECK(extra_of(state, 1) == R"({"message_id":"m2","result_message_id":"m3"})");
  CHECK(r.warnings.empty());
}

TEST_CASE("chat formats: unknown roles and block types warn; a tool list of OpenAI calls stays one") {
  ReadResult r = read_text(R"({"messages":[{"role":"critic","content":"too long"},
    {"role":"assistant","content":[{"type":"hologram","data":"x"},{"type":"text","text":"ok"}]}]})");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.warnings.size() == 2);
  CHECK(contains(r.warnings[0], "mem:1:14: warning: message role 'critic' is not a known role"));
  CHECK(contains(r.warnings[1], "content block of type 'hologram' is not a known kind; kept under content_blocks"));
  CHECK(contains(extra_of(r.traces[0], 1), R"({"content_blocks":[{"type":"hologram","data":"x"}]})"));

  r = read_text(R"([{"id":"c1","type":"function","function":{"name":"search","arguments":"{}"}}])");
  REQUIRE(r.rejected == 0);
  CHECK(calls_of(r.traces[0]) == "search:ok");
}

TEST_CASE("chat formats: forced formats read response records; the fast path agrees") {
  NormalizeOptions forced;
  forced.format = InputFormat::bedrock;
  ReadResult r = read_text(R"({"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}}})", forced);
  REQUIRE(r.rejected == 0);
  CHECK(content_of(r.traces[0], 0) == "hi");
  forced.format = InputFormat::gemini;
  r = read_text(R"({"trace_id":"x","steps":[]})", forced);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "chat record has no \"messages\" (or \"traj\") array");

  for (const char* file : {"formats/agentdojo.json", "formats/inspect.json", "formats/bedrock.jsonl", "formats/gemini.json",
                           "formats/responses.jsonl", "formats/langchain.jsonl"}) {
    NormalizeOptions slow;
    slow.dom_fast_path = false;
    ReadResult a = read_file(file), b = read_file(file, slow);
    CAPTURE(file);
    CHECK(a.normalized == b.normalized);
    CHECK(a.warnings == b.warnings);
  }
}

TEST_CASE("inspect log: one trace per sample and epoch, scores and metadata kept, calls timed") {
  ReadResult r = read_file("formats/inspect-log.json");
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  CHECK(r.traces[0].trace_id() == "1_epoch_1");
  CHECK(r.traces[1].trace_id() == "1_epoch_2");
  std::string meta(r.traces[1].metadata());
  CHECK(contains(meta, R"("scores":{"match":{"value":"I")"));
  CHECK(contains(meta, R"("difficulty":"easy")"));
  CHECK(contains(meta, R"("eval":{"eval_id":"hj8C8q8gxzHhwyCT67xh4L")"));
  CHECK(!contains(meta, "packages"));  // the header's configuration is about the whole eval
  CHECK(!contains(meta, "choices"));   // "output" repeats the last message
  CHECK(calls_of(r.traces[0]) == "bash:ok");
  CHECK(calls_of(r.traces[1]) == "bash:error");
  CHECK(contains(extra_of(r.traces[0], 1), R"("latency_ms":250,"started_at":"2025-07-05T09:59:42.000000-04:00")"));
  CHECK(contains(extra_of(r.traces[1], 1), R"("error_class":"timeout","latency_ms":10000)"));

  // A sample as a .eval log stores it (samples/1_epoch_2.json) is the same trace, without the log's header.
  ReadResult one = read_text(R"({"id":"s7","epoch":2,"input":"hi","messages":[{"role":"user","content":"hi"}],"scores":{}})");
  REQUIRE(one.rejected == 0);
  CHECK(one.traces[0].trace_id() == "s7_epoch_2");
  CHECK(one.traces[0].metadata() == R"({"id":"s7","epoch":2,"scores":{}})");

  // One bad sample rejects the log, and no sample of it is emitted.
  ReadResult bad = read_text(R"({"eval":{},"samples":[{"id":1,"epoch":1,"messages":[]},{"id":2,"epoch":1,"messages":{}}]})");
  CHECK(bad.rejected == 1);
  CHECK(bad.traces.empty());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message == "\"messages\" must be an array of messages");
}

TEST_CASE("inspect log: the two readings agree") {
  NormalizeOptions slow;
  slow.dom_fast_path = false;
  ReadResult a = read_file("formats/inspect-log.json"), b = read_file("formats/inspect-log.json", slow);
  CHECK(a.normalized == b.normalized);
}

TEST_CASE("inspect .eval log: each samples/*.json member of the archive is a record") {
  ReadResult r = read_file("formats/inspect-log.eval");
  REQUIRE(r.records == 2);
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  CHECK(r.traces[0].trace_id() == "1_epoch_1");
  CHECK(r.traces[1].trace_id() == "1_epoch_2");
  CHECK(r.traces[0].origin.file == data_path("formats/inspect-log.eval") + "/samples/1_epoch_1.json");
  // The same steps as the .json log of the same eval.
  ReadResult json = read_file("formats/inspect-log.json");
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(r.traces[i].steps().size() == json.traces[i].steps().size());
    for (std::size_t k = 0; k < r.traces[i].steps().size(); ++k) CHECK(extra_of(r.traces[i], k) == extra_of(json.traces[i], k));
  }

  std::string not_zip = (std::filesystem::temp_directory_path() / "trajcheck-not-a-zip.eval").string();
  { std::ofstream(not_zip) << "not a zip"; }
  ReadResult bad = read_inputs({not_zip});
  std::remove(not_zip.c_str());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message.rfind("cannot read archive: ", 0) == 0);
}
