// Loading a tool catalog (docs/catalog.md): every problem is a diagnostic located in the
// catalog file; each tool's argument schema is compiled once into a shared validator.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/schema_regex.hpp"
#include "json/located_parse.hpp"
#include "trajcheck/catalog.hpp"

namespace trajcheck {

std::string_view to_string(ToolEffect e) { return e == ToolEffect::write ? "write" : "read"; }

const CatalogTool* Catalog::find(std::string_view name) const {
  auto it = std::lower_bound(tools_.begin(), tools_.end(), name,
                             [](const CatalogTool& t, std::string_view n) { return t.name < n; });
  return it != tools_.end() && it->name == name ? &*it : nullptr;
}

bool Catalog::validate(std::string_view tool, std::string_view arguments_json,
                       std::vector<ArgumentError>* errors) const {
  const CatalogTool* t = find(tool);
  if (t == nullptr) {
    if (errors) errors->push_back({"", fmt::format("'{}' is not a tool of catalog {}", tool, version_)});
    return false;
  }
  if (!t->arguments) return true;
  return t->arguments->validate(arguments_json.empty() ? std::string_view("{}") : arguments_json, errors);
}

Catalog::Catalog(std::string version, std::string path, bool case_sensitive, std::vector<CatalogTool> tools)
    : version_(std::move(version)), path_(std::move(path)), case_sensitive_(case_sensitive), tools_(std::move(tools)) {
  std::stable_sort(tools_.begin(), tools_.end(), [](const CatalogTool& a, const CatalogTool& b) { return a.name < b.name; });
}

namespace {

struct CatalogBuilder {
  const Source& source;
  std::vector<Diagnostic>& diags;
  bool case_sensitive = false;
  std::string version = "unversioned";
  std::vector<CatalogTool> entries;  // the usable tools, in file order

  void error(const char* code, SourceRange r, std::string message) {
    diags.push_back(Diagnostic{Severity::error, code, r, std::move(message), {}});
  }

  // nlohmann keeps no positions, so a tool is located by searching the text for its
  // `"name": "<name>"` member after the previous tool's; a miss points at the tools array.
  SourceRange locate_member(std::string_view key, const nlohmann::json& value, std::size_t& from) const {
    const std::string& t = source.text();
    std::string k = nlohmann::json(std::string(key)).dump();
    std::string v = value.dump();
    for (std::size_t pos = t.find(k, from); pos != std::string::npos; pos = t.find(k, pos + 1)) {
      std::size_t i = pos + k.size();
      while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
      if (i >= t.size() || t[i] != ':') continue;
      ++i;
      while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
      if (t.compare(i, v.size(), v) == 0) {
        from = i + v.size();
        return {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + v.size())};
      }
    }
    return fallback;
  }
  SourceRange fallback;

  // A pattern RE2 rejects, located by its text after `from` (a `pattern` member's value or a
  // patternProperties key); `miss` when the text is written differently from nlohmann's dump.
  SourceRange locate_pattern(const detail::SchemaPatternProblem& p, std::size_t from, SourceRange miss) const {
    if (!p.is_key) {
      SourceRange r = locate_member("pattern", nlohmann::json(p.pattern), from);
      return r.begin == fallback.begin && r.end == fallback.end ? miss : r;
    }
    const std::string& t = source.text();
    std::string k = nlohmann::json(p.pattern).dump();
    for (std::size_t pos = t.find(k, from); pos != std::string::npos; pos = t.find(k, pos + 1)) {
      std::size_t i = pos + k.size();
      while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
      if (i < t.size() && t[i] == ':')
        return {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + k.size())};
    }
    return miss;
  }

  void build(const nlohmann::json& doc, SchemaDraft draft) {
    if (!doc.is_object()) {
      error("E302", {}, "a catalog is a JSON object {\"version\": …, \"tools\": […]}");
      return;
    }
    std::size_t cursor = 0;
    if (auto v = doc.find("version"); v != doc.end()) {
      if (v->is_string() && !v->get<std::string>().empty()) {
        version = v->get<std::string>();
      } else {
        std::size_t from = 0;
        error("E302", locate_member("version", *v, from), "`version` must be a non-empty string");
      }
    }
    auto tools = doc.find("tools");
    if (tools == doc.end() || !tools->is_array()) {
      error("E302", {}, "the catalog has no `tools` array");
      return;
    }
    if (std::size_t at = source.text().find("\"tools\""); at != std::string::npos)
      fallback = {static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at + 7)};
    std::map<std::string, SourceRange> seen;
    std::size_t index = 0;
    for (const nlohmann::json& item : *tools) {
      const std::size_t i = index++;
      // OpenAI's {"type": "function", "function": {…}} wrapper is accepted as is.
      const nlohmann::json* entry = &item;
      if (item.is_object()) {
        auto f = item.find("function");
        if (f != item.end() && f->is_object()) entry = &*f;
      }
      if (!entry->is_object()) {
        error("E302", fallback, fmt::format("tools[{}] is not an object", i));
        continue;
      }
      auto name = entry->find("name");
      if (name == entry->end() || !name->is_string() || name->get<std::string>().empty()) {
        error("E302", fallback, fmt::format("tools[{}] has no `name` string", i));
        continue;
      }
      const std::size_t tool_start = cursor;  // the previous tool's name: this tool's text is after it
      CatalogTool tool;
      tool.raw_name = name->get<std::string>();
      tool.name = normalize_tool_name(tool.raw_name, case_sensitive);
      tool.range = locate_member("name", *name, cursor);
      if (tool.name.empty()) {
        error("E302", tool.range, fmt::format("tools[{}] has a blank `name`", i));
        continue;
      }
      if (auto e = entry->find("effect"); e != entry->end()) {
        if (*e == "write") {
          tool.effect = ToolEffect::write;
        } else if (*e != "read") {
          std::size_t from = tool.range.begin;
          error("E303", locate_member("effect", *e, from),
                fmt::format("tool '{}': `effect` is \"read\" or \"write\", not {}", tool.raw_name, e->dump()));
          continue;
        }
      }
      if (auto e = entry->find("errors"); e != entry->end()) {
        bool bad = !e->is_array();
        for (const nlohmann::json& x : bad ? nlohmann::json::array() : *e) {
          auto cls = x.is_object() ? x.find("class") : x.end();
          if (!x.is_object() || cls == x.end() || !cls->is_string() || cls->get<std::string>().empty() ||
              (x.contains("retryable") && !x["retryable"].is_boolean()) ||
              (x.contains("uncertain") && !x["uncertain"].is_boolean())) {
            bad = true;
            break;
          }
          ToolErrorClass c;
          c.name = cls->get<std::string>();
          c.retryable = x.value("retryable", false);
          c.uncertain = x.value("uncertain", c.name == "timeout");
          tool.errors.push_back(std::move(c));
        }
        if (bad) {  // at the tool's name: the loader locates scalar members only
          error("E306", tool.range,
                fmt::format("tool '{}': `errors` is a list of {{\"class\": NAME, \"retryable\": BOOL, \"uncertain\": BOOL}}",
                            tool.raw_name));
          continue;
        }
      }
      if (auto k = entry->find("operation_key"); k != entry->end()) {
        if (!k->is_string() || k->get<std::string>().empty()) {
          std::size_t from = tool.range.begin;
          error("E306", locate_member("operation_key", *k, from),
                fmt::format("tool '{}': `operation_key` is the name of an argument", tool.raw_name));
          continue;
        }
        tool.operation_key = k->get<std::string>();
      }
      auto args = entry->find("arguments");
      if (args == entry->end()) args = entry->find("parameters");
      if (args != entry->end()) {
        if (!args->is_object() && !args->is_boolean()) {
          error("E305", tool.range,
                fmt::format("tool '{}': `arguments` must be a JSON Schema (an object or a boolean)", tool.raw_name));
          continue;
        }
        // RE2 is the regex engine (linear time); a pattern it cannot run is reported where it
        // is written, each one, instead of the one-line compile error.
        if (auto problems = detail::schema_pattern_problems(*args); !problems.empty()) {
          for (const detail::SchemaPatternProblem& p : problems)
            error("E305", locate_pattern(p, tool_start, tool.range),
                  fmt::format("tool '{}': {} \"{}\" (arguments{}) is not supported by RE2, trajcheck's regex "
                              "engine (no lookaround, backreferences or \\u escapes): {}",
                              tool.raw_name, p.is_key ? "patternProperties pattern" : "pattern", p.pattern,
                              p.pointer, p.reason));
          continue;
        }
        std::string why;
        tool.arguments = SchemaValidator::compile(args->dump(), draft, &why);
        if (!tool.arguments) {
          error("E305", tool.range, fmt::format("tool '{}': its `arguments` schema is not usable: {}", tool.raw_name, why));
          continue;
        }
      }
      if (auto [it, fresh] = seen.emplace(tool.name, tool.range); !fresh) {
        Diagnostic d{Severity::error, "E304", tool.range,
                     fmt::format("duplicate tool '{}' in the catalog", tool.raw_name), {}};
        d.notes.push_back(Note{it->second, "first defined here"});
        diags.push_back(std::move(d));
        continue;
      }
      entries.push_back(std::move(tool));
    }
  }
};

}  // namespace

CatalogLoad parse_catalog(Source source, bool case_sensitive, SchemaDraft schema_draft) {
  CatalogLoad out;
  CatalogBuilder b{source, out.diagnostics, case_sensitive, "unversioned", {}, {}};
  nlohmann::json doc;
  if (auto failure = json::parse_located(source.text(), doc)) {
    auto at = static_cast<std::uint32_t>(failure->offset);
    out.diagnostics.push_back(Diagnostic{Severity::error, "E301", {at, at},
                                         "the catalog is not valid JSON: " + failure->reason, {}});
  } else {
    b.build(doc, schema_draft);
  }
  sort_diagnostics(out.diagnostics);
  if (!has_errors(out.diagnostics))
    out.catalog = std::make_shared<const Catalog>(std::move(b.version), source.name(), case_sensitive, std::move(b.entries));
  out.source = std::move(source);
  return out;
}

CatalogLoad load_catalog(const std::string& path, bool case_sensitive) {
  std::string error;
  std::optional<Source> src = Source::from_file(path, &error);
  if (!src) {
    CatalogLoad out;
    out.source = Source(path, "");
    out.diagnostics.push_back(Diagnostic{Severity::error, "E300", {}, fmt::format("cannot read catalog: {}", error), {}});
    return out;
  }
  return parse_catalog(std::move(*src), case_sensitive);
}

void CatalogTraceReport::clear() {
  calls = known_calls = write_calls = unknown_calls = 0;
  invalid.clear();
  unknown.clear();
  unknown_counts.clear();
}

void check_catalog(const Catalog& catalog, const Trajectory& trace,
                   const std::vector<std::pair<std::string, std::string>>& aliases,
                   CatalogTraceReport& out) {
  out.clear();
  std::vector<ArgumentError> errors;
  // Per distinct tool name of the trace: its catalog entry, or its index in out.unknown.
  // Each name is resolved once, so a trace of many distinct tools costs linear time.
  struct Seen {
    const CatalogTool* tool;
    std::size_t unknown;
  };
  std::unordered_map<std::string_view, Seen> seen;
  std::unordered_map<std::string_view, std::size_t> unknown_index;  // by name after aliases
  const auto& steps = trace.steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.type != StepType::tool_call) continue;
    ++out.calls;
    std::string_view written = trace.tool_name(s);
    auto [at, fresh] = seen.try_emplace(written, Seen{nullptr, 0});
    if (fresh) {
      std::string_view name = written;
      for (const auto& [observed, canonical] : aliases)
        if (observed == name) {
          name = canonical;
          break;
        }
      at->second.tool = catalog.find(name);
      if (at->second.tool == nullptr) {
        auto [u, added] = unknown_index.try_emplace(name, out.unknown.size());
        if (added) {
          out.unknown.emplace_back(name);
          out.unknown_counts.push_back(0);
        }
        at->second.unknown = u->second;
      }
    }
    const CatalogTool* tool = at->second.tool;
    if (tool == nullptr) {
      ++out.unknown_calls;
      ++out.unknown_counts[at->second.unknown];
      continue;
    }
    ++out.known_calls;
    if (tool->effect == ToolEffect::write) ++out.write_calls;
    if (!tool->arguments) continue;
    errors.clear();
    std::string_view args = trace.text(s.arguments);
    if (s.arguments_invalid) {
      errors.push_back({"arguments", "the call's arguments are not JSON"});
    } else if (tool->arguments->validate(args.empty() ? std::string_view("{}") : args, &errors)) {
      continue;
    }
    out.invalid.push_back(CatalogCallErrors{static_cast<std::uint32_t>(i), errors});
  }
}

}  // namespace trajcheck
