// trajcheck/catalog.hpp — the versioned tool catalog (docs/catalog.md): tool names, effects,
// and a JSON Schema per tool's arguments, compiled once.
//
//   trajcheck::CatalogLoad c = trajcheck::load_catalog("catalog/tau-retail.json");
//   std::cerr << trajcheck::format_diagnostics(c.source, c.diagnostics);
//   if (!c.ok()) return 2;
//   std::vector<trajcheck::ArgumentError> errors;
//   if (!c.catalog->validate("refund_order", R"({"order_id": 7})", &errors)) …
//
// A Catalog and its SchemaValidators are immutable once built and may be shared by any
// number of threads (validation keeps its scratch state on the caller's stack).
// No exception crosses this API: problems are diagnostics or error lists.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/diagnostic.hpp"
#include "trajcheck/trace.hpp"

namespace trajcheck {

class Program;

enum class ToolEffect : std::uint8_t { read, write };
std::string_view to_string(ToolEffect e);

// The JSON Schema drafts the validator implements (valijson: draft 4, 6 and 7).
enum class SchemaDraft : std::uint8_t { draft4, draft6, draft7 };

// One reason an instance failed its schema. `path` is where, in the rule language's path
// syntax rooted at `arguments` (`arguments.items[0].item_id`); `reason` is valijson's text.
struct ArgumentError {
  std::string path;
  std::string reason;
};

// A compiled JSON Schema. Immutable, thread-safe.
class SchemaValidator {
 public:
  virtual ~SchemaValidator() = default;
  // Compiles `schema_json`; null with *error set when it is not JSON or not a schema
  // valijson can build (an unresolvable `$ref`, a bad keyword value, …).
  static std::shared_ptr<const SchemaValidator> compile(std::string_view schema_json,
                                                        SchemaDraft draft, std::string* error);
  // True when `instance_json` is valid. Otherwise false, and (when `errors` is not null)
  // the reasons are appended; JSON that does not parse is one error at the root.
  virtual bool validate(std::string_view instance_json, std::vector<ArgumentError>* errors) const = 0;
};

// One class of a tool's error vocabulary (`"errors": [{"class": "timeout", "retryable": true}]`).
struct ToolErrorClass {
  std::string name;        // the class, as a failed result names it (`error_class`, `code`, …)
  bool retryable = false;  // a retry may succeed
  // The call may have taken effect although it failed (a timeout of a write): repeating it
  // needs the same operation key. Default: true for the class `timeout`.
  bool uncertain = false;
};

struct CatalogTool {
  std::string name;      // normalized like trace tool names (trimmed, case-folded)
  std::string raw_name;  // as the catalog wrote it
  ToolEffect effect = ToolEffect::read;
  std::vector<ToolErrorClass> errors;  // the tool's error vocabulary; empty: not declared
  // `"operation_key": "idempotency_key"`: the argument that names one operation across attempts.
  std::string operation_key;
  std::shared_ptr<const SchemaValidator> arguments;  // null: the tool has no schema (any arguments)
  SourceRange range;     // the tool's name in the catalog file, where it could be located
};

class Catalog {
 public:
  Catalog() = default;  // no tools, unversioned
  // A catalog of `tools`, kept sorted by name (tool names normalized and distinct, as
  // parse_catalog makes them; the first of two equal names is found).
  Catalog(std::string version, std::string path, bool case_sensitive, std::vector<CatalogTool> tools);

  // `version` of the file, or "unversioned" when it has none.
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }
  bool case_sensitive() const { return case_sensitive_; }
  // Sorted by name.
  const std::vector<CatalogTool>& tools() const { return tools_; }
  // The tool with this normalized name, or null.
  const CatalogTool* find(std::string_view normalized_name) const;
  // Validates a call's raw JSON arguments (empty text = absent = `{}`) against the tool's
  // schema. An unknown tool is reported as one error with an empty path.
  bool validate(std::string_view tool, std::string_view arguments_json,
                std::vector<ArgumentError>* errors) const;

 private:
  std::string version_ = "unversioned";
  std::string path_;
  bool case_sensitive_ = false;
  std::vector<CatalogTool> tools_;
};

struct CatalogLoad {
  Source source;
  std::shared_ptr<const Catalog> catalog;  // null when any error was reported
  std::vector<Diagnostic> diagnostics;     // codes E3xx, positions in `source`
  bool ok() const { return catalog != nullptr; }
};

// Parses a catalog (`{"version": …, "tools": [{"name", "effect", "arguments"}]}`; tau-bench's
// `tools.json`, without version and effect, is accepted: missing version = "unversioned",
// missing effect = read). `schema_draft` selects the drafts' rules for every tool schema.
CatalogLoad parse_catalog(Source source, bool case_sensitive = false,
                          SchemaDraft schema_draft = SchemaDraft::draft7);
// Reads and parses a file; an unreadable file is one diagnostic (E300) in an empty source.
CatalogLoad load_catalog(const std::string& path, bool case_sensitive = false);

// Catalog accounting of one trace (argument validity, unknown tools, state-changing calls).
struct CatalogCallErrors {
  std::uint32_t step = 0;
  std::vector<ArgumentError> errors;
};
struct CatalogTraceReport {
  std::uint32_t calls = 0;          // tool calls
  std::uint32_t known_calls = 0;    // calls of catalog tools
  std::uint32_t write_calls = 0;    // calls of tools whose effect is write
  std::uint32_t unknown_calls = 0;  // calls of tools outside the catalog
  std::vector<CatalogCallErrors> invalid;  // known calls whose arguments fail the schema
  std::vector<std::string> unknown;        // distinct unknown tool names, first-seen order
  std::vector<std::uint32_t> unknown_counts;  // calls of each, parallel to `unknown`
  void clear();
};

// Checks every tool call of `trace` against `catalog`. Tool names are the trace's
// normalized names after `aliases` (observed -> canonical, normalized) are applied.
void check_catalog(const Catalog& catalog, const Trajectory& trace,
                   const std::vector<std::pair<std::string, std::string>>& aliases,
                   CatalogTraceReport& out);

// check_catalog with the program's catalog and aliases; false (and `out` cleared) when the
// program has no catalog.
bool check_catalog(const Program& program, const Trajectory& trace, CatalogTraceReport& out);

}  // namespace trajcheck
