// A file or standard input read as bytes, decompressed on the fly when it is a gzip or zstd
// stream (recognized by its first bytes, whatever its name): production logs are stored
// compressed, and reading them must not need a temporary file or the whole text in memory.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace trajcheck::detail {

// The largest record (a JSONL line) and the largest `.json` file (decompressed) RecordSource
// reads; past them the record or the file is rejected and reading goes on (docs/limits.md).
constexpr std::size_t kMaxRecordBytes = std::size_t(64) << 20;
constexpr std::size_t kMaxJsonFileBytes = std::size_t(1) << 30;

class InputStream {
 public:
  InputStream();
  ~InputStream();
  InputStream(InputStream&&) noexcept;
  InputStream& operator=(InputStream&&) noexcept;

  // Starts reading `f` (closed by close() when `owns`). With `detect` false its bytes are read
  // as they are (a byte range that starts inside a plain file: its first bytes are no magic).
  void open(std::FILE* f, bool owns, bool detect = true);
  void close();
  bool is_open() const;

  // Up to `n` bytes of the (decompressed) text; 0 at the end or on an error, which sets
  // `error` ("read error: …", "corrupt gzip stream: …", "truncated zstd stream"). Every
  // byte decompressed before an error is returned first.
  std::size_t read(char* buf, std::size_t n, std::string& error);
  // Whether the bytes read so far were decompressed (known after the first read).
  bool compressed() const;
  // The descriptor of the file when its bytes are read as they are (not compressed, known
  // after the first read) and it is a regular file, so that they may be read at any offset
  // (pread) instead of in turn; -1 otherwise, or once a read error is pending.
  int plain_file_descriptor() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A path's name without a trailing ".gz", ".zst" or ".zstd" (to tell `.json` from `.jsonl`).
std::string_view strip_compression_suffix(std::string_view path);
// Whether the path ends in `ext` (".json"), before any compression suffix.
bool has_extension(std::string_view path, std::string_view ext);

}  // namespace trajcheck::detail
