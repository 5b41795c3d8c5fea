// Completion contexts, from the line before the cursor: inside a string (file names), after
// `arguments.` (paths from the catalog schema and the workspace traces), at the start of a
// line (statement templates and declarations), elsewhere (keywords, tools, groups, aliases).
#include "lsp/completion.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "suite/suite.hpp"
#include "trajcheck/reader.hpp"

namespace trajcheck::lsp {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// LSP CompletionItemKind values.
enum : int {
  kFunction = 3, kField = 5, kVariable = 6, kValue = 12, kKeyword = 14, kSnippet = 15,
  kFile = 17, kReference = 18, kEnumMember = 20, kConstant = 21, kOperator = 24,
};

struct Template {
  const char* label;
  const char* snippet;
  const char* detail;
};

constexpr Template kRuleTemplates[] = {
    {"forbid", "forbid ${1:pattern}", "violated when any step matches the pattern"},
    {"never", "never ${1:pattern}", "the same as forbid"},
    {"require", "require ${1:pattern}", "violated when no step matches the pattern"},
    {"at most", "${1:pattern} at most ${2:1}", "a count: at most N matching steps"},
    {"at least", "${1:pattern} at least ${2:1}", "a count: at least N matching steps"},
    {"exactly", "${1:pattern} exactly ${2:1}", "a count: exactly N matching steps"},
    {"between N and M", "${1:pattern} between ${2:1} and ${3:3}", "a count between two bounds"},
    {"precedes", "${1:a} precedes ${2:b}", "every b has some a before it"},
    {"immediately precedes", "${1:a} immediately precedes ${2:b}", "the step before every b is an a"},
    {"is followed by", "${1:a} is followed by ${2:b}", "every a has some b after it"},
    {"is immediately followed by", "${1:a} is immediately followed by ${2:b}", "the step after every a is a b"},
    {"is never followed by", "${1:a} is never followed by ${2:b}", "no b after any a"},
    {"requires", "${1:a} requires ${2:b}", "a trace with an a has a b somewhere"},
    {"excludes", "${1:a} excludes ${2:b}", "never both in one trace"},
    {"starts with", "starts with ${1:user_message}", "the first step matches"},
    {"ends with", "ends with ${1:final_answer}", "the last step matches"},
    {"only", "only ${1:a | b}", "an allow-list of tools"},
    {"no duplicate", "no duplicate ${1:pattern}", "no two calls with the same tool and equal arguments"},
    {"in a row", "${1:pattern} at most ${2:3} in a row", "at most N consecutive matching calls"},
    {"retries of", "retries of ${1:any} at most ${2:2}", "at most N retries after a failed call, per tool"},
    {"expect", "expect ${1:a -> b}", "the matching tool calls follow the PATH"},
    {"expect exactly", "expect exactly ${1:a -> b}", "all tool calls follow the PATH"},
    {"rule", "rule ${1:name} [${2|critical,error,warning,info|}]:\n    ${3:statement}\n    message \"${4:why it matters}\"",
     "a named rule with a severity and a message"},
    {"after", "after ${1:pattern}:\n    ${2:statement}", "a scope: from the first match to the end"},
    {"before", "before ${1:pattern}:\n    ${2:statement}", "a scope: up to the first match"},
    {"between … and …", "between ${1:q} and ${2:r}:\n    ${3:statement}", "a scope: every closed segment"},
    {"after … until …", "after ${1:q} until ${2:r}:\n    ${3:statement}", "a scope: every segment, the last one open"},
    {"group", "group ${1:name} = ${2:a | b}", "a named step pattern"},
    {"alias", "alias ${1:observed} = ${2:canonical}", "read a tool name of the traces as another"},
    {"workflow", "workflow \"${1:name}\"", "the name used in reports"},
    {"catalog", "catalog \"${1:tools.json}\"", "the tool catalog (relative to this file)"},
    {"case sensitive", "case sensitive", "compare tool names without case folding"},
    {"message", "message \"${1:text}\"", "the rule's message (in a rule body)"},
    {"tag", "tag ${1:name}", "tags of the rule (in a rule body)"},
};

constexpr Template kSuiteTemplates[] = {
    {"suite", "suite \"${1:name}\"", "the name used in reports"},
    {"cases", "cases \"${1:cases/*.jsonl}\"", "JSONL case files"},
    {"runs", "runs \"${1:runs/*.jsonl}\"", "the traces to judge"},
    {"rules", "rules \"${1:rules/*.rules}\"", "rules files checked on every run"},
    {"catalog", "catalog \"${1:catalog.json}\"", "the tool catalog"},
    {"baseline", "baseline \"${1:reports/baseline.json}\"", "an earlier eval --format json"},
    {"segment by", "segment by ${1:task_type}", "case fields to tabulate by"},
    {"control", "control ${1|handoff,clarify,refuse|} = ${2:pattern}", "a control-flow pattern"},
    {"gate", "gate ${1:selection} ${2:>=} ${3:95%}", "a release gate"},
    {"grader", "grader ${1:name} command \"${2:python3 graders/grade.py}\" timeout ${3:30s}",
     "an external command that grades each judged case"},
    {"variation", "variation ${1:paraphrase} command \"${2:python3 vary/paraphrase.py}\" timeout ${3:60s}",
     "an external command that varies a case's input (case vary)"},
};

constexpr const char* kMidKeywords[] = {
    "precedes", "immediately precedes", "is followed by", "is immediately followed by", "is never followed by",
    "requires", "excludes", "at most", "at least", "exactly", "between", "in a row", "times", "ignoring",
    "where", "or", "and", "not", "failed", "until"};
constexpr const char* kTypeKeywords[] = {"any", "tool_call", "step", "user_message", "assistant_message",
                                         "approval_request", "approval", "final_answer", "write"};
constexpr const char* kConditionWords[] = {"matches", "contains", "in", "exists", "and", "or", "not"};
constexpr const char* kStepFields[] = {"arguments.", "result.", "context.", "fixture.", "type", "tool",
                                       "status", "decision", "content", "latency_ms"};
constexpr const char* kSeverities[] = {"critical", "error", "warning", "info"};
constexpr const char* kFunctions[] = {"mean", "p50", "p90", "p95", "p99", "max"};

// `${1:x}` -> `x`, `${1|a,b|}` -> `a`, `$0` -> ``.
std::string plain(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    if (s[i + 1] == '{') {
      std::size_t end = s.find('}', i);
      if (end == std::string_view::npos) break;
      std::string_view inner = s.substr(i + 2, end - i - 2);
      auto colon = inner.find(':'), bar = inner.find('|');
      if (colon != std::string_view::npos) out += inner.substr(colon + 1);
      else if (bar != std::string_view::npos) out += inner.substr(bar + 1, inner.find_first_of(",|", bar + 1) - bar - 1);
      i = end;
    } else {
      while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
    }
  }
  return out;
}

class Items {
 public:
  explicit Items(bool snippets) : snippets_(snippets) {}
  void add(std::string label, int kind, std::string detail = {}, std::string doc = {}) {
    if (!seen_.insert(label).second) return;
    items_.push_back({std::move(label), std::move(detail), std::move(doc), {}, kind, false});
  }
  void add_template(const Template& t) {
    std::string key = std::string(t.label) + "\x01";
    if (!seen_.insert(key).second) return;
    CompletionItem c{t.label, t.detail, {}, snippets_ ? t.snippet : plain(t.snippet), kSnippet, snippets_};
    items_.push_back(std::move(c));
  }
  std::vector<CompletionItem> take() { return std::move(items_); }

 private:
  bool snippets_;
  std::set<std::string> seen_;
  std::vector<CompletionItem> items_;
};

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '/' || c == '-' ||
         c == '*' || c == '?';
}

// What the end of `prefix` (the line up to the cursor) is in: code, a string literal, or a
// comment (quotes counted, escapes skipped; `#` inside a string is text).
enum class Where { code, string, comment };
Where where_in_line(std::string_view prefix) {
  bool in = false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (in && prefix[i] == '\\') {
      ++i;
      continue;
    }
    if (prefix[i] == '"') in = !in;
    if (!in && prefix[i] == '#') return Where::comment;
  }
  return in ? Where::string : Where::code;
}

std::string first_word(std::string_view line) {
  std::size_t b = line.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  std::size_t e = b;
  while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_')) ++e;
  return std::string(line.substr(b, e - b));
}

// Files under `dir` (a few levels deep, hidden and build folders skipped) whose names end
// with one of `exts`, relative to `dir`.
std::vector<std::string> files_below(const std::string& dir, std::initializer_list<std::string_view> exts) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir.empty() ? "." : dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator() && out.size() < 200; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code e2;
    if (it->is_directory(e2)) {
      if (name.empty() || name[0] == '.' || name == "node_modules" || name.rfind("build", 0) == 0 || it.depth() >= 3)
        it.disable_recursion_pending();
      continue;
    }
    for (std::string_view ext : exts)
      if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
        out.push_back(fs::relative(it->path(), dir.empty() ? "." : dir, e2).string());
        break;
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string rule_names_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, out;
  static const std::regex kRule(R"(^\s*rule\s+([A-Za-z0-9_.:/-]+))");
  std::smatch m;
  int n = 0;
  while (std::getline(in, line) && n < 50) {
    if (std::regex_search(line, m, kRule)) {
      out += (n++ ? ", " : "rules: ") + m[1].str();
    }
  }
  return out;
}

void add_files(Items& items, const Analysis& a, std::initializer_list<std::string_view> exts, bool rules) {
  for (const std::string& f : files_below(a.dir, exts))
    items.add(f, kFile, "file", rules ? rule_names_of((fs::path(a.dir) / f).string()) : std::string());
}

// Tools, globs, groups and aliases: the names a pattern may use.
void add_names(Items& items, const Analysis& a, const TraceNames& traces) {
  for (const auto& [name, text] : a.group_text) items.add(name, kVariable, "group = " + text);
  for (const auto& [from, to] : a.alias_target) items.add(from, kReference, "alias of " + to);
  if (a.catalog && a.catalog->load.ok()) {
    const Catalog& c = *a.catalog->load.catalog;
    std::map<std::string, int> prefixes;
    for (const CatalogTool& t : c.tools()) {
      items.add(t.name, kFunction, fmt::format("{} tool, catalog {}", to_string(t.effect), c.version()));
      if (auto u = t.name.find('_'); u != std::string::npos && u > 0) ++prefixes[t.name.substr(0, u + 1) + "*"];
    }
    for (const auto& [glob, n] : prefixes)
      if (n > 1) items.add(glob, kConstant, fmt::format("glob: {} catalog tools", n));
  }
  for (const auto& [name, n] : traces.tools) items.add(name, kFunction, fmt::format("seen {} times in traces", n));
}

void add_type_keywords(Items& items) {
  for (const char* k : kTypeKeywords) items.add(k, kKeyword, "step pattern");
}

// The JSON Schema under `path` (`items[0].id`: properties.items, items, properties.id).
const json* schema_at(const json* s, const std::vector<std::string>& path) {
  for (const std::string& seg : path) {
    if (!s || !s->is_object()) return nullptr;
    if (seg == "[]") {
      auto it = s->find("items");
      s = it != s->end() ? &*it : nullptr;
    } else {
      auto props = s->find("properties");
      if (props == s->end() || !props->is_object() || !props->contains(seg)) return nullptr;
      s = &(*props)[seg];
    }
  }
  return s;
}

void add_schema_properties(Items& items, const json* s, const std::string& tool) {
  if (!s || !s->is_object()) return;
  auto props = s->find("properties");
  if (props == s->end() || !props->is_object()) return;
  for (auto it = props->begin(); it != props->end(); ++it) {
    std::string type, doc;
    if (it->is_object()) {
      if (auto t = it->find("type"); t != it->end()) type = t->is_string() ? t->get<std::string>() : t->dump();
      if (auto d = it->find("description"); d != it->end() && d->is_string()) doc = d->get<std::string>();
    }
    items.add(it.key(), kField, fmt::format("{}{}{}", tool, type.empty() ? "" : ": ", type), doc);
  }
}

void complete_arguments(Items& items, const Analysis& a, std::string_view prefix, const std::smatch& m,
                        const TraceNames& traces) {
  // The segments written so far after `arguments`, as schema steps.
  std::vector<std::string> path;
  std::string written = m[2].str();  // `.items[0].x` (without the final `.`)
  static const std::regex kSeg(R"(\.([A-Za-z_][A-Za-z0-9_]*)|\[\d+\])");
  std::string trace_prefix;
  for (auto it = std::sregex_iterator(written.begin(), written.end(), kSeg); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].matched) {
      path.push_back((*it)[1].str());
      trace_prefix += (trace_prefix.empty() ? "" : ".") + (*it)[1].str();
    } else {
      path.push_back("[]");
      trace_prefix += "[0]";
    }
  }
  // The tool the condition is about: the name before the last `where`.
  std::vector<std::string> tools;
  static const std::regex kWhere(R"((\"(?:[^\"\\]|\\.)*\"|[A-Za-z0-9_.:/*?-]+)\)?\s+where\s)");
  std::string before(prefix.substr(0, static_cast<std::size_t>(m.position(1))));
  std::string subject;
  for (auto it = std::sregex_iterator(before.begin(), before.end(), kWhere); it != std::sregex_iterator(); ++it)
    subject = (*it)[1].str();
  if (!subject.empty()) {
    if (subject.front() == '"' && subject.size() >= 2) subject = subject.substr(1, subject.size() - 2);
    std::string key = normalize_tool_name(subject, a.case_sensitive);
    if (auto g = a.group_tools.find(key); g != a.group_tools.end()) tools = g->second;
    else if (auto al = a.alias_target.find(key); al != a.alias_target.end()) tools.push_back(al->second);
    else tools.push_back(key);
  }
  bool any_tool = tools.empty();
  if (a.catalog) {
    for (const auto& [tool, schema] : a.catalog->schemas)
      if (any_tool || std::find(tools.begin(), tools.end(), tool) != tools.end())
        add_schema_properties(items, schema_at(&schema, path), tool);
  }
  for (const auto& [tool, paths] : traces.argument_paths) {
    if (!any_tool && std::find(tools.begin(), tools.end(), tool) == tools.end()) continue;
    for (const std::string& p : paths) {
      std::string_view rest = p;
      if (!trace_prefix.empty()) {
        if (rest.substr(0, trace_prefix.size()) != trace_prefix || rest.size() <= trace_prefix.size() + 1 ||
            rest[trace_prefix.size()] != '.')
          continue;
        rest.remove_prefix(trace_prefix.size() + 1);
      }
      if (rest.find_first_of(".[") != std::string_view::npos) continue;
      items.add(std::string(rest), kField, tool + " (seen in traces)");
    }
  }
}

std::vector<CompletionItem> complete_rules(const Analysis& a, std::string_view prefix, const TraceNames& traces,
                                           bool snippets) {
  Items items(snippets);
  Where where = where_in_line(prefix);
  if (where == Where::comment) return {};
  if (where == Where::string) {
    if (first_word(prefix) == "catalog") add_files(items, a, {".json"}, false);
    return items.take();
  }
  std::string tail(prefix.size() > 400 ? prefix.substr(prefix.size() - 400) : prefix);
  static const std::regex kArgs(R"((?:^|[^A-Za-z0-9_.])(arguments|args)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)\.[A-Za-z0-9_]*$)");
  std::smatch m;
  if (std::regex_search(tail, m, kArgs)) {
    complete_arguments(items, a, tail, m, traces);
    return items.take();
  }
  // After `==` or `contains`, the variables the line binds already (`contains $v` looks for one).
  static const std::regex kVariableSlot(R"((?:==|\bcontains)\s+\$[A-Za-z0-9_]*$)");
  if (std::regex_search(tail, kVariableSlot)) {
    static const std::regex kVariableName(R"(\$([A-Za-z_][A-Za-z0-9_]*))");
    const std::string before = tail.substr(0, tail.rfind('$'));
    for (std::sregex_iterator it(before.begin(), before.end(), kVariableName), end; it != end; ++it)
      items.add("$" + (*it)[1].str(), kVariable, "a variable of this rule");
    return items.take();
  }
  // In seen(PATH, …) after the comma or a `|`: the sources.
  static const std::regex kSeenSources(R"(\bseen\s*\([^(),]*,\s*(?:[a-z]+\s*\|\s*)*[a-z]*$)");
  if (std::regex_search(tail, kSeenSources)) {
    items.add("user", kEnumMember, "seen in an earlier user message (a string, as a substring)");
    items.add("result", kEnumMember, "seen as a leaf of an earlier tool call's result");
    items.add("context", kEnumMember, "seen as a leaf of the trace's context");
    return items.take();
  }
  static const std::regex kSeverity(R"(^\s*rule\s+\S+\s*\[\s*[a-z]*$)");
  if (std::regex_search(tail, kSeverity)) {
    for (const char* s : kSeverities) items.add(s, kEnumMember, "rule severity");
    return items.take();
  }
  std::size_t b = prefix.find_first_not_of(" \t");
  std::string_view word = b == std::string_view::npos ? std::string_view() : prefix.substr(b);
  bool line_start = std::all_of(word.begin(), word.end(), name_char);
  if (line_start) {
    for (const Template& t : kRuleTemplates) items.add_template(t);
  } else {
    for (const char* k : kMidKeywords) items.add(k, kKeyword);
  }
  if (tail.find(" where ") != std::string::npos) {
    for (const char* f : kStepFields) items.add(f, kField, "step field");
    for (const char* c : kConditionWords) items.add(c, kOperator, "condition");
    items.add("seen", kFunction, "seen(PATH) / seen(PATH, user | result | context): the value appeared earlier");
  }
  add_type_keywords(items);
  add_names(items, a, traces);
  return items.take();
}

std::vector<CompletionItem> complete_suite(const Analysis& a, std::string_view prefix, const TraceNames& traces,
                                           bool snippets) {
  Items items(snippets);
  Where where = where_in_line(prefix);
  if (where == Where::comment) return {};
  std::string first = first_word(prefix);
  if (where == Where::string) {
    if (first == "rules") add_files(items, a, {".rules"}, true);
    else if (first == "cases") add_files(items, a, {".jsonl"}, false);
    else if (first == "runs") add_files(items, a, {".jsonl", ".json"}, false);
    else if (first == "catalog" || first == "baseline") add_files(items, a, {".json"}, false);
    return items.take();
  }
  std::size_t b = prefix.find_first_not_of(" \t");
  std::string_view rest = b == std::string_view::npos ? std::string_view() : prefix.substr(b);
  if (std::all_of(rest.begin(), rest.end(), name_char)) {
    for (const Template& t : kSuiteTemplates) items.add_template(t);
    return items.take();
  }
  std::string line(rest.substr(0, 400));
  static const std::regex kGateMetric(R"(^gate\s+([a-z0-9_]*\(?)?[a-z0-9_]*$)");
  static const std::regex kGateIndex(R"(^gate\s+violations\s*\[\s*[A-Za-z0-9_]*$)");
  static const std::regex kGateOp(R"(^gate\s+\S+\s+[<>=!]*$)");
  static const std::regex kGateValue(R"(^gate\s+\S+\s+[<>=!]+\s+[a-z]*$)");
  static const std::regex kControlName(R"(^control\s+[a-z]*$)");
  if (std::regex_search(line, kGateIndex)) {
    for (const char* s : kSeverities) items.add(s, kEnumMember, "rule severity");
    for (const auto& [name, what] : a.violation_names) items.add(name, kReference, what);
  } else if (std::regex_search(line, kGateMetric)) {
    for (const suite::GateMetric& mtr : suite::gate_metrics())
      items.add(std::string(mtr.name), kValue, "gate metric", std::string(mtr.meaning));
    for (const char* f : kFunctions) items.add(f, kFunction, "of a per-case series");
  } else if (std::regex_search(line, kGateOp)) {
    for (const char* op : {">=", "<=", "==", "!=", ">", "<"}) items.add(op, kOperator);
  } else if (std::regex_search(line, kGateValue)) {
    items.add("baseline", kKeyword, "the same metric in the baseline report");
  } else if (std::regex_search(line, kControlName)) {
    for (const char* c : {"handoff", "clarify", "refuse"}) items.add(c, kEnumMember, "control flow");
  } else if (first == "control") {
    add_type_keywords(items);
    for (const char* k : {"where", "or", "not", "failed"}) items.add(k, kKeyword);
    if (line.find(" where ") != std::string::npos) {
      for (const char* f : kStepFields) items.add(f, kField, "step field");
      for (const char* c : kConditionWords) items.add(c, kOperator, "condition");
    }
    add_names(items, a, traces);
  } else if (first == "gate") {
    items.add("per", kKeyword, "evaluate on every value of a case field");
    items.add("if data", kKeyword, "the gate holds when it has no data (else no data fails)");
  }
  return items.take();
}

}  // namespace

std::vector<CompletionItem> complete(const Analysis& a, std::string_view text, std::uint32_t offset,
                                     const TraceNames& traces, bool snippets) {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text.size()));
  std::size_t start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  start = (start == std::string_view::npos || offset == 0) ? 0 : start + 1;
  if (offset > 0 && text[offset - 1] == '\n') start = offset;
  std::string_view prefix = text.substr(start, offset - start);
  return a.suite ? complete_suite(a, prefix, traces, snippets) : complete_rules(a, prefix, traces, snippets);
}

}  // namespace trajcheck::lsp
