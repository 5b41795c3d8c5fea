// run_guard against a stand-in server (`sh -c 'cat > FILE'`: it records what reaches it and
// never answers): what is forwarded, what the client gets back, and the recorded trace.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "trajcheck/guard.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {

struct Run {
  std::string forwarded, to_client, log, trace;
  GuardStats stats;
  int status = -1;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Run guard(const std::string& rules, const std::string& client_lines) {
  RuleSetResult rs = compile_rule_set(std::vector<Source>{Source("g.rules", rules)});
  REQUIRE(rs.ok());
  fs::path dir = fs::temp_directory_path() / ("trajcheck_guard_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "client.jsonl", std::ios::binary) << client_lines;
  std::FILE* in = std::fopen((dir / "client.jsonl").c_str(), "rb");
  std::FILE* out = std::fopen((dir / "out.jsonl").c_str(), "wb");
  std::FILE* log = std::fopen((dir / "log.txt").c_str(), "wb");
  REQUIRE((in && out && log));
  GuardOptions o;
  o.trace_out = (dir / "trace.jsonl").string();
  Run r;
  r.status = run_guard(rs.rules, o, {"sh", "-c", "cat > '" + (dir / "server.jsonl").string() + "'"}, in, out, log, &r.stats);
  std::fclose(in);
  std::fclose(out);
  std::fclose(log);
  r.forwarded = slurp(dir / "server.jsonl");
  r.to_client = slurp(dir / "out.jsonl");
  r.log = slurp(dir / "log.txt");
  r.trace = slurp(dir / "trace.jsonl");
  fs::remove_all(dir);
  return r;
}

}  // namespace

TEST_CASE("guard: a call forwarded and never answered is recorded, with status error, and counts for the next") {
  Run r = guard("rule one_lookup: lookup at most 1\n",
                R"({"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"lookup","arguments":{"q":1}}})"
                "\n"
                R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"lookup","arguments":{"q":2}}})"
                "\n");
  CHECK(r.status == 0);
  CHECK(r.stats.calls == 2);
  CHECK(r.stats.unanswered == 1);
  // The first was forwarded, unanswered yet: it is a step when the second is decided.
  CHECK(r.stats.denied == 1);
  CHECK(r.to_client.find(R"("id":"a")") != std::string::npos);
  CHECK(r.forwarded.find(R"("q":1)") != std::string::npos);
  CHECK(r.forwarded.find(R"("q":2)") == std::string::npos);
  CHECK(r.trace.find(R"("id":"b")") != std::string::npos);
  CHECK(r.trace.find(R"("status":"error")") != std::string::npos);
  CHECK(r.trace.find(R"("unanswered":true)") != std::string::npos);
  CHECK(r.log.find("the call of lookup (id \"b\") was never answered") != std::string::npos);
  CHECK(r.stats.violated_at_end == 0);
}

TEST_CASE("guard: a JSON-RPC batch holding a tools/call is refused, not forwarded; other batches pass") {
  const std::string ping = R"([{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}])";
  Run r = guard("forbid delete_*\n",
                ping + "\n" +
                    R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_all"}},)"
                    R"({"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/y"}])"
                    "\n");
  CHECK(r.forwarded == ping + "\n");  // the calls' batch never reached the server
  CHECK(r.stats.batches_refused == 1);
  // Each request of the refused batch gets an error (one array back); the notification none.
  CHECK(r.to_client.find(R"([{"error":{"code":-32600,)") == 0);
  CHECK(r.to_client.find(R"("id":1)") != std::string::npos);
  CHECK(r.to_client.find(R"("id":2)") != std::string::npos);
  CHECK(r.log.find("refused a batch of 3 messages holding a tools/call") != std::string::npos);
  CHECK(r.stats.calls == 0);
}

TEST_CASE("guard: SIGTERM ends the session with the server stopped and the trace complete") {
  RuleSetResult rs = compile_rule_set(std::vector<Source>{Source("g.rules", "rule r: lookup at most 5\n")});
  REQUIRE(rs.ok());
  fs::path dir = fs::temp_directory_path() / ("trajcheck_guard_term_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  int client[2];
  REQUIRE(::pipe(client) == 0);
  std::FILE* in = ::fdopen(client[0], "rb");
  std::FILE* out = std::fopen((dir / "out.jsonl").c_str(), "wb");
  std::FILE* log = std::fopen((dir / "log.txt").c_str(), "wb");
  GuardOptions o;
  o.trace_out = (dir / "trace.jsonl").string();
  o.trace_id = "term";
  int status = -1;
  // The server reads its input and never answers nor ends on its own.
  std::thread t([&] { status = run_guard(rs.rules, o, {"sh", "-c", "cat > /dev/null"}, in, out, log); });
  const std::string c =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{}}})"
      "\n";
  REQUIRE(::write(client[1], c.data(), c.size()) == static_cast<ssize_t>(c.size()));
  ::usleep(300000);
  ::kill(::getpid(), SIGTERM);
  t.join();
  ::close(client[1]);
  std::fclose(in);
  std::fclose(out);
  std::fclose(log);
  CHECK(status == 128 + SIGTERM);
  const std::string trace = slurp(dir / "trace.jsonl");
  CHECK(trace.find(R"({"trace_id":"term","steps":[{)") == 0);
  CHECK(trace.find(R"("unanswered":true)") != std::string::npos);
  CHECK(trace.size() > 3);
  CHECK(trace.substr(trace.size() - 3) == "]}\n");
  fs::remove_all(dir);
}
