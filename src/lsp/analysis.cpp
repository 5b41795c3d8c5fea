// Document analysis for the language server: the compiler's diagnostics, and names, symbols
// and hover texts read off the front end's syntax tree (which keeps every line that parsed).
#include "lsp/analysis.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "language/parser.hpp"
#include "suite/suite.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/rules.hpp"
#include "util/glob.hpp"
#include "util/suggest.hpp"
#include "util/glob_files.hpp"

namespace trajcheck::lsp {

namespace fs = std::filesystem;
namespace ast = language::ast;
using nlohmann::json;

// LSP SymbolKind values.
enum : int {
  kSymFile = 1, kSymModule = 2, kSymNamespace = 3, kSymProperty = 7, kSymFunction = 12,
  kSymVariable = 13, kSymConstant = 14, kSymEvent = 24, kSymOperator = 25,
};

namespace {

std::string directory_of(const std::string& path) {
  if (path.empty()) return ".";
  std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string join(const std::string& dir, const std::string& p) {
  if (p.empty() || p[0] == '/' || dir.empty() || dir == ".") return p;
  return (fs::path(dir) / p).lexically_normal().string();
}

std::string code(std::string_view s) {
  // Markdown inline code that survives backquotes in the text.
  std::string fence = s.find('`') == std::string_view::npos ? "`" : "`` ";
  std::string close = fence == "`" ? "`" : " ``";
  return fence + std::string(s) + close;
}

// ---- sentences: what a statement or scope means (docs/language.md §3, §4) ----

std::string count_bounds(const ast::Statement& s) {
  switch (s.form) {
    case ast::CountForm::at_most: return fmt::format("more than {}", s.first.value);
    case ast::CountForm::at_least: return fmt::format("fewer than {}", s.first.value);
    case ast::CountForm::exactly: return fmt::format("other than {}", s.first.value);
    case ast::CountForm::between:
      return fmt::format("outside {}…{}", s.first.value, s.second.value);
    case ast::CountForm::none: break;
  }
  return "out of bounds";
}

struct Meaning {
  std::string violated, witnesses, vacuous;
};

Meaning statement_meaning(const ast::File& f, const ast::Statement& s) {
  using K = ir::StatementKind;
  auto P = [&](ast::Id id) { return code(language::detail::print_pattern(f, id)); };
  std::string a = s.a != ast::kNone ? P(s.a) : "", b = s.b != ast::kNone ? P(s.b) : "";
  switch (s.kind) {
    case K::forbid: return {"any step matches " + a, "each matching step", ""};
    case K::require: return {"no step matches " + a, "none (the end of the trace)", ""};
    case K::count:
      return {fmt::format("the number of steps matching {} is {}", a, count_bounds(s)),
              s.form == ast::CountForm::at_most ? fmt::format("the {}th matching step and later", s.first.value + 1)
                                                : "every matching step",
              ""};
    case K::precedes:
      return {fmt::format("some {} has no {} anywhere before it", b, a), "each such " + b,
              "no step matches " + b};
    case K::immediately_precedes:
      return {fmt::format("some {} is not directly preceded by {} (or is the first step)", b, a),
              "each such " + b, "no step matches " + b};
    case K::followed_by:
      return {fmt::format("some {} has no {} anywhere after it", a, b), "each such " + a, "no step matches " + a};
    case K::immediately_followed_by:
      return {fmt::format("some {} is not directly followed by {} (or is the last step)", a, b), "each such " + a,
              "no step matches " + a};
    case K::requires_:
      return {fmt::format("{} occurs and {} occurs nowhere in the trace", a, b), "the first " + a,
              "no step matches " + a};
    case K::never_followed_by:
      return {fmt::format("some {} occurs after some {}", b, a), fmt::format("the first {} and each later {}", a, b),
              "no step matches " + a};
    case K::excludes:
      return {fmt::format("both {} and {} occur", a, b), fmt::format("the first {} and the first {}", a, b),
              "neither occurs"};
    case K::starts_with:
      return {fmt::format("the first step does not match {} (or the trace is empty)", a), "that step", ""};
    case K::ends_with:
      return {fmt::format("the last step does not match {} (or the trace is empty)", a), "that step", ""};
    case K::only: return {"some tool call does not match " + a + " (an allow-list)", "each such call", ""};
    case K::no_duplicate:
      return {fmt::format("two calls matching {} have the same tool and equal arguments", a), "the repeats", ""};
    case K::in_a_row:
      return {fmt::format("more than {} consecutive tool calls match {} (other step types do not break a run)",
                          s.first.value, a),
              fmt::format("the {}th call of a run onward", s.first.value + 1), ""};
    case K::retries:
      return {fmt::format("more than {} calls of one tool matching {} follow a failed call of it without a "
                          "success between",
                          s.first.value, a),
              "the excess retries", ""};
    case K::expect:
      return {"the tool calls that match some atom of " + code(language::detail::print_path(f, s.path)) +
                  ", in order, are not a word of it",
              "the call where it got stuck, or none when the trace ends early", ""};
    case K::expect_exactly:
      return {"the sequence of all tool calls is not a word of " + code(language::detail::print_path(f, s.path)),
              "the call where it got stuck, or none when the trace ends early", ""};
  }
  return {};
}

std::string statement_markdown(const ast::File& f, ast::Id id) {
  const ast::Statement& s = f.statements[id];
  Meaning m = statement_meaning(f, s);
  std::string out = fmt::format("**{}** — violated when {}.\n\nWitnesses: {}. ",
                                code(language::detail::print_statement(f, id)), m.violated, m.witnesses);
  out += m.vacuous.empty() ? std::string("Never vacuous: every trace activates it.")
                           : "Vacuous (satisfied without being activated) when " + m.vacuous + ".";
  if (s.ignoring != ast::kNone)
    out += "\n\nSteps matching " + code(language::detail::print_pattern(f, s.ignoring)) +
           " are removed before it is checked.";
  return out;
}

std::string scope_markdown(const ast::File& f, const ast::Scope& s) {
  auto P = [&](ast::Id id) { return code(language::detail::print_pattern(f, id)); };
  std::string head = "**" + code(language::detail::print_scope(f, s) + ":") + "** — ";
  switch (s.kind) {
    case ir::ScopeKind::after:
      return head + "its statements are checked on the segment from the first " + P(s.q) +
             " (included) to the end of the trace; they are vacuous when no step matches " + P(s.q) + ".";
    case ir::ScopeKind::before:
      return head + "its statements are checked on the trace up to the first " + P(s.r) +
             " (excluded), or on the whole trace when no " + P(s.r) + " occurs.";
    case ir::ScopeKind::between:
      return head + "its statements are checked on every segment that opens at a " + P(s.q) +
             " and is closed by a " + P(s.r) + " (the opening step included, the closing one excluded); a "
             "segment left open at the end is not checked. Vacuous when no segment closes.";
    case ir::ScopeKind::after_until:
      return head + "its statements are checked on every segment from a " + P(s.q) + " to the next " + P(s.r) +
             " (excluded), including a final segment left open. Vacuous when no " + P(s.q) + " occurs.";
    case ir::ScopeKind::global: break;
  }
  return "";
}

std::string_view keyword_meaning(std::string_view k) {
  if (k == "any" || k == "tool_call") return "any tool call";
  if (k == "step") return "any step of any type";
  if (k == "write") return "a tool call whose catalog effect is `write`";
  if (k == "user_message") return "a step of type `user_message`";
  if (k == "assistant_message") return "a step of type `assistant_message`";
  if (k == "approval_request") return "a step of type `approval_request`";
  if (k == "approval") return "a step of type `approval`";
  if (k == "final_answer") return "a step of type `final_answer`";
  return "";
}

// Hover of a seen(PATH, …) condition: where it looks, as written (no sources: all three).
std::string seen_markdown(std::uint8_t sources) {
  if (sources == 0) sources = ir::kSeenAll;
  std::string where;
  auto add = [&](std::uint8_t bit, const char* text) {
    if (!(sources & bit)) return;
    where += where.empty() ? "" : "; ";
    where += text;
  };
  add(ir::kSeenUser, "an earlier user message (`user`: a string, as a substring)");
  add(ir::kSeenResult, "a leaf of an earlier tool call's result (`result`)");
  add(ir::kSeenContext, "a leaf of the trace's context (`context`)");
  return "**seen** — the value appeared earlier, in: " + where +
         ". An array when every element did (an empty one never); null and objects never.";
}

bool has_wildcard(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

// The tool names a pattern may match, through groups (for `arguments.` completion). Each
// group's names are found once and shared by every use, as the compiler shares a group used
// several times: a chain `gN = gN-1 | gN-1 | gN-1` costs time linear in its length, not 3^N.
class PatternTools {
 public:
  PatternTools(const ast::File& f, bool cs, const std::map<std::string, ast::Id>& groups)
      : f_(f), cs_(cs), groups_(groups) {}

  // The names of group `key` (declared in `groups`).
  const std::set<std::string>& group(const std::string& key, int depth = 0) {
    if (auto done = done_.find(key); done != done_.end()) return done->second;
    std::set<std::string> names;
    // A group in a cycle (E018) or nested past the compiler's limit (E010) adds nothing more.
    if (active_.insert(key).second && depth <= kMaxDepth) {
      collect(groups_.at(key), names, depth + 1);
      active_.erase(key);
    }
    return done_[key] = std::move(names);
  }

 private:
  static constexpr int kMaxDepth = 256;  // CompileOptions::max_nesting

  void collect(ast::Id id, std::set<std::string>& out, int depth) {
    if (id == ast::kNone || depth > kMaxDepth) return;
    const ast::Pattern& p = f_.patterns[id];
    using K = ast::Pattern::Kind;
    if (p.kind == K::name) {
      std::string key = normalize_tool_name(p.text, cs_);
      if (groups_.count(key)) {
        const std::set<std::string>& names = group(key, depth + 1);
        out.insert(names.begin(), names.end());
      } else {
        out.insert(std::move(key));
      }
    } else if (p.kind == K::quoted) {
      out.insert(normalize_tool_name(p.text, cs_));
    } else if (p.kind != K::keyword && p.kind != K::not_) {
      for (ast::Id c : p.children) collect(c, out, depth + 1);
    }
  }

  const ast::File& f_;
  const bool cs_;
  const std::map<std::string, ast::Id>& groups_;
  std::map<std::string, std::set<std::string>> done_;
  std::set<std::string> active_;
};

SourceRange block_range(const ast::File& f, std::uint32_t line) {
  SourceRange r = f.lines[line].range;
  r.begin = f.lines[line].begin;
  std::vector<std::uint32_t> stack(f.lines[line].children.begin(), f.lines[line].children.end());
  while (!stack.empty()) {
    std::uint32_t i = stack.back();
    stack.pop_back();
    r.end = std::max(r.end, f.lines[i].range.end);
    stack.insert(stack.end(), f.lines[i].children.begin(), f.lines[i].children.end());
  }
  return r;
}

Problem problem_of(Diagnostic d) {
  Problem p;
  p.diagnostic = std::move(d);
  return p;
}

// A problem in another file, shown at `at` in this one with the other file's location related.
Problem problem_in(const std::shared_ptr<const Source>& other, const Diagnostic& d, SourceRange at,
                   const std::string& shown) {
  Problem p;
  LineCol lc = other->line_col(d.range.begin);
  p.diagnostic.severity = d.severity;
  p.diagnostic.code = d.code;
  p.diagnostic.range = at;
  p.diagnostic.message = other->text().empty() ? fmt::format("{}: {}", shown, d.message)
                                               : fmt::format("{}:{}:{}: {}", shown, lc.line, lc.column, d.message);
  p.related.push_back({other->name(), other, d.range, d.message});
  for (const Note& n : d.notes)
    if (n.range) p.related.push_back({other->name(), other, *n.range, n.message});
  return p;
}

}  // namespace

// ---- catalogs and traces ----

std::shared_ptr<const CatalogInfo> CatalogCache::get(const std::string& path, bool case_sensitive) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return nullptr;
  auto time = fs::last_write_time(path, ec);
  if (ec) return nullptr;
  std::string stamp = fmt::format("{}:{}:{}", size, time.time_since_epoch().count(), case_sensitive);
  std::string key = path + (case_sensitive ? "\x01" : "");
  if (auto it = entries_.find(key); it != entries_.end() && it->second.stamp == stamp) return it->second.info;
  auto text = read_text_file(path);
  if (!text) return nullptr;
  auto info = std::make_shared<CatalogInfo>();
  info->path = path;
  info->load = parse_catalog(Source(path, *text), case_sensitive);
  // The schemas as written, for hover and `arguments.` completion (the catalog keeps only
  // their compiled validators). Same shapes as the loader accepts.
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_object() && doc.contains("tools") && doc["tools"].is_array()) {
    for (const json& item : doc["tools"]) {
      const json* entry = &item;
      if (item.is_object() && item.contains("function") && item["function"].is_object()) entry = &item["function"];
      if (!entry->is_object() || !entry->contains("name") || !(*entry)["name"].is_string()) continue;
      auto args = entry->find("arguments");
      if (args == entry->end()) args = entry->find("parameters");
      if (args == entry->end()) continue;
      info->schemas[normalize_tool_name((*entry)["name"].get<std::string>(), case_sensitive)] = *args;
    }
  }
  entries_[key] = {stamp, info};
  return info;
}

TraceNames read_trace_names(const std::vector<std::string>& inputs, std::uint64_t max_records) {
  TraceNames out;
  if (inputs.empty()) return out;
  RecordSource source(inputs);
  TraceParser parser{NormalizeOptions{}};
  ToolTable tools;
  Trajectory t(&tools);
  RawRecord rec;
  // Argument paths: object keys (and `[0]` for arrays) down to a few levels.
  std::function<void(const json&, const std::string&, std::set<std::string>&, int)> walk =
      [&](const json& v, const std::string& prefix, std::set<std::string>& paths, int depth) {
        if (depth > 3 || paths.size() > 200) return;
        if (v.is_object()) {
          for (auto it = v.begin(); it != v.end(); ++it) {
            std::string p = prefix.empty() ? it.key() : prefix + "." + it.key();
            paths.insert(p);
            walk(it.value(), p, paths, depth + 1);
          }
        } else if (v.is_array() && !v.empty()) {
          std::string p = prefix + "[0]";
          paths.insert(p);
          walk(v.front(), p, paths, depth + 1);
        }
      };
  while (out.records < max_records && source.next(rec)) {
    if (rec.skipped()) continue;  // a FIFO or dangling link in a trace folder: not a record
    ++out.records;
    ParseOutcome o = parser.parse(rec, t, [&](Trajectory& tr) {
      for (const Step& s : tr.steps()) {
        if (s.type != StepType::tool_call) continue;
        std::string name(tr.tool_name(s));
        if (name.empty()) continue;
        ++out.tools[name];
        if (s.arguments.len > 0 && s.arguments.len < 65536) {
          json args = json::parse(tr.text(s.arguments), nullptr, false);
          walk(args, "", out.argument_paths[name], 0);
        }
      }
    });
    if (!o.ok()) ++out.rejected;
  }
  return out;
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> resolve_files(const std::string& dir, const std::string& pattern) {
  return detail::glob_files(join(dir, pattern));
}

// ---- rules files ----

Analysis analyze_rules(const std::string& path, const std::string& text, const AnalysisContext& ctx) {
  Analysis a;
  a.path = path;
  a.dir = directory_of(path);
  Source src(path.empty() ? std::string("untitled.rules") : path, text);

  ast::File f;
  std::vector<Diagnostic> parse_diags;
  bool parsed = language::detail::parse_file(src, language::FrontendOptions{}, f, parse_diags);

  std::string catalog_line;
  SourceRange catalog_range{};
  for (const ast::Line& l : f.lines) {
    if (l.kind == ast::Line::Kind::case_sensitive) a.case_sensitive = true;
    if (l.kind == ast::Line::Kind::catalog && catalog_line.empty()) {
      catalog_line = l.text;
      catalog_range = l.text_range;
    }
  }

  CompileOptions copts;
  if (catalog_line.empty()) copts.catalog_override = ctx.default_catalog;
  CompileResult r = compile(src, copts);
  for (Diagnostic& d : r.diagnostics) a.problems.push_back(problem_of(std::move(d)));
  if (!parsed) return a;

  std::string catalog_path = !catalog_line.empty() ? join(a.dir, catalog_line) : ctx.default_catalog;
  if (!catalog_path.empty() && ctx.catalogs) a.catalog = ctx.catalogs->get(catalog_path, a.case_sensitive);
  if (!catalog_line.empty())
    a.links.push_back({catalog_range, catalog_line, a.catalog ? std::vector<std::string>{catalog_path}
                                                              : std::vector<std::string>{}});

  const bool cs = a.case_sensitive;
  using LineKind = ast::Line::Kind;
  // Declarations first, so uses can be told apart from tool names.
  std::map<std::string, ast::Id> groups;
  for (std::uint32_t i = 0; i < f.lines.size(); ++i) {
    const ast::Line& l = f.lines[i];
    if (l.kind == LineKind::group) {
      std::string key = normalize_tool_name(l.text, cs);
      groups.emplace(key, l.pattern);
      a.group_text.emplace(key, language::detail::print_pattern(f, l.pattern));
      a.words.push_back({Word::Kind::group, key, l.text_range, true});
    } else if (l.kind == LineKind::alias) {
      std::string from = normalize_tool_name(l.text, cs), to = normalize_tool_name(l.text2, cs);
      a.alias_target.emplace(from, to);
      a.words.push_back({Word::Kind::alias, from, l.text_range, true});
      a.words.push_back({Word::Kind::tool, to, l.text2_range, false});
    } else if (l.kind == LineKind::rule) {
      a.words.push_back({Word::Kind::rule, l.text, l.text_range, true});
      std::string info = fmt::format("**rule** {} [{}]", code(l.text), to_string(l.severity.value_or(RuleSeverity::error)));
      for (std::uint32_t c : l.children) {
        const ast::Line& cl = f.lines[c];
        if (cl.kind == LineKind::message) info += "\n\nmessage: " + code(language::detail::quote_string(cl.text));
        if (cl.kind == LineKind::tag) info += "\n\ntags: " + code(language::detail::print_line(f, cl).substr(4));
      }
      a.rule_text.emplace(l.text, info);
    }
  }
  PatternTools tools_of(f, cs, groups);
  for (const auto& [key, id] : groups) {
    const std::set<std::string>& names = tools_of.group(key);
    a.group_tools[key].assign(names.begin(), names.end());
  }

  for (const ast::Pattern& p : f.patterns) {
    using K = ast::Pattern::Kind;
    if (p.kind == K::keyword) {
      a.words.push_back({Word::Kind::keyword, p.text, p.range, false});
    } else if (p.kind == K::quoted) {
      std::string key = normalize_tool_name(p.text, cs);
      a.words.push_back({a.alias_target.count(key) ? Word::Kind::alias : Word::Kind::tool, key, p.range, false});
    } else if (p.kind == K::name) {
      std::string key = normalize_tool_name(p.text, cs);
      Word::Kind kind = groups.count(key)           ? Word::Kind::group
                        : a.alias_target.count(key) ? Word::Kind::alias
                        : has_wildcard(key)         ? Word::Kind::glob
                                                    : Word::Kind::tool;
      a.words.push_back({kind, key, p.range, false});
    }
  }
  std::sort(a.words.begin(), a.words.end(),
            [](const Word& x, const Word& y) { return x.range.begin < y.range.begin; });
  for (const ast::Cond& c : f.conds)
    if (c.kind == ast::Cond::Kind::seen) a.spans.push_back({c.range, seen_markdown(c.sources)});

  // Symbols and hover spans, line by line.
  auto statement_symbol = [&](ast::Id id, SourceRange range) {
    Symbol s;
    s.name = language::detail::print_statement(f, id);
    s.kind = kSymEvent;
    s.range = s.selection = range;
    a.spans.push_back({f.statements[id].range, statement_markdown(f, id)});
    return s;
  };
  auto scope_symbol = [&](const ast::Line& l, std::uint32_t index, SourceRange range) {
    Symbol s;
    s.name = language::detail::print_scope(f, *l.scope) + ":";
    s.kind = kSymNamespace;
    s.range = range;
    s.selection = l.scope->range;
    a.spans.push_back({l.scope->range, scope_markdown(f, *l.scope)});
    if (l.statement != ast::kNone) s.children.push_back(statement_symbol(l.statement, f.statements[l.statement].range));
    for (std::uint32_t c : f.lines[index].children) {
      const ast::Line& cl = f.lines[c];
      if (cl.kind == LineKind::statement) s.children.push_back(statement_symbol(cl.statement, cl.range));
    }
    return s;
  };
  for (std::uint32_t i : f.top) {
    const ast::Line& l = f.lines[i];
    Symbol s;
    s.range = block_range(f, i);
    s.selection = l.range;
    switch (l.kind) {
      case LineKind::workflow:
        s.name = "workflow " + language::detail::quote_string(l.text);
        s.kind = kSymProperty;
        a.spans.push_back({l.range, "**workflow** — the name reports use for this rules file."});
        break;
      case LineKind::catalog: {
        s.name = "catalog " + language::detail::quote_string(l.text);
        s.kind = kSymFile;
        std::string md = "**catalog** " + code(catalog_path);
        if (a.catalog && a.catalog->load.ok())
          md += fmt::format(" — version {}, {} tools. A tool name or glob it does not know is an error (E202).",
                            code(a.catalog->load.catalog->version()), a.catalog->load.catalog->tools().size());
        else
          md += " — cannot be used (see the diagnostics).";
        a.spans.push_back({l.range, md});
        break;
      }
      case LineKind::alias:
        s.name = language::detail::print_line(f, l);
        s.kind = kSymConstant;
        s.selection = l.text_range;
        break;
      case LineKind::group:
        s.name = "group " + l.text;
        s.detail = language::detail::print_pattern(f, l.pattern);
        s.kind = kSymVariable;
        s.selection = l.text_range;
        break;
      case LineKind::case_sensitive:
        s.name = "case sensitive";
        s.kind = kSymProperty;
        a.spans.push_back({l.range, "**case sensitive** — tool names are compared as written, not case-folded."});
        break;
      case LineKind::rule: {
        s.name = l.text;
        s.detail = std::string(to_string(l.severity.value_or(RuleSeverity::error)));
        s.kind = kSymFunction;
        s.selection = l.text_range;
        if (l.scope) s.children.push_back(scope_symbol(l, i, s.range));
        if (l.statement != ast::kNone && !l.scope)
          s.children.push_back(statement_symbol(l.statement, f.statements[l.statement].range));
        for (std::uint32_t c : l.children) {
          const ast::Line& cl = f.lines[c];
          if (cl.kind == LineKind::statement) s.children.push_back(statement_symbol(cl.statement, cl.range));
          if (cl.kind == LineKind::scope) s.children.push_back(scope_symbol(cl, c, block_range(f, c)));
        }
        break;
      }
      case LineKind::scope: s = scope_symbol(l, i, s.range); break;
      case LineKind::statement: s = statement_symbol(l.statement, l.range); break;
      default: continue;
    }
    a.symbols.push_back(std::move(s));
  }
  return a;
}

// ---- suites ----

namespace {

std::string_view metric_meaning(std::string_view m) {
  const suite::GateMetric* g = suite::find_gate_metric(m);
  return g ? g->meaning : std::string_view();
}

}  // namespace

Analysis analyze_suite(const std::string& path, const std::string& text, const AnalysisContext& ctx) {
  Analysis a;
  a.suite = true;
  a.path = path;
  a.dir = directory_of(path);
  suite::SuiteResult sr = suite::parse_suite(Source(path.empty() ? std::string("untitled.suite") : path, text));
  for (Diagnostic& d : sr.diagnostics) a.problems.push_back(problem_of(std::move(d)));
  const suite::Suite& st = sr.suite;
  auto error = [&](SourceRange r, std::string message) {
    a.problems.push_back(problem_of(Diagnostic{Severity::error, "S011", r, std::move(message), {}}));
  };
  auto line_range = [&](SourceRange r) {
    // The whole line of a statement, for symbols.
    const std::string& t = sr.source.text();
    std::uint32_t b = r.begin, e = r.end;
    while (b > 0 && t[b - 1] != '\n') --b;
    while (e < t.size() && t[e] != '\n' && t[e] != '\r') ++e;
    return SourceRange{b, e};
  };
  auto file_symbol = [&](const char* what, const suite::Located& l) {
    Symbol s;
    s.name = fmt::format("{} \"{}\"", what, l.text);
    s.kind = kSymFile;
    s.range = line_range(l.range);
    s.selection = l.range;
    a.symbols.push_back(std::move(s));
  };
  auto link = [&](const suite::Located& l) -> Link& {
    a.links.push_back({l.range, l.text, resolve_files(a.dir, l.text)});
    return a.links.back();
  };
  if (!st.name.empty()) {
    Symbol s;
    s.name = "suite \"" + st.name + "\"";
    s.kind = kSymModule;
    std::size_t at = sr.source.text().find("suite");
    s.range = s.selection = line_range({static_cast<std::uint32_t>(at == std::string::npos ? 0 : at),
                                        static_cast<std::uint32_t>(at == std::string::npos ? 0 : at)});
    a.symbols.push_back(std::move(s));
  }
  for (const auto& c : st.cases) {
    file_symbol("cases", c);
    if (link(c).files.empty()) error(c.range, fmt::format("no case file matches {}", c.text));
  }
  for (const auto& r : st.runs) {
    file_symbol("runs", r);
    if (link(r).files.empty())
      a.problems.push_back(problem_of(Diagnostic{Severity::warning, "S011", r.range,
                                                 fmt::format("no run file matches {} (eval needs --runs then)", r.text),
                                                 {}}));
  }
  if (st.catalog) {
    file_symbol("catalog", *st.catalog);
    std::string cpath = join(a.dir, st.catalog->text);
    Link& l = link(*st.catalog);
    a.catalog = ctx.catalogs ? ctx.catalogs->get(cpath, false) : nullptr;
    if (!a.catalog) {
      l.files.clear();
      error(st.catalog->range, fmt::format("cannot read the catalog {}", cpath));
    } else if (!a.catalog->load.ok()) {
      auto src = std::make_shared<const Source>(a.catalog->load.source);
      for (const Diagnostic& d : a.catalog->load.diagnostics) {
        Problem p = problem_in(src, d, st.catalog->range, cpath);
        p.diagnostic.code = "S011";
        p.diagnostic.message = "cannot use the catalog: " + p.diagnostic.message;
        a.problems.push_back(std::move(p));
      }
    }
  }
  if (st.baseline) {
    file_symbol("baseline", *st.baseline);
    if (link(*st.baseline).files.empty())
      error(st.baseline->range, fmt::format("cannot read the baseline {}", join(a.dir, st.baseline->text)));
  }
  bool all_rules_compile = true;  // else a violations[NAME] may name a rule of a broken file
  for (const auto& r : st.rules) {
    file_symbol("rules", r);
    Link& l = link(r);
    if (l.files.empty()) {
      all_rules_compile = false;
      error(r.range, fmt::format("no rules file matches {}", r.text));
      continue;
    }
    for (const std::string& file : l.files) {
      std::optional<std::string> rtext = ctx.read ? ctx.read(file) : read_text_file(file);
      if (!rtext) {
        error(r.range, fmt::format("cannot read the rules file {}", file));
        all_rules_compile = false;
        continue;
      }
      CompileResult cr = compile(Source(file, *rtext));
      auto src = std::make_shared<const Source>(cr.source);
      for (const Diagnostic& d : cr.diagnostics) a.problems.push_back(problem_in(src, d, r.range, file));
      std::string md = fmt::format("**rules** {}: ", code(file));
      if (cr.ok()) {
        md += fmt::format("{} rules", cr.program->rules().size());
        for (const RuleInfo& ri : cr.program->rules()) {
          md += fmt::format("\n- {} [{}]", code(ri.name), to_string(ri.severity));
          a.violation_names[ri.name] = fmt::format("rule [{}]", to_string(ri.severity));
          for (const std::string& tag : ri.tags) a.violation_names.emplace(tag, "tag of rules");
        }
      } else {
        md += "does not compile (see the diagnostics)";
        all_rules_compile = false;
      }
      a.spans.push_back({r.range, md});
    }
  }
  for (const auto& c : st.controls) {
    Symbol s;
    s.name = "control " + c.name;
    s.detail = c.pattern_text;
    s.kind = kSymVariable;
    s.range = line_range(c.range);
    s.selection = c.range;
    a.symbols.push_back(std::move(s));
    a.spans.push_back({c.range, fmt::format("**control** {} — a run whose final agent turn has a step matching {} "
                                            "is classified `{}` (handoff, clarify, refuse are tried in that order).",
                                            code(c.name), code(c.pattern_text), c.name)});
  }
  for (const auto& g : st.gates) {
    // violations[NAME]: eval resolves NAME against the suite's and the cases' rules files; here
    // only the suite's are known, so a name none of them has is a warning, not eval's error.
    if (!g.rule.empty() && all_rules_compile && !a.violation_names.count(g.rule)) {
      std::vector<std::string> names;
      for (const auto& entry : a.violation_names) names.push_back(entry.first);
      std::string best = detail::did_you_mean(g.rule, names);
      a.problems.push_back(problem_of(Diagnostic{
          Severity::warning, "S006", g.index_range,
          fmt::format("violations[{}]: '{}' is no severity, rule or tag of the suite's rules files{} (eval also "
                      "looks in the cases' own rules files, and fails when it finds none)",
                      g.rule, g.rule, best.empty() ? "" : fmt::format("; did you mean '{}'?", best)),
          {}}));
    }
    Symbol s;
    s.name = "gate " + g.text;
    s.kind = kSymOperator;
    s.range = s.selection = line_range(g.range);
    a.symbols.push_back(std::move(s));
    std::string meaning = g.grader ? fmt::format("the grader {}: {}", code(g.metric),
                                                 g.function.empty() ? "the share of graded cases it passes"
                                                                    : "its scores")
                                   : std::string(metric_meaning(g.metric));
    std::string md = fmt::format("**gate** {} — {}.", code(g.text), meaning);
    if (g.critical()) md += " A critical gate: listed first in reports.";
    if (!g.per.empty()) md += fmt::format(" Evaluated on every value of the case field {}; each must pass.", code(g.per));
    if (g.baseline) md += " The threshold is relative to the baseline report.";
    md += g.if_data ? " Written `if data`: a gate without a value is `no data` and does not fail."
                    : " A gate without a value fails (unless written `if data`).";
    a.spans.push_back({g.range, md});
  }
  return a;
}

// ---- hover ----

namespace {

std::string schema_summary(const json& schema) {
  std::string out;
  if (!schema.is_object()) return out;
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return out;
  std::set<std::string> required;
  if (auto r = schema.find("required"); r != schema.end() && r->is_array())
    for (const json& x : *r)
      if (x.is_string()) required.insert(x.get<std::string>());
  for (auto it = props->begin(); it != props->end(); ++it) {
    std::string type;
    if (it->is_object()) {
      if (auto t = it->find("type"); t != it->end()) type = t->is_string() ? t->get<std::string>() : t->dump();
    }
    out += fmt::format("\n- {}{}{}", code("arguments." + it.key()), type.empty() ? "" : ": " + type,
                       required.count(it.key()) ? " (required)" : "");
    if (it->is_object())
      if (auto d = it->find("description"); d != it->end() && d->is_string())
        out += " — " + d->get<std::string>().substr(0, 200);
  }
  return out;
}

std::string tool_markdown(const Analysis& a, const std::string& key, const TraceNames& traces) {
  std::string out = "**tool** " + code(key);
  const CatalogTool* tool = nullptr;
  if (a.catalog && a.catalog->load.ok()) tool = a.catalog->load.catalog->find(key);
  if (tool) {
    out += fmt::format(" — effect: {}, catalog {}", to_string(tool->effect), code(a.catalog->load.catalog->version()));
    auto s = a.catalog->schemas.find(key);
    if (s != a.catalog->schemas.end()) {
      std::string props = schema_summary(s->second);
      if (!props.empty()) out += "\n\nArguments:" + props;
      std::string dump = s->second.dump(2, ' ', false, json::error_handler_t::replace);
      if (dump.size() > 4000) dump = dump.substr(0, 4000) + "\n…";
      out += "\n\n```json\n" + dump + "\n```";
    } else {
      out += "\n\nNo argument schema: any arguments are valid.";
    }
  } else if (a.catalog && a.catalog->load.ok()) {
    out += fmt::format(" — not in catalog {}", code(a.catalog->load.catalog->version()));
  } else {
    out += " — no catalog in use";
  }
  if (auto t = traces.tools.find(key); t != traces.tools.end())
    out += fmt::format("\n\nCalled {} times in the workspace traces.", t->second);
  return out;
}

}  // namespace

const Word* word_at(const Analysis& a, std::uint32_t offset) {
  const Word* best = nullptr;
  for (const Word& w : a.words)
    if (w.range.begin <= offset && offset <= w.range.end &&
        (!best || w.range.end - w.range.begin < best->range.end - best->range.begin))
      best = &w;
  return best;
}

std::string hover_text(const Analysis& a, std::uint32_t offset, const TraceNames& traces) {
  if (const Word* word = word_at(a, offset)) {
    switch (word->kind) {
      case Word::Kind::group: {
        auto it = a.group_text.find(word->key);
        if (it == a.group_text.end()) break;
        return fmt::format("**group** {} = {}", code(word->key), code(it->second));
      }
      case Word::Kind::alias: {
        auto it = a.alias_target.find(word->key);
        if (it == a.alias_target.end()) break;
        return fmt::format("**alias** {} = {} — calls of {} in traces are read as {}; in rules either name means {}.",
                           code(word->key), code(it->second), code(word->key), code(it->second), code(it->second)) +
               "\n\n" + tool_markdown(a, it->second, traces);
      }
      case Word::Kind::rule: {
        auto it = a.rule_text.find(word->key);
        if (it != a.rule_text.end()) return it->second;
        break;
      }
      case Word::Kind::tool: return tool_markdown(a, word->key, traces);
      case Word::Kind::glob: {
        std::string out = "**glob** " + code(word->key) + " — tool calls whose name matches (`*` any run, `?` one character)";
        if (a.catalog && a.catalog->load.ok()) {
          std::vector<std::string> hits;
          for (const CatalogTool& t : a.catalog->load.catalog->tools())
            if (detail::glob_match(word->key, t.name)) hits.push_back(code(t.name));
          out += fmt::format(". In catalog {}: {}", code(a.catalog->load.catalog->version()),
                             hits.empty() ? std::string("none") : fmt::format("{}", fmt::join(hits, ", ")));
        }
        return out;
      }
      case Word::Kind::keyword: {
        std::string_view m = keyword_meaning(word->key);
        if (!m.empty()) return fmt::format("**{}** — {}", code(word->key), m);
        break;
      }
    }
  }
  const Span* best = nullptr;
  for (const Span& s : a.spans)
    if (s.range.begin <= offset && offset <= s.range.end &&
        (!best || s.range.end - s.range.begin < best->range.end - best->range.begin))
      best = &s;
  return best ? best->markdown : "";
}

}  // namespace trajcheck::lsp
