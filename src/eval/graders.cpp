// External graders: a command per judged case, JSON on its standard input, one
// {"score", "pass", "reason"} object on its standard output; answers cached on disk by
// (grader, case, run digest). A grader that fails, times out or answers nonsense is reported
// on the case and the run goes on. run_command_cached is how every external command of a
// suite runs (graders here, variations in case vary).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "eval/eval_internal.hpp"
#include "util/read_file.hpp"
#include "util/subprocess.hpp"

namespace trajcheck::eval {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The most a grader may write on standard output; past it the grader is killed.
constexpr std::size_t kOutputLimit = std::size_t(1) << 20;

// The answer's last non-blank line must be a JSON object with a numeric `score` in [0, 1]
// and/or a boolean `pass` (`reason` a string, optional); anything else is invalid output.
bool parse_answer(const std::string& out, GraderResult& r) {
  std::size_t end = out.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) {
    r.error = "wrote nothing on standard output";
    return false;
  }
  std::size_t begin = out.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  json j = json::parse(out.substr(begin, end + 1 - begin), nullptr, false);
  auto shown = [&] {
    std::string s = out.substr(begin, end + 1 - begin);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
  };
  if (!j.is_object()) {
    r.error = fmt::format("invalid output: expected a JSON object {{\"score\", \"pass\", \"reason\"}}, got {}",
                          json(shown()).dump());
    return false;
  }
  if ((j.contains("score") && !j["score"].is_number()) || (j.contains("pass") && !j["pass"].is_boolean()) ||
      (j.contains("reason") && !j["reason"].is_string()) || (!j.contains("score") && !j.contains("pass"))) {
    r.error = fmt::format("invalid output: needs a numeric \"score\" or a boolean \"pass\" (and a string \"reason\"), got {}",
                          json(shown()).dump());
    return false;
  }
  if (j.contains("score")) {
    // A score out of range (85 on a 0..1 scale, 1e308, an overflow to infinity) would move the
    // mean and the gates on it silently: it is no answer.
    double score = j["score"].get<double>();
    if (!std::isfinite(score) || score < 0.0 || score > 1.0) {
      r.error = fmt::format("invalid output: \"score\" must be a number from 0 to 1, got {}", json(shown()).dump());
      return false;
    }
    r.score = score;
  }
  if (j.contains("pass")) r.pass = j["pass"].get<bool>();
  if (j.contains("reason")) r.reason = j["reason"].get<std::string>();
  return true;
}

struct Job {
  CaseResult* run;  // a judged run of a case (its first or a repeat)
  std::size_t grader;
  std::string input, key;
};

}  // namespace

CommandAnswer run_command_cached(const std::string& command, double timeout_seconds, const std::string& dir,
                                 const std::string& input, const std::string& cache_file,
                                 const std::function<bool(const std::string& output, std::string& why)>& accept) {
  CommandAnswer a;
  std::string why;
  if (!cache_file.empty() && read_regular_file(cache_file, kOutputLimit, a.output, why) && accept(a.output, why)) {
    a.cached = true;
    return a;
  }
  a.output.clear();
  auto ms = static_cast<std::uint64_t>(timeout_seconds * 1000.0 + 0.5);
  detail::CommandResult cr = detail::run_command(command, dir, input, ms, kOutputLimit);
  std::string err_tail = cr.err;
  while (!err_tail.empty() && (err_tail.back() == '\n' || err_tail.back() == '\r')) err_tail.pop_back();
  if (auto nl = err_tail.rfind('\n'); nl != std::string::npos) err_tail = err_tail.substr(nl + 1);
  if (err_tail.size() > 120) err_tail = err_tail.substr(err_tail.size() - 120);
  std::string stderr_note = err_tail.empty() ? "" : fmt::format(" ({})", err_tail);
  if (!cr.started) a.error = "could not start: " + cr.error;
  else if (cr.timed_out) a.error = ms < 1000 ? fmt::format("timed out after {}ms", ms) : fmt::format("timed out after {:g}s", ms / 1000.0);
  // Output over the limit is why the group was killed: say so, not "killed by signal 9".
  else if (cr.truncated) a.error = fmt::format("output limit exceeded: more than {} bytes (1 MiB) on standard output; killed", kOutputLimit);
  else if (cr.signal != 0) a.error = fmt::format("killed by signal {}{}", cr.signal, stderr_note);
  else if (cr.exit_code != 0) a.error = fmt::format("exited with status {}{}", cr.exit_code, stderr_note);
  else if (!accept(cr.out, why)) a.error = why;
  if (!a.error.empty()) return a;
  a.output = std::move(cr.out);
  if (!cache_file.empty()) {
    // Written whole under a temporary name, then renamed: a reader never sees half an answer.
    static std::atomic<std::uint64_t> serial{0};
    std::string tmp = cache_file + fmt::format(".{}.tmp", serial.fetch_add(1));
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << a.output;
    }
    std::error_code ec;
    fs::rename(tmp, cache_file, ec);
    if (ec) fs::remove(tmp, ec);
  }
  return a;
}

void run_graders(const EvalContext& ctx, const std::vector<std::vector<std::string>>& run_json, const std::string& cache_dir,
                 unsigned jobs, EvalReport& report) {
  const auto& graders = ctx.suite->graders;
  for (const auto& g : graders) report.graders.push_back(g.name);
  if (graders.empty()) return;
  std::vector<Job> work;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    CaseResult& first = report.cases[i];
    if (first.status != CaseStatus::judged) continue;
    const CaseSpec& c = ctx.cases[i];
    // Every run of the case, each with its own answers (the cache keys on the run's digest).
    for (std::size_t k = 0; k < first.runs(); ++k) {
      CaseResult& r = k == 0 ? first : first.repeats[k - 1];
      const std::string& run = run_json[i][k];
      r.graders.resize(graders.size());
      const std::string run_digest = sha256_hex(run);
      for (std::size_t g = 0; g < graders.size(); ++g) {
        r.graders[g].grader = graders[g].name;
        std::string input = "{\"grader\":" + json(graders[g].name).dump() + ",\"case\":" + c.record +
                            ",\"run\":" + (run.empty() ? "null" : run) +
                            ",\"fixture\":" + (c.fixture ? *c.fixture : std::string("null")) + "}\n";
        // (grader, case, run digest): the grader's name and command, the case as written, the run.
        std::string key = sha256_hex(graders[g].name + '\0' + graders[g].command + '\0' + c.id + '\0' +
                                     sha256_hex(c.record) + '\0' + run_digest);
        work.push_back({&r, g, std::move(input), std::move(key)});
      }
    }
  }
  if (!cache_dir.empty()) {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < work.size();) {
      const Job& job = work[k];
      const suite::Grader& g = graders[job.grader];
      GraderResult& out = job.run->graders[job.grader];
      const std::string cached = cache_dir.empty() ? "" : (fs::path(cache_dir) / (job.key + ".json")).string();
      out = GraderResult{};
      out.grader = g.name;
      CommandAnswer a = run_command_cached(g.command, g.timeout_seconds, ctx.suite->directory, job.input, cached,
                                           [&](const std::string& text, std::string& why) {
                                             out = GraderResult{};
                                             out.grader = g.name;
                                             if (parse_answer(text, out)) return true;
                                             why = out.error;
                                             return false;
                                           });
      out.cached = a.cached;
      out.error = a.error;
      if (!out.error.empty()) {
        out.score.reset();
        out.pass.reset();
      }
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(work.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

}  // namespace trajcheck::eval
