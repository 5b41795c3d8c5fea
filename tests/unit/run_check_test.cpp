// The run layer through the public headers alone: what `trajcheck check` prints for the check
// golden folders, rebuilt from include/trajcheck/* (no src/ header), whole and in pieces.
#include <doctest/doctest.h>

#include "run_test_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trajcheck/reader.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/run.hpp"

using namespace trajcheck;
using run_test::slurp;

namespace {

std::string read_file(std::FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}


struct Output {
  std::string out, err;
  int status = 0;
};

// `trajcheck check -r RULES… --format FORMAT --color never -j 2 traces.jsonl`, with records
// [first, last) of the input when `last` is set (a part of the corpus), returning the stats.
CheckStats check_part(const std::shared_ptr<const RuleSet>& rules, CheckFormat format, std::size_t first,
                      std::size_t last, std::string& body_text, std::string& err) {
  CheckRunOptions o;
  o.jobs = 2;
  CheckRunner runner(rules, o);
  REQUIRE(runner.option_error().empty());
  CheckReportOptions ro;
  ro.format = format;
  CheckReport report(rules, ro);
  RecordSource source({"traces.jsonl"});
  std::size_t index = 0;
  RecordInput input = [&](RawRecord& r) {
    while (index < first && source.next(r)) ++index;
    if (index >= last || !source.next(r)) return false;
    ++index;
    return true;
  };
  return runner.run(input, report, [&](std::string_view out, std::string_view e) {
    body_text.append(out);
    err.append(e);
  });
}

Output check_folder(const std::vector<std::string>& rules_files, CheckFormat format, std::size_t split = 0) {
  Output result;
  RuleSetResult rs = compile_rule_set(rules_files);
  REQUIRE(rs.ok());
  std::string body_text;
  CheckStats stats;
  if (split == 0) {
    stats = check_part(rs.rules, format, 0, SIZE_MAX, body_text, result.err);
  } else {
    // Two parts checked apart, their stats carried as JSON and merged: the Dask runner's path.
    CheckStats a = check_part(rs.rules, format, 0, split, body_text, result.err);
    CheckStats b = check_part(rs.rules, format, split, SIZE_MAX, body_text, result.err);
    CheckStats a2, b2;
    std::string error;
    REQUIRE(CheckStats::from_json(a.to_json(), &a2, &error));
    REQUIRE(CheckStats::from_json(b.to_json(), &b2, &error));
    CHECK(a2.to_json() == a.to_json());
    stats = a2;
    stats.merge(b2);
  }
  CheckReportOptions ro;
  ro.format = format;
  CheckReport report(rs.rules, ro);
  std::FILE* body = std::tmpfile();
  std::FILE* out = std::tmpfile();
  REQUIRE(body);
  REQUIRE(out);
  std::fwrite(body_text.data(), 1, body_text.size(), body);
  report.finish(stats, report.buffered() && !body_text.empty() ? body : nullptr, out);
  std::fflush(out);
  // Streamed formats print their parts as they come, then the summary.
  result.out = (report.buffered() ? std::string() : body_text) + read_file(out);
  std::fclose(body);
  std::fclose(out);
  result.status = exit_status(stats);
  return result;
}

const std::string kGolden = std::string(TRAJCHECK_TEST_DIR) + "/golden/check/";

void expect_folder(const std::string& name, const std::vector<std::string>& rules_files) {
  run_test::InDir in(kGolden + name);
  const std::pair<CheckFormat, const char*> runs[] = {{CheckFormat::jsonl, "expected.jsonl"},
                                                      {CheckFormat::text, "expected.txt"},
                                                      {CheckFormat::json, "expected.json"},
                                                      {CheckFormat::junit, "expected.junit.xml"},
                                                      {CheckFormat::markdown, "expected.md"}};
  const int expected_exit = std::stoi(slurp("expected_exit"));
  for (const auto& run : runs) {
    const CheckFormat format = run.first;  // not a structured binding: CAPTURE's lambda cannot
    const char* const file = run.second;   // capture one before clang 16
    if (::access(file, R_OK) != 0) continue;
    CAPTURE(name);
    CAPTURE(file);
    const std::string expected = slurp(file);
    for (std::size_t split : {0, 1, 2}) {
      CAPTURE(split);
      Output o = check_folder(rules_files, format, split);
      CHECK(o.out == expected);
      CHECK(o.status == expected_exit);
      if (format == CheckFormat::jsonl && ::access("expected.stderr", R_OK) == 0) CHECK(o.err == slurp("expected.stderr"));
    }
  }
}

}  // namespace

TEST_CASE("the public run layer prints what trajcheck check prints") {
  expect_folder("formats", {"case.rules"});
  expect_folder("rejected-record", {"case.rules"});
  expect_folder("alias-multi-file", {"case.rules", "more.rules"});
  expect_folder("counts", {"case.rules"});
  expect_folder("coverage", {"case.rules"});
}

TEST_CASE("a rule set numbers rules globally and merges the files' settings") {
  std::vector<Source> sources;
  sources.emplace_back("a.rules", "alias lookup = get_order\nforbid delete_order\nrequire get_order\n");
  sources.emplace_back("b.rules", "case sensitive\nforbid refund_order\n");
  RuleSetResult rs = compile_rule_set(std::move(sources));
  REQUIRE(rs.ok());
  const RuleSet& set = *rs.rules;
  REQUIRE(set.rules().size() == 3);
  CHECK(set.first_rule() == std::vector<std::uint32_t>{0, 2});
  CHECK(set.rules()[2].file == 1);
  CHECK(set.rules()[2].info->name == "forbid refund_order");
  CHECK_FALSE(set.case_sensitive());  // only when every file says so
  NormalizeOptions given;
  given.aliases.emplace_back("x", "y");
  NormalizeOptions n = set.reading_options(given);
  REQUIRE(n.aliases.size() == 2);
  CHECK(n.aliases[0].first == "x");  // the caller's aliases win: they come first
  CHECK(n.aliases[1] == std::pair<std::string, std::string>("lookup", "get_order"));

  TraceParser parser(n);
  ToolTable tools;
  Trajectory t(&tools);
  RawRecord rec;
  rec.text = R"({"trace_id":"t1","steps":[{"type":"tool_call","tool":"refund_order"}]})";
  rec.origin = RecordOrigin{"mem.jsonl", 1, 1, 0};
  RuleSetChecker checker(rs.rules);
  int traces = 0;
  ParseOutcome po = parser.parse(rec, t, [&](Trajectory& tr) {
    ++traces;
    const TraceVerdict& v = checker.check(tr);
    REQUIRE(v.results.size() == 3);
    CHECK(v.results[0].status == VerdictStatus::satisfied);
    CHECK(v.results[1].status == VerdictStatus::violated);  // require get_order
    CHECK(v.results[2].rule == 2);
    CHECK(v.results[2].status == VerdictStatus::violated);
    CHECK(v.failed);
    CheckStats st;
    st.rules.resize(3);
    st.add(v, 0);
    CHECK(st.rules[2].violations == 1);
    CHECK(st.rules[0].activated == 1);  // satisfied, not vacuous
    CHECK(st.failed == 1);
  });
  CHECK(po.ok());
  CHECK(traces == 1);
}

TEST_CASE("compile diagnostics are values, one entry per file") {
  std::vector<Source> sources;
  sources.emplace_back("good.rules", "forbid a\n");
  sources.emplace_back("bad.rules", "forbid (\n");
  RuleSetResult rs = compile_rule_set(std::move(sources));
  CHECK_FALSE(rs.ok());
  REQUIRE(rs.files.size() == 2);
  CHECK(rs.files[0].ok());
  CHECK_FALSE(rs.files[1].ok());
  REQUIRE_FALSE(rs.files[1].diagnostics.empty());
  CHECK(rs.files[1].diagnostics[0].severity == Severity::error);
  CHECK_FALSE(rs.files[1].diagnostics[0].code.empty());
  CHECK(rs.format_diagnostics().find("bad.rules:1:") != std::string::npos);

  RuleSetResult missing = compile_rule_set(std::vector<std::string>{"/nonexistent/x.rules"});
  CHECK_FALSE(missing.ok());
  REQUIRE(missing.files.size() == 1);
  CHECK_FALSE(missing.files[0].read_error.empty());
}

TEST_CASE("the command line's aliases win over a file's for one name, and chain through the file's") {
  std::vector<Source> sources;
  sources.emplace_back("a.rules", "alias search = search_documents\nalias lookup = order_get\nforbid order_get\n");
  RuleSetResult rs = compile_rule_set(std::move(sources));
  REQUIRE(rs.ok());
  NormalizeOptions given;
  given.aliases = {{"search", "web_search"}, {"find", "lookup"}};
  NormalizeOptions o = rs.rules->reading_options(given);
  TraceParser parser(o);
  REQUIRE(parser.option_error().empty());
  ToolTable tools;
  Trajectory t(&tools);
  std::string text = R"({"trace_id":"t","steps":[{"type":"tool_call","tool":"search"},{"type":"tool_call","tool":"find"}]})";
  REQUIRE(parser.parse_value(text, RecordOrigin{}, t).ok());
  std::vector<std::string> names;
  for (const Step& s : t.steps()) names.emplace_back(t.tool_name(s));
  CHECK(names == std::vector<std::string>{"web_search", "order_get"});
}

namespace {
// The status of each rule of `rs` on one native trace of the tools `calls`, read as `check`
// reads it (the rule set's aliases after `given`'s).
std::vector<VerdictStatus> statuses(const RuleSetResult& rs, const std::vector<std::string>& calls,
                                    NormalizeOptions given = {}) {
  TraceParser parser(rs.rules->reading_options(given));
  REQUIRE(parser.option_error().empty());
  ToolTable tools;
  Trajectory t(&tools);
  std::string text = R"({"trace_id":"t","steps":[)";
  for (std::size_t i = 0; i < calls.size(); ++i)
    text += (i ? "," : "") + std::string(R"({"type":"tool_call","tool":")") + calls[i] + R"("})";
  text += "]}";
  REQUIRE(parser.parse_value(text, RecordOrigin{}, t).ok());
  RuleSetChecker checker(rs.rules);
  std::vector<VerdictStatus> out;
  for (const RuleResult& r : checker.check(t).results) out.push_back(r.status);
  return out;
}
}  // namespace

TEST_CASE("a tool name another file or the command line renames means its canonical name in every file") {
  // b.rules names `s`, which a.rules's alias renames in the traces: its rule sees the calls of
  // `s` under their canonical name, as a.rules's own rules would.
  std::vector<Source> sources;
  sources.emplace_back("a.rules", "alias s = search_documents\nforbid search_documents\n");
  sources.emplace_back("b.rules", "forbid s\ns at most 0\nalias q = s\nforbid q\n");
  RuleSetResult rs = compile_rule_set(std::move(sources));
  REQUIRE(rs.ok());
  using V = VerdictStatus;
  CHECK(statuses(rs, {"s"}) == std::vector<V>{V::violated, V::violated, V::violated, V::violated});
  CHECK(statuses(rs, {"search_documents"}) == std::vector<V>{V::violated, V::violated, V::violated, V::violated});
  CHECK(statuses(rs, {"other"}) == std::vector<V>{V::satisfied, V::satisfied, V::satisfied, V::satisfied});
  for (const RuleFile& f : rs.files) CHECK(f.diagnostics.empty());

  // --alias s=search_documents: `forbid s` means the calls the traces show as search_documents;
  // the command line's alias wins over a file's for the same observed name.
  CompileOptions copts;
  copts.command_line_aliases = {{"s", "search_documents"}, {"web", "lookup"}};
  std::vector<Source> one;
  one.emplace_back("c.rules", "alias web = browse\nforbid s\nforbid lookup\nforbid browse\n");
  RuleSetResult cl = compile_rule_set(std::move(one), copts);
  REQUIRE(cl.ok());
  NormalizeOptions given;
  given.aliases = copts.command_line_aliases;
  CHECK(statuses(cl, {"s"}, given) == std::vector<V>{V::violated, V::satisfied, V::satisfied});
  CHECK(statuses(cl, {"web"}, given) == std::vector<V>{V::satisfied, V::violated, V::satisfied});
}

TEST_CASE("fail-on by name") {
  FailOn f;
  CHECK(parse_fail_on("never", &f));
  CHECK(f.never);
  CHECK(f.name() == "never");
  CHECK_FALSE(f.fails(RuleSeverity::critical));
  CHECK(parse_fail_on("warning", &f));
  CHECK(f.fails(RuleSeverity::error));
  CHECK_FALSE(f.fails(RuleSeverity::info));
  CHECK_FALSE(parse_fail_on("fatal", &f));
}

TEST_CASE("check stats refuse JSON that is not theirs") {
  CheckStats s;
  std::string error;
  CHECK_FALSE(CheckStats::from_json("[]", &s, &error));
  CHECK_FALSE(CheckStats::from_json("{\"records\":-1}", &s, &error));
  CHECK_FALSE(error.empty());
  CheckStats t;
  t.records = 3;
  t.rules = {{1, 1, 2}};
  t.catalog.unknown_tools["x\"y"] = 4;
  REQUIRE(CheckStats::from_json(t.to_json(), &s, &error));
  CHECK(s.records == 3);
  CHECK(s.rules[0].activated == 2);
  CHECK(s.catalog.unknown_tools["x\"y"] == 4);
}

TEST_CASE("reading options parse as the command line spells them") {
  NormalizeOptions n;
  std::string error;
  CHECK(parse_reading_spec(ReadingSpec{"openai", {"a=b"}, {"^Err"}, {"k=17", "u=u_1"}}, &n, &error));
  CHECK(n.format == InputFormat::openai);
  CHECK(n.aliases[0] == std::pair<std::string, std::string>("a", "b"));
  CHECK(n.context_overrides[1].second == "\"u_1\"");
  CHECK_FALSE(parse_reading_spec(ReadingSpec{"auto", {"a="}, {}, {}}, &n, &error));
  CHECK(error == "--alias 'a=': expected OBSERVED=CANONICAL");
  CHECK_FALSE(parse_reading_spec(ReadingSpec{"yaml", {}, {}, {}}, &n, &error));
  CHECK(error == "unknown --input-format 'yaml'");
}

TEST_CASE("set_up_check: the options of every front door from their spellings") {
  char dir_template[] = "/tmp/trajcheck-setup-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  auto write = [&](const std::string& name, const std::string& text) {
    std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  };
  const std::string rules = write("a.rules", "rule no_rm [critical]:\n  forbid rm\n");
  const std::string empty = write("empty.rules", "# nothing yet\n");

  CheckSpellings s;
  s.rules = {rules};
  s.format = "jsonl";
  s.fail_on = "warning";
  s.reading = ReadingSpec{"openai", {"a=b"}, {}, {}};
  s.jobs = 3;
  s.color = true;  // not text: no colours
  CheckSetup ok = set_up_check(s);
  REQUIRE(ok.ok());
  CHECK(ok.diagnostics.empty());
  CHECK(ok.report.format == CheckFormat::jsonl);
  CHECK_FALSE(ok.report.color);
  CHECK(ok.report.fail_on.severity == RuleSeverity::warning);
  CHECK(ok.run.fail_on.severity == RuleSeverity::warning);
  CHECK(ok.run.jobs == 3);
  CHECK(ok.run.reading.format == InputFormat::openai);
  REQUIRE(ok.compiled.rules != nullptr);
  CHECK(ok.compiled.rules->rules().size() == 1);

  // A bad spelling stops before the rules are read.
  CheckSpellings bad = s;
  bad.format = "yaml";
  CHECK(set_up_check(bad).error == "trajcheck check: unknown --format 'yaml'\n");
  bad = s;
  bad.fail_on = "sometimes";
  CHECK(set_up_check(bad).error == "trajcheck check: unknown --fail-on 'sometimes'\n");
  bad = s;
  bad.reading.aliases = {"=x"};
  CheckSetup alias = set_up_check(bad);
  CHECK(alias.error == "trajcheck check: --alias '=x': expected OBSERVED=CANONICAL\n");
  CHECK(alias.compiled.files.empty());

  // An unreadable file: its read error, then the refusal.
  bad = s;
  bad.rules = {rules, dir + "/absent.rules"};
  CheckSetup absent = set_up_check(bad);
  CHECK(absent.diagnostics.find("trajcheck check: ") == 0);
  CHECK(absent.error == "trajcheck check: rules did not compile; no trace was checked\n");

  // A file without rules beside one with rules is a warning (W007): shown unless quiet, an
  // error under --strict.
  CheckSpellings two = s;
  two.rules = {rules, empty};
  CheckSetup warned = set_up_check(two);
  CHECK(warned.ok());
  CHECK(warned.diagnostics.find("warning[W007]") != std::string::npos);
  two.quiet = true;
  CHECK(set_up_check(two).diagnostics.empty());
  two.strict = true;
  CheckSetup strict = set_up_check(two);
  CHECK(strict.diagnostics.find("error[W007]") != std::string::npos);
  CHECK(strict.error == "trajcheck check: --strict: the rules files have 1 warning; no trace was checked\n");

  // No rule at all: refused unless asked for.
  CheckSpellings none = s;
  none.rules = {empty};
  CHECK(set_up_check(none).error.find("holds no rules, so every trace would pass") != std::string::npos);
  none.allow_no_rules = true;
  CHECK(set_up_check(none).ok());

  std::remove(rules.c_str());
  std::remove(empty.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("TraceCheck: a record's one trajectory checked, and any other count an error") {
  std::vector<Source> sources;
  sources.emplace_back("a.rules", "forbid refund_order\n");
  RuleSetResult rs = compile_rule_set(std::move(sources));
  REQUIRE(rs.ok());
  TraceParser parser(rs.rules->reading_options({}));
  TraceCheck check(rs.rules);
  RawRecord rec;
  rec.origin = RecordOrigin{"<trace>", 1, 1, 0};
  int calls = 0;
  auto on_trace = [&](const Trajectory& t, const TraceVerdict& v) {
    ++calls;
    CHECK(t.trace_id() == "t1");
    REQUIRE(v.results.size() == 1);
    CHECK(v.results[0].status == VerdictStatus::violated);
  };
  for (int round = 0; round < 2; ++round) {  // buffers reused from record to record
    rec.text = R"({"trace_id":"t1","steps":[{"type":"tool_call","tool":"refund_order"}]})";
    ParseOutcome o = check.check_one(parser, rec, on_trace);
    CHECK(o.ok());
  }
  CHECK(calls == 2);
  // An OTLP record of two traces: the first is handed over, then the count is the error.
  rec.text = run_test::slurp(TRAJCHECK_TEST_DIR "/data/formats/otel.json");
  calls = 0;
  ParseOutcome two = check.check_one(parser, rec, [&](const Trajectory&, const TraceVerdict&) { ++calls; });
  REQUIRE(two.errors.size() == 1);
  CHECK(two.errors[0].message == "expected one trajectory, found 2");
  CHECK(calls == 1);
  rec.text = "{";
  ParseOutcome bad = check.check_one(parser, rec, [&](const Trajectory&, const TraceVerdict&) { FAIL("not read"); });
  CHECK_FALSE(bad.ok());
}
