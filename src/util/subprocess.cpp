// run_command: posix_spawn + poll, with the child in a process group of its own so that a
// timeout ends whatever the shell started, not only the shell.
#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace trajcheck::detail {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  bool open() { return ::pipe2(fd, O_CLOEXEC) == 0; }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
};

constexpr std::size_t kErrTail = 4096;

}  // namespace

CommandResult run_command(const std::string& command, const std::string& cwd, const std::string& input,
                          std::uint64_t timeout_ms, std::size_t max_out) {
  CommandResult r;
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    r.error = std::string("cannot create pipes: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  // Its own process group (to kill it whole), default signal handling (SIGPIPE included).
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.error = std::string("cannot start /bin/sh: ") + std::strerror(rc);
    return r;
  }
  r.started = true;
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);

  // A write to a grader that went away must fail with EPIPE, not kill us: block SIGPIPE in
  // this thread while writing, and take a pending one away afterwards.
  sigset_t pipe_set, old_mask;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms);
  std::size_t written = 0;
  if (input.empty()) in.close_end(1);
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd fds[3];
    nfds_t n = 0;
    int ix_in = -1, ix_out = -1, ix_err = -1;
    if (in.fd[1] >= 0) {
      ix_in = static_cast<int>(n);
      fds[n++] = {in.fd[1], POLLOUT, 0};
    }
    if (out.fd[0] >= 0) {
      ix_out = static_cast<int>(n);
      fds[n++] = {out.fd[0], POLLIN, 0};
    }
    if (err.fd[0] >= 0) {
      ix_err = static_cast<int>(n);
      fds[n++] = {err.fd[0], POLLIN, 0};
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      r.error = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (ix_in >= 0 && fds[ix_in].revents) {
      ssize_t w = ::write(in.fd[1], input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in.close_end(1);
    }
    auto drain = [&](Pipe& p, int ix, bool is_out) {
      if (ix < 0 || !fds[ix].revents) return;
      ssize_t got = ::read(p.fd[0], buf, sizeof buf);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (got <= 0) {
        p.close_end(0);
        return;
      }
      std::string& dst = is_out ? r.out : r.err;
      dst.append(buf, static_cast<std::size_t>(got));
      if (is_out && dst.size() > max_out) {
        dst.resize(max_out);
        r.truncated = true;
      }
      if (!is_out && dst.size() > 2 * kErrTail) dst.erase(0, dst.size() - kErrTail);
    };
    drain(out, ix_out, true);
    drain(err, ix_err, false);
    if (r.truncated) break;
  }
  in.close_end(1);
  if (r.timed_out || r.truncated || !r.error.empty()) ::kill(-pid, SIGKILL);
  // Both pipes closed: the command may still run (it closed them itself) until the limit.
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, r.timed_out ? 0 : WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (w == 0 && clock::now() >= deadline) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
    } else if (w == 0) {
      ::usleep(2000);
    }
  }
  // Whatever the shell left in its group (a grader's own children) ends with it.
  if (r.timed_out) ::kill(-pid, SIGKILL);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (r.err.size() > kErrTail) r.err.erase(0, r.err.size() - kErrTail);
  return r;
}

}  // namespace trajcheck::detail
