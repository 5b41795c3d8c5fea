// What real agent software writes (tests/data/producers/, each written by the generator in
// tests/producers/ or tests/claude-code/): a Claude Code 2.x projects folder with a subagent,
// a Codex CLI rollout, OpenAI Agents SDK run history, LangChain JS messages serialized by
// JSON.stringify. docs/traces.md states the rules these check.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "trajcheck/input.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string all_warnings(const ReadResult& r) {
  std::string out;
  for (const std::string& w : r.warnings) out += w + "\n";
  return out;
}

// A temporary directory, removed when the test ends.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

}  // namespace

TEST_CASE("Claude Code projects folder: a session and its subagent, linked both ways, meta files not traces") {
  ReadResult r = read_inputs({data_path("producers/claude-code")});
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  const Trajectory& main = r.traces[0];
  const Trajectory& sub = r.traces[1];
  std::string session(main.trace_id());
  CHECK(sub.trace_id() == session + "/agent-a7fc607ca3670d7ae");
  // The session hands the work to the subagent; the subagent runs the commands.
  CHECK(steps_of(main) == "user_message agent:ok assistant_message");
  CHECK(steps_of(sub) == "user_message bash:ok bash:ok assistant_message");
  CHECK(has(extra_of(main, 1), R"("subagent_trace_id":")" + session + "/agent-a7fc607ca3670d7ae\""));
  std::string meta(sub.metadata());
  CHECK(has(meta, R"("parent_trace_id":")" + session + "\""));
  CHECK(has(meta, R"("parent_call_id":"toolu_mock_agent")"));
  CHECK(has(meta, R"("subagent":{"agentType":"general-purpose")"));
  // No warning about the meta file: it was read.
  CHECK_FALSE(has(all_warnings(r), "meta"));
}

TEST_CASE("Claude Code subagent meta files: missing, unreadable, alone, named on the command line") {
  TempDir d("trajcheck-subagent-meta-test");
  auto line = [](const std::string& agent, const std::string& uuid) {
    return R"({"parentUuid":null,"isSidechain":true,"agentId":")" + agent + R"(","type":"user","message":{"role":"user","content":"go"},"uuid":")" +
           uuid + R"(","sessionId":"s"})" + "\n";
  };
  d.write("s/subagents/agent-a.jsonl", line("a", "u1"));  // no meta file
  d.write("s/subagents/agent-b.jsonl", line("b", "u2"));
  d.write("s/subagents/agent-b.meta.json", "{\"toolUseId\": ");  // cut short
  std::string alone = d.write("s/subagents/agent-c.meta.json", R"({"toolUseId":"toolu_c"})");
  std::string nested = d.write("s/subagents/agent-e.meta.json", R"({"toolUseId":"toolu_x","parentAgentId":"a"})");
  d.write("s/subagents/agent-e.jsonl", line("e", "u3"));
  ReadResult r = read_inputs({d.path.string()});
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 3);
  std::string w = all_warnings(r);
  CHECK(has(w, "agent-a.jsonl:1:1: warning: no meta file agent-a.meta.json beside this Claude Code subagent transcript"));
  CHECK(has(w, "agent-b.meta.json:1:1: warning: cannot read this Claude Code subagent meta file"));
  CHECK(has(w, "agent-c.meta.json:1:1: warning: a Claude Code subagent's meta file without its transcript agent-c.jsonl"));
  CHECK_FALSE(has(w, "agent-e.meta.json"));
  // A nested subagent's parent is the subagent that started it.
  CHECK(r.traces[2].trace_id() == "s/agent-e");
  CHECK(has(std::string(r.traces[2].metadata()), R"("parent_trace_id":"s/agent-a","parent_call_id":"toolu_x")"));
  // Named on its own, a meta file is skipped with a warning, whether its transcript is there or not.
  ReadResult named = read_inputs({nested});
  CHECK(named.traces.empty());
  CHECK(named.rejected == 0);
  REQUIRE(named.warnings.size() == 1);
  CHECK(has(named.warnings[0], "agent-e.meta.json:1:1: warning: a Claude Code subagent's meta file: not a trace"));
  auto listed = list_input(nested);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].kind == InputEntry::Kind::skipped);
  CHECK(has(listed[0].message, "read with its transcript agent-e.jsonl"));
  CHECK(list_input(alone)[0].kind == InputEntry::Kind::skipped);
  // Elsewhere, a file named so is an ordinary input.
  std::string elsewhere = d.write("other/agent-z.meta.json", R"({"messages":[]})");
  CHECK(list_input(elsewhere)[0].kind == InputEntry::Kind::file);
}

TEST_CASE("Codex CLI rollout: one trace of the response items, bookkeeping counted, exit codes read") {
  ReadResult r = read_file("producers/codex/rollout.jsonl");
  CHECK(r.records == 1);
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "01a247f3-05db-7653-8400-c72134e20224");
  CHECK(t.context() == R"({"cwd":"/work/proj"})");
  CHECK(has(std::string(t.metadata()), R"("cli_version":"0.171.0")"));
  // The developer instructions are a system prompt; the second command failed (exit code 1).
  CHECK(steps_of(t) == "user_message user_message other exec_command:ok exec_command:error assistant_message");
  CHECK(args_of(t, 3) == R"({"cmd":"echo hello > hello.txt"})");
  CHECK(has(extra_of(t, 4), R"("exit_code":1)"));
  std::string w = all_warnings(r);
  CHECK(has(w, "rollout.jsonl:2:1: warning: lines of type 'event_msg' (11 of them; the first here): Codex bookkeeping"));
  CHECK(r.warnings.size() == 4);
}

TEST_CASE("Codex CLI rollout: unknown lines and items are counted warnings; a lone line is rejected") {
  std::string head = R"({"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"r1","cwd":"/p"}})";
  std::string call = R"({"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c1","status":"completed","action":{"type":"exec","command":["ls"]}}})";
  std::string out = R"({"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"x\",\"metadata\":{\"exit_code\":2}}"}})";
  std::string odd = R"({"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"brand_new_item","x":1}})";
  std::string odd_line = R"({"timestamp":"2026-01-01T00:00:04Z","type":"brand_new_line","payload":{}})";
  ReadResult r = read_text("[" + head + "," + call + "," + out + "," + odd + "," + odd + "," + odd_line + "]");
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  CHECK(steps_of(r.traces[0]) == "local_shell:error");
  CHECK(has(extra_of(r.traces[0], 0), R"("exit_code":2)"));
  std::string w = all_warnings(r);
  CHECK(has(w, "response_item payload of unknown type 'brand_new_item' (2 of them; the first here): not known; skipped"));
  CHECK(has(w, "lines of type 'brand_new_line': not known; skipped"));
  ReadResult lone = read_text(head);
  CHECK(lone.rejected == 1);
  REQUIRE(lone.errors.size() == 1);
  CHECK(has(lone.errors[0].message, "a single line of a Codex CLI rollout file"));
}

TEST_CASE("OpenAI Agents SDK history: function_call_result joins by callId, text parts unwrapped, hosted calls") {
  ReadResult r = read_file("producers/openai-agents/history.json");
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(steps_of(t) == "user_message other get_order:ok refund_order:ok web_search:ok assistant_message");
  CHECK(result_of(t, 2) == R"({"order_id":"A-1001","status":"shipped","total":42.5})");
  CHECK(result_of(t, 3) == R"("An error occurred while running the tool. Please try again.")");
  CHECK(id_of(t, 3) == "call_mock_refund");
  // The hosted web search: its input is in the Responses item the SDK keeps as providerData.
  CHECK(args_of(t, 4) == R"({"action":{"type":"search","query":"refund policy"}})");
  CHECK(r.warnings.empty());
  // A failed result and one whose output is not a text part.
  ReadResult e = read_text(R"([{"type":"function_call","callId":"c","name":"f","arguments":"{}"},)"
                           R"({"type":"function_call_result","callId":"c","name":"f","status":"incomplete","output":{"type":"image","data":"x"}}])");
  CHECK(e.rejected == 0);
  REQUIRE(e.traces.size() == 1);
  CHECK(result_of(e.traces[0], 0) == R"({"type":"image","data":"x"})");
  CHECK(has(extra_of(e.traces[0], 0), R"("item_status":"incomplete")"));
}

TEST_CASE("LangChain messages serialized by JSON.stringify: classes are roles, kwargs the message") {
  ReadResult r = read_file("producers/langchain/messages.json");
  CHECK(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  const Trajectory& t = r.traces[0];
  CHECK(steps_of(t) == "user_message get_order:ok assistant_message refund_order:error notify_customer:ok assistant_message");
  CHECK(r.warnings.empty());
  // A ChatOpenAI tool-calling loop (a real model call against the mock): the AIMessages carry
  // the response's id, usage and metadata; the failed tool's ToolMessage has status "error".
  ReadResult m = read_file("producers/langchain/model.json");
  CHECK(m.rejected == 0);
  REQUIRE(m.traces.size() == 1);
  CHECK(steps_of(m.traces[0]) == "user_message get_order:ok refund_order:error assistant_message");
  CHECK(has(extra_of(m.traces[0], 1), R"("usage_metadata":{"input_tokens":120,"output_tokens":30,"total_tokens":150)"));
  CHECK(m.warnings.empty());
  ReadResult s = read_file("producers/langchain/state.jsonl");
  CHECK(s.rejected == 0);
  CHECK(s.traces.size() == 2);
  // A class that is not a message: a warning, the element skipped; no class, no kwargs: rejected.
  ReadResult odd = read_text(R"([{"lc":1,"type":"constructor","id":["langchain_core","messages","RemoveMessage"],"kwargs":{"id":"m1"}},)"
                             R"({"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}])");
  CHECK(odd.rejected == 0);
  REQUIRE(odd.traces.size() == 1);
  CHECK(steps_of(odd.traces[0]) == "user_message");
  CHECK(has(all_warnings(odd), "mem:1:2: warning: serialized LangChain object of class 'RemoveMessage' is not a message; skipped"));
  ReadResult no_kwargs = read_text(R"([{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"]}])");
  CHECK(no_kwargs.rejected == 1);
  ReadResult no_id = read_text(R"([{"lc":1,"type":"constructor","kwargs":{"content":"x"}}])");
  CHECK(no_id.rejected == 1);
}

TEST_CASE("real producers' files read the same with and without the DOM fast path") {
  for (const char* rel : {"producers/claude-code", "producers/codex/rollout.jsonl", "producers/openai-agents/history.json",
                          "producers/langchain"}) {
    CAPTURE(rel);
    NormalizeOptions slow;
    slow.dom_fast_path = false;
    ReadResult a = read_inputs({data_path(rel)});
    ReadResult b = read_inputs({data_path(rel)}, slow);
    CHECK(a.rejected == 0);
    CHECK(a.normalized == b.normalized);
    CHECK(a.warnings == b.warnings);
  }
}
