// Catalog checks at compile time: a stale evaluation set (a rule naming a tool the catalog
// no longer has) fails loudly, naming the catalog's version; `write` resolves to the
// catalog's state-changing tools.
#include "compiler/catalog_checks.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "trajcheck/catalog.hpp"
#include "util/glob.hpp"

namespace trajcheck {

namespace detail {

bool attach_catalog(const ir::Module& m, const Source& rules, const CompileOptions& options,
                    ProgramImpl* program, std::vector<Diagnostic>& diags) {
  auto error = [&](const char* code, SourceRange r, std::string message) {
    diags.push_back(Diagnostic{Severity::error, code, r, std::move(message), {}});
  };
  std::string shown, path;
  SourceRange at{};
  if (!options.catalog_override.empty()) {
    shown = path = options.catalog_override;
  } else if (!m.catalog.empty()) {
    shown = m.catalog;
    at = m.catalog_range;
    std::filesystem::path p(m.catalog);
    if (p.is_relative()) p = std::filesystem::path(rules.name()).parent_path() / p;
    path = p.lexically_normal().string();
  }
  if (path.empty()) {
    bool ok = true;
    for (const ir::Pattern& pt : m.patterns)
      if (pt.kind == ir::Pattern::Kind::write) {
        error("E104", pt.range,
              "`write` matches calls whose catalog effect is write, but no catalog is in use "
              "(add `catalog \"file.json\"` or pass --catalog)");
        ok = false;
      }
    for (const ir::Cond& c : m.conds)
      if (c.kind == ir::Cond::Kind::valid) {
        error("E104", c.range,
              fmt::format("`valid({})` checks calls against the tool catalog, but no catalog is in use "
                          "(add `catalog \"file.json\"` or pass --catalog)", c.a.path.text));
        ok = false;
      }
    return ok;
  }

  CatalogLoad load = load_catalog(path, m.case_sensitive);
  if (!load.ok()) {
    for (const Diagnostic& d : load.diagnostics) {
      if (d.severity != Severity::error) continue;
      std::string where = path;
      if (!load.source.text().empty()) {
        LineCol lc = load.source.line_col(d.range.begin);
        where = fmt::format("{}:{}:{}", path, lc.line, lc.column);
      }
      error("E201", at, fmt::format("catalog '{}' is unusable: {}: error[{}]: {}", shown, where, d.code, d.message));
    }
    return false;
  }
  const Catalog& catalog = *load.catalog;
  bool ok = true;
  // Patterns are interned by the front end, so a name used twice is reported once, at
  // its first use.
  for (const ir::Pattern& pt : m.patterns) {
    if (pt.kind == ir::Pattern::Kind::tool) {
      if (catalog.find(pt.name) == nullptr) {
        error("E202", pt.range,
              fmt::format("'{}' matches no tool of catalog {} ({})", pt.name, catalog.version(), shown));
        ok = false;
      }
    } else if (pt.kind == ir::Pattern::Kind::glob) {
      bool any = std::any_of(catalog.tools().begin(), catalog.tools().end(),
                             [&](const CatalogTool& t) { return glob_match(pt.name, t.name); });
      if (!any) {
        error("E202", pt.range,
              fmt::format("glob '{}' matches no tool of catalog {} ({})", pt.name, catalog.version(), shown));
        ok = false;
      }
    }
  }
  if (program != nullptr) {
    program->catalog = load.catalog;
    program->write_tools.clear();
    for (const CatalogTool& t : catalog.tools())
      if (t.effect == ToolEffect::write) program->write_tools.push_back(t.name);  // sorted: tools() is
  }
  return ok;
}

}  // namespace detail

bool check_catalog(const Program& program, const Trajectory& trace, CatalogTraceReport& out) {
  if (!program.catalog()) {
    out.clear();
    return false;
  }
  check_catalog(*program.catalog(), trace, program.tool_aliases(), out);
  return true;
}

}  // namespace trajcheck
