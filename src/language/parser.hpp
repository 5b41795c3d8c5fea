// Internal interfaces between the front-end stages: parsing (parser.cpp), printing
// (printer.cpp), checks and lowering (lower.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "language/ast.hpp"
#include "language/frontend.hpp"

namespace trajcheck::language::detail {

// Files larger than this are refused with E011 (documented in docs/language.md).
constexpr std::size_t kMaxSourceBytes = 16u << 20;
// Counts and indices must stay below 2^63 (E009).
constexpr std::uint64_t kMaxCount = (std::uint64_t{1} << 63) - 1;

// Parses every line of `source` into `file` (syntax errors, indentation errors, invalid
// UTF-8, nesting and size limits go to `diags`). Returns false when the file was refused
// as a whole (too large).
bool parse_file(const Source& source, const FrontendOptions& options, ast::File& file,
                std::vector<Diagnostic>& diags);

// Parses one PATH expression (the whole of `source`) into `file`; kNone on error.
ast::Id parse_path_text(const Source& source, const FrontendOptions& options, ast::File& file,
                        std::vector<Diagnostic>& diags);

// Decodes a string literal with its quotes (grammar::string_lit, whose escapes the grammar
// has validated): JSON escapes, \u surrogate pairs joined, lone surrogates as U+FFFD.
std::string decode_string(std::string_view lit);

// Canonical text (fmt's form) of AST parts.
std::string print_pattern(const ast::File& file, ast::Id id);
std::string print_cond(const ast::File& file, ast::Id id);
std::string print_path(const ast::File& file, ast::Id id);
std::string print_statement(const ast::File& file, ast::Id id);
std::string print_scope(const ast::File& file, const ast::Scope& scope);  // without ':'
std::string print_line(const ast::File& file, const ast::Line& line);      // code part only
std::string print_operand(const ir::Operand& operand);
std::string quote_string(std::string_view value);  // a string literal: the JSON escaper, DEL escaped too
std::string quote_name_if_needed(std::string_view name);
std::string dump_ast(const ast::File& file);
std::string_view statement_kind_name(ir::StatementKind kind);

// Checks `file` and lowers it to `module`; appends diagnostics.
void lower_file(const Source& source, const ast::File& file, const FrontendOptions& options,
                ir::Module& module, std::vector<Diagnostic>& diags);
// Lowers one PATH expression of `file` into `module` (for parse_path_expression).
ir::Id lower_path(const Source& source, const ast::File& file, ast::Id path, ir::Module& module,
                  std::vector<Diagnostic>& diags);

// Warnings for the documented traps (W009 a glob-looking name before a PATH's `*`/`?`, W010
// `where` after an alternation, W011 a `where` path no step has), one per place in the
// source (traps.cpp).
void check_traps(const Source& source, const ast::File& file, std::vector<Diagnostic>& diags);
Diagnostic make_error(const char* code, SourceRange range, std::string message);
Diagnostic make_warning(const char* code, SourceRange range, std::string message);

}  // namespace trajcheck::language::detail
