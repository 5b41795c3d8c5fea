// libFuzzer target for the language server: arbitrary bytes are read as Content-Length
// frames (or, when they do not start with a header, as one message body) and handed to the
// server after a fixed initialize and didOpen, so the handlers see documents too. Every
// reply must be valid JSON; nothing may crash or throw.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "lsp/jsonrpc.hpp"
#include "lsp/server.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trajcheck::lsp;
  if (size > 64 * 1024) return 0;
  std::string input(reinterpret_cast<const char*>(data), size);
  // Names of files the server would read: trace directories (workspace configuration) and
  // device files (a `catalog "/dev/zero"` line is read like any catalog, endlessly).
  if (input.find("Configuration") != std::string::npos || input.find("/dev/") != std::string::npos ||
      input.find("/proc/") != std::string::npos)
    return 0;
  Server server(
      [](const std::string& body) {
        if (nlohmann::json::parse(body, nullptr, false).is_discarded()) std::abort();
      },
      ServerOptions{200, nullptr});
  auto now = Clock::now();
  server.handle(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}})", now);
  server.handle(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{)"
                R"("uri":"untitled:f.rules","languageId":"trajcheck-rules","version":1,)"
                R"("text":"group g = a | b\nrule r [critical]:\n    g precedes c where arguments.x == 1\n"}}})",
                now);
  if (input.rfind("Content-Length", 0) != 0 && input.rfind("content-length", 0) != 0) {
    server.handle(input, now);
  } else {
    std::istringstream in(input);
    FrameReader frames(in);
    for (int i = 0; i < 64; ++i) {
      Frame f = frames.next();
      if (f.kind == Frame::Kind::eof) break;
      if (f.kind == Frame::Kind::bad) server.bad_frame(f.error, f.body);
      else server.handle(f.body, now);
    }
  }
  server.publish_due(now + std::chrono::hours(1));
  return 0;
}
