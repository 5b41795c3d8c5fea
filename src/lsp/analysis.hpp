// What the language server knows about one document: its problems (the compiler's, and for
// a suite those of the rules and catalog it names), its names (declarations and uses of
// groups, aliases, rules and tools), its symbols, hover texts and file links. Built from the
// front end's syntax tree, so a file with syntax errors still has every line that parsed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trajcheck/catalog.hpp"
#include "trajcheck/diagnostic.hpp"

namespace trajcheck::lsp {

// A catalog read for hover, completion and definition, with each tool's argument schema.
struct CatalogInfo {
  std::string path;
  CatalogLoad load;
  std::map<std::string, nlohmann::json> schemas;  // normalized tool name -> arguments schema
};

// Loads catalogs once per file version (path, size, modification time).
class CatalogCache {
 public:
  // Null when the file cannot be read.
  std::shared_ptr<const CatalogInfo> get(const std::string& path, bool case_sensitive);

 private:
  struct Entry {
    std::string stamp;
    std::shared_ptr<const CatalogInfo> info;
  };
  std::map<std::string, Entry> entries_;
};

// Tool names and argument paths seen in the trace files the user pointed the server to.
struct TraceNames {
  std::map<std::string, std::uint64_t> tools;                  // normalized name -> calls
  std::map<std::string, std::set<std::string>> argument_paths;  // tool -> `items[0].id`, …
  std::uint64_t records = 0, rejected = 0;
};
// Reads at most `max_records` records of `inputs` (files or directories).
TraceNames read_trace_names(const std::vector<std::string>& inputs, std::uint64_t max_records);

// A location in another file, for a problem's related information.
struct Related {
  std::string path;                      // empty: this document
  std::shared_ptr<const Source> source;  // the other file's text (for positions); null: this document
  SourceRange range;
  std::string message;
};

struct Problem {
  Diagnostic diagnostic;
  std::vector<Related> related;  // besides the diagnostic's own notes (in this document)
};

struct Word {
  enum class Kind : std::uint8_t { group, alias, rule, tool, glob, keyword };
  Kind kind = Kind::tool;
  std::string key;  // normalized name (tools, groups, aliases), or the text
  SourceRange range;
  bool declaration = false;
};

struct Symbol {
  std::string name, detail;
  int kind = 0;  // LSP SymbolKind
  SourceRange range, selection;
  std::vector<Symbol> children;
};

// A span with a hover text (a statement, a scope, a declaration line, a gate).
struct Span {
  SourceRange range;
  std::string markdown;
};

// A quoted file name or glob and the files it names.
struct Link {
  SourceRange range;
  std::string text;
  std::vector<std::string> files;
};

struct Analysis {
  bool suite = false;
  std::string path, dir;  // the document's file and directory ("" and "." when unsaved)
  std::vector<Problem> problems;
  std::vector<Word> words;
  std::vector<Symbol> symbols;
  std::vector<Span> spans;
  std::vector<Link> links;
  std::map<std::string, std::string> group_text;                // group -> canonical pattern
  std::map<std::string, std::vector<std::string>> group_tools;  // group -> tool names in it
  std::map<std::string, std::string> alias_target;              // observed -> canonical
  std::map<std::string, std::string> rule_text;                 // rule -> header + message
  // A suite's `violations[NAME]` names: each rule and tag of its rules files -> what it is.
  std::map<std::string, std::string> violation_names;
  std::shared_ptr<const CatalogInfo> catalog;
  bool case_sensitive = false;
};

struct AnalysisContext {
  // The text of a file: the editor's if it is open, else the disk's; nullopt if unreadable.
  std::function<std::optional<std::string>(const std::string& path)> read;
  CatalogCache* catalogs = nullptr;
  std::string default_catalog;  // for rules files without a `catalog` line ("" = none)
};

Analysis analyze_rules(const std::string& path, const std::string& text, const AnalysisContext& ctx);
Analysis analyze_suite(const std::string& path, const std::string& text, const AnalysisContext& ctx);

// The innermost name whose range holds `offset` (its end included, for a cursor just after
// it), or null.
const Word* word_at(const Analysis& a, std::uint32_t offset);

// The hover text at `offset`, or "" when there is nothing to say.
std::string hover_text(const Analysis& a, std::uint32_t offset, const TraceNames& traces);

// The bytes of a file, or nullopt when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path);

// Files matching a glob relative to `dir` (`*`/`?` within one path component), sorted.
std::vector<std::string> resolve_files(const std::string& dir, const std::string& pattern);

}  // namespace trajcheck::lsp
