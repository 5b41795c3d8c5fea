// Reading a rules test file (docs/testing-rules.md): JSON parsed by nlohmann, every member
// checked, and every problem a diagnostic located at the member it is about. nlohmann keeps no
// positions, so a second walk over the (then known valid) text records where each value and
// each member name starts, by JSON pointer.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json/located_parse.hpp"
#include "trajcheck/rule_tests.hpp"

namespace trajcheck {
namespace {

constexpr int kRtfMaxDepth = 256;

// Where each value (and each member's name) of a valid JSON text starts, by JSON pointer.
class RtfPositions {
 public:
  explicit RtfPositions(std::string_view text) : s_(text) {
    skip_ws();
    value("", 0);
  }
  // The value at `pointer` (its member name with `name`), or the text's start when unknown.
  SourceRange at(const std::string& pointer, bool name = false) const {
    auto it = pos_.find(pointer);
    if (it == pos_.end()) return {0, 0};
    const std::uint32_t b = name ? it->second.first : it->second.second;
    const std::uint32_t e = name ? it->second.second : it->second.third;
    return {b, std::max(b, e)};
  }

 private:
  struct Span {
    std::uint32_t first = 0, second = 0, third = 0;  // name, value begin, value end
  };
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  std::string string_token() {  // at '"': the decoded string
    const std::size_t b = i_++;
    while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
    ++i_;
    try {
      return nlohmann::json::parse(s_.substr(b, i_ - b)).get<std::string>();
    } catch (const std::exception&) {
      return {};
    }
  }
  static std::string escape(const std::string& key) {
    std::string out;
    for (char c : key) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out += c;
    }
    return out;
  }
  void value(const std::string& ptr, std::uint32_t name_at) {
    const auto begin = static_cast<std::uint32_t>(i_);
    if (i_ >= s_.size()) return;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      skip_ws();
      while (i_ < s_.size() && s_[i_] != '}') {
        const auto key_at = static_cast<std::uint32_t>(i_);
        std::string key = string_token();
        skip_ws();
        ++i_;  // ':'
        skip_ws();
        value(ptr + "/" + escape(key), key_at);
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') ++i_;
        skip_ws();
      }
      ++i_;
    } else if (c == '[') {
      ++i_;
      skip_ws();
      std::size_t n = 0;
      while (i_ < s_.size() && s_[i_] != ']') {
        value(ptr + "/" + std::to_string(n++), static_cast<std::uint32_t>(i_));
        skip_ws();
        if (i_ < s_.size() && s_[i_] == ',') ++i_;
        skip_ws();
      }
      ++i_;
    } else if (c == '"') {
      string_token();
    } else {
      while (i_ < s_.size() && std::string_view(",]} \t\r\n").find(s_[i_]) == std::string_view::npos) ++i_;
    }
    pos_[ptr] = Span{name_at, begin, static_cast<std::uint32_t>(std::min(i_, s_.size()))};
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::unordered_map<std::string, Span> pos_;
};

struct RtfReader {
  RuleTestFile& out;
  RtfPositions pos;

  void error(const std::string& code, SourceRange r, std::string message) {
    out.diagnostics.push_back(Diagnostic{Severity::error, code, r, std::move(message), {}});
  }
  void shape(const std::string& ptr, std::string message, bool name = false) {
    error("E601", pos.at(ptr, name), std::move(message));
  }
  static const char* kind(const nlohmann::json& v) {
    switch (v.type()) {
      case nlohmann::json::value_t::object: return "an object";
      case nlohmann::json::value_t::array: return "an array";
      case nlohmann::json::value_t::string: return "a string";
      case nlohmann::json::value_t::boolean: return "a boolean";
      case nlohmann::json::value_t::null: return "null";
      default: return "a number";
    }
  }
  bool strings(const nlohmann::json& v, const std::string& ptr, const std::string& what,
               std::vector<std::string>& into, std::vector<SourceRange>* at = nullptr) {
    if (v.is_string()) {
      into.push_back(v.get<std::string>());
      if (at) at->push_back(pos.at(ptr));
      return true;
    }
    if (!v.is_array()) {
      shape(ptr, fmt::format("{} must be a string or an array of strings, not {}", what, kind(v)));
      return false;
    }
    bool ok = true;
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (!v[k].is_string()) {
        shape(ptr + "/" + std::to_string(k), fmt::format("{} must be a string or an array of strings, not {}", what, kind(v[k])));
        ok = false;
        continue;
      }
      into.push_back(v[k].get<std::string>());
      if (at) at->push_back(pos.at(ptr + "/" + std::to_string(k)));
    }
    return ok;
  }

  std::string resolve(const std::string& rel) const {
    std::filesystem::path p(rel);
    if (p.is_absolute()) return rel;
    std::filesystem::path dir = std::filesystem::path(out.source.name()).parent_path();
    return (dir / p).lexically_normal().generic_string();
  }

  void expectation(const nlohmann::json& v, const std::string& ptr, const std::string& rule, RuleTestCase& c) {
    RuleExpectation e;
    e.rule = rule;
    e.at = pos.at(ptr, true);
    static const char* kValues = "\"violated\", {\"violated\": [STEPS]}, \"satisfied\", \"vacuous\" or \"holds\"";
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "violated") e.verdict = ExpectedVerdict::violated;
      else if (s == "satisfied") e.verdict = ExpectedVerdict::satisfied;
      else if (s == "vacuous") e.verdict = ExpectedVerdict::vacuous;
      else if (s == "holds") e.verdict = ExpectedVerdict::holds;
      else {
        shape(ptr, fmt::format("unknown verdict \"{}\" for rule '{}': expected {}", s, rule, kValues));
        return;
      }
    } else if (v.is_object() && v.size() == 1 && v.contains("violated")) {
      const nlohmann::json& st = v["violated"];
      if (!st.is_array()) {
        shape(ptr + "/violated", fmt::format("the witness steps of '{}' must be an array of step numbers, not {}", rule, kind(st)));
        return;
      }
      e.verdict = ExpectedVerdict::violated;
      e.has_steps = true;
      for (std::size_t k = 0; k < st.size(); ++k) {
        const nlohmann::json& n = st[k];
        if (!n.is_number_unsigned() || n.get<std::uint64_t>() > 0xFFFFFFFEu) {
          shape(ptr + "/violated/" + std::to_string(k),
                fmt::format("a witness step of '{}' must be a step number (0-based, as `check` prints #N)", rule));
          return;
        }
        e.steps.push_back(static_cast<std::uint32_t>(n.get<std::uint64_t>()));
      }
      std::sort(e.steps.begin(), e.steps.end());
      e.steps.erase(std::unique(e.steps.begin(), e.steps.end()), e.steps.end());
      if (e.steps.empty()) {
        shape(ptr + "/violated", fmt::format("'{}' is expected violated at no step: list its witness steps, or write \"violated\"", rule));
        return;
      }
    } else {
      shape(ptr, fmt::format("the verdict of rule '{}' must be {}", rule, kValues));
      return;
    }
    c.expect.push_back(std::move(e));
  }

  void one_case(const nlohmann::json& v, const std::string& ptr, const std::vector<std::string>& file_patterns,
                std::vector<std::string>& names) {
    if (!v.is_object()) {
      shape(ptr, fmt::format("a case must be an object, not {}", kind(v)));
      return;
    }
    RuleTestCase c;
    c.at = pos.at(ptr);
    c.error_patterns = file_patterns;
    bool ok = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      static const char* kKnown[] = {"name", "steps", "context", "trace", "trace_id", "fixture",
                                     "error_patterns", "expect", "others", "description"};
      if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
        shape(ptr + "/" + k, fmt::format("unknown member \"{}\" of a case (name, steps, context, trace, trace_id, fixture, error_patterns, expect, others, description)", k), true);
        ok = false;
      }
    }
    if (!v.contains("name") || !v["name"].is_string() || v["name"].get<std::string>().empty()) {
      if (v.contains("name")) shape(ptr + "/name", "a case's name must be a non-empty string");
      else shape(ptr, "a case needs a \"name\"");
      ok = false;
    } else {
      c.name = v["name"].get<std::string>();
      if (std::find(names.begin(), names.end(), c.name) != names.end()) {
        shape(ptr + "/name", fmt::format("two cases are named \"{}\"", c.name));
        ok = false;
      }
      names.push_back(c.name);
    }
    const bool has_steps = v.contains("steps"), has_trace = v.contains("trace");
    if (has_steps == has_trace) {
      shape(has_steps ? ptr + "/trace" : ptr, has_steps ? "a case has \"steps\" or a \"trace\", not both"
                                                     : "a case needs its trace: \"steps\" (native steps) or \"trace\" (a file, or a trace inline)",
            has_steps);
      ok = false;
    } else if (has_steps) {
      c.trace_at = pos.at(ptr + "/steps");
      if (!v["steps"].is_array()) {
        shape(ptr + "/steps", fmt::format("\"steps\" must be an array of native steps, not {}", kind(v["steps"])));
        ok = false;
      } else {
        nlohmann::json rec = nlohmann::json::object();
        rec["trace_id"] = c.name;
        if (v.contains("context")) {
          if (!v["context"].is_object()) {
            shape(ptr + "/context", fmt::format("\"context\" must be an object, not {}", kind(v["context"])));
            ok = false;
          }
          rec["context"] = v["context"];
        }
        rec["steps"] = v["steps"];
        c.record = rec.dump();
      }
    } else {
      c.trace_at = pos.at(ptr + "/trace");
      if (v.contains("context")) {
        shape(ptr + "/context", "\"context\" goes with \"steps\"; a trace file or value carries its own context", true);
        ok = false;
      }
      const nlohmann::json& t = v["trace"];
      if (t.is_string()) {
        if (t.get<std::string>().empty()) {
          shape(ptr + "/trace", "\"trace\" names no file");
          ok = false;
        }
        c.trace_file = resolve(t.get<std::string>());
      } else if (t.is_object() || t.is_array()) {
        c.record = t.dump();
      } else {
        shape(ptr + "/trace", fmt::format("\"trace\" must be a file name or a trace (an object or an array), not {}", kind(t)));
        ok = false;
      }
    }
    if (v.contains("trace_id")) {
      if (!v["trace_id"].is_string()) {
        shape(ptr + "/trace_id", "\"trace_id\" must be a string");
        ok = false;
      } else if (c.trace_file.empty()) {
        shape(ptr + "/trace_id", "\"trace_id\" picks a trace of a \"trace\" file; this case has none", true);
        ok = false;
      } else {
        c.trace_id = v["trace_id"].get<std::string>();
      }
    }
    if (v.contains("fixture")) c.fixture = v["fixture"].dump();
    if (v.contains("error_patterns")) ok = strings(v["error_patterns"], ptr + "/error_patterns", "\"error_patterns\"", c.error_patterns) && ok;
    if (v.contains("others")) {
      const nlohmann::json& o = v["others"];
      if (o == "holds") c.others_hold = true;
      else if (o != "unchecked") {
        shape(ptr + "/others", "\"others\" must be \"holds\" (every rule not named holds) or \"unchecked\"");
        ok = false;
      }
    }
    if (!v.contains("expect")) {
      shape(ptr, "a case needs \"expect\": the verdicts of the rules it tests");
      ok = false;
    } else if (!v["expect"].is_object()) {
      shape(ptr + "/expect", fmt::format("\"expect\" must be an object of rule name -> verdict, not {}", kind(v["expect"])));
      ok = false;
    } else {
      const nlohmann::json& ex = v["expect"];
      if (ex.empty() && !c.others_hold) {
        shape(ptr + "/expect", "\"expect\" names no rule: the case would check nothing");
        ok = false;
      }
      const std::size_t before = out.diagnostics.size();
      for (auto it = ex.begin(); it != ex.end(); ++it) {
        std::string esc;
        for (char ch : it.key()) esc += ch == '~' ? std::string("~0") : ch == '/' ? std::string("~1") : std::string(1, ch);
        expectation(it.value(), ptr + "/expect/" + esc, it.key(), c);
      }
      ok = ok && out.diagnostics.size() == before;
      // nlohmann sorts members by name: give them back in file order.
      std::stable_sort(c.expect.begin(), c.expect.end(),
                       [](const RuleExpectation& a, const RuleExpectation& b) { return a.at.begin < b.at.begin; });
    }
    if (ok) out.cases.push_back(std::move(c));
  }

  void file(const nlohmann::json& doc) {
    if (!doc.is_object()) {
      shape("", fmt::format("a test file is an object with \"cases\", not {}", kind(doc)));
      return;
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string& k = it.key();
      if (k != "cases" && k != "rules" && k != "error_patterns" && k != "description")
        shape("/" + k, fmt::format("unknown member \"{}\" of a test file (cases, rules, error_patterns, description)", k), true);
    }
    if (doc.contains("rules")) {
      std::vector<std::string> rel;
      if (strings(doc["rules"], "/rules", "\"rules\"", rel, &out.rules_at)) {
        if (rel.empty()) shape("/rules", "\"rules\" names no rules file");
        for (const std::string& r : rel) out.rules.push_back(resolve(r));
      }
    } else {
      const std::string& name = out.source.name();
      static constexpr std::string_view kSuffix = ".test.json";
      if (name.size() > kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
        out.rules.push_back(name.substr(0, name.size() - kSuffix.size()));
        out.rules_at.push_back({0, 0});
      } else {
        shape("", "the test file names no rules file: add \"rules\", or name the file RULES.test.json");
      }
    }
    std::vector<std::string> patterns;
    if (doc.contains("error_patterns")) strings(doc["error_patterns"], "/error_patterns", "\"error_patterns\"", patterns);
    if (!doc.contains("cases")) {
      shape("", "a test file needs \"cases\"");
      return;
    }
    const nlohmann::json& cases = doc["cases"];
    if (!cases.is_array()) {
      shape("/cases", fmt::format("\"cases\" must be an array, not {}", kind(cases)));
      return;
    }
    if (cases.empty()) shape("/cases", "\"cases\" is empty: the file tests nothing");
    std::vector<std::string> names;
    for (std::size_t k = 0; k < cases.size(); ++k) one_case(cases[k], "/cases/" + std::to_string(k), patterns, names);
  }
};

}  // namespace

std::string_view to_string(ExpectedVerdict v) {
  switch (v) {
    case ExpectedVerdict::violated: return "violated";
    case ExpectedVerdict::satisfied: return "satisfied";
    case ExpectedVerdict::vacuous: return "vacuous";
    case ExpectedVerdict::holds: return "holds";
  }
  return "holds";
}

RuleTestFile parse_rule_test_file(Source source) {
  RuleTestFile out;
  out.source = std::move(source);
  nlohmann::json doc;
  if (auto failure = json::parse_located(out.source.text(), doc)) {
    const auto at = static_cast<std::uint32_t>(failure->offset);
    out.diagnostics.push_back(Diagnostic{Severity::error, "E600", {at, at}, "not valid JSON: " + failure->reason, {}});
    return out;
  }
  // Values nested deeper than any test file needs are refused before anything walks them
  // recursively (the position walk, nlohmann's dump of an inline trace).
  {
    const std::string& t = out.source.text();
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > kRtfMaxDepth) {
          const auto at = static_cast<std::uint32_t>(i);
          out.diagnostics.push_back(Diagnostic{Severity::error, "E601", {at, at + 1},
                                               fmt::format("values nested deeper than {} levels", kRtfMaxDepth), {}});
          return out;
        }
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
  }
  RtfReader reader{out, RtfPositions(out.source.text())};
  reader.file(doc);
  sort_diagnostics(out.diagnostics);
  return out;
}

namespace {
std::string fold_name(std::string_view s) {
  std::string out;
  for (char c : s) out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_name(std::string_view name, const std::vector<std::string>& names) {
  const std::string n = fold_name(name);
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, n.size() / 3) + 1;
  for (const std::string& cand : names) {
    const std::size_t d = edit_distance(n, fold_name(cand));
    if (d < best_d) {
      best_d = d;
      best = cand;
    }
  }
  return best;
}

}  // namespace trajcheck
