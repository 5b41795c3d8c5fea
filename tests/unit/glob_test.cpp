// One glob matcher for every stage: `*` and `?` in the glob are wildcards, and in a tool
// name they are ordinary bytes, so the checker, lint and score agree on such names.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "language/frontend.hpp"
#include "metrics_test_util.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/rules.hpp"
#include "util/glob.hpp"
#include "util/glob_files.hpp"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace trajcheck;
using detail::glob_match;

TEST_CASE("glob_match: whole-string matching with * and ?") {
  CHECK(glob_match("delete_*", "delete_user"));
  CHECK(glob_match("delete_*", "delete_"));
  CHECK_FALSE(glob_match("delete_*", "undelete_user"));
  CHECK(glob_match("get_?", "get_x"));
  CHECK_FALSE(glob_match("get_?", "get_"));
  CHECK_FALSE(glob_match("get_?", "get_xy"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("**a**", "bab"));
  CHECK(glob_match("a*b*c", "aXbYbZc"));
  CHECK_FALSE(glob_match("a*b*c", "aXbYbZ"));
  CHECK(glob_match("", ""));
  CHECK_FALSE(glob_match("", "a"));
}

TEST_CASE("glob_match: ? is one character, however many bytes it takes in UTF-8") {
  CHECK(glob_match("get_?", "get_\xC3\xA9"));             // é, two bytes
  CHECK_FALSE(glob_match("get_??", "get_\xC3\xA9"));
  CHECK(glob_match("?", "\xE2\x82\xAC"));                // €, three bytes
  CHECK(glob_match("?", "\xF0\x9F\x98\x80"));            // an emoji, four bytes
  CHECK_FALSE(glob_match("??", "\xF0\x9F\x98\x80"));
  CHECK(glob_match("*?x", "\xC3\xA9\xC3\xA9x"));
  CHECK_FALSE(glob_match("*\xA9", "\xC3\xA9"));           // a lone continuation byte is no character
  CHECK(glob_match("*\xC3\xA9", "a\xC3\xA9"));
}

namespace {
// The glob matched over decoded characters, by plain recursion: the reference for ? and *.
bool reference_match(const std::vector<std::string>& g, std::size_t gi, const std::vector<std::string>& t,
                     std::size_t ti) {
  if (gi == g.size()) return ti == t.size();
  if (g[gi] == "*") {
    for (std::size_t k = ti; k <= t.size(); ++k)
      if (reference_match(g, gi + 1, t, k)) return true;
    return false;
  }
  if (ti == t.size()) return false;
  return (g[gi] == "?" || g[gi] == t[ti]) && reference_match(g, gi + 1, t, ti + 1);
}
}  // namespace

TEST_CASE("glob_match: agrees with matching over decoded characters") {
  const std::vector<std::string> chars = {"a", "b", "_", "\xC3\xA9", "\xC3\xA8", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> g, t;
    std::string gs, ts;
    for (int n = static_cast<int>(rng() % 6); n > 0; --n) {
      std::uint32_t r = rng() % 10;
      g.push_back(r == 0 ? "*" : r == 1 ? "?" : chars[rng() % chars.size()]);
      gs += g.back();
    }
    for (int n = static_cast<int>(rng() % 7); n > 0; --n) {
      t.push_back(chars[rng() % chars.size()]);
      ts += t.back();
    }
    CAPTURE(gs);
    CAPTURE(ts);
    CHECK(glob_match(gs, ts) == reference_match(g, 0, t, 0));
  }
}

TEST_CASE("glob_match: a * or ? inside the name is an ordinary byte") {
  CHECK(glob_match("a*", "a*b"));
  CHECK(glob_match("x*y", "x*zy"));
  CHECK(glob_match("x?y", "x*y"));
  CHECK(glob_match("x*", "x*"));
  CHECK(glob_match("*?", "?"));
  CHECK_FALSE(glob_match("x*y", "x*z"));
}

namespace {

Trajectory one_call(ToolTable& tools, const std::string& name) {
  Trajectory t(&tools);
  test::build(t, {{name}});
  return t;
}

}  // namespace

TEST_CASE("check, lint and score agree on a glob against a name holding a *") {
  ToolTable tools;
  Trajectory t = one_call(tools, "x*zy");

  // The checker: `forbid x*y` is violated by a call to x*zy.
  CompileResult compiled = compile(Source("t.rules", "forbid x*y\n"));
  REQUIRE(compiled.ok());
  Checker checker(compiled.program);
  std::vector<RuleResult> results;
  checker.check(t, results);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == VerdictStatus::violated);

  // Lint: an alias whose name the glob matches is used (no W001).
  Source rules("t.rules", "alias \"x*zy\" = other\nforbid x*y\n");
  language::FrontendResult lint = language::parse_rules(rules);
  CAPTURE(format_diagnostics(rules, lint.diagnostics));
  for (const Diagnostic& d : lint.diagnostics) CHECK(d.code != "W001");

  // Score: the PATH glob x*y matches the call to x*zy.
  Scorer scorer;
  ScoreResult r = scorer.score(t, "x*y");
  REQUIRE(r.error.empty());
  CHECK(r.selection == 1.0);
  CHECK(*r.ordering == 1.0);
}

TEST_CASE("glob_files: what a pattern matches that is not a regular file is listed, not dropped silently") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("trajcheck_glob_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub.jsonl");
  std::ofstream(dir / "a.jsonl") << "{}\n";
  std::ofstream(dir / "b.txt") << "{}\n";
  REQUIRE(::mkfifo((dir / "f.jsonl").c_str(), 0600) == 0);
  fs::create_symlink(dir / "missing", dir / "gone.jsonl");
  std::string base = dir.string();
  std::vector<std::string> skipped;
  std::vector<std::string> files = trajcheck::detail::glob_files(base + "/*.jsonl", &skipped);
  CHECK(files == std::vector<std::string>{base + "/a.jsonl"});
  CHECK(skipped == std::vector<std::string>{base + "/f.jsonl is a FIFO", base + "/gone.jsonl is a dangling symbolic link",
                                            base + "/sub.jsonl is a directory"});
  skipped.clear();
  CHECK(trajcheck::detail::glob_files(base + "/f.jsonl", &skipped).empty());
  CHECK(skipped == std::vector<std::string>{base + "/f.jsonl is a FIFO"});
  skipped.clear();
  CHECK(trajcheck::detail::glob_files(base + "/none.jsonl", &skipped).empty());
  CHECK(skipped.empty());  // nothing there: nothing to explain
  fs::remove_all(dir);
}
