// The language server's parts below the conversation test: Content-Length framing, UTF-16
// positions, file URIs, and the debounce of the server state machine (driven with a fake clock).
#include <doctest/doctest.h>

#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lsp/analysis.hpp"
#include "lsp/jsonrpc.hpp"
#include "lsp/server.hpp"
#include "lsp/text.hpp"
#include "trajcheck/lsp.hpp"

using namespace trajcheck;
using namespace trajcheck::lsp;
using nlohmann::json;

TEST_CASE("framing: Content-Length messages, case-insensitive headers, bare newlines") {
  std::istringstream in(frame(R"({"a":1})") + "content-length: 2\nContent-Type: x\n\n[]" + frame(""));
  FrameReader frames(in);
  Frame f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == R"({"a":1})");
  f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == "[]");
  f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body.empty());
  CHECK(frames.next().kind == Frame::Kind::eof);
}

TEST_CASE("framing: a bad header block is reported and the next message still read") {
  std::istringstream in("Content-Type: json\r\n\r\nContent-Length: x1\r\n\r\nno colon\r\n\r\n" + frame("{}"));
  FrameReader frames(in);
  Frame f = frames.next();
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error == "a message without a Content-Length header");
  CHECK(f.body.empty());  // nothing between it and the next header
  f = frames.next();
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error.find("not a number") != std::string::npos);
  CHECK(f.body == "no colon\r\n\r\n");  // what followed, up to the next header, skipped
  f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == "{}");
  CHECK(frames.next().kind == Frame::Kind::eof);
}

TEST_CASE("framing: the body after a malformed Content-Length is skipped, not read as headers") {
  // A body carries no newline, so it runs straight into the next message's header.
  const std::string body = R"({"jsonrpc":"2.0","id":7,"method":"shutdown"})";
  std::istringstream in("Content-Length: 4x\r\n\r\n" + body + frame(R"({"a":1})") + "Content-Length: -1\r\n\r\n{}" +
                        frame(R"({"b":2})"));
  FrameReader frames(in);
  Frame f = frames.next();
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.body == body);
  f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == R"({"a":1})");
  CHECK(frames.next().kind == Frame::Kind::bad);
  f = frames.next();
  CHECK(f.kind == Frame::Kind::message);
  CHECK(f.body == R"({"b":2})");
  CHECK(frames.next().kind == Frame::Kind::eof);
  // A bad block at the end: the rest is skipped, then the stream ends.
  std::istringstream tail("Content-Length: nope\r\n\r\n{\"id\": 3}");
  FrameReader t(tail);
  f = t.next();
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.body == "{\"id\": 3}");
  CHECK(t.next().kind == Frame::Kind::eof);
}

TEST_CASE("framing: a truncated body ends the stream; an oversized one is skipped") {
  std::istringstream cut("Content-Length: 10\r\n\r\n{}");
  CHECK(FrameReader(cut).next().kind == Frame::Kind::eof);
  std::string big(kMaxMessageBytes + 1, ' ');
  std::istringstream in(frame(big) + frame("{}"));
  FrameReader frames(in);
  Frame f = frames.next();
  CHECK(f.kind == Frame::Kind::bad);
  CHECK(f.error.find("larger than the limit") != std::string::npos);
  CHECK(frames.next().body == "{}");
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

TEST_CASE("analysis: a chain of groups each using the last three times is not expanded 3^N times") {
  // g1 = a | b; gN = gN-1 | gN-1 | gN-1: the compiler shares each group; so must the server.
  std::string text = "group g1 = a | b\n";
  for (int i = 2; i <= 40; ++i)
    text += fmt::format("group g{} = g{} | g{} | g{}\n", i, i - 1, i - 1, i - 1);
  text += "rule r:\n    forbid g40 where arguments.x == 1\n";
  AnalysisContext ctx;
  ctx.read = [](const std::string&) { return std::optional<std::string>(); };
  Analysis a = analyze_rules("", text, ctx);
  CHECK(a.group_tools.at("g40") == std::vector<std::string>{"a", "b"});
  CHECK(a.group_tools.at("g2") == std::vector<std::string>{"a", "b"});
  // A cycle (E018) names nothing more and ends.
  Analysis cyc = analyze_rules("", "group p = q | x\ngroup q = p | y\nforbid p\n", ctx);
  CHECK(cyc.group_tools.at("p") == std::vector<std::string>{"x", "y"});
}

TEST_CASE("a bad frame with a body is answered with a parse error under its id; the server goes on") {
  const std::string init = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}})";
  const std::string bad_body = R"({"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}})";
  const std::string shutdown = R"({"jsonrpc":"2.0","id":8,"method":"shutdown"})";
  std::istringstream in(frame(init) + "Content-Length: 12abc\r\n\r\n" + bad_body + frame(shutdown) +
                        frame(R"({"jsonrpc":"2.0","method":"exit"})"));
  std::ostringstream out;
  CHECK(run_language_server(in, out, ServerOptions{0, nullptr}) == 0);
  std::istringstream replies(out.str());
  FrameReader frames(replies);
  std::vector<json> got;
  for (Frame f = frames.next(); f.kind == Frame::Kind::message; f = frames.next()) got.push_back(json::parse(f.body));
  REQUIRE(got.size() == 3);
  CHECK(got[0]["id"] == 1);
  CHECK(got[1]["id"] == 7);
  CHECK(got[1]["error"]["code"] == kParseError);
  CHECK(got[1]["error"]["message"].get<std::string>().find("Content-Length is not a number") != std::string::npos);
  CHECK(got[2]["id"] == 8);
  CHECK(got[2]["result"].is_null());
}
