// bench_rusage OUT CMD [ARG…]: runs CMD with the standard streams it was given, then writes to
// OUT one line "MAXRSS_KB USER_S SYSTEM_S" of CMD's resource use (CPU times to the
// microsecond), and exits with CMD's exit status (128 + the signal when it was killed).
// bench/run.sh times every run with it: /usr/bin/time prints CPU time to a hundredth of a
// second, too coarse for figures that take a tenth.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs("usage: bench_rusage OUT CMD [ARG...]\n", stderr);
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    std::perror(argv[2]);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) < 0) {
    std::perror("wait4");
    return 2;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 2;
  }
  std::fprintf(out, "%ld %ld.%06ld %ld.%06ld\n", ru.ru_maxrss, static_cast<long>(ru.ru_utime.tv_sec),
               static_cast<long>(ru.ru_utime.tv_usec), static_cast<long>(ru.ru_stime.tv_sec),
               static_cast<long>(ru.ru_stime.tv_usec));
  if (std::fclose(out) != 0) {
    std::perror(argv[1]);
    return 2;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 2;
}
