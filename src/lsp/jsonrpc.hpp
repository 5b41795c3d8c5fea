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
  // kind message: the message. kind bad: the start (at most 4 KiB) of the bytes skipped after
  // the bad header block, up to the next `Content-Length` header — the body of the message
  // whose header was bad, if any — so that its id can be recovered for an error response.
  std::string body;
  std::string error;
};

// Reads frames off a stream: header lines up to an empty line (`\r\n`, or a bare `\n`), then
// exactly Content-Length bytes. Header names are case-insensitive; other headers
// (Content-Type) are ignored. After a header block without a usable length, the bytes up to
// the next `Content-Length` header name are skipped: a body whose length is not known cannot
// be read, and must not be read as the headers of the messages after it.
class FrameReader {
 public:
  explicit FrameReader(std::istream& in) : in_(in) {}
  Frame next();

 private:
  int get();  // the next byte: what resynchronizing read ahead first, then the stream
  bool read_line(std::string& line, bool& too_long);
  void skip_to_header(std::string& skipped);

  std::istream& in_;
  std::string pending_;  // a header name read while resynchronizing, read again first
  std::size_t pending_at_ = 0;
};

// `Content-Length: N\r\n\r\n` followed by the body.
std::string frame(std::string_view body);

}  // namespace trajcheck::lsp
