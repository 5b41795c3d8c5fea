// The compiler's checks of a rules file against its tool catalog (docs/catalog.md): the
// catalog itself is data (src/catalog); what the rules may say about it is decided here.
#pragma once

#include <vector>

#include "compiler/program.hpp"
#include "ir/ir.hpp"
#include "trajcheck/diagnostic.hpp"
#include "trajcheck/rules.hpp"

namespace trajcheck::detail {

// Loads the catalog that `options.catalog_override` or the module's `catalog` line names
// (the latter relative to the rules file's directory), reports catalog problems (E201),
// rule tool names and globs that match no catalog tool (E202), `write` without a catalog
// (E104), and attaches the catalog and its write tools to `program` (may be null when the
// build failed: the diagnostics are still reported). False when it reported an error.
bool attach_catalog(const ir::Module& module, const Source& rules, const CompileOptions& options,
                    ProgramImpl* program, std::vector<Diagnostic>& diagnostics);

}  // namespace trajcheck::detail
