// The front end's boundary: rules text -> AST -> semantic checks -> rule IR.
// Everything here is internal; the public entry point is trajcheck::compile().
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/ir.hpp"
#include "trajcheck/diagnostic.hpp"

namespace trajcheck::language {

struct FrontendOptions {
  std::uint32_t max_nesting = 256;
  // Aliases from outside the file (CompileOptions::command_line_aliases, ::other_files_aliases).
  std::vector<std::pair<std::string, std::string>> command_line_aliases, other_files_aliases;
};

struct FrontendResult {
  ir::Module module;                    // valid only when no error diagnostic
  std::vector<Diagnostic> diagnostics;  // every problem of the file, sorted
  std::string ast_dump;                 // for `explain --emit ast`
};

// Parses, checks and lowers one rules file.
FrontendResult parse_rules(const Source& source, const FrontendOptions& options = {});

// Parses a PATH expression of the rule language (`(a -> b | c) -> {d, e}`) into `module`
// (appending patterns and paths), for expected paths in `trajcheck score`. Returns the
// root path id, or ir::kNone with diagnostics.
ir::Id parse_path_expression(const Source& source, ir::Module& module,
                             std::vector<Diagnostic>& diagnostics);

// Canonical layout of a rules file (`trajcheck fmt`); empty with diagnostics on error.
std::string format_rules(const Source& source, std::vector<Diagnostic>& diagnostics);

// Human-readable dump of the IR (`explain --emit ir`).
std::string dump_ir(const ir::Module& module);

}  // namespace trajcheck::language
