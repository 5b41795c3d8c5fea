// gzip through zlib, zstd through libzstd: their streaming APIs hand out every byte decoded
// before a corruption or a truncation, so the records before it are still read.
#include "readers/input_stream.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

namespace trajcheck::detail {

namespace {
constexpr std::size_t kChunk = 1 << 16;

// A zstd frame's magic number, or a skippable frame's (pzstd writes one before each frame;
// the decoder passes over them), little-endian.
bool zstd_magic(const unsigned char* b) {
  const std::uint32_t magic = std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
  return magic == ZSTD_MAGICNUMBER || (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}
}  // namespace

struct InputStream::Impl {
  enum class Codec { unknown, plain, gzip, zstd };
  std::FILE* file = nullptr;
  bool owns = false;
  Codec codec = Codec::unknown;
  // Not zeroed: a page of it is touched (a page fault, ~10 µs on a virtual machine) only when
  // bytes are read into it, and a plain file read with pread (plain_file_descriptor) never is.
  std::unique_ptr<unsigned char[]> buffer{new unsigned char[kChunk]};
  unsigned char* const in = buffer.get();
  std::size_t in_pos = 0, in_end = 0;
  bool in_eof = false;
  bool done = false;  // end reached or an error reported
  z_stream z{};
  bool z_init = false;
  bool z_member_ended = true;  // between gzip members (a file may hold several)
  ZSTD_DStream* zs = nullptr;
  std::size_t zs_last = 0;  // ZSTD_decompressStream's last hint: 0 when a frame is complete
  // Newlines in the decompressed bytes handed out, and the line the current gzip member or
  // zstd frame began on: its checksum is at its end, so a corruption found there (or in its
  // middle) makes every record read from that line on suspect, and the error says so.
  std::uint64_t lines_out = 0, member_line = 1;

  void member_starts(const char* buf, std::size_t produced) {
    member_line = lines_out + static_cast<std::uint64_t>(std::count(buf, buf + produced, '\n')) + 1;
  }
  std::size_t count_lines(const char* buf, std::size_t k) {
    lines_out += static_cast<std::uint64_t>(std::count(buf, buf + k, '\n'));
    return k;
  }
  std::string suspect(std::string_view unit) const {
    return fmt::format("; the records from line {} to here were read from this {} before its corruption was "
                       "found and may be corrupt too", member_line, unit);
  }

  ~Impl() { close(); }

  void close() {
    if (file && owns) std::fclose(file);
    file = nullptr;
    if (z_init) inflateEnd(&z);
    z_init = false;
    if (zs) ZSTD_freeDStream(zs);
    zs = nullptr;
  }

  // Refills `in` when it is used up; false at the end of the file or on a read error.
  bool fill(std::string& error) {
    if (in_pos < in_end) return true;
    if (in_eof) return false;
    in_pos = 0;
    in_end = std::fread(in, 1, kChunk, file);
    if (in_end == 0) {
      in_eof = true;
      if (std::ferror(file)) error = fmt::format("read error: {}", std::strerror(errno));
      return false;
    }
    return true;
  }

  void detect(std::string& error) {
    // The magic numbers may straddle reads (a pipe can deliver one byte at a time).
    while (in_end < 4 && !in_eof) {
      std::size_t n = std::fread(in + in_end, 1, 4 - in_end, file);
      if (n == 0) {
        in_eof = true;
        if (std::ferror(file)) error = fmt::format("read error: {}", std::strerror(errno));
      }
      in_end += n;
    }
    const unsigned char* b = in;
    if (in_end >= 2 && b[0] == 0x1f && b[1] == 0x8b) codec = Codec::gzip;
    else if (in_end >= 4 && zstd_magic(b)) codec = Codec::zstd;
    else codec = Codec::plain;
  }

  std::size_t read_plain(char* buf, std::size_t n, std::string& error) {
    if (in_pos < in_end) {
      std::size_t k = std::min(n, in_end - in_pos);
      std::memcpy(buf, in + in_pos, k);
      in_pos += k;
      return k;
    }
    if (in_eof) return 0;
    std::size_t k = std::fread(buf, 1, n, file);
    if (k == 0) {
      in_eof = true;
      if (std::ferror(file)) error = fmt::format("read error: {}", std::strerror(errno));
    }
    return k;
  }

  // Both decoders are also called with no input left: output they still hold comes first.
  std::size_t read_gzip(char* buf, std::size_t n, std::string& error) {
    if (!z_init) {
      if (inflateInit2(&z, 15 + 16) != Z_OK) {
        error = "cannot start gzip decompression";
        return 0;
      }
      z_init = true;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = static_cast<uInt>(n);
    while (z.avail_out == n) {
      bool have = fill(error);
      if (!error.empty() || (!have && z_member_ended)) break;
      if (have && z_member_ended) {
        inflateReset(&z);
        z_member_ended = false;
        member_starts(buf, n - z.avail_out);
      }
      z.next_in = have ? in + in_pos : nullptr;
      z.avail_in = have ? static_cast<uInt>(in_end - in_pos) : 0;
      int rc = inflate(&z, Z_NO_FLUSH);
      if (have) in_pos = in_end - z.avail_in;
      if (rc == Z_STREAM_END) {
        z_member_ended = true;
      } else if (rc == Z_BUF_ERROR && !have) {
        if (z.avail_out == n) error = "truncated gzip stream";
        break;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        error = fmt::format("corrupt gzip stream: {}{}", z.msg ? z.msg : zError(rc), suspect("gzip member"));
        break;
      }
    }
    return count_lines(buf, n - z.avail_out);
  }

  std::size_t read_zstd(char* buf, std::size_t n, std::string& error) {
    if (!zs) {
      zs = ZSTD_createDStream();
      if (!zs) {
        error = "cannot start zstd decompression";
        return 0;
      }
    }
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      bool have = fill(error);
      if (!error.empty() || (!have && zs_last == 0)) break;  // a read error, or the end after a whole frame
      if (have && zs_last == 0) member_starts(buf, out.pos);
      ZSTD_inBuffer inb{in, have ? in_end : 0, have ? in_pos : 0};
      std::size_t rc = ZSTD_decompressStream(zs, &out, &inb);
      if (have) in_pos = inb.pos;
      if (ZSTD_isError(rc)) {
        error = fmt::format("corrupt zstd stream: {}{}", ZSTD_getErrorName(rc), suspect("zstd frame"));
        break;
      }
      zs_last = rc;
      if (!have && out.pos == 0) {
        if (zs_last != 0) error = "truncated zstd stream";
        break;
      }
    }
    return count_lines(buf, out.pos);
  }

  std::size_t read(char* buf, std::size_t n, std::string& error) {
    if (done || !file || n == 0) return 0;
    if (codec == Codec::unknown) detect(error);
    std::size_t k = 0;
    if (error.empty()) {
      switch (codec) {
        case Codec::unknown:
        case Codec::plain: k = read_plain(buf, n, error); break;
        case Codec::gzip: k = read_gzip(buf, n, error); break;
        case Codec::zstd: k = read_zstd(buf, n, error); break;
      }
    }
    if (k == 0) done = true;
    // An error after some bytes is reported on the next call, once these are used.
    if (k > 0 && !error.empty()) {
      pending_error = std::move(error);
      error.clear();
    }
    return k;
  }
  std::string pending_error;
};

InputStream::InputStream() : impl_(std::make_unique<Impl>()) {}
InputStream::~InputStream() = default;
InputStream::InputStream(InputStream&&) noexcept = default;
InputStream& InputStream::operator=(InputStream&&) noexcept = default;

void InputStream::open(std::FILE* f, bool owns, bool detect) {
  impl_ = std::make_unique<Impl>();
  impl_->file = f;
  impl_->owns = owns;
  if (!detect) impl_->codec = Impl::Codec::plain;
}

bool InputStream::compressed() const {
  return impl_->codec == Impl::Codec::gzip || impl_->codec == Impl::Codec::zstd;
}

int InputStream::plain_file_descriptor() const {
  if (impl_->codec != Impl::Codec::plain || !impl_->file || !impl_->pending_error.empty()) return -1;
  const int fd = ::fileno(impl_->file);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return fd;
}

void InputStream::close() { impl_->close(); }
bool InputStream::is_open() const { return impl_->file != nullptr; }

std::size_t InputStream::read(char* buf, std::size_t n, std::string& error) {
  if (!impl_->pending_error.empty()) {
    error = std::move(impl_->pending_error);
    impl_->pending_error.clear();
    impl_->done = true;
    return 0;
  }
  return impl_->read(buf, n, error);
}

std::string_view strip_compression_suffix(std::string_view path) {
  for (std::string_view ext : {".gz", ".zst", ".zstd"})
    if (path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext)
      return path.substr(0, path.size() - ext.size());
  return path;
}

bool has_extension(std::string_view path, std::string_view ext) {
  std::string_view p = strip_compression_suffix(path);
  return p.size() >= ext.size() && p.substr(p.size() - ext.size()) == ext;
}

}  // namespace trajcheck::detail
