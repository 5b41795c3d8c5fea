// `trajcheck case vary`: synthetic cases derived deterministically from designed ones —
// tool-result variations, fixture perturbations, injected failures, and inputs varied by the
// suite's variation commands (run and cached as graders are) — with a seeded review sample. Only our own generator arithmetic is used (no std distributions, whose
// output differs between standard libraries), so the same seed gives the same bytes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eval/eval_internal.hpp"
#include "suite/suite.hpp"
#include "trajcheck/catalog.hpp"
#include "util/glob_files.hpp"
#include "util/read_file.hpp"

namespace trajcheck::eval {

using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kKinds[] = {"errors",        "empty",           "extra-fields", "missing-fields",
                                  "reorder",       "fixture-missing", "fixture-reorder", "attempts"};

// A generator seeded by the run's seed and what is derived (FNV-1a of the text), so adding
// a case or a kind does not change the others' variations.
std::mt19937_64 generator(std::uint64_t seed, std::string_view what) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : what) h = (h ^ c) * 1099511628211ull;
  return std::mt19937_64(seed ^ h);
}

// Uniform enough for variations: below `n` (n > 0).
std::uint64_t below(std::mt19937_64& g, std::uint64_t n) { return g() % n; }

template <typename T>
void shuffle(std::vector<T>& v, std::mt19937_64& g) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(g, i)]);
}

// Every array shuffled and every object's members in a shuffled order, recursively.
ordered_json reordered(const ordered_json& j, std::mt19937_64& g) {
  if (j.is_array()) {
    std::vector<ordered_json> items;
    for (const auto& x : j) items.push_back(reordered(x, g));
    shuffle(items, g);
    return ordered_json(items);
  }
  if (j.is_object()) {
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    shuffle(keys, g);
    ordered_json o = ordered_json::object();
    for (const auto& k : keys) o[k] = reordered(j[k], g);
    return o;
  }
  return j;
}

// Member paths of a document (objects only, depth first): {"a", "b"} for {"a": 1, "b": {…}} and "b.c" …
void member_paths(const ordered_json& j, std::vector<std::vector<std::string>>& out, std::vector<std::string>& at) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    at.push_back(it.key());
    out.push_back(at);
    member_paths(it.value(), out, at);
    at.pop_back();
  }
}

std::string dotted(const std::vector<std::string>& path) { return fmt::format("{}", fmt::join(path, ".")); }

// The case's tools: expected.tools, then the tools of expected.arguments, each once.
std::vector<std::string> case_tools(const ordered_json& c) {
  std::vector<std::string> out;
  auto add = [&](const std::string& t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  if (!c.contains("expected") || !c["expected"].is_object()) return out;
  const ordered_json& e = c["expected"];
  if (e.contains("tools") && e["tools"].is_array())
    for (const auto& t : e["tools"])
      if (t.is_string()) add(t.get<std::string>());
  if (e.contains("arguments") && e["arguments"].is_object())
    for (auto it = e["arguments"].begin(); it != e["arguments"].end(); ++it) add(it.key());
  return out;
}

struct Derived {
  ordered_json record;
  std::string fixture_file;  // written beside the cases when the variation changes the fixture
  ordered_json fixture;
  std::string summary;       // for the review sample
};

// A variation command's answer: its last non-blank line, a JSON object whose "inputs" is a
// non-empty array of non-empty strings (or whose "input" is one such string).
bool parse_inputs(const std::string& out, std::vector<std::string>& inputs, std::string& why) {
  inputs.clear();
  std::size_t end = out.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) {
    why = "wrote nothing on standard output";
    return false;
  }
  std::size_t begin = out.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const std::string line = out.substr(begin, end + 1 - begin);
  ordered_json j = ordered_json::parse(line, nullptr, false);
  auto bad = [&] {
    why = fmt::format("invalid output: expected a JSON object {{\"inputs\": [\"…\", …]}} of non-empty strings, got {}",
                      ordered_json(line.size() > 60 ? line.substr(0, 57) + "..." : line).dump());
    return false;
  };
  if (!j.is_object()) return bad();
  if (j.contains("inputs") && j["inputs"].is_array()) {
    for (const auto& x : j["inputs"]) {
      if (!x.is_string() || x.get<std::string>().empty()) return bad();
      inputs.push_back(x.get<std::string>());
    }
  } else if (j.contains("input") && j["input"].is_string() && !j["input"].get<std::string>().empty()) {
    inputs.push_back(j["input"].get<std::string>());
  }
  return inputs.empty() ? bad() : true;
}

class Deriver {
 public:
  Deriver(const VaryOptions& o, const Catalog* catalog, const suite::SuiteResult& suite, std::string cache_dir)
      : o_(o), catalog_(catalog), suite_(suite), suite_dir_(suite.suite.directory), cache_dir_(std::move(cache_dir)) {}

  // False when a variation command gave no answer (`error` says where and why).
  bool derive(const ordered_json& source, const std::string& origin, const ordered_json* fixture,
              std::vector<Derived>& out, std::string& error) {
    const std::string id = source["case_id"].is_string() ? source["case_id"].get<std::string>() : source["case_id"].dump();
    const std::vector<std::string> tools = case_tools(source);
    for (const std::string& kind : o_.kinds) {
      std::mt19937_64 g = generator(o_.seed, id + "\n" + kind);
      unsigned n = 0;
      auto emit = [&](ordered_json variation, std::string summary, const ordered_json* inject, const ordered_json* result,
                      const ordered_json* new_fixture, const std::string* new_input = nullptr) {
        Derived d;
        std::string did = fmt::format("{}--{}-{}", id, kind, ++n);
        ordered_json r = ordered_json::object();
        for (auto it = source.begin(); it != source.end(); ++it) {
          if (it.key() == "case_id") r["case_id"] = did;
          else if (it.key() == "split") r["split"] = "synthetic";
          else if (it.key() == "derived_from" || it.key() == "variation" || it.key() == "note") continue;
          else r[it.key()] = it.value();
        }
        if (!r.contains("split")) r["split"] = "synthetic";
        if (new_input) r["input"] = *new_input;
        if (inject) {  // the variation's failures replace the source's on the same tool
          ordered_json kept = ordered_json::array();
          if (r.contains("inject") && r["inject"].is_array())
            for (const auto& x : r["inject"])
              if (!x.is_object() || x.value("tool", "") != (*inject)[0]["tool"]) kept.push_back(x);
          for (const auto& x : *inject) kept.push_back(x);
          r["inject"] = kept;
        }
        if (result) {
          ordered_json kept = ordered_json::array();
          if (r.contains("results") && r["results"].is_array())
            for (const auto& x : r["results"])
              if (!x.is_object() || x.value("tool", "") != (*result)["tool"]) kept.push_back(x);
          kept.push_back(*result);
          r["results"] = kept;
        }
        if (new_fixture) {
          d.fixture_file = did + ".json";
          d.fixture = *new_fixture;
          fs::path file = fs::path(o_.out_dir) / "fixtures" / d.fixture_file;
          r["fixture"] = fs::absolute(file).lexically_normal().lexically_relative(fs::absolute(suite_dir_).lexically_normal()).generic_string();
        }
        r["derived_from"] = id;
        ordered_json v = ordered_json::object();
        v["kind"] = kind;
        for (auto it = variation.begin(); it != variation.end(); ++it)
          if (it.key() != "kind") v[it.key()] = it.value();
        r["variation"] = v;
        d.record = std::move(r);
        d.summary = std::move(summary);
        out.push_back(std::move(d));
      };
      if (kind == "errors") {
        for (const std::string& t : tools) {
          const CatalogTool* ct = catalog_ ? catalog_->find(normalize_tool_name(t)) : nullptr;
          if (ct == nullptr) continue;
          for (const ToolErrorClass& e : ct->errors) {
            ordered_json inject = ordered_json::array({{{"tool", t}, {"attempt", 1},
                                                        {"error", {{"class", e.name}, {"retryable", e.retryable}}}}});
            emit({{"tool", t}, {"class", e.name}},
                 fmt::format("{} fails with {} ({}) at attempt 1", t, e.name, e.retryable ? "retryable" : "not retryable"),
                 &inject, nullptr, nullptr);
          }
        }
      } else if (kind == "empty" || kind == "extra-fields" || kind == "missing-fields" || kind == "reorder") {
        for (const std::string& t : tools) {
          ordered_json result = {{"tool", t}, {"attempt", 1}};
          std::string summary;
          if (kind == "empty") {
            result["variation"] = "empty";
            summary = fmt::format("{} returns an empty result", t);
          } else if (kind == "extra-fields") {
            std::string field = fmt::format("x_extra_{:04x}", below(g, 0x10000));
            result["variation"] = "extra_field";
            result["field"] = field;
            result["value"] = fmt::format("{:08x}", below(g, 0x100000000ull));
            summary = fmt::format("{}'s result has an extra field {}", t, field);
          } else if (kind == "missing-fields") {
            std::uint64_t pick = below(g, 1000);
            result["variation"] = "missing_field";
            result["pick"] = pick;
            summary = fmt::format("{}'s result lacks one field (pick {})", t, pick);
          } else {
            std::uint64_t s = below(g, 1000000);
            result["variation"] = "reorder";
            result["seed"] = s;
            summary = fmt::format("{}'s result lists are reordered (seed {})", t, s);
          }
          ordered_json v = {{"tool", t}};
          emit(v, summary, nullptr, &result, nullptr);
        }
      } else if (kind == "fixture-missing") {
        if (fixture == nullptr) continue;
        std::vector<std::vector<std::string>> paths;
        std::vector<std::string> at;
        member_paths(*fixture, paths, at);
        shuffle(paths, g);
        if (paths.size() > o_.per_kind) paths.resize(o_.per_kind);
        std::sort(paths.begin(), paths.end());
        for (const auto& p : paths) {
          ordered_json f = *fixture;
          ordered_json* parent = &f;
          for (std::size_t i = 0; i + 1 < p.size(); ++i) parent = &(*parent)[p[i]];
          parent->erase(p.back());
          emit({{"path", dotted(p)}}, fmt::format("the fixture lacks {}", dotted(p)), nullptr, nullptr, &f);
        }
      } else if (kind == "fixture-reorder") {
        if (fixture == nullptr) continue;
        ordered_json f = reordered(*fixture, g);
        if (f.dump() == fixture->dump()) continue;  // nothing to reorder
        emit(ordered_json::object(), "the fixture's lists and members are reordered", nullptr, nullptr, &f);
      } else if (const suite::Grader* v = variation(kind)) {
        // The case (and the seed) on standard input; its inputs, varied, on standard output.
        ordered_json doc = ordered_json::object();
        doc["variation"] = v->name;
        doc["case"] = source;
        doc["seed"] = o_.seed;
        const std::string input = doc.dump() + "\n";
        const std::string cache =
            cache_dir_.empty() ? "" : (fs::path(cache_dir_) / (sha256_hex(v->name + '\0' + v->command + '\0' + input) + ".json")).string();
        std::vector<std::string> inputs;
        CommandAnswer a = run_command_cached(v->command, v->timeout_seconds, suite_dir_.string(), input, cache,
                                             [&](const std::string& text, std::string& why) {
                                               return parse_inputs(text, inputs, why);
                                             });
        if (!a.error.empty()) {
          const LineCol lc = suite_.source.line_col(v->range.begin);
          error += fmt::format("{}:{}:{}: error: variation '{}' gave no input for case '{}' ({}): {}\n", suite_.source.name(),
                               lc.line, lc.column, v->name, id, origin, a.error);
          return false;
        }
        for (std::size_t k = 0; k < inputs.size(); ++k)
          emit({{"command", v->command}, {"index", k + 1}},
               fmt::format("the input reworded by `{}` ({} of {})", v->command, k + 1, inputs.size()), nullptr, nullptr,
               nullptr, &inputs[k]);
      } else if (kind == "attempts") {
        for (const std::string& t : tools) {
          const CatalogTool* ct = catalog_ ? catalog_->find(normalize_tool_name(t)) : nullptr;
          ToolErrorClass cls{"timeout", true, true};
          if (ct != nullptr)
            for (const ToolErrorClass& e : ct->errors)
              if (e.retryable) {
                cls = e;
                break;
              }
          for (std::uint32_t failures = 1; failures <= 3; ++failures) {
            ordered_json inject = ordered_json::array();
            for (std::uint32_t a = 1; a <= failures; ++a)
              inject.push_back({{"tool", t}, {"attempt", a}, {"error", {{"class", cls.name}, {"retryable", cls.retryable}}}});
            emit({{"tool", t}, {"class", cls.name}, {"failures", failures}},
                 fmt::format("{} fails with {} at attempt{} 1{}", t, cls.name, failures == 1 ? "" : "s",
                             failures == 1 ? "" : fmt::format("–{}", failures)),
                 &inject, nullptr, nullptr);
          }
        }
      }
    }
    return true;
  }

 private:
  const suite::Grader* variation(const std::string& kind) const {
    for (const suite::Grader& v : suite_.suite.variations)
      if (v.name == kind) return &v;
    return nullptr;
  }

  const VaryOptions& o_;
  const Catalog* catalog_;
  const suite::SuiteResult& suite_;
  fs::path suite_dir_;
  std::string cache_dir_;
};

bool write_file(const fs::path& path, const std::string& text, std::string& errors) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (out) return true;
  errors += fmt::format("trajcheck case vary: error: cannot write {}\n", path.string());
  return false;
}

}  // namespace

const std::vector<std::string>& variation_kinds() {
  static const std::vector<std::string> kinds(std::begin(kKinds), std::end(kKinds));
  return kinds;
}

bool vary_cases(const VaryOptions& options, VaryResult& result, std::string& errors) {
  VaryOptions o = options;
  std::string text, reason;
  if (!read_regular_file(o.suite_path, kMaxSourceBytes, text, reason)) {
    errors += fmt::format("{}: error: {}\n", o.suite_path, reason);
    return false;
  }
  suite::SuiteResult sr = suite::parse_suite(Source(o.suite_path, std::move(text)));
  errors += format_diagnostics(sr.source, sr.diagnostics);
  if (!sr.ok()) return false;
  const suite::Suite& st = sr.suite;
  // The kinds: the built-in ones and the suite's variation commands (by name).
  std::vector<std::string> known = variation_kinds();
  for (const suite::Grader& v : st.variations) {
    if (std::find(known.begin(), known.end(), v.name) != known.end()) {
      std::vector<Diagnostic> d{{Severity::error, "S014", v.range,
                                 fmt::format("variation '{}' has the name of a built-in kind of case vary; name it otherwise", v.name),
                                 {}}};
      errors += format_diagnostics(sr.source, d);
      return false;
    }
    known.push_back(v.name);
  }
  if (o.kinds.empty()) o.kinds = known;
  for (const std::string& k : o.kinds) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      errors += fmt::format("trajcheck case vary: error: unknown kind '{}': use {}{}\n", k, fmt::join(known, ", "),
                            st.variations.empty() ? " (or a `variation NAME command \"…\"` of the suite)" : "");
      return false;
    }
  }
  auto join = [&](const std::string& p) { return p.empty() || p[0] == '/' ? p : st.directory + "/" + p; };
  std::shared_ptr<const Catalog> catalog;
  if (st.catalog) {
    CatalogLoad cat = load_catalog(join(st.catalog->text));
    if (!cat.ok()) {
      errors += format_diagnostics(cat.source, cat.diagnostics);
      return false;
    }
    catalog = cat.catalog;
  }
  // The source cases, in the order --from names them.
  std::vector<ordered_json> sources(o.from.size());
  std::vector<std::string> origins(o.from.size());
  for (const auto& pat : st.cases) {
    for (const std::string& file : detail::glob_files(join(pat.text))) {
      std::string body;
      if (!read_regular_file(file, kMaxSourceBytes, body, reason)) {
        errors += fmt::format("{}: error: {}\n", file, reason);
        return false;
      }
      std::size_t pos = 0, line = 0;
      while (pos < body.size()) {
        std::size_t nl = body.find('\n', pos);
        if (nl == std::string::npos) nl = body.size();
        std::string_view l(body.data() + pos, nl - pos);
        pos = nl + 1;
        ++line;
        if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        ordered_json j = ordered_json::parse(l, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("case_id")) continue;  // eval reports these
        std::string id = j["case_id"].is_string() ? j["case_id"].get<std::string>() : j["case_id"].dump();
        for (std::size_t i = 0; i < o.from.size(); ++i)
          if (o.from[i] == id && origins[i].empty()) {
            sources[i] = j;
            origins[i] = fmt::format("{}:{}", file, line);
          }
      }
    }
  }
  bool ok = true;
  for (std::size_t i = 0; i < o.from.size(); ++i)
    if (origins[i].empty()) {
      errors += fmt::format("{}: error: no case '{}' in the suite's cases\n", o.suite_path, o.from[i]);
      ok = false;
    }
  if (!ok) return false;

  const std::string cache = o.cache == "-" ? ""
                            : o.cache.empty() ? (fs::path(st.directory) / ".trajcheck-cache" / "variations").string()
                                              : o.cache;
  if (!cache.empty() && !st.variations.empty()) {
    std::error_code ec;
    fs::create_directories(cache, ec);
  }
  Deriver deriver(o, catalog.get(), sr, cache);
  std::vector<Derived> derived;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::optional<ordered_json> fixture;
    if (sources[i].contains("fixture") && sources[i]["fixture"].is_string()) {
      std::string path = join(sources[i]["fixture"].get<std::string>()), body;
      if (!read_regular_file(path, kMaxSourceBytes, body, reason)) {
        errors += fmt::format("{}: error: cannot read the fixture {}: {}\n", origins[i], path, reason);
        return false;
      }
      fixture = ordered_json::parse(body, nullptr, false);
      if (fixture->is_discarded()) {
        errors += fmt::format("{}: error: the fixture {} is not a JSON document\n", origins[i], path);
        return false;
      }
    }
    std::string why;
    if (!deriver.derive(sources[i], origins[i], fixture ? &*fixture : nullptr, derived, why)) {
      errors += why;
      return false;
    }
  }

  std::error_code ec;
  fs::path out(o.out_dir);
  fs::create_directories(out, ec);
  if (ec) {
    errors += fmt::format("trajcheck case vary: error: cannot create {}: {}\n", out.string(), ec.message());
    return false;
  }
  std::string jsonl;
  std::size_t fixtures = 0;
  for (const Derived& d : derived) {
    jsonl += d.record.dump() + "\n";
    if (d.fixture_file.empty()) continue;
    if (fixtures++ == 0) fs::create_directories(out / "fixtures", ec);
    if (!write_file(out / "fixtures" / d.fixture_file, d.fixture.dump(2) + "\n", errors)) return false;
  }
  if (!write_file(out / "synthetic.jsonl", jsonl, errors)) return false;

  // The review sample: a seeded choice of derived cases, in the order they were derived.
  std::vector<std::size_t> pick(derived.size());
  for (std::size_t i = 0; i < pick.size(); ++i) pick[i] = i;
  std::mt19937_64 g = generator(o.seed, "review sample");
  shuffle(pick, g);
  if (pick.size() > o.sample) pick.resize(o.sample);
  std::sort(pick.begin(), pick.end());
  std::string md = fmt::format("# Review sample: {} of {} synthetic case{} (seed {})\n\n", pick.size(), derived.size(),
                               derived.size() == 1 ? "" : "s", o.seed);
  md += fmt::format("Derived by `trajcheck case vary` from {}. For each, check that the variation is one the agent\n"
                    "could meet and that what the case expects still holds.\n\n",
                    fmt::join(o.from, ", "));
  for (std::size_t i : pick) {
    const Derived& d = derived[i];
    std::string input = d.record.contains("input") && d.record["input"].is_string() ? d.record["input"].get<std::string>() : "";
    if (input.size() > 80) input = input.substr(0, 77) + "...";
    md += fmt::format("- [ ] `{}` (from `{}`, {}): {}{}\n", d.record["case_id"].get<std::string>(),
                      d.record["derived_from"].get<std::string>(), d.record["variation"]["kind"].get<std::string>(),
                      d.summary, input.empty() ? "" : " — input: " + ordered_json(input).dump());
  }
  if (!write_file(out / "review.md", md, errors)) return false;
  result.cases = derived.size();
  result.fixtures = fixtures;
  result.sampled = pick.size();
  for (const Derived& d : derived) result.case_ids.push_back(d.record["case_id"].get<std::string>());
  return true;
}

}  // namespace trajcheck::eval
