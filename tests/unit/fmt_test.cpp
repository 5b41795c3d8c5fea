// `trajcheck fmt`: canonical layout, comments kept, idempotent, and the formatted file
// compiles to the same IR — over every .rules file in tests/golden and rules/.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "language/frontend.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {

std::string fmt_text(const std::string& text) {
  std::vector<Diagnostic> d;
  std::string out = language::format_rules(Source("t.rules", text), d);
  REQUIRE_FALSE(has_errors(d));
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("fmt normalizes spacing, synonyms and indentation and keeps comments") {
  std::string in =
      "# header comment\n"
      "workflow   \"w\"\n"
      "\n\n\n"
      "never   delete_*   # trailing\n"
      "a followed by b or c\n"
      "x at most   once\n"
      "between login and logout:\n"
      "  # inside\n"
      "  db_write at most 3\n"
      "rule r [critical] :\n"
      "\tapproval where decision==\"approved\" precedes refund_order\n"
      "\tmessage \"m\"\n"
      "\ttag a,b\n";
  std::string expected =
      "# header comment\n"
      "workflow \"w\"\n"
      "\n"
      "forbid delete_*  # trailing\n"
      "a is followed by b | c\n"
      "x at most 1\n"
      "between login and logout:\n"
      "    # inside\n"
      "    db_write at most 3\n"
      "rule r [critical]:\n"
      "    approval where decision == \"approved\" precedes refund_order\n"
      "    message \"m\"\n"
      "    tag a, b\n";
  CHECK(fmt_text(in) == expected);
  CHECK(fmt_text(expected) == expected);
}

TEST_CASE("fmt writes the sources of seen() in one order, and none for all three") {
  CHECK(fmt_text("forbid a where not seen( arguments.x ,result|user )\n") ==
        "forbid a where not seen(arguments.x, user | result)\n");
  CHECK(fmt_text("forbid a where not seen(arguments.x, context | user | result)\n") ==
        "forbid a where not seen(arguments.x)\n");
  CHECK(fmt_text("forbid a where seen(arguments.x, context)\n") == "forbid a where seen(arguments.x, context)\n");
}

TEST_CASE("fmt refuses a file with errors") {
  std::vector<Diagnostic> d;
  CHECK(language::format_rules(Source("t.rules", "forbid\n"), d).empty());
  CHECK(has_errors(d));
}

TEST_CASE("fmt round trip over every .rules file: idempotent and the same IR") {
  std::vector<fs::path> files;
  for (const char* sub : {"tests/golden", "rules", "examples"}) {
    fs::path dir = fs::path(TRAJCHECK_SOURCE_DIR) / sub;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".rules") files.push_back(e.path());
  }
  CHECK(files.size() >= 10);
  int checked = 0;
  for (const auto& f : files) {
    INFO(f.string());
    std::string text = read_file(f);
    Source src(f.string(), text);
    auto before = language::parse_rules(src);
    if (f.parent_path().filename() == "fmt") {
      INFO(format_diagnostics(src, before.diagnostics));
      CHECK(before.diagnostics.empty());  // the fmt corpus is clean
    }
    if (has_errors(before.diagnostics)) continue;  // diagnostics cases
    std::vector<Diagnostic> d;
    std::string once = language::format_rules(src, d);
    REQUIRE_FALSE(has_errors(d));
    std::string twice = language::format_rules(Source(f.string(), once), d);
    CHECK(twice == once);
    auto after = language::parse_rules(Source(f.string(), once));
    CHECK_FALSE(has_errors(after.diagnostics));
    CHECK(language::dump_ir(after.module) == language::dump_ir(before.module));
    ++checked;
  }
  CHECK(checked >= 5);
}
