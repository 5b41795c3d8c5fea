// GuardSession, the proxy's decisions without processes: bytes from the client in, what is
// forwarded to the server and what the client is answered out. What the guard cannot read
// or decide is never forwarded; framing is the server's; each call is decided against every
// call forwarded before it, answered or not.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "trajcheck/guard.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string call(const std::string& id, const std::string& tool, const std::string& args = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + "}}";
}
std::string answer(const std::string& id, const std::string& text = "ok", bool error = false) {
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"content":[{"type":"text","text":")" + text + "\"}]" +
         (error ? R"(,"isError":true)" : "") + "}}\n";
}

struct Session {
  RuleSetResult rs;
  GuardOptions options;
  char* log_buf = nullptr;
  std::size_t log_size = 0;
  std::FILE* log = open_memstream(&log_buf, &log_size);
  std::unique_ptr<GuardSession> g;
  GuardSession::Output out;
  GuardStats stats;

  explicit Session(const std::string& rules, GuardOptions o = {}) : options(std::move(o)) {
    rs = compile_rule_set(std::vector<Source>{Source("g.rules", rules)});
    REQUIRE(rs.ok());
    g = std::make_unique<GuardSession>(rs.rules, options, log);
    std::string error;
    REQUIRE(g->open_trace(&error));
  }
  ~Session() {
    g.reset();
    std::fclose(log);
    std::free(log_buf);
  }
  Session& client(std::string_view bytes) {
    g->client_bytes(bytes, out);
    return *this;
  }
  Session& server(std::string_view bytes) {
    g->server_bytes(bytes);
    return *this;
  }
  bool finish() {
    g->client_end(out);
    g->server_end();
    return g->finish(&stats);
  }
  std::string log_text() {
    std::fflush(log);
    return std::string(log_buf, log_size);
  }
};

// A tools/call of write_file carrying `value` (raw JSON) as its content, under `forbid write_file`:
// it must not be forwarded.
void check_refused(const std::string& message) {
  Session s("rule no_writes: forbid write_file\n");
  s.client(message + "\n");
  INFO(message);
  CHECK(s.out.to_server.empty());
  s.finish();
  CHECK(s.stats.refused == 1);
  CHECK(s.stats.denied == 0);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("trajcheck_guard_session_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("guard session: a message the guard cannot read is refused, never forwarded") {
  const std::string head = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"content":)";
  check_refused(head + R"("hi\ud800"}}})");                    // a lone surrogate
  check_refused(head + "\"hi\xff\"}}}");                        // a byte that is not UTF-8
  check_refused(head + "1e400}}}");                             // a number out of range
  check_refused(head + "\"x\"}},\"method\":\"ping\"}");         // a key twice: the server might take either
  check_refused(head + R"("x","content":"y"}}})");             // a key twice, nested
  check_refused(head + std::string(600, '[') + std::string(600, ']') + "}}}");  // deeper than the readers' limit
  check_refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"})");  // cut short
  check_refused("42");                                                 // JSON, but not a JSON-RPC message
  check_refused(R"({"jsonrpc":"2.0","id":1})");                        // neither request nor response
}

TEST_CASE("guard session: an unreadable message with an id is answered with a JSON-RPC error") {
  Session s("forbid write_file\n");
  s.client("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\xff\"}}\n");
  CHECK(s.out.to_server.empty());
  CHECK(s.out.to_client.find(R"("code":-32700)") != std::string::npos);
  CHECK(s.out.to_client.find(R"("id":null)") != std::string::npos);
  CHECK(s.log_text().find("guard: refused a client message") != std::string::npos);
}

TEST_CASE("guard session: a tools/call the guard cannot decide is refused") {
  auto refused = [](const std::string& message, const std::string& answer_part) {
    Session s("rule no_delete: forbid delete_user\n");
    s.client(message + "\n");
    INFO(message);
    CHECK(s.out.to_server.empty());
    if (answer_part.empty()) CHECK(s.out.to_client.empty());
    else CHECK(s.out.to_client.find(answer_part) != std::string::npos);
    s.finish();
    CHECK(s.stats.refused == 1);
  };
  // No id: a notification, which the proxy cannot answer (and a server might still run).
  refused(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_user"}})", "");
  refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":["delete_user"]})", R"("code":-32602)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["delete_user"]}})", R"("code":-32602)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_user\u0000"}})", R"("code":-32602)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}})", R"("code":-32602)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"{}"}})", R"("code":-32602)");
  refused(R"({"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x"}})", R"("code":-32600)");
  refused(R"({"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"x"}})", R"("code":-32600)");
  // A method spelled like tools/call but not exactly: no SDK runs it, a hand-written server might.
  refused(R"({"jsonrpc":"2.0","id":1,"method":"Tools/Call","params":{"name":"delete_user"}})", R"("code":-32600)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":" tools/call","params":{"name":"delete_user"}})", R"("code":-32600)");
  refused(R"({"jsonrpc":"2.0","id":1,"method":7,"params":{"name":"delete_user"}})", R"("code":-32600)");
}

TEST_CASE("guard session: a name is decided as the server reads it: escapes decoded, case and spaces folded") {
  for (const char* name : {R"(delete\u005fuser)", "DELETE_USER", " delete_user ", R"(delete_user\u0020)"}) {
    Session s("rule no_delete: forbid delete_user\n    message \"no\"\n");
    s.client(call("1", name) + "\n");
    INFO(name);
    CHECK(s.out.to_server.empty());
    CHECK(s.out.to_client.find(R"("isError":true)") != std::string::npos);
    s.finish();
    CHECK(s.stats.denied == 1);
  }
}

TEST_CASE("guard session: messages are split on \\n, \\r\\n and a lone \\r, and forwarded framed with \\n") {
  Session s("rule no_delete: forbid delete_user\n");
  const std::string list = call("1", "list_users"), del = call("2", "delete_user"), ping = R"({"jsonrpc":"2.0","id":3,"method":"ping"})";
  s.client(list + "\r" + del + "\n");
  CHECK(s.out.to_server == list + "\n");
  CHECK(s.out.to_client.find(R"("id":2)") != std::string::npos);
  s.out = {};
  // \r\n split across two reads is one terminator; an empty line forwards nothing.
  s.client(ping + "\r").client("\n\n\r\n");
  CHECK(s.out.to_server == ping + "\n");
  s.finish();
  CHECK(s.stats.denied == 1);
  CHECK(s.stats.calls == 2);
}

TEST_CASE("guard session: a message over the limit is refused unbuffered, and the next one is read") {
  GuardOptions o;
  o.max_message_bytes = 1000;
  Session s("forbid delete_user\n", o);
  const std::string big = call("1", "list_users", R"({"pad":")" + std::string(5000, 'x') + "\"}");
  for (std::size_t i = 0; i < big.size(); i += 100) s.client(big.substr(i, 100));  // no terminator yet
  CHECK(s.out.to_server.empty());
  CHECK(s.out.to_client.find("longer than the guard's limit of 1000 bytes") != std::string::npos);
  const std::string ok = call("2", "list_users");
  s.client("\n" + ok + "\n");
  CHECK(s.out.to_server == ok + "\n");
  s.finish();
  CHECK(s.stats.refused == 1);
}

TEST_CASE("guard session: calls are decided against the calls forwarded before them, answered or not") {
  SUBCASE("at most") {
    Session s("rule one: refund at most 1\n");
    s.client(call("1", "refund") + "\n" + call("2", "refund") + "\n" + call("3", "refund") + "\n");
    CHECK(s.out.to_server == call("1", "refund") + "\n");
    s.finish();
    CHECK(s.stats.denied == 2);
  }
  SUBCASE("no duplicate") {
    Session s("rule once: no duplicate refund\n");
    s.client(call("1", "refund", R"({"o":1})") + "\n" + call("2", "refund", R"({"o":1})") + "\n" +
             call("3", "refund", R"({"o":2})") + "\n");
    CHECK(s.out.to_server == call("1", "refund", R"({"o":1})") + "\n" + call("3", "refund", R"({"o":2})") + "\n");
  }
  SUBCASE("after A: forbid B") {
    Session s("rule r: after export: forbid send_email\n");
    s.client(call("1", "export") + "\n" + call("2", "send_email") + "\n");
    CHECK(s.out.to_server == call("1", "export") + "\n");
  }
  SUBCASE("a result arriving between calls still counts, and the order stays the calls' order") {
    Session s("rule two: refund at most 2\nrule r: retries of lookup at most 0\n");
    s.client(call("1", "refund") + "\n" + call("2", "lookup") + "\n");
    s.server(answer("2", "boom", true));  // answered before the earlier call 1
    s.client(call("3", "lookup") + "\n");  // a retry after a failed lookup: denied
    CHECK(s.out.to_client.find(R"("id":3)") != std::string::npos);
    s.client(call("4", "refund") + "\n" + call("5", "refund") + "\n");
    CHECK(s.out.to_server.find(R"("id":4)") != std::string::npos);
    CHECK(s.out.to_server.find(R"("id":5)") == std::string::npos);
    s.server(answer("1"));
    s.finish();
    CHECK(s.stats.denied == 2);
    CHECK(s.stats.unanswered == 1);  // call 4
  }
}

TEST_CASE("guard session: a reused id is refused while its request is in flight; nothing is lost") {
  Session s("rule r: lookup at most 5\n");
  s.client(call("7", "lookup", R"({"q":1})") + "\n" + call("7", "lookup", R"({"q":2})") + "\n" +
           call("\"7\"", "lookup", R"({"q":3})") + "\n");
  CHECK(s.out.to_server == call("7", "lookup", R"({"q":1})") + "\n");
  CHECK(s.out.to_client.find("already used by a request still in flight") != std::string::npos);
  s.server(answer("7"));
  s.client(call("7", "lookup", R"({"q":4})") + "\n");  // answered: the id is free again
  CHECK(s.out.to_server.find(R"("q":4)") != std::string::npos);
  s.finish();
  CHECK(s.stats.refused == 2);
  CHECK(s.stats.results == 1);
  CHECK(s.stats.unanswered == 1);
  CHECK(s.log_text().find("guard: 4 tool calls, 0 denied, 1 results recorded, 1 never answered") != std::string::npos);
}

TEST_CASE("guard session: batches with a call, or a reused id, are refused; others forwarded") {
  Session s("forbid delete_*\n");
  const std::string ping = R"([{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}])";
  s.client(ping + "\n");
  CHECK(s.out.to_server == ping + "\n");
  s.client(R"([{"jsonrpc":"2.0","id":1,"method":"TOOLS/CALL","params":{"name":"delete_all"}}])"
           "\n");
  s.client(R"([{"jsonrpc":"2.0","id":7,"method":"ping"}])"
           "\n");  // 7 is still in flight
  CHECK(s.out.to_server == ping + "\n");
  s.finish();
  CHECK(s.stats.batches_refused == 2);
}

TEST_CASE("guard session: the trace is appended as it happens, one line per session, with its id") {
  TempDir dir;
  GuardOptions o;
  o.trace_out = (dir.path / "trace.jsonl").string();
  o.trace_id = "session-1";
  o.context = R"({"user":"u1"})";
  {
    Session s("rule r: refund at most 1\n", o);
    s.client(call("1", "refund") + "\n");
    s.server(answer("1", "done"));
    // The step is on disk before the session ends.
    const std::string early = slurp(o.trace_out);
    CHECK(early.find(R"({"trace_id":"session-1","context":{"user":"u1"},"steps":[)") == 0);
    CHECK(early.find(R"("result":{"content":[{"text":"done")") != std::string::npos);
    CHECK(s.finish());
  }
  o.trace_id.clear();
  {
    Session s("rule r: refund at most 1\n", o);
    s.client(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"cli"}}})"
             "\n");
    s.client(call("1", "lookup") + "\n");
    CHECK(s.finish());
  }
  const std::string text = slurp(o.trace_out);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);  // appended, not overwritten
  CHECK(text.find(R"({"trace_id":"session-1")") == 0);
  CHECK(text.find(R"({"trace_id":"guard-cli-)") != std::string::npos);
  CHECK(text.find(R"("unanswered":true)") != std::string::npos);
  // A trace cut short (a guard killed outright) is not continued: the next record starts on its own line.
  std::ofstream(o.trace_out, std::ios::app) << R"({"trace_id":"cut","steps":[)";
  {
    Session s("rule r: refund at most 1\n", o);
    CHECK(s.finish());
  }
  const std::string after = slurp(o.trace_out);
  CHECK(after.find("{\"trace_id\":\"cut\",\"steps\":[\n{\"trace_id\":\"guard-") != std::string::npos);
}

TEST_CASE("guard session: a trace path that cannot be written is refused before anything runs") {
  RuleSetResult rs = compile_rule_set(std::vector<Source>{Source("g.rules", "forbid x\n")});
  REQUIRE(rs.ok());
  GuardOptions o;
  o.trace_out = "/nonexistent-dir/trace.jsonl";
  GuardSession g(rs.rules, o, stderr);
  std::string error;
  CHECK_FALSE(g.open_trace(&error));
  CHECK(error.find("cannot write the trace to /nonexistent-dir/trace.jsonl") == 0);
}

TEST_CASE("guard session: the decision log, masked by default; observe mode decides and never denies") {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* decisions = open_memstream(&buf, &size);
  GuardOptions o;
  o.decision_log = decisions;
  o.trace_id = "t";
  o.rules_digest = "sha256:abc";
  SUBCASE("enforce, masked") {
    Session s("rule no_delete: forbid delete_user\n    message \"never\"\n", o);
    s.client(call("1", "delete_user", R"({"user":"bob","n":[1,{"k":true}]})") + "\n");
    s.finish();
    std::fflush(decisions);
    const std::string log(buf, size);
    CHECK(log.find(R"("arguments":{"n":["***",{"k":"***"}],"user":"***"})") != std::string::npos);
    CHECK(log.find(R"("decision_id":"t:1")") != std::string::npos);
    CHECK(log.find(R"("verdict":"deny")") != std::string::npos);
    CHECK(log.find(R"("forwarded":false)") != std::string::npos);
    CHECK(log.find(R"("rule":"no_delete")") != std::string::npos);
    CHECK(log.find(R"("message":"never")") != std::string::npos);
    CHECK(log.find(R"("rules_digest":"sha256:abc")") != std::string::npos);
  }
  SUBCASE("observe, full arguments but one key") {
    o.deny = false;
    o.log_arguments = true;
    o.mask_args = {"password"};
    Session s("rule no_delete: forbid delete_user\n", o);
    s.client(call("1", "delete_user", R"({"user":"bob","password":"pw"})") + "\n");
    CHECK(s.out.to_server.find("delete_user") != std::string::npos);
    s.finish();
    CHECK(s.stats.denied == 0);
    std::fflush(decisions);
    const std::string log(buf, size);
    CHECK(log.find(R"("arguments":{"password":"***","user":"bob"})") != std::string::npos);
    CHECK(log.find(R"("mode":"observe")") != std::string::npos);
    CHECK(log.find(R"("verdict":"deny")") != std::string::npos);
    CHECK(log.find(R"("forwarded":true)") != std::string::npos);
  }
  std::fclose(decisions);
  std::free(buf);
}

TEST_CASE("guard session: a denied call is a denied_call step of the trace, in call order, seen by the rules") {
  TempDir dir;
  GuardOptions o;
  o.trace_out = (dir.path / "trace.jsonl").string();
  o.trace_id = "t";
  Session s("rule no_writes: forbid save\n    message \"no\"\nrule attempts: (step where type == \"denied_call\") at most 1\n", o);
  s.client(call("1", "read") + "\n" + call("2", "save", R"({"p":"x"})") + "\n");
  s.server(answer("1"));
  s.client(call("3", "save") + "\n");
  CHECK(s.finish());
  CHECK(s.stats.denied == 2);
  CHECK(s.stats.violated_at_end == 1);  // attempts: the second attempt, decided live as check decides it
  CHECK(s.log_text().find("guard: violation save: rule attempts") != std::string::npos);
  const std::string text = slurp(o.trace_out);
  CHECK(text.find(R"("steps":[{"arguments":{},"id":"1",)") != std::string::npos);  // the call before the attempt
  CHECK(text.find(R"({"arguments":{"p":"x"},"denied_tool":"save","id":"2","message":"no","rule":"no_writes","type":"denied_call"})") !=
        std::string::npos);
  CHECK(text.find(R"("denied_tool":"save","id":"3")") != std::string::npos);
}

namespace {

// A collector stand-in: an OTLP/HTTP receiver on 127.0.0.1 that keeps the bodies posted to
// /v1/logs and answers `status`.
struct Collector {
  httplib::Server server;
  std::mutex mutex;
  std::vector<nlohmann::json> bodies;
  int status = 200, port = 0;
  std::thread thread;
  Collector() {
    server.Post("/v1/logs", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex);
      bodies.push_back(nlohmann::json::parse(req.body));
      CHECK(req.get_header_value("Content-Type") == "application/json");
      res.status = status;
      res.set_content("{}", "application/json");
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Collector() {
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// The attributes of an OTLP JSON log record as key -> the AnyValue's one value.
std::map<std::string, nlohmann::json> attributes(const nlohmann::json& record) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& a : record["attributes"]) out[a["key"]] = a["value"].begin().value();
  return out;
}

}  // namespace

TEST_CASE("guard session: each decision is an OpenTelemetry event sent to the OTLP endpoint") {
  Collector collector;
  GuardOptions o;
  o.trace_id = "t";
  o.rules_digest = "sha256:abc";
  o.otlp_endpoint = collector.url();
  {
    Session s("rule no_delete: forbid delete_user\n    message \"never\"\n", o);
    s.client(call("1", "list_users") + "\n" + call("\"two\"", "delete_user", R"({"user":"bob"})") + "\n");
    CHECK(s.finish());
    CHECK(s.log_text().find("guard: 2 decision events exported to " + collector.url() + "/v1/logs") !=
          std::string::npos);
  }
  std::vector<nlohmann::json> records;
  for (const auto& body : collector.bodies) {
    const auto& rl = body["resourceLogs"][0];
    CHECK(attributes(rl["resource"])["service.name"] == "trajcheck-guard");
    for (const auto& r : rl["scopeLogs"][0]["logRecords"]) records.push_back(r);
  }
  REQUIRE(records.size() == 2);
  for (const auto& r : records) {
    CHECK(r["eventName"] == "gen_ai.guardrail.result");
    CHECK(r["timeUnixNano"].is_string());
  }
  auto allow = attributes(records[0]), deny = attributes(records[1]);
  CHECK(allow["gen_ai.tool.name"] == "list_users");
  CHECK(allow["gen_ai.guardrail.result"] == "allow");
  CHECK(allow.count("gen_ai.guardrail.rule") == 0);
  CHECK(allow["gen_ai.tool.call.id"] == "1");
  CHECK(records[0]["severityText"] == "INFO");
  CHECK(deny["gen_ai.tool.name"] == "delete_user");
  CHECK(deny["gen_ai.tool.call.id"] == "two");
  CHECK(deny["gen_ai.guardrail.result"] == "deny");
  CHECK(deny["gen_ai.guardrail.rule"] == "no_delete");
  CHECK(deny["gen_ai.guardrail.mode"] == "enforce");
  CHECK(deny["gen_ai.conversation.id"] == "t");
  CHECK(deny["gen_ai.tool.call.arguments"] == R"({"user":"***"})");  // masked as in the decision log
  CHECK(deny["trajcheck.decision_id"] == "t:2");
  CHECK(deny["trajcheck.forwarded"] == false);
  CHECK(deny["trajcheck.rules_digest"] == "sha256:abc");
  CHECK(records[1]["body"]["stringValue"] == "never");
  CHECK(records[1]["severityText"] == "WARN");
}

TEST_CASE("guard session: decision events the collector does not take are counted and fail the session") {
  Collector collector;
  collector.status = 400;  // not retryable: the batch is lost
  GuardOptions o;
  o.otlp_endpoint = collector.url() + "/v1/logs";  // a signal URL is used as it is
  Session s("rule no_delete: forbid delete_user\n", o);
  s.client(call("1", "delete_user") + "\n");
  CHECK_FALSE(s.finish());
  CHECK(s.log_text().find("guard: 1 of 1 decision events could not be exported to " + collector.url() +
                          "/v1/logs: " + collector.url() + "/v1/logs answered 400") != std::string::npos);
}

TEST_CASE("guard session: an OTLP endpoint that is no URL is refused before anything runs") {
  RuleSetResult rs = compile_rule_set(std::vector<Source>{Source("g.rules", "forbid x\n")});
  for (const char* bad : {"127.0.0.1:4318", "ftp://host", "http://", "http://host:99999", "http://a b"}) {
    GuardOptions o;
    o.otlp_endpoint = bad;
    GuardSession g(rs.rules, o, stderr);
    std::string error;
    INFO(bad);
    CHECK_FALSE(g.open_trace(&error));
    CHECK(error.find("--otlp-endpoint '") == 0);
  }
}
