// Catalog checks at compile time: a stale evaluation set (a rule naming a tool the catalog
// no longer has) fails loudly, naming the catalog's version; `write` resolves to the
// catalog's state-changing tools.
#include "compiler/catalog_checks.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "trajcheck/catalog.hpp"
#include "util/glob.hpp"
#include "util/suggest.hpp"

namespace trajcheck {

namespace detail {

namespace {

// " (did you mean 'x'?)" for a tool name or a glob of the rules that matches none of `known`,
// or empty. A glob gets a suggestion when it is a name followed by one `*` (`cancle_*`): its
// stem against the known names' beginnings.
std::string catalog_suggestion(const ir::Pattern& pt, const std::vector<std::string>& known) {
  std::string best;
  if (pt.kind == ir::Pattern::Kind::tool) {
    best = did_you_mean(pt.name, known);
  } else if (pt.kind == ir::Pattern::Kind::glob && pt.name.size() > 1 && pt.name.back() == '*' &&
             pt.name.find_first_of("*?") == pt.name.size() - 1) {
    const std::string stem = pt.name.substr(0, pt.name.size() - 1);
    // Beginnings as long as the stem first, then a character or two shorter or longer (a
    // dropped or doubled letter), so ties go to the same length.
    std::vector<std::string> stems;
    for (std::size_t len : {stem.size(), stem.size() + 1, stem.size() - 1, stem.size() + 2, stem.size() - 2}) {
      if (len == 0 || len > stem.size() + 2) continue;
      std::vector<std::string> these;
      for (const std::string& k : known)
        if (k.size() > len) these.push_back(k.substr(0, len));
      std::sort(these.begin(), these.end());
      these.erase(std::unique(these.begin(), these.end()), these.end());
      stems.insert(stems.end(), these.begin(), these.end());
    }
    best = did_you_mean(stem, stems);
    if (!best.empty()) best += '*';
  }
  return best.empty() ? best : fmt::format("; did you mean '{}'?", best);
}

// Tool names written right before a PATH's `*` or `?` (`search*`): pattern -> that operator.
std::map<ir::Id, char> catalog_postfixed_names(const ir::Module& m) {
  std::map<ir::Id, char> out;
  for (const ir::PathExpr& n : m.paths) {
    if ((n.kind != ir::PathExpr::Kind::star && n.kind != ir::PathExpr::Kind::optional) || n.children.size() != 1)
      continue;
    const ir::PathExpr& atom = m.paths[n.children[0]];
    if (atom.kind != ir::PathExpr::Kind::atom || atom.pattern == ir::kNone) continue;
    if (m.patterns[atom.pattern].kind != ir::Pattern::Kind::tool || n.range.end != atom.range.end + 1) continue;
    out.emplace(atom.pattern, n.kind == ir::PathExpr::Kind::star ? '*' : '?');
  }
  return out;
}

// For a name unknown as a tool that is written `name*` in a PATH where the glob `name*` would
// match known tools: the PATH trap (docs/language.md, W009), said with the tools it misses.
std::string catalog_postfix_hint(const ir::Pattern& pt, char op, const std::vector<std::string>& known) {
  const std::string glob = pt.name + op;
  std::vector<std::string> hits;
  for (const std::string& k : known)
    if (glob_match(glob, k)) hits.push_back(k);
  if (hits.empty()) return {};
  std::string shown = fmt::format("'{}'", hits[0]);
  if (hits.size() > 1) shown += fmt::format(" and {} more", hits.size() - 1);
  return fmt::format("; in a PATH, '{0}' is the tool '{1}' {2}, not the glob '{0}' (which matches {3}): for the "
                     "glob, write `group {1}_any = {0}` and use `{1}_any`",
                     glob, pt.name, op == '*' ? "repeated" : "made optional", shown);
}

bool catalog_pattern_matches(const ir::Pattern& pt, const std::vector<std::string>& known) {
  if (pt.kind == ir::Pattern::Kind::tool) return std::binary_search(known.begin(), known.end(), pt.name);
  return std::any_of(known.begin(), known.end(), [&](const std::string& k) { return glob_match(pt.name, k); });
}

// W008: without a catalog, the names the traces called are all that is known to exist.
void check_seen_tools(const ir::Module& m, const std::vector<std::string>& seen_in, std::vector<Diagnostic>& diags) {
  std::vector<std::string> seen = seen_in;
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  const std::map<ir::Id, char> postfixed = catalog_postfixed_names(m);
  // Patterns are interned by the front end: a name used twice is reported once, at its first use.
  for (ir::Id id = 0; id < m.patterns.size(); ++id) {
    const ir::Pattern& pt = m.patterns[id];
    if (pt.kind != ir::Pattern::Kind::tool && pt.kind != ir::Pattern::Kind::glob) continue;
    if (catalog_pattern_matches(pt, seen)) continue;
    std::string hint = catalog_suggestion(pt, seen);
    if (auto it = postfixed.find(id); hint.empty() && it != postfixed.end())
      hint = catalog_postfix_hint(pt, it->second, seen);
    std::string what = pt.kind == ir::Pattern::Kind::tool ? fmt::format("no tool '{}' was called", pt.name)
                                                          : fmt::format("glob '{}' matches no tool called", pt.name);
    diags.push_back(Diagnostic{
        Severity::warning, "W008", pt.range,
        fmt::format("{} in the traces given ({} tool name{} seen){}", what, seen.size(), seen.size() == 1 ? "" : "s",
                    hint),
        {}});
  }
}

}  // namespace

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
    if (options.seen_tools) check_seen_tools(m, *options.seen_tools, diags);
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
  // The names a suggestion may name: the catalog's, and the tools the traces called.
  std::vector<std::string> known;
  for (const CatalogTool& t : catalog.tools()) known.push_back(t.name);
  std::sort(known.begin(), known.end());
  std::vector<std::string> candidates = known;
  if (options.seen_tools) candidates.insert(candidates.end(), options.seen_tools->begin(), options.seen_tools->end());
  // Patterns are interned by the front end, so a name used twice is reported once, at
  // its first use.
  const std::map<ir::Id, char> postfixed = catalog_postfixed_names(m);
  for (ir::Id id = 0; id < m.patterns.size(); ++id) {
    const ir::Pattern& pt = m.patterns[id];
    if (pt.kind != ir::Pattern::Kind::tool && pt.kind != ir::Pattern::Kind::glob) continue;
    if (catalog_pattern_matches(pt, known)) continue;
    std::string hint = catalog_suggestion(pt, candidates);
    if (auto it = postfixed.find(id); hint.empty() && it != postfixed.end())
      hint = catalog_postfix_hint(pt, it->second, known);
    error("E202", pt.range,
          fmt::format("{}'{}' matches no tool of catalog {} ({}){}", pt.kind == ir::Pattern::Kind::glob ? "glob " : "",
                      pt.name, catalog.version(), shown, hint));
    ok = false;
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
