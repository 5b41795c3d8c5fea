// Regression cases from traces: what the trace did becomes what the case expects.
#include "trajcheck/eval.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eval/eval_internal.hpp"
#include "language/parser.hpp"
#include "suite/suite.hpp"
#include "util/glob_files.hpp"
#include "util/read_file.hpp"

namespace trajcheck::eval {

std::string case_from_trace(const Trajectory& trace, const CaseNewOptions& o) {
  nlohmann::ordered_json j;
  j["case_id"] = o.case_id;
  for (const auto& [k, v] : o.fields) j[k] = v;
  j["split"] = o.split;
  std::string input;
  for (const Step& s : trace.steps())
    if (s.type == StepType::user_message) {
      input = std::string(trace.text(s.content));
      break;
    }
  j["input"] = input;
  if (!o.catalog_version.empty()) j["catalog_version"] = o.catalog_version;
  if (!o.fixture_path.empty()) j["fixture"] = o.fixture_path;
  if (!o.fixture_version.empty()) j["fixture_version"] = o.fixture_version;
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();
  std::string path;
  for (const Step& s : trace.steps()) {
    if (s.type != StepType::tool_call) continue;
    std::string_view name = trace.tool_name(s);
    tools.push_back(std::string(name));
    if (!path.empty()) path += " -> ";
    // As `fmt` prints a tool name: bare only when it reads back as this exact name (a tool
    // called `any`, `approval` or `not` is quoted, or the PATH would mean something else).
    path += language::detail::quote_name_if_needed(name);
  }
  nlohmann::ordered_json expected;
  expected["tools"] = tools;
  if (!path.empty()) expected["path"] = path;
  std::vector<RuleResult> results;
  if (o.suite && o.suite->control_program) {
    Checker checker(o.suite->control_program);
    checker.check(trace, results);
  }
  static const suite::Suite empty;
  expected["control"] = classify_control(o.suite ? *o.suite : empty, results, trace);
  std::vector<std::string> invariants = o.invariants;
  if (invariants.empty()) {
    for (const auto& program : o.rules) {
      Checker checker(program);
      checker.set_fixture(o.fixture);
      checker.check(trace, results);
      // Per rule: held when some entry is satisfied and none violated (parametric rules have several).
      std::vector<int> held(program->rules().size(), 0);
      for (const RuleResult& rr : results) {
        int& h = held[rr.rule];
        if (rr.status == VerdictStatus::violated) h = -1;
        else if (rr.status == VerdictStatus::satisfied && h == 0) h = 1;
      }
      for (std::size_t i = 0; i < held.size(); ++i) {
        const std::string& name = program->rules()[i].name;
        if (held[i] == 1 && std::find(invariants.begin(), invariants.end(), name) == invariants.end())
          invariants.push_back(name);
      }
    }
  }
  if (!invariants.empty()) expected["invariants"] = invariants;
  j["expected"] = expected;
  j["note"] = o.note;
  j["source"] = {{"trace_id", std::string(trace.trace_id())},
                 {"record", trace.origin.file + ":" + std::to_string(trace.origin.line)}};
  return j.dump() + "\n";
}

}  // namespace trajcheck::eval

namespace trajcheck::eval {

SuiteFile parse_suite_file(Source source) {
  suite::SuiteResult r = suite::parse_suite(std::move(source));
  SuiteFile f;
  f.source = std::move(r.source);
  f.diagnostics = std::move(r.diagnostics);
  if (r.ok()) f.suite = std::make_shared<const suite::Suite>(std::move(r.suite));
  return f;
}

std::string suite_fixtures_dir(const SuiteFile& suite) {
  return suite.suite && suite.suite->fixtures ? suite.suite->fixtures->text : std::string();
}

std::string suite_fixtures_version(const SuiteFile& suite) {
  return suite.suite ? suite.suite->fixtures_version : std::string();
}

namespace {

// A case id that is safe as a file name: letters, digits, `.`, `_`, `-`, not starting with `.`.
bool file_safe(std::string_view id) {
  if (id.empty() || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

// Writes `text` to a file that must not exist yet: created with O_EXCL | O_NOFOLLOW, so a link
// or file put there since it was looked at is not written through or replaced.
bool write_new_file(const std::string& path, std::string_view text, std::string& reason) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    reason = std::strerror(errno);
    return false;
  }
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reason = std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    reason = std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

bool copy_case_fixture(const SuiteFile& suite, const std::string& file, const std::string& version,
                       CaseNewOptions& o, std::string& error) {
  std::string dir = suite_fixtures_dir(suite);
  if (dir.empty()) {
    error = "--fixture needs --suite SUITE with a fixtures \"DIR\" line, where the fixture is copied";
    return false;
  }
  if (!file_safe(o.case_id)) {
    error = fmt::format("the case id '{}' is no file name for the fixture copy (letters, digits, '.', '_', '-')", o.case_id);
    return false;
  }
  std::string text, reason;
  if (!read_regular_file(file, kMaxSourceBytes, text, reason)) {
    error = fmt::format("{}: {}", file, reason);
    return false;
  }
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    error = fmt::format("{}: the fixture is not a JSON document", file);
    return false;
  }
  std::string rel = dir;
  if (rel.back() != '/') rel += '/';
  rel += o.case_id + ".json";
  namespace fs = std::filesystem;
  fs::path dest = fs::path(suite.suite->directory) / rel;
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  // A symbolic link where the copy goes (dangling or not) would have the copy written, or
  // compared, wherever it points, outside the suite: refused, never followed.
  const fs::file_status st = fs::symlink_status(dest, ec);
  if (fs::is_symlink(st)) {
    error = fmt::format("{} is a symbolic link; the fixture is not written through it", dest.string());
    return false;
  }
  if (fs::exists(st)) {
    std::string old;
    if (!read_regular_file(dest.string(), kMaxSourceBytes, old, reason) || old != text) {
      error = fmt::format("{} exists and differs from {}; not replaced", dest.string(), file);
      return false;
    }
  } else if (!write_new_file(dest.string(), text, reason)) {
    error = fmt::format("cannot write {}: {}", dest.string(), reason);
    return false;
  }
  o.fixture_path = rel;
  o.fixture_version = version.empty() ? suite_fixtures_version(suite) : version;
  o.fixture = doc.dump();
  return true;
}

bool compile_suite_rules(const SuiteFile& suite, std::vector<std::shared_ptr<const Program>>& out,
                         std::string& errors) {
  if (!suite.suite) return false;
  const suite::Suite& st = *suite.suite;
  bool ok = true;
  for (const auto& r : st.rules) {
    std::string pattern = r.text.empty() || r.text[0] == '/' ? r.text : st.directory + "/" + r.text;
    auto files = detail::glob_files(pattern);
    if (files.empty()) {
      errors += fmt::format("{}: error: no rules file matches {}\n", suite.source.name(), r.text);
      ok = false;
    }
    for (const auto& f : files) {
      std::string text, reason;
      if (!read_regular_file(f, kMaxSourceBytes, text, reason)) {
        errors += fmt::format("{}: error: {}\n", f, reason);
        ok = false;
        continue;
      }
      CompileResult cr = compile(Source(f, std::move(text)));
      errors += format_diagnostics(cr.source, cr.diagnostics);
      if (!cr.ok()) ok = false;
      else out.push_back(cr.program);
    }
  }
  return ok;
}

}  // namespace trajcheck::eval
