// Content-Length framing. A header block without a usable length is reported, and what
// follows it is skipped up to the next Content-Length header, so one bad message does not
// desynchronize the ones after it.
#include "lsp/jsonrpc.hpp"

#include <charconv>

#include <fmt/format.h>

namespace trajcheck::lsp {

namespace {

constexpr std::size_t kMaxHeaderLine = 8192;
constexpr std::size_t kMaxSkippedKept = 4096;
constexpr std::string_view kLengthHeader = "content-length";

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

int FrameReader::get() {
  if (pending_at_ < pending_.size()) return static_cast<unsigned char>(pending_[pending_at_++]);
  return in_.get();
}

// One header line without its terminator; false at the end of the stream before any byte.
bool FrameReader::read_line(std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  int c;
  bool any = false;
  while ((c = get()) != std::char_traits<char>::eof()) {
    any = true;
    if (c == '\n') break;
    if (line.size() < kMaxHeaderLine) line += static_cast<char>(c);
    else too_long = true;
  }
  if (!any) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

// Reads up to and including the next `Content-Length` (any case), which is kept to be read
// again as the start of the next header line; what came before goes to `skipped` (its start).
void FrameReader::skip_to_header(std::string& skipped) {
  std::string window;  // the last bytes read, at most the header name's length
  int c;
  while ((c = get()) != std::char_traits<char>::eof()) {
    window += static_cast<char>(c);
    if (window.size() > kLengthHeader.size()) {
      if (skipped.size() < kMaxSkippedKept) skipped += window.front();
      window.erase(0, 1);
    }
    if (window.size() == kLengthHeader.size() && iequals(window, kLengthHeader)) {
      pending_ = std::move(window);
      pending_at_ = 0;
      return;
    }
  }
  if (skipped.size() < kMaxSkippedKept) skipped += window.substr(0, kMaxSkippedKept - skipped.size());
}

Frame FrameReader::next() {
  Frame f;
  std::string line;
  bool too_long = false, have_length = false, seen_header = false;
  std::size_t length = 0;
  std::string problem;
  while (true) {
    if (!read_line(line, too_long)) {
      f.kind = Frame::Kind::eof;
      return f;
    }
    if (line.empty()) {
      if (!seen_header) continue;  // stray blank lines between messages
      break;
    }
    seen_header = true;
    if (too_long) {
      problem = fmt::format("a header line is longer than {} bytes", kMaxHeaderLine);
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      problem = fmt::format("a header line without ':' ({:.60})", line);
      continue;
    }
    std::string_view name = trim(std::string_view(line).substr(0, colon));
    std::string_view value = trim(std::string_view(line).substr(colon + 1));
    if (!iequals(name, kLengthHeader)) continue;
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) {
      problem = fmt::format("Content-Length is not a number ({:.40})", value);
      continue;
    }
    length = n;
    have_length = true;
  }
  if (!have_length && problem.empty()) problem = "a message without a Content-Length header";
  if (!problem.empty()) {
    f.kind = Frame::Kind::bad;
    f.error = problem;
    skip_to_header(f.body);
    return f;
  }
  if (length > kMaxMessageBytes) {
    // (The header name kept by resynchronizing is part of a header line: the body is all in the stream.)
    in_.ignore(static_cast<std::streamsize>(length));
    f.kind = in_.gcount() == static_cast<std::streamsize>(length) ? Frame::Kind::bad : Frame::Kind::eof;
    f.error = fmt::format("a message of {} bytes is larger than the limit ({} bytes); skipped", length,
                          kMaxMessageBytes);
    return f;
  }
  f.body.resize(length);
  in_.read(f.body.data(), static_cast<std::streamsize>(length));
  if (in_.gcount() != static_cast<std::streamsize>(length)) {
    f.kind = Frame::Kind::eof;
    f.body.clear();
    return f;
  }
  f.kind = Frame::Kind::message;
  return f;
}

std::string frame(std::string_view body) {
  std::string out = fmt::format("Content-Length: {}\r\n\r\n", body.size());
  out += body;
  return out;
}

}  // namespace trajcheck::lsp
