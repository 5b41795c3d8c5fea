// Coding-agent session logs (Claude Code's projects/*.jsonl; fixture tests/data/formats/session.jsonl):
// RecordSource reads a session file whole, the session reader makes one trace per session in
// parentUuid order.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "trajcheck/input.hpp"
#include "unit/readers_support.hpp"

using namespace trajcheck;
using namespace trajcheck::test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A temporary file holding `text`, removed when the test ends.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text, const std::string& name = "trajcheck-session-test.jsonl")
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

// One line of a session log.
std::string line(const std::string& session, const std::string& uuid, const std::string& parent,
                 const std::string& type, const std::string& message, const std::string& more = "") {
  return R"({"sessionId":")" + session + R"(","uuid":")" + uuid + R"(","parentUuid":)" +
         (parent.empty() ? std::string("null") : "\"" + parent + "\"") + R"(,"type":")" + type + R"(","message":)" +
         message + more + "}\n";
}
std::string user(const std::string& text) { return R"({"role":"user","content":")" + text + R"("})"; }
std::string say(const std::string& text) { return R"({"role":"assistant","content":")" + text + R"("})"; }

}  // namespace

TEST_CASE("session log: one trace per session, steps in parentUuid order, calls joined, timed") {
  ReadResult r = read_file("formats/session.jsonl");
  REQUIRE(r.records == 1);
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  const Trajectory& t = r.traces[0];
  CHECK(t.trace_id() == "sess-1");
  CHECK(t.origin.line == 1);
  CHECK(t.context() == R"({"cwd":"/repo","gitBranch":"main"})");
  CHECK(t.metadata() == R"({"summary":"Read the project files","version":"1.0.80","userType":"external"})");
  // The branch the user went back to (u2 under r2) after the first (sys, a3); the subagent's
  // sidechain under the Read call that precedes it in the file, before that call's result.
  CHECK(steps_of(t) == "user_message assistant_message bash:ok read:error assistant_message user_message read:ok "
                       "user_message grep:ok");
  // The two lines of response msg_1 share a turn.
  CHECK(t.steps()[2].turn == t.steps()[3].turn);
  CHECK(t.steps()[1].turn == t.steps()[2].turn);
  CHECK(t.steps()[4].turn != t.steps()[3].turn);
  // Each step carries its line's fields; a call its result line's time and fields.
  CHECK(extra_of(t, 0) == R"({"isSidechain":false,"uuid":"s1-u1","timestamp":"2025-08-01T10:00:00.000Z"})");
  CHECK(contains(extra_of(t, 2), R"("uuid":"s1-a1","timestamp":"2025-08-01T10:00:02.000Z","requestId":"req_1",)"
                                 R"("completed_at":"2025-08-01T10:00:02.750Z","latency_ms":750,)"
                                 R"("result_parentUuid":"s1-a2","result_isSidechain":false,"result_uuid":"s1-r1"})"));
  CHECK(result_of(t, 3) == R"("File does not exist.")");
  CHECK(contains(extra_of(t, 3), R"("latency_ms":500)"));
  // A cwd that differs from the session's stays on the line's step; toolUseResult is not kept.
  CHECK(contains(extra_of(t, 6), R"("cwd":"/repo/src")"));
  CHECK(!contains(extra_of(t, 2), "toolUseResult"));
  CHECK(!contains(extra_of(t, 2), "stdout"));
  CHECK(contains(extra_of(t, 7), R"("isSidechain":true)"));
  CHECK(contains(extra_of(t, 8), R"("latency_ms":200)"));
  // The lines that are not messages, once per kind, and the repeated line, located.
  REQUIRE(r.warnings.size() == 5);
  CHECK(contains(r.warnings[0], "session.jsonl:16:1: warning: this line repeats uuid 's1-u1' of line 3"));
  CHECK(contains(r.warnings[1], "session.jsonl:1:1: warning: 1 summary line in this session (the first here)"));
  CHECK(contains(r.warnings[2], "session.jsonl:2:1: warning: 1 line of type 'file-history-snapshot'"));
  CHECK(contains(r.warnings[3], "session.jsonl:8:1: warning: 1 line of type 'system'"));
  CHECK(contains(r.warnings[4], "session.jsonl:17:1: warning: 1 line of type 'queue-operation'"));

  // An OpenAI-shaped session: a tool message answers its call by tool_call_id.
  const Trajectory& u = r.traces[1];
  CHECK(u.trace_id() == "sess-2");
  CHECK(u.origin.line == 18);
  CHECK(u.context() == R"({"cwd":"/repo2","gitBranch":"dev"})");
  CHECK(steps_of(u) == "user_message shell:ok");
  CHECK(contains(extra_of(u, 1), R"("completed_at":"2025-08-02T09:00:04.5Z","latency_ms":3500)"));

  // The normalized form reads back (as a native record) to the same line.
  for (const std::string& n : r.normalized) {
    ReadResult back = read_text(n);
    REQUIRE(back.traces.size() == 1);
    CHECK(back.normalized[0] == n);
  }
}

TEST_CASE("session log: parentUuid order over file order, later chains, cycles, sessions interleaved") {
  // a2 is written before its parent a1; b's lines sit between; a3 starts a chain of its own,
  // after the line written before it; c1 and c2 name each other.
  std::string text = line("a", "a2", "a1", "assistant", say("second")) + line("b", "b1", "", "user", user("other")) +
                     "\n" + line("a", "a1", "", "user", user("first")) + line("a", "a3", "", "user", user("third")) +
                     line("a", "c1", "c2", "user", user("fourth")) + line("a", "c2", "c1", "user", user("fifth"));
  TempFile f(text);
  ReadResult r = read_inputs({f.path});
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 2);
  CHECK(r.traces[0].trace_id() == "a");
  // a1 (no parent) starts the session and a2 follows it; a3 follows the line written before it;
  // the cycle is cut at c1, which then follows a3.
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < r.traces[0].steps().size(); ++i) texts.push_back(content_of(r.traces[0], i));
  CHECK(texts == std::vector<std::string>{"first", "second", "third", "fourth", "fifth"});
  CHECK(r.traces[1].trace_id() == "b");
  CHECK(steps_of(r.traces[1]) == "user_message");
  REQUIRE(r.warnings.size() == 1);
  CHECK(contains(r.warnings[0], ":6:1: warning: the parentUuid links of this line's session form a cycle; cut here"));

  // Two answers to one user message (the user went back and asked again): each branch whole,
  // in file order, though the second branch's first line was written before the first's end.
  text = line("s", "u", "", "user", user("q")) + line("s", "x1", "u", "assistant", say("x1")) +
         line("s", "y1", "u", "assistant", say("y1")) + line("s", "x2", "x1", "user", user("x2")) +
         line("s", "y2", "y1", "user", user("y2"));
  TempFile g(text);
  r = read_inputs({g.path});
  REQUIRE(r.traces.size() == 1);
  texts.clear();
  for (std::size_t i = 0; i < r.traces[0].steps().size(); ++i) texts.push_back(content_of(r.traces[0], i));
  CHECK(texts == std::vector<std::string>{"q", "x1", "x2", "y1", "y2"});
}

TEST_CASE("session log: copies of request messages (type api-request-blob) make no steps") {
  // Claude Code 2.x logs each model request's messages again in lines of their own; the
  // calls are those of the assistant line, once.
  const std::string call = R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]})";
  const std::string result = R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]})";
  std::string text = line("s", "u1", "", "user", user("list")) + line("s", "a1", "u1", "assistant", call) +
                     line("s", "r1", "a1", "user", result) +
                     R"({"type":"api-request-blob","sessionId":"s","hash":"h1","message":)" + call + "}\n" +
                     R"({"type":"api-request-blob","sessionId":"s","hash":"h2","message":)" + result + "}\n";
  TempFile f(text);
  ReadResult r = read_inputs({f.path});
  REQUIRE(r.rejected == 0);
  REQUIRE(r.traces.size() == 1);
  CHECK(steps_of(r.traces[0]) == "user_message bash:ok");
  REQUIRE(r.warnings.size() == 1);
  CHECK(contains(r.warnings[0], "2 lines of type 'api-request-blob' in this session"));
}

TEST_CASE("session log: a line cut short is a rejected record of its own; the session is read") {
  std::string text = line("s", "u1", "", "user", user("first")) +
                     R"({"sessionId":"s","uuid":"u2","parentUuid":"u1","type":"assistant","message":{"role":"assis)" "\n" +
                     line("s", "u3", "u1", "user", user("third")) + "{\"sessionId\":\"s\",\"uuid\":\"u4\",\"x\":\"\xff\"}\n";
  TempFile f(text);
  ReadResult r = read_inputs({f.path});
  REQUIRE(r.records == 3);
  REQUIRE(r.traces.size() == 1);
  CHECK(steps_of(r.traces[0]) == "user_message user_message");
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0].where.line == 2);
  CHECK(r.errors[0].message.rfind("invalid JSON", 0) == 0);
  CHECK(r.errors[1].where.line == 4);
  CHECK(r.errors[1].where.column == 35);
  CHECK(r.errors[1].message == "invalid UTF-8");

  // A line the reader cannot read rejects the session record, at its position in the file.
  text = line("s", "u1", "", "user", user("first")) +
         line("s", "u2", "u1", "assistant", R"({"role":"assistant","content":[{"type":"tool_use","id":"x"}]})");
  TempFile g(text);
  r = read_inputs({g.path});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "tool_use block has no \"name\"");
  CHECK(r.errors[0].where.line == 2);
  CHECK(r.traces.empty());
}

// A line whose brackets and quotes balance but whose grammar breaks (a colon missing) stays
// out of the session like a line cut short: a rejected record at the token where it breaks.
TEST_CASE("session log: a line with broken grammar is a rejected record of its own; the session is read") {
  struct Broken {
    std::string message;
    std::uint64_t column;  // of the token where the colon should be
  };
  const Broken broken[] = {
      {R"({"role":"assistant","x" 1,"id":"m"})", 101},  // a colon missing before a value
      {R"({"role" "assistant","id":"m"})", 85},         // … before the first
      {R"({"role":"assistant","id" "m"})", 102},        // … before the id itself
  };
  for (const Broken& b : broken) {
    CAPTURE(b.message);
    std::string text = line("s", "u1", "", "user", user("first")) + line("s", "a1", "u1", "assistant", b.message) +
                       line("s", "u2", "u1", "user", user("second"));
    TempFile f(text);
    ReadResult r = read_inputs({f.path});
    CHECK(r.records == 2);
    REQUIRE(r.traces.size() == 1);
    CHECK(steps_of(r.traces[0]) == "user_message user_message");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].where.line == 2);
    CHECK(r.errors[0].where.column == b.column);
    CHECK(r.errors[0].message.rfind("invalid JSON: ", 0) == 0);
  }
}

// A line over 4 MiB is checked for its brackets, quotes and UTF-8 only before it joins the
// session; its grammar is met while the session is read, first where the message's id is
// looked up, and simdjson then gives the document up. It used to be rewound all the same: a
// null dereference, and the process died. Now the session is rejected at the break.
TEST_CASE("session log: broken grammar in a line too long to validate first is a located error, not a crash") {
  const std::string big(5 << 20, 'x');
  std::string text = line("s", "u1", "", "user", user(big)) +
                     line("s", "a1", "u1", "assistant", R"({"role" "assistant","content":")" + big + R"("})");
  TempFile f(text);
  ReadResult r = read_inputs({f.path});
  CHECK(r.traces.empty());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].where.line == 2);
  CHECK(r.errors[0].where.column == 85);
  CHECK(r.errors[0].message.rfind("invalid JSON: ", 0) == 0);
}

TEST_CASE("session log: detection by the first lines, --input-format session, arrays and lone lines") {
  // Summary lines first (as Claude Code writes them), a BOM: still a session log; a column
  // on line 1 counts the BOM's bytes.
  std::string session = "\xEF\xBB\xBF" R"({"type":"summary","summary":"s","leafUuid":"u1"})" "\n" +
                        line("s", "u1", "", "user", user("hi")) + line("s", "u2", "u1", "user", "7");
  TempFile f(session);
  CHECK(file_layout(f.path) == FileLayout::session_log);
  ReadResult r = read_inputs({f.path});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message == "a session line's \"message\" must be an object");
  CHECK(r.errors[0].where.line == 3);

  // CRLF line ends.
  std::string crlf = line("s", "u1", "", "user", user("hi"));
  crlf.insert(crlf.size() - 1, "\r");
  std::string crlf2 = line("s", "u2", "u1", "assistant", say("hello"));
  crlf2.insert(crlf2.size() - 1, "\r");
  TempFile h(crlf + crlf2);
  r = read_inputs({h.path});
  CHECK(r.errors.empty());
  REQUIRE(r.traces.size() == 1);
  CHECK(steps_of(r.traces[0]) == "user_message assistant_message");

  // A first line without a "type" and without the session fields: JSONL, line by line …
  std::string text = R"({"note":"exported by hand"})" "\n" + line("s", "u1", "", "user", user("hi")) +
                     line("s", "u2", "u1", "assistant", say("hello"));
  TempFile g(text);
  CHECK(file_layout(g.path) == FileLayout::lines);
  CHECK(file_layout(g.path, InputFormat::session) == FileLayout::session_log);
  r = read_inputs({g.path});
  CHECK(r.records == 3);
  REQUIRE(r.rejected == 3);
  CHECK(r.errors[1].message.rfind("a single line of a coding-agent session log, not a session", 0) == 0);
  // … unless the format is forced: one record, the stray line warned about.
  {
    ReadResult forced;
    RecordSource src({g.path}, InputFormat::session);
    TraceParser parser(NormalizeOptions{InputFormat::session});
    Trajectory t(forced.tools.get());
    RawRecord rec;
    while (src.next(rec)) {
      ++forced.records;
      ParseOutcome o = parser.parse(rec, t, [&](Trajectory& tr) { forced.traces.push_back(tr); });
      forced.rejected += !o.ok();
    }
    CHECK(forced.records == 1);
    CHECK(forced.rejected == 0);
    REQUIRE(forced.traces.size() == 1);
    CHECK(steps_of(forced.traces[0]) == "user_message assistant_message");
    REQUIRE(forced.traces[0].warnings.size() == 1);
    CHECK(contains(forced.traces[0].warnings[0], ":1:1: warning: 1 line with no \"type\" and no \"message\" in this session"));
  }
  // An array of the lines is a session log too (a .json file, a score record, the Python API).
  r = read_text("[" + line("s", "u1", "", "user", user("hi")) + "," + line("s", "u2", "u1", "assistant", say("yo")) + "]");
  REQUIRE(r.traces.size() == 1);
  CHECK(r.traces[0].trace_id() == "s");
  TempFile j("[" + line("s", "u1", "", "user", user("hi")) + "]", "trajcheck-session-test.json");
  r = read_inputs({j.path});
  CHECK(r.records == 1);
  REQUIRE(r.traces.size() == 1);
  // Lone lines are not sessions; other JSONL is not a session log.
  r = read_text(line("s", "u1", "", "user", user("hi")));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message.rfind("a single line of a coding-agent session log", 0) == 0);
  CHECK(file_layout(data_path("formats/langchain.jsonl")) == FileLayout::lines);
  CHECK(file_layout(data_path("formats/native.jsonl")) == FileLayout::lines);
  CHECK(file_layout(data_path("formats/session.jsonl")) == FileLayout::session_log);
}
