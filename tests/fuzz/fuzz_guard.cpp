// libFuzzer target for the guard's framing and decision path (GuardSession): bytes in,
// forwarded or refused out. The input's bytes before the first 0x01 are the client's, those
// after it the server's; both are fed in chunks (of a size the first byte picks), a server
// chunk after each client chunk. Under `forbid delete_user` and `refund at most 1`, every
// message forwarded must be strict JSON on one line, never a delete_user call (in any
// spelling the guard folds), never a batch holding a call, and refund is forwarded at most once.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "trajcheck/guard.hpp"

namespace {

using json = nlohmann::json;

const std::shared_ptr<const trajcheck::RuleSet>& rules() {
  static const auto r = trajcheck::compile_rule_set(std::vector<trajcheck::Source>{trajcheck::Source(
      "g.rules", "rule no_delete: forbid delete_user\nrule one_refund: refund at most 1\n")}).rules;
  return r;
}

std::string folded(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_call(const json& m) {
  return m.is_object() && m.contains("method") && m["method"].is_string() && folded(m["method"].get<std::string>()) == "tools/call";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 64 * 1024) return 0;
  static std::FILE* devnull = std::fopen("/dev/null", "w");
  const std::size_t chunk = data[0] % 64 + 1;
  const std::string all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t split = all.find('\x01');
  const std::string client = all.substr(0, split);
  const std::string server = split == std::string::npos ? std::string() : all.substr(split + 1);

  trajcheck::GuardOptions o;
  o.max_message_bytes = 4096;
  trajcheck::GuardSession g(rules(), o, devnull);
  trajcheck::GuardSession::Output out;
  for (std::size_t i = 0, j = 0; i < client.size() || j < server.size(); i += chunk, j += chunk) {
    if (i < client.size()) g.client_bytes(std::string_view(client).substr(i, chunk), out);
    if (j < server.size()) g.server_bytes(std::string_view(server).substr(j, chunk));
  }
  g.client_end(out);
  g.server_end();
  g.finish();

  int refunds = 0;
  std::size_t start = 0;
  while (start < out.to_server.size()) {
    const std::size_t nl = out.to_server.find('\n', start);
    if (nl == std::string::npos) std::abort();  // every message forwarded ends in \n
    const std::string line = out.to_server.substr(start, nl - start);
    start = nl + 1;
    if (line.find('\r') != std::string::npos) std::abort();  // a \r would end a message for the server
    json m = json::parse(line, nullptr, false);
    if (m.is_discarded()) std::abort();  // forwarded bytes the guard could not read
    if (m.is_array()) {
      for (const json& e : m)
        if (is_call(e)) std::abort();
      continue;
    }
    if (!is_call(m)) continue;
    const json& name = m["params"]["name"];
    if (!name.is_string()) std::abort();
    const std::string tool = folded(name.get<std::string>());
    if (tool == "delete_user") std::abort();
    if (tool == "refund" && ++refunds > 1) std::abort();
  }
  return 0;
}
