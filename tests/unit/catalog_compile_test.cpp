// The catalog in rules files: stale names and globs fail compilation naming the catalog's
// version, `write` matches the catalog's state-changing tools, and traces are accounted
// for (unknown tools, argument validity, write calls).
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "reference/builders.hpp"
#include "trajcheck/catalog.hpp"
#include "trajcheck/rules.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;

namespace {

// A rules file that lives next to tests/data/catalog/tools-v3.json.
CompileResult compile_rules(const std::string& text, const std::string& override_path = "") {
  CompileOptions o;
  o.catalog_override = override_path;
  return compile(Source(TRAJCHECK_TEST_DIR "/data/catalog/t.rules", text), o);
}

std::string errors(const CompileResult& r) { return format_diagnostics(r.source, r.diagnostics); }

}  // namespace

TEST_CASE("a rules file whose names are all in the catalog compiles") {
  CompileResult r = compile_rules("catalog \"tools-v3.json\"\nforbid delete_*\norder_get precedes Refund_Order\n");
  REQUIRE_MESSAGE(r.ok(), errors(r));
  auto c = r.program->catalog();
  REQUIRE(c != nullptr);
  CHECK(c->version() == "v3");
}

TEST_CASE("stale names and globs: errors naming the catalog version, caret on the name") {
  CompileResult r = compile_rules(
      "catalog \"tools-v3.json\"\nforbid refund_ordr\nforbid archive_*\nrefund_ordr at most 1\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 2);  // a name used twice is reported once
  std::string text = errors(r);
  CHECK(text.find(TRAJCHECK_TEST_DIR "/data/catalog/t.rules:2:8: error[E202]: 'refund_ordr' matches no tool of "
                  "catalog v3 (tools-v3.json); did you mean 'refund_order'?\n") != std::string::npos);
  CHECK_MESSAGE(text.find(" 2 | forbid refund_ordr\n   |        ^~~~~~~~~~~\n") != std::string::npos, text);
  CHECK(text.find("t.rules:3:8: error[E202]: glob 'archive_*' matches no tool of catalog v3 (tools-v3.json)") !=
        std::string::npos);
}

TEST_CASE("W008: without a catalog, the names the traces call are what exists") {
  auto with_seen = [](const std::string& text, std::optional<std::vector<std::string>> seen) {
    CompileOptions o;
    o.seen_tools = std::move(seen);
    return compile(Source("t.rules", text), o);
  };
  const std::string rules =
      "forbid cancel_bookng\nforbid delete_*\ncancel_bookng at most 1\nsearch_* at most 3\n"
      "group g = cancel_bookng | book_flight\ng precedes final_answer\ng at most 2\n";
  // Not given: nothing to compare with, no warning.
  CompileResult none = with_seen(rules, std::nullopt);
  REQUIRE(none.ok());
  CHECK(none.diagnostics.empty());
  CompileResult r = with_seen(rules, std::vector<std::string>{"search_flights", "cancel_booking", "book_flight"});
  REQUIRE(r.ok());  // warnings only
  std::string text = format_diagnostics(r.source, r.diagnostics);
  // One warning per name, at its first use, however often it (or a group holding it) is used.
  REQUIRE_MESSAGE(r.diagnostics.size() == 2, text);
  CHECK(text.find("t.rules:1:8: warning[W008]: no tool 'cancel_bookng' was called in the traces given (3 tool names "
                  "seen); did you mean 'cancel_booking'?\n") != std::string::npos);
  CHECK(text.find("t.rules:2:8: warning[W008]: glob 'delete_*' matches no tool called in the traces given (3 tool "
                  "names seen)\n") != std::string::npos);
  // Given but empty: every name is unknown; nothing to suggest.
  CompileResult empty = with_seen("forbid a\n", std::vector<std::string>{});
  REQUIRE(empty.diagnostics.size() == 1);
  CHECK(empty.diagnostics[0].message == "no tool 'a' was called in the traces given (0 tool names seen)");
}

TEST_CASE("W008 on `name*` in a PATH names the tools the glob would have matched") {
  CompileOptions o;
  o.seen_tools = std::vector<std::string>{"search_flights", "search_hotels", "book_flight"};
  CompileResult r = compile(Source("t.rules", "expect search* -> book_flight\n"), o);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].message ==
        "no tool 'search' was called in the traces given (3 tool names seen); in a PATH, 'search*' is the tool "
        "'search' repeated, not the glob 'search*' (which matches 'search_flights' and 1 more): for the glob, write "
        "`group search_any = search*` and use `search_any`");
  // Written apart, the repetition is meant: only the unknown name is reported.
  CompileResult apart = compile(Source("t.rules", "expect search * -> book_flight\n"), o);
  REQUIRE(apart.diagnostics.size() == 1);
  CHECK(apart.diagnostics[0].message == "no tool 'search' was called in the traces given (3 tool names seen)");
}

TEST_CASE("with a catalog, E202 decides and suggests catalog tools and the traces' tools") {
  CompileOptions o;
  o.seen_tools = std::vector<std::string>{"zz_unrelated"};
  CompileResult r = compile(Source(TRAJCHECK_TEST_DIR "/data/catalog/t.rules",
                                   "catalog \"tools-v3.json\"\nforbid Refund-Ordr\nforbid refnd_*\n"), o);
  CHECK_FALSE(r.ok());
  std::string text = errors(r);
  REQUIRE_MESSAGE(r.diagnostics.size() == 2, text);
  CHECK(r.diagnostics[0].code == "E202");
  CHECK(r.diagnostics[0].message.find("did you mean 'refund_order'?") != std::string::npos);
  CHECK(r.diagnostics[1].message.find("did you mean 'refund_*'?") != std::string::npos);
  for (const Diagnostic& d : r.diagnostics) CHECK(d.code != "W008");  // the catalog decides
}

TEST_CASE("--catalog overrides the file's catalog line") {
  // The file names a catalog that does not exist; the override is used instead.
  CompileResult r = compile_rules("catalog \"missing.json\"\nforbid refund_order\n",
                                  TRAJCHECK_TEST_DIR "/data/catalog/tools-v3.json");
  REQUIRE_MESSAGE(r.ok(), errors(r));
  CompileResult bad = compile_rules("catalog \"missing.json\"\nforbid refund_order\n");
  CHECK_FALSE(bad.ok());
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].code == "E201");
  CHECK(bad.source.line_col(bad.diagnostics[0].range.begin).line == 1);
  // Without any catalog line, the override alone makes the names checked.
  CompileResult stale = compile_rules("forbid nope\n", TRAJCHECK_TEST_DIR "/data/catalog/tools-v3.json");
  CHECK_FALSE(stale.ok());
  CHECK(stale.diagnostics.at(0).code == "E202");
}

TEST_CASE("a catalog with errors is reported through the rules file, with the catalog's position") {
  CompileResult r = compile_rules("catalog \"broken.json\"\nforbid x\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E201");
  CHECK(r.source.line_col(r.diagnostics[0].range.begin).column == 9);  // the quoted path
  CHECK(r.diagnostics[0].message.find("catalog 'broken.json' is unusable: " TRAJCHECK_TEST_DIR
                                      "/data/catalog/broken.json:4:3: error[E301]: the catalog is not valid JSON") == 0);
}

TEST_CASE("`write` needs a catalog") {
  CompileResult r = compile_rules("forbid write\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E104");
  CHECK(r.source.line_col(r.diagnostics[0].range.begin).column == 8);
}

TEST_CASE("`write` matches calls whose catalog effect is write (aliases applied)") {
  CompileResult r = compile_rules(
      "catalog \"tools-v3.json\"\nalias refund = refund_order\nwrite at most 1\nforbid refund\n");
  REQUIRE_MESSAGE(r.ok(), errors(r));
  StepsBuilder t;
  t.call("order_get", R"({"order_id": "A"})");
  t.call("refund", R"({"order_id": "A"})");   // alias of a write tool
  t.call("search_documents");
  t.call("delete_customer");                   // write
  auto res = run(r.program, t.t);
  REQUIRE(res.size() == 2);
  CHECK(res[0].status == VerdictStatus::violated);
  CHECK(res[0].steps == std::vector<std::uint32_t>{3});
}

TEST_CASE("check_catalog: unknown tools, argument validity, write calls") {
  CompileResult r = compile_rules("catalog \"tools-v3.json\"\nalias refund = refund_order\nforbid delete_order\n");
  REQUIRE_MESSAGE(r.ok(), errors(r));
  StepsBuilder t;
  t.call("order_get", R"({"order_id": "A"})");             // 0 valid
  t.call("order_get", R"({"order_id": 7})");               // 1 invalid: type
  t.message(StepType::user_message, "hi");                 // 2
  t.call("refund", R"({"order_id": "A", "why": "x"})");    // 3 invalid: additional property; write
  t.call("send_email", R"({})");                           // 4 unknown
  t.call("send_email", R"({})");                           // 5 unknown again
  t.call("order_get");                                     // 6 invalid: absent = {}, required
  t.call("web_fetch");                                     // 7 unknown
  CatalogTraceReport rep;
  REQUIRE(check_catalog(*r.program, t.t, rep));
  CHECK(rep.calls == 7);
  CHECK(rep.known_calls == 4);
  CHECK(rep.unknown_calls == 3);
  CHECK(rep.write_calls == 1);
  CHECK(rep.unknown == std::vector<std::string>{"send_email", "web_fetch"});
  CHECK(rep.unknown_counts == std::vector<std::uint32_t>{2, 1});
  REQUIRE(rep.invalid.size() == 3);
  CHECK(rep.invalid[0].step == 1);
  REQUIRE(rep.invalid[0].errors.size() == 1);
  CHECK(rep.invalid[0].errors[0].path == "arguments.order_id");
  CHECK(rep.invalid[1].step == 3);
  CHECK(rep.invalid[2].step == 6);
  CHECK(rep.invalid[2].errors.at(0).reason == "Missing required property 'order_id'.");

  CompileResult plain = compile(Source("p.rules", "forbid x\n"));
  REQUIRE(plain.ok());
  CHECK(plain.program->catalog() == nullptr);
  CHECK_FALSE(check_catalog(*plain.program, t.t, rep));
}

TEST_CASE("valid(arguments) and valid(tool) gate on the catalog; witnesses carry the schema error") {
  CompileResult r = compile_rules(
      "catalog \"tools-v3.json\"\nalias refund = refund_order\n"
      "forbid tool_call where not valid(arguments)\nforbid tool_call where not valid(tool)\n"
      "forbid refund where valid(arguments)\n");
  REQUIRE_MESSAGE(r.ok(), errors(r));
  StepsBuilder t;
  t.call("order_get", R"({"order_id":"A"})");  // valid
  t.call("order_get", R"({"order_id":7})");    // wrong type
  t.call("send_email", R"({"to":"x"})");       // not in the catalog
  t.call("refund", R"({"order_id":"A"})");     // alias of refund_order, valid
  t.message(StepType::assistant_message, "done");
  auto out = run(r.program, t.t);
  REQUIRE(out.size() == 3);
  CHECK(out[0].status == VerdictStatus::violated);
  CHECK(out[0].steps == std::vector<std::uint32_t>{1, 2});
  REQUIRE(out[0].details.size() == 2);
  CHECK(out[0].details[0].rfind("arguments.order_id: ", 0) == 0);
  CHECK(out[0].details[1] == "'send_email' is not a tool of catalog v3");
  CHECK(out[1].steps == std::vector<std::uint32_t>{2});
  CHECK(out[2].steps == std::vector<std::uint32_t>{3});  // the aliased call validates
  CHECK(out[2].details.empty());                           // valid: nothing to say
}

TEST_CASE("valid(…) without a catalog, or on another path, is an error") {
  CompileResult r = compile_rules("forbid tool_call where not valid(arguments)\n");
  CHECK_FALSE(r.ok());
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].code == "E104");
  CompileResult p = compile_rules("catalog \"tools-v3.json\"\nforbid tool_call where valid(result)\n");
  CHECK_FALSE(p.ok());
  REQUIRE(!p.diagnostics.empty());
  CHECK(p.diagnostics[0].code == "E020");
  // Without its '(' the word is a field path, as before.
  CHECK(compile_rules("forbid tool_call where valid == true\n").ok());
}
