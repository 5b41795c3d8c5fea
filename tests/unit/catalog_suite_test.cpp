// The argument validator against the official JSON-Schema-Test-Suite (Debian package
// json-schema-test-suite) for the drafts valijson implements: 4, 6 and 7. Every case
// runs except those listed as skipped, with the reason; any other disagreement fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/catalog.hpp"

namespace fs = std::filesystem;
using trajcheck::SchemaDraft;
using trajcheck::SchemaValidator;

namespace {

fs::path suite_root() {
  if (const char* env = std::getenv("TRAJCHECK_JSON_SCHEMA_SUITE")) return env;
  return "/usr/share/json-schema-test-suite/tests";
}

bool has_absolute_ref(const nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "$ref" && it->is_string()) {
        const std::string& r = it->get_ref<const std::string&>();
        if (r.rfind("http://", 0) == 0 || r.rfind("https://", 0) == 0) return true;
      }
      if (has_absolute_ref(*it)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& e : j)
      if (has_absolute_ref(e)) return true;
  }
  return false;
}

// Why a group is not run, or empty. Only two reasons are allowed: the cases need a remote
// reference (a document fetched by URI, which the catalog never does), or they test
// `format`, an optional assertion valijson does not implement.
std::string skip_reason(const std::string& file, const nlohmann::json& group) {
  if (file.find("optional/format") != std::string::npos || file == "optional/format.json")
    return "optional format assertion (valijson does not implement `format`)";
  if (file == "refRemote.json") return "remote ref (fetches http://localhost:1234/…)";
  if (has_absolute_ref(group["schema"]))
    return "remote ref (an absolute-URI $ref that resolves to another document)";
  // `"$id": "http://localhost:1234/tree"` with `"$ref": "node"` inside: the ref resolves to
  // http://localhost:1234/node, which valijson looks up as a remote document.
  if (file == "ref.json" && group["description"] == "Recursive references between schemas")
    return "remote ref (relative $ref under an absolute $id: valijson fetches it as a remote document)";
  return "";
}

// Cases of the suite's optional (non-format) files where valijson over nlohmann is known to
// disagree. They still run: the test fails if one of them starts to agree (update this list
// and docs/catalog.md) or if any case outside this list disagrees.
struct KnownDeviation {
  const char* file;  // relative to the draft directory
  const char* test;  // "group description / test description"
  const char* why;
};
constexpr KnownDeviation kKnown[] = {
    {"optional/bignum.json", "integer / a bignum is an integer",
     "nlohmann parses integers beyond 64 bits as doubles, which valijson's `type: integer` rejects"},
    {"optional/bignum.json", "integer / a negative bignum is an integer",
     "nlohmann parses integers beyond 64 bits as doubles, which valijson's `type: integer` rejects"},
    {"optional/zeroTerminatedFloats.json",
     "some languages do not distinguish between different types of numeric value / a float without "
     "fractional part is an integer",
     "valijson's `type: integer` rejects 1.0 (draft 6+ says it is an integer)"},
    {"optional/ecmascript-regex.json", "ECMA 262 regex non-compliance / ECMA 262 has no support for \\Z anchor from .NET",
     "`format: regex` is not asserted by valijson, so the pattern `^\\Z$` (not ECMA 262) is accepted"},
    {"optional/content.json", "validation of string-encoded content based on media type / an invalid JSON document",
     "contentMediaType / contentEncoding are not asserted by valijson"},
    {"optional/content.json", "validation of binary string-encoding / an invalid base64 string (% is not a valid character)",
     "contentMediaType / contentEncoding are not asserted by valijson"},
    {"optional/content.json", "validation of binary-encoded media type documents / a validly-encoded invalid JSON document",
     "contentMediaType / contentEncoding are not asserted by valijson"},
    {"optional/content.json", "validation of binary-encoded media type documents / an invalid base64 string that is valid JSON",
     "contentMediaType / contentEncoding are not asserted by valijson"},
};

const KnownDeviation* known(const std::string& file, const std::string& test) {
  for (const KnownDeviation& k : kKnown)
    if (file == k.file && test == k.test) return &k;
  return nullptr;
}

struct DraftResult {
  int passed = 0, skipped = 0, deviations = 0;
  std::vector<std::string> disagreements;
  std::map<std::string, int> skip_counts;
};

DraftResult run_draft(const std::string& dir, SchemaDraft draft) {
  DraftResult r;
  fs::path root = suite_root() / dir;
  REQUIRE_MESSAGE(fs::is_directory(root), "JSON-Schema-Test-Suite not found at ", root.string(),
                  " (scripts/setup.sh installs the json-schema-test-suite package)");
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string rel = fs::relative(f, root).generic_string();
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json groups = nlohmann::json::parse(ss.str());
    for (const auto& group : groups) {
      std::string why = skip_reason(rel, group);
      if (!why.empty()) {
        r.skipped += static_cast<int>(group["tests"].size());
        r.skip_counts[why] += static_cast<int>(group["tests"].size());
        continue;
      }
      std::string error;
      auto v = SchemaValidator::compile(group["schema"].dump(), draft, &error);
      for (const auto& test : group["tests"]) {
        std::string name = group["description"].get<std::string>() + " / " + test["description"].get<std::string>();
        std::string id = fmt::format("{}/{}: {}", dir, rel, name);
        bool expected = test["valid"].get<bool>();
        const KnownDeviation* dev = known(rel, name);
        if (!v) {
          r.disagreements.push_back(id + ": schema rejected: " + error);
          continue;
        }
        std::vector<trajcheck::ArgumentError> errors;
        bool got = v->validate(test["data"].dump(), &errors);
        if (dev != nullptr) {
          if (got == expected) r.disagreements.push_back(id + ": listed as a known deviation but now agrees");
          else ++r.deviations;
          continue;
        }
        if (got == expected) {
          ++r.passed;
        } else {
          std::string reasons;
          for (const auto& e : errors) reasons += fmt::format(" [{}: {}]", e.path, e.reason);
          r.disagreements.push_back(fmt::format("{}: expected {}, got {}{}", id, expected ? "valid" : "invalid",
                                                got ? "valid" : "invalid", reasons));
        }
      }
    }
  }
  return r;
}

void report(const std::string& dir, const DraftResult& r) {
  std::string text = fmt::format("{}: {} passed, {} skipped, {} known deviations (optional), {} disagree\n", dir,
                                 r.passed, r.skipped, r.deviations, r.disagreements.size());
  for (const auto& [why, n] : r.skip_counts) text += fmt::format("  skipped {:3} — {}\n", n, why);
  for (const auto& d : r.disagreements) text += "  DISAGREES " + d + "\n";
  MESSAGE(text);
}

}  // namespace

TEST_CASE("JSON-Schema-Test-Suite draft4") {
  DraftResult r = run_draft("draft4", SchemaDraft::draft4);
  report("draft4", r);
  CHECK(r.passed > 0);
  CHECK(r.disagreements.empty());
}

TEST_CASE("JSON-Schema-Test-Suite draft6") {
  DraftResult r = run_draft("draft6", SchemaDraft::draft6);
  report("draft6", r);
  CHECK(r.passed > 0);
  CHECK(r.disagreements.empty());
}

TEST_CASE("JSON-Schema-Test-Suite draft7") {
  DraftResult r = run_draft("draft7", SchemaDraft::draft7);
  report("draft7", r);
  CHECK(r.passed > 0);
  CHECK(r.disagreements.empty());
}
