// Golden runner for tests/golden/diagnostics/<case>/: compiles case.rules with the front end
// and compares the rendered diagnostics with `expected`. On a mismatch it prints the actual
// text; with UPDATE_GOLDEN=1 it rewrites `expected` instead.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "language/frontend.hpp"
#include "trajcheck/diagnostic.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string render(const fs::path& dir) {
  std::string error;
  // The path printed in diagnostics is relative, so expectations do not depend on the checkout.
  auto src = trajcheck::Source::from_file((dir / "case.rules").string(), &error);
  if (!src) return "cannot read case.rules: " + error + "\n";
  trajcheck::Source named("case.rules", src->text());
  auto result = trajcheck::language::parse_rules(named);
  std::string out = trajcheck::format_diagnostics(named, result.diagnostics);
  if (out.empty()) out = "(no diagnostics)\n";
  if (!trajcheck::has_errors(result.diagnostics)) {
    out += "--- rules ---\n";
    for (const auto& r : result.module.rules) out += r.name + "\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: diagnostics_runner DIR...\n";
    return 2;
  }
  bool update = std::getenv("UPDATE_GOLDEN") && std::string(std::getenv("UPDATE_GOLDEN")) == "1";
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path dir = argv[i];
    std::string actual = render(dir);
    fs::path expected_path = dir / "expected";
    if (update) {
      std::ofstream(expected_path, std::ios::binary) << actual;
      std::cout << "updated " << expected_path.string() << "\n";
      continue;
    }
    std::string expected = fs::exists(expected_path) ? read_file(expected_path) : "";
    if (actual != expected) {
      ++failures;
      std::cout << "MISMATCH " << dir.string() << "\n--- expected ---\n" << expected << "--- actual ---\n"
                << actual << "--- (rerun with UPDATE_GOLDEN=1 to accept) ---\n";
    }
  }
  return failures == 0 ? 0 : 1;
}
