// run_command: standard input in, output out, exit status and signals, a time limit that ends
// the whole process group, output limits, and a command that never reads its input.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "util/subprocess.hpp"

using trajcheck::detail::run_command;

TEST_CASE("standard input reaches the command and its output comes back") {
  auto r = run_command("tr a-z A-Z", "", "hello\n", 5000);
  CHECK(r.started);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "HELLO\n");
}

TEST_CASE("exit status, standard error and a signal are reported") {
  auto r = run_command("echo oops >&2; exit 3", "", "", 5000);
  CHECK(r.exit_code == 3);
  CHECK(r.err == "oops\n");
  auto k = run_command("kill -9 $$", "", "", 5000);
  CHECK(k.signal == 9);
  CHECK(k.exit_code == -1);
}

TEST_CASE("the command runs in the folder it is given") {
  auto r = run_command("pwd", "/", "", 5000);
  CHECK(r.out == "/\n");
}

TEST_CASE("a timeout kills the whole process group, children included, without waiting for them") {
  auto start = std::chrono::steady_clock::now();
  auto r = run_command("sleep 30 & sleep 30", "", "", 300);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK(took < std::chrono::seconds(5));
  // A command that closes its output and lingers is timed out too.
  auto closed = run_command("exec >/dev/null 2>&1; sleep 30", "", "", 300);
  CHECK(closed.timed_out);
}

TEST_CASE("a command that never reads a large input neither blocks nor kills the caller") {
  std::string big(4 << 20, 'x');
  auto r = run_command("echo done", "", big, 5000);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "done\n");
}

TEST_CASE("output beyond the limit is cut and the command stopped") {
  auto r = run_command("yes", "", "", 5000, 1000);
  CHECK(r.truncated);
  CHECK(r.out.size() == 1000);
}
