// Hostile sizes: what once took quadratic or exponential time (alias chains, chained groups,
// OTLP grouping, the catalog's unknown tools) is checked for the right
// answer at a size where the old algorithm would not finish within the test's time limit, and
// for sizes that only a linear algorithm keeps (pattern counts, dump sizes).
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <fmt/format.h>

#include "compiler/program.hpp"
#include "language/frontend.hpp"
#include "readers_support.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/rules.hpp"
#include "util/read_file.hpp"

using namespace trajcheck;

namespace {

CompileResult compile_text(const std::string& text) { return compile(Source("t.rules", text)); }

// The compiled tables of `text` (what compile() wraps in a Program).
std::shared_ptr<detail::ProgramImpl> compiled_tables(const std::string& text) {
  Source source("t.rules", text);
  language::FrontendResult fr = language::parse_rules(source, {});
  REQUIRE(!has_errors(fr.diagnostics));
  auto impl = detail::build_program(fr.module, source, {}, fr.diagnostics);
  REQUIRE(impl != nullptr);
  return impl;
}

std::size_t count_code(const std::vector<Diagnostic>& diags, std::string_view code) {
  std::size_t n = 0;
  for (const Diagnostic& d : diags) n += d.code == code;
  return n;
}

// One trace of native steps, each {"tool": name, "arguments": args}.
Trajectory trace_of(const std::vector<std::pair<std::string, std::string>>& calls, ToolTable& tools) {
  std::string rec = R"({"trace_id":"t","steps":[)";
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i) rec += ',';
    rec += fmt::format(R"({{"tool":"{}","arguments":{}}})", calls[i].first, calls[i].second);
  }
  rec += "]}";
  TraceParser parser(NormalizeOptions{});
  RawRecord raw;
  raw.text = rec;
  Trajectory t(&tools), out(&tools);
  ParseOutcome o = parser.parse(raw, t, [&](Trajectory& tr) { out = tr; });
  REQUIRE(o.ok());
  return out;
}

}  // namespace

TEST_CASE("chained groups share sub-patterns: the compiled pattern table and the dump stay linear") {
  // g_N = g_{N-1} | g_{N-1} where …: expanded, the text and the tree double with every link.
  std::string text = "group g0 = a | b\n";
  const int links = 60;
  for (int i = 1; i <= links; ++i) text += fmt::format("group g{} = g{} | g{} where arguments.x == {}\n", i, i - 1, i - 1, i);
  text += fmt::format("forbid g{}\n", links);
  CompileResult r = compile_text(text);
  INFO(format_diagnostics(r.source, r.diagnostics));
  REQUIRE(r.ok());
  CHECK(compiled_tables(text)->patterns.size() < 10 * links);
  CHECK(r.program->dump_automaton().size() < 400 * links);

  ToolTable tools;
  std::vector<RuleResult> results;
  Checker checker(r.program);
  checker.check(trace_of({{"c", "{}"}}, tools), results);
  CHECK(results.at(0).status == VerdictStatus::satisfied);
  checker.check(trace_of({{"b", R"({"x":7})"}}, tools), results);
  CHECK(results.at(0).status == VerdictStatus::violated);
}

TEST_CASE("equal patterns written twice are still one compiled pattern") {
  CompileResult r = compile_text("forbid (a | b) where arguments.x == 1\n(a | b) where arguments.x == 1 precedes c\n");
  INFO(format_diagnostics(r.source, r.diagnostics));
  REQUIRE(r.ok());
  auto tables = compiled_tables("forbid (a | b) where arguments.x == 1\n(a | b) where arguments.x == 1 precedes c\n");
  std::size_t wheres = 0;
  for (const auto& p : tables->patterns) wheres += p.kind == ir::Pattern::Kind::where;
  CHECK(wheres == 1);
}

TEST_CASE("ten thousand chained groups: one nesting error, no false 'never used' warnings") {
  std::string text = "group g0 = a\n";
  for (int i = 1; i < 10000; ++i) text += fmt::format("group g{} = g{} | x{}\n", i, i - 1, i);
  text += "forbid g9999\n";
  CompileResult r = compile_text(text);
  CHECK(count_code(r.diagnostics, "E010") == 1);
  CHECK(count_code(r.diagnostics, "W002") == 0);
}

TEST_CASE("a chain of ten thousand aliases resolves every name to the end of the chain") {
  std::string text;
  const int n = 10000;
  for (int i = 0; i < n; ++i) text += fmt::format("alias n{} = n{}\n", i, i + 1);
  text += fmt::format("forbid n{}\n", n);
  CompileResult r = compile_text(text);
  INFO(format_diagnostics(r.source, r.diagnostics));
  REQUIRE(r.ok());
  const auto& aliases = r.program->tool_aliases();
  REQUIRE(aliases.size() == static_cast<std::size_t>(n));
  for (const auto& [from, to] : aliases) CHECK(to == fmt::format("n{}", n));

  ToolTable tools;
  std::vector<RuleResult> results;
  Checker checker(r.program);
  checker.check(trace_of({{"n0", "{}"}}, tools), results);
  CHECK(results.at(0).status == VerdictStatus::violated);
}

TEST_CASE("an alias chain into a cycle is an error for every name on it") {
  CompileResult r = compile_text("alias a = b\nalias b = c\nalias c = b\nalias d = e\nforbid e\n");
  CHECK(count_code(r.diagnostics, "E004") == 3);
}

TEST_CASE("OTLP: spans of 20000 interleaved traceIds are grouped, each in start order") {
  const int n = 20000;
  std::string spans;
  for (int round = 1; round >= 0; --round)
    for (int i = 0; i < n; ++i) {
      if (!spans.empty()) spans += ',';
      spans += fmt::format(
          R"({{"traceId":"t{}","spanId":"s{}_{}","name":"execute_tool","startTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},{{"key":"gen_ai.tool.name","value":{{"stringValue":"tool{}"}}}}]}})",
          i, i, round, 1000 + round, round);
    }
  std::string rec = R"({"resourceSpans":[{"scopeSpans":[{"spans":[)" + spans + "]}]}]}";
  auto read = test::read_text(rec);
  REQUIRE(read.errors.empty());
  REQUIRE(read.traces.size() == static_cast<std::size_t>(n));
  for (int i = 0; i < n; i += 997) {
    const Trajectory& t = read.traces[static_cast<std::size_t>(i)];
    CHECK(t.trace_id() == fmt::format("t{}", i));
    REQUIRE(t.steps().size() == 2);
    CHECK(test::tool_of(t, 0) == "tool0");
    CHECK(test::tool_of(t, 1) == "tool1");
  }
}

TEST_CASE("catalog: 100000 distinct unknown tools are each listed once with their count") {
  CatalogLoad cat = parse_catalog(Source("c.json", R"({"version":"1","tools":[{"name":"known","effect":"read"}]})"));
  REQUIRE(cat.ok());
  ToolTable tools;
  std::vector<std::pair<std::string, std::string>> calls;
  const int n = 100000;
  for (int i = 0; i < n; ++i) calls.push_back({fmt::format("u{}", i), "{}"});
  calls.push_back({"u7", "{}"});
  calls.push_back({"known", "{}"});
  calls.push_back({"alias_of_u9", "{}"});
  Trajectory t = trace_of(calls, tools);
  CatalogTraceReport rep;
  check_catalog(*cat.catalog, t, {{"alias_of_u9", "u9"}}, rep);
  CHECK(rep.calls == n + 3);
  CHECK(rep.known_calls == 1);
  CHECK(rep.unknown_calls == n + 2);
  REQUIRE(rep.unknown.size() == static_cast<std::size_t>(n));
  CHECK(rep.unknown[7] == "u7");
  CHECK(rep.unknown_counts[7] == 2);
  CHECK(rep.unknown_counts[9] == 2);  // its own call and the aliased one
  CHECK(rep.unknown_counts[8] == 1);
}

TEST_CASE("a source must be a regular file within the size limit") {
  std::string text, error;
  CHECK_FALSE(read_regular_file(TRAJCHECK_TEST_DIR, kMaxSourceBytes, text, error));
  CHECK(error == "is a directory");
  CHECK_FALSE(read_regular_file("/dev/zero", kMaxSourceBytes, text, error));
  CHECK(error == "is a device, not a regular file");
  CHECK_FALSE(read_regular_file("/no/such/file", kMaxSourceBytes, text, error));
  CHECK(error == "cannot open file: No such file or directory");
  std::string self = std::string(TRAJCHECK_TEST_DIR) + "/unit/hardening_test.cpp";
  CHECK_FALSE(read_regular_file(self, 100, text, error));
  CHECK(error == "file is larger than the 100 bytes limit");
  CHECK(text.empty());
  REQUIRE(read_regular_file(self, kMaxSourceBytes, text, error));
  CHECK(text.find("a source must be a regular file") != std::string::npos);
  std::optional<Source> dir = Source::from_file(TRAJCHECK_TEST_DIR, &error);
  CHECK_FALSE(dir);
  CHECK(error == std::string(TRAJCHECK_TEST_DIR) + ": is a directory");
}

TEST_CASE("a diagnostic on a very long line echoes a window around the column, caret aligned") {
  std::string text(1 << 20, 'a');
  text[500000] = '#';
  Source src("long.rules", text);
  Diagnostic d{Severity::error, "E001", {500000, 500001}, "here", {}};
  std::string out = format_diagnostic(src, d);
  CHECK(out.size() < 1000);
  CHECK(out.find("long.rules:1:500001: error[E001]: here") == 0);
  // The caret sits under the '#' of the echoed window.
  std::size_t echo = out.find(" 1 | ");
  std::size_t caret_line = out.find('\n', echo) + 1;
  REQUIRE(echo != std::string::npos);
  std::size_t hash = out.find('#', echo) - (echo + 5);
  std::size_t caret = out.find('^', caret_line) - (caret_line + 5);
  CHECK(hash == caret);
  CHECK(out.find("...") != std::string::npos);
  // A short line is echoed whole, as before.
  Source small("s.rules", "forbid #\n");
  std::string s = format_diagnostic(small, Diagnostic{Severity::error, "E001", {7, 8}, "x", {}});
  CHECK(s == "s.rules:1:8: error[E001]: x\n 1 | forbid #\n   |        ^\n");
}

