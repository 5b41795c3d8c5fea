#include "util/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace trajcheck {

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISFIFO(m)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(m)) return "is a socket, not a regular file";
  if (S_ISCHR(m) || S_ISBLK(m)) return "is a device, not a regular file";
  return "is not a regular file";
}

std::string size_text(std::uint64_t bytes) {
  if (bytes % (std::uint64_t(1) << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes % (std::uint64_t(1) << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

bool read_regular_file(const std::string& path, std::uint64_t limit, std::string& out, std::string& error) {
  out.clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = fmt::format("cannot open file: {}", std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = fmt::format("cannot open file: {}", std::strerror(errno));
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = kind_of(st.st_mode);
    ::close(fd);
    return false;
  }
  if (static_cast<std::uint64_t>(st.st_size) > limit) {
    error = fmt::format("file is larger than the {} limit", size_text(limit));
    ::close(fd);
    return false;
  }
  out.reserve(static_cast<std::size_t>(st.st_size));
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = fmt::format("read error: {}", std::strerror(errno));
      ::close(fd);
      out.clear();
      return false;
    }
    if (n == 0) break;
    // A file that grows while it is read is still held to the limit.
    if (out.size() + static_cast<std::uint64_t>(n) > limit) {
      error = fmt::format("file is larger than the {} limit", size_text(limit));
      ::close(fd);
      out.clear();
      return false;
    }
    out.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace trajcheck
