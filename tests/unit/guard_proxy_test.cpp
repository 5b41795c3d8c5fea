// run_guard against a stand-in server (`sh -c 'cat > FILE'`: it records what reaches it and
// never answers): what is forwarded, what the client gets back, and the recorded trace.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

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

TEST_CASE("guard: a call forwarded and never answered is recorded, with status error, in call order") {
  Run r = guard("rule one_lookup: lookup at most 1\n",
                R"({"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"lookup","arguments":{"q":1}}})"
                "\n"
                R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"lookup","arguments":{"q":2}}})"
                "\n");
  CHECK(r.status == 0);
  CHECK(r.stats.calls == 2);
  CHECK(r.stats.unanswered == 2);
  CHECK(r.stats.denied == 0);  // the first was never answered, so the second was allowed when asked
  CHECK(r.to_client.empty());
  // Both calls reached the server; both are steps of the trace, "b" first, as they were made.
  CHECK(r.forwarded.find(R"("q":1)") < r.forwarded.find(R"("q":2)"));
  CHECK(r.trace.find(R"("id":"b")") < r.trace.find(R"("id":"a")"));
  CHECK(r.trace.find(R"("status":"error")") != std::string::npos);
  CHECK(r.trace.find(R"("unanswered":true)") != std::string::npos);
  CHECK(r.log.find("the call of lookup (id \"b\") was never answered") != std::string::npos);
  // Recorded, the two lookups break the limit: the end of the run says so.
  CHECK(r.stats.violated_at_end == 1);
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
