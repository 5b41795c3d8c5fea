// Helpers of the run-layer tests, which rebuild the golden folders' outputs in-process.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace run_test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs from inside `dir` (as the golden runner does), so that origins read "traces.jsonl:2".
struct InDir {
  explicit InDir(const std::string& dir) {
    char buf[4096];
    REQUIRE(::getcwd(buf, sizeof buf) != nullptr);
    old = buf;
    REQUIRE(::chdir(dir.c_str()) == 0);
  }
  ~InDir() { (void)::chdir(old.c_str()); }
  std::string old;
};

}  // namespace run_test
