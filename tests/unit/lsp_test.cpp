// The language server's parts below the conversation test: Content-Length framing, UTF-16
// positions, file URIs, and the debounce of the server state machine (driven with a fake clock).
#include <doctest/doctest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lsp/jsonrpc.hpp"
#include "lsp/server.hpp"
#include "lsp/text.hpp"

using namespace trajcheck;
using namespace trajcheck::lsp;
using nlohmann::json;

TEST_CASE("framing: Content-Length messages, case-insensitive headers, bare newlines") {
  std::istringstream in(frame(R"({"a":1})") + "content-length: 2\nContent-Type: x\n\n[]" + frame(""));
  Frame f = read_frame(in);
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == R"({"a":1})");
  f = read_frame(in);
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == "[]");
  f = read_frame(in);
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body.empty());
  CHECK(read_frame(in).kind == Frame::Kind::eof);
}

TEST_CASE("framing: a bad header block is reported and the next message still read") {
  std::istringstream in("Content-Type: json\r\n\r\nContent-Length: x1\r\n\r\nno colon\r\n\r\n" + frame("{}"));
  Frame f = read_frame(in);
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error == "a message without a Content-Length header");
  f = read_frame(in);
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error.find("not a number") != std::string::npos);
  CHECK(read_frame(in).kind == Frame::Kind::bad);
  f = read_frame(in);
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == "{}");
}

TEST_CASE("framing: a truncated body ends the stream; an oversized one is skipped") {
  std::istringstream cut("Content-Length: 10\r\n\r\n{}");
  CHECK(read_frame(cut).kind == Frame::Kind::eof);
  std::string big(kMaxMessageBytes + 1, ' ');
  std::istringstream in(frame(big) + frame("{}"));
  Frame f = read_frame(in);
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error.find("larger than the limit") != std::string::npos);
  CHECK(read_frame(in).body == "{}");
}

TEST_CASE("positions: UTF-16 code units and UTF-8 bytes") {
  std::string text = "a\xC3\xA9\xF0\x9F\x9A\x80z\r\nsecond\n";  // a é 🚀 z
  LineIndex index(text);
  std::uint32_t z = static_cast<std::uint32_t>(text.find('z'));
  CHECK(index.position(z, Encoding::utf16).character == 4);  // a, é, two units for 🚀
  CHECK(index.position(z, Encoding::utf8).character == 7);
  CHECK(index.offset({0, 4}, Encoding::utf16) == z);
  CHECK(index.offset({0, 3}, Encoding::utf16) == 3);  // inside the surrogate pair: before it
  CHECK(index.offset({0, 99}, Encoding::utf16) == z + 1);  // clamped before "\r\n"
  CHECK(index.offset({1, 0}, Encoding::utf16) == text.find("second"));
  CHECK(index.offset({9, 0}, Encoding::utf16) == text.size());
  CHECK(index.position(static_cast<std::uint32_t>(text.size()), Encoding::utf16).line == 2);
  CHECK(index.line_end(0) == z + 1);
  // Invalid UTF-8 counts a unit per byte.
  LineIndex bad("\xFF\xFEx");
  CHECK(bad.position(2, Encoding::utf16).character == 2);
}

TEST_CASE("URIs") {
  CHECK(uri_to_path("file:///a/b%20c.rules") == "/a/b c.rules");
  CHECK(uri_to_path("file://localhost/x") == "/x");
  CHECK(uri_to_path("untitled:Untitled-1").empty());
  CHECK(uri_to_path("file://server/share/x").empty());
  CHECK(path_to_uri("/a/b c#.rules") == "file:///a/b%20c%23.rules");
  CHECK(uri_to_path(path_to_uri("/tmp/é x.rules")) == "/tmp/é x.rules");
}

namespace {

struct Harness {
  std::vector<json> sent;
  Server server{[this](const std::string& body) { sent.push_back(json::parse(body)); }, ServerOptions{200, nullptr}};
  Clock::time_point t0 = Clock::now();
  void send(const json& m, int ms = 0) { server.handle(m.dump(), t0 + std::chrono::milliseconds(ms)); }
  int publications() const {
    int n = 0;
    for (const json& m : sent) n += m.value("method", "") == "textDocument/publishDiagnostics";
    return n;
  }
};

json change(int version, const std::string& text) {
  return {{"jsonrpc", "2.0"}, {"method", "textDocument/didChange"},
          {"params", {{"textDocument", {{"uri", "untitled:a.rules"}, {"version", version}}},
                      {"contentChanges", json::array({{{"text", text}}})}}}};
}

}  // namespace

TEST_CASE("debounce: diagnostics follow the last change once it has been quiet for 200 ms") {
  Harness h;
  h.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"capabilities", json::object()}}}});
  h.send({{"jsonrpc", "2.0"}, {"method", "textDocument/didOpen"},
          {"params", {{"textDocument", {{"uri", "untitled:a.rules"}, {"languageId", "trajcheck-rules"},
                                        {"version", 1}, {"text", "forbid a\n"}}}}}});
  CHECK(h.publications() == 1);  // opening publishes at once
  h.send(change(2, "forbid a b\n"), 0);
  h.send(change(3, "forbid a |\n"), 50);
  h.send(change(4, "forbid a | b\n"), 100);
  REQUIRE(h.server.next_due());
  CHECK(*h.server.next_due() == h.t0 + std::chrono::milliseconds(300));
  h.server.publish_due(h.t0 + std::chrono::milliseconds(299));
  CHECK(h.publications() == 1);
  h.server.publish_due(h.t0 + std::chrono::milliseconds(300));
  CHECK(h.publications() == 2);
  CHECK(h.sent.back()["params"]["version"] == 4);
  CHECK(h.sent.back()["params"]["diagnostics"].empty());
  CHECK_FALSE(h.server.next_due());
}
