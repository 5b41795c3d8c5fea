// `PATH contains $v` (docs/language.md §5, "Looking for a bound value"): a pattern that looks
// for the values another pattern of its rule bound, inside a text or an array.
#include <doctest/doctest.h>

#include <string>

#include "trajcheck/monitor.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/testing.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {

// The entries of the one rule of `rules` on `trace`: "status [binding] witnesses", joined.
std::string verdicts(const std::string& rules, const Trajectory& trace) {
  CheckOutcome o = satisfies(Rules::text(rules), trace);
  std::string out;
  for (const RuleResult& r : o.results) {
    if (!out.empty()) out += "; ";
    out += std::string(to_string(r.status));
    if (!r.binding.empty()) out += " " + r.binding[0].second;
    for (std::uint32_t s : r.steps) out += " " + std::to_string(s);
  }
  return out;
}

// The compiler's errors for `text` (empty when it compiles).
std::string errors(const std::string& text) {
  CompileResult r = compile(Source("<rules>", text));
  std::string out;
  for (const Diagnostic& d : r.diagnostics)
    if (d.severity == Severity::error) out += d.code + ": " + d.message + "\n";
  return out;
}

const char* kLeak =
    "read_secret where result.token == $s is never followed by send_email where arguments.body contains $s";

}  // namespace

TEST_CASE("mention: a bound value found inside a later text") {
  Trace leak = TraceBuilder{}
                   .call("read_secret").result(R"({"token":"tok_9f2"})")
                   .call("send_email", R"({"body":"your key is tok_9f2, keep it safe"})")
                   .build();
  CHECK(verdicts(kLeak, leak) == "violated \"tok_9f2\" 0 1");
  Trace clean = TraceBuilder{}
                    .call("read_secret").result(R"({"token":"tok_9f2"})")
                    .call("send_email", R"({"body":"the report is attached"})")
                    .build();
  CHECK(verdicts(kLeak, clean) == "satisfied");
}

TEST_CASE("mention: only values bound at or before the step are looked for") {
  Trace t = TraceBuilder{}
                .call("send_email", R"({"body":"tok_9f2"})")
                .call("read_secret").result(R"({"token":"tok_9f2"})")
                .build();
  CHECK(verdicts(kLeak, t) == "satisfied");
  // precedes: a B holding a value bound only later is not that value's B (no B: vacuous).
  CHECK(verdicts("read_secret where result.token == $s precedes send_email where arguments.body contains $s", t) ==
        "vacuous");
}

TEST_CASE("mention: one step in the slices of every value it contains") {
  Trace t = TraceBuilder{}
                .call("read_secret").result(R"({"token":"s1"})")
                .call("read_secret").result(R"({"token":"s2"})")
                .call("read_secret").result(R"({"token":"s3"})")
                .call("send_email", R"({"body":"s1 and s2"})")
                .build();
  CHECK(verdicts(kLeak, t) == "violated \"s1\" 0 3; violated \"s2\" 1 3");
}

TEST_CASE("mention: typed as contains is, arrays by element") {
  const char* rule = "order_get where arguments.id == $o precedes ticket where arguments.ids contains $o";
  Trace t = TraceBuilder{}
                .call("order_get", R"({"id":7})")
                .call("ticket", R"({"ids":[7, "8"]})")
                .call("order_get", R"({"id":"8"})")
                .call("ticket", R"({"ids":[8, "8"]})")
                .build();
  // The first ticket holds 7 (looked up before) and "8" (not bound yet); the second "8", bound
  // by then; the number 8 was never bound.
  CHECK(verdicts(rule, t) == "satisfied");
  // A number is no substring of a text.
  Trace text = TraceBuilder{}
                   .call("read_secret").result(R"({"token":42})")
                   .call("send_email", R"({"body":"the answer is 42"})")
                   .build();
  CHECK(verdicts(kLeak, text) == "satisfied");
}

TEST_CASE("mention: the automaton dump tells binders from mentions") {
  CompileResult r = compile(Source("<rules>", kLeak));
  REQUIRE(r.ok());
  const std::string dump = r.program->dump_automaton();
  CHECK(dump.find("parametric $s: one slice state per value bound by p1, looked for (contains) by p3;") !=
        std::string::npos);
}

TEST_CASE("mention: compile errors name the fix") {
  CHECK(errors(kLeak).empty());
  CHECK(errors("forbid send_email where arguments.body contains $s").find(
            "E102: `$s` is only looked for (`contains $s`), never bound") == 0);
  CHECK(errors("a where x == $s precedes b where arguments.body contains $s or y == 1").find("E102") == 0);
  CHECK(errors("a where x == $s precedes b where not arguments.body contains $s").find("E102") == 0);
  CHECK(errors("a where x == $s precedes b where arguments.body contains $s and arguments.to == $s")
            .find("E102: `$s` is bound already") == 0);
  CHECK(errors("a where x == $s precedes b where arguments.body contains $t").find("E102: a rule binds one variable") ==
        0);
}

TEST_CASE("mention: guard mode denies the leaking call as it is asked") {
  CompileResult r = compile(Source("<rules>", std::string("rule leak: ") + kLeak));
  REQUIRE(r.ok());
  Monitor mon(r.program);
  std::vector<Violation> v;
  mon.observe(MonitorStep::call("read_secret", "{}", R"({"token":"tok_9f2"})"), v);
  CHECK(v.empty());
  mon.check_call("send_email", R"({"body":"nothing secret"})", v);
  CHECK(v.empty());
  mon.check_call("send_email", R"({"body":"here: tok_9f2"})", v);
  CHECK(v.size() == 1);
}
