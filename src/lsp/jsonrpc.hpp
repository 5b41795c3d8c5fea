// JSON-RPC 2.0 base protocol of LSP: messages framed by a `Content-Length` header.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace trajcheck::lsp {

// Error codes of JSON-RPC 2.0 and LSP 3.17.
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kServerNotInitialized = -32002,
  kRequestFailed = -32803,
};

// A body larger than this is skipped (read and dropped) and reported, never buffered.
constexpr std::size_t kMaxMessageBytes = std::size_t{64} << 20;

struct Frame {
  enum class Kind {
    message,  // `body` holds one message
    bad,      // a header block that cannot be used (`error` says why); the reader resynchronizes
    eof,      // the stream ended (a partial message at the end is dropped)
  };
  Kind kind = Kind::eof;
  std::string body;
  std::string error;
};

// Reads the next frame: header lines up to an empty line (`\r\n`, or a bare `\n`), then
// exactly Content-Length bytes. Header names are case-insensitive; other headers
// (Content-Type) are ignored.
Frame read_frame(std::istream& in);

// `Content-Length: N\r\n\r\n` followed by the body.
std::string frame(std::string_view body);

}  // namespace trajcheck::lsp
