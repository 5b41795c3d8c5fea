// `trajcheck hook claude-code`: one Claude Code hook event decided against the session's state
// file (trajcheck/hook.hpp). The state is a native trace; each PreToolUse reads it whole, feeds
// its steps (denied attempts too, as guard's monitor observes them) to a RuleSetMonitor and
// checks the new call.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trajcheck/guard.hpp"
#include "trajcheck/hook.hpp"

namespace trajcheck {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// A session's state file, read whole at every call.
constexpr std::uintmax_t kMaxStateBytes = std::uintmax_t{256} << 20;

// Exit status 2: Claude Code blocks a PreToolUse call and shows standard error to the model
// (after a PostToolUse, the model sees it too).
HookAnswer blocked(std::string_view why, bool before_the_call = true) {
  return HookAnswer{2, "", fmt::format("trajcheck hook: {}; {}\n", why,
                                       before_the_call ? "the call is blocked" : "its result was not recorded")};
}

// A session id used as a file name: letters, digits, '-', '_', '.', not starting with '.'.
bool safe_file_name(const std::string& s) {
  if (s.empty() || s.size() > 200 || s.front() == '.') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

// An exclusive lock on a file, held while the object lives.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      error_ = std::strerror(errno);
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = std::strerror(errno);
      return;
    }
    locked_ = true;
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
  std::string error_;
};

// Writes `text` to `path` through a temporary file renamed over it: a reader sees the old
// state or the new one, never half of one.
bool write_atomically(const fs::path& path, const std::string& text, std::string* error) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      *error = fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno));
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    *error = fmt::format("cannot replace {}: {}", path.string(), ec.message());
    return false;
  }
  return true;
}

std::string message_of(const RuleSet& rules, const Violation& v) {
  const RuleInfo& info = *rules.rules()[v.rule].info;
  return info.message.empty() ? "denied by rule " + info.name : info.message;
}

}  // namespace

HookAnswer claude_code_hook(std::shared_ptr<const RuleSet> rules, const NormalizeOptions& reading,
                            const HookOptions& options, std::string_view input) {
  const Json in = Json::parse(input, nullptr, false);
  if (in.is_discarded() || !in.is_object()) return blocked("the hook's input is not a JSON object");
  auto text_of = [&](const char* key) -> std::string {
    auto it = in.find(key);
    return it != in.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string event = text_of("hook_event_name");
  const bool pre = event == "PreToolUse";
  if (!pre && event != "PostToolUse" && event != "PostToolUseFailure")
    return blocked(event.empty() ? std::string("the hook's input has no hook_event_name")
                                 : fmt::format("the event {} is not one this hook handles (PreToolUse, PostToolUse, "
                                               "PostToolUseFailure)", event));
  auto fail = [pre](std::string_view why) { return blocked(why, pre); };
  const std::string session = text_of("session_id");
  if (!safe_file_name(session))
    return fail(session.empty() ? std::string("the hook's input has no session_id")
                                   : fmt::format("the session id {} is not a safe file name", Json(session).dump()));
  const std::string tool = text_of("tool_name");
  if (tool.empty()) return fail("the hook's input has no tool_name");
  auto tool_input = in.find("tool_input");
  if (tool_input == in.end() || !tool_input->is_object()) return fail("the hook's input has no tool_input object");
  const std::string call_id = text_of("tool_use_id");
  if (options.state_dir.empty()) return fail("no state directory (--state-dir or TRAJCHECK_HOOK_STATE_DIR)");

  const fs::path dir(options.state_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(fmt::format("cannot create the state directory {}: {}", dir.string(), ec.message()));
  FileLock lock(dir / (session + ".lock"));
  if (!lock.locked()) return fail(fmt::format("cannot lock the session's state in {}: {}", dir.string(), lock.error()));

  // The session so far.
  const fs::path state_path = dir / (session + ".json");
  Json state;
  if (fs::exists(state_path, ec)) {
    const auto size = fs::file_size(state_path, ec);
    if (ec) return fail(fmt::format("cannot read the session's state {}: {}", state_path.string(), ec.message()));
    if (size > kMaxStateBytes)
      return fail(fmt::format("the session's state {} is larger than the {} MiB limit", state_path.string(),
                              kMaxStateBytes >> 20));
    std::ifstream f(state_path, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    if (!f) return fail(fmt::format("cannot read the session's state {}: {}", state_path.string(), std::strerror(errno)));
    state = Json::parse(text.str(), nullptr, false);
    if (state.is_discarded() || !state.is_object() || !state.contains("steps") || !state["steps"].is_array())
      return fail(fmt::format("the session's state {} is not a trace (a JSON object with steps)", state_path.string()));
  } else if (ec) {
    return fail(fmt::format("cannot read the session's state {}: {}", state_path.string(), ec.message()));
  } else {
    state = {{"trace_id", session}, {"steps", Json::array()}};
    if (!text_of("cwd").empty()) state["context"] = {{"cwd", text_of("cwd")}};
  }
  Json& steps = state["steps"];

  HookAnswer answer;
  if (pre) {
    Json step = {{"type", "tool_call"}, {"tool", tool}, {"arguments", *tool_input}};
    if (!call_id.empty()) step["id"] = call_id;
    // The steps that happened, then the call: read as `check` reads a trace.
    Json trace = {{"trace_id", session}, {"steps", Json::array()}};
    if (state.contains("context")) trace["context"] = state["context"];
    trace["steps"] = steps;
    trace["steps"].push_back(step);
    TraceParser parser(rules->reading_options(reading));
    ToolTable tools;
    Trajectory scratch(&tools), t;
    RawRecord raw;
    raw.text = trace.dump();
    raw.origin = RecordOrigin{state_path.string(), 1, 1, 0};
    std::size_t read = 0;
    ParseOutcome outcome = parser.parse(raw, scratch, [&](Trajectory& got) {
      ++read;
      t = std::move(got);
    });
    if (!outcome.ok() || read != 1 || t.steps().size() != trace["steps"].size()) {
      std::string why = outcome.errors.empty() ? std::string("steps were lost") : format_record_error(outcome.errors.front());
      while (!why.empty() && why.back() == '\n') why.pop_back();
      return fail(fmt::format("the session's steps and this call cannot be read as a trace: {}", why));
    }
    RuleSetMonitor monitor(rules, t.context());
    std::vector<Violation> found;
    const std::size_t last = t.steps().size() - 1;
    for (std::size_t i = 0; i < last; ++i) monitor.observe(t, i, found);
    monitor.check(t, last, found);
    if (!found.empty()) {
      const std::string reason = message_of(*rules, found.front());
      // The attempt did not run: not a tool call, but a step of its own (as `guard` records it).
      Json attempt = {{"type", "denied_call"}, {"denied_tool", tool}, {"arguments", *tool_input},
                      {"rule", rules->rules()[found.front().rule].info->name}, {"message", reason}};
      if (!call_id.empty()) attempt["id"] = call_id;
      step = std::move(attempt);
      Json out = {{"hookSpecificOutput",
                   {{"hookEventName", "PreToolUse"}, {"permissionDecision", "deny"}, {"permissionDecisionReason", reason}}}};
      answer.out = out.dump() + "\n";
    }
    steps.push_back(std::move(step));
  } else {
    // The result of a call decided before: the last step of that id still waiting for one.
    Json* call = nullptr;
    for (auto it = steps.rbegin(); it != steps.rend() && !call_id.empty(); ++it)
      if (it->is_object() && it->value("type", Json()) == "tool_call" && it->value("id", Json()) == call_id &&
          !it->contains("result"))
        call = &*it;
    if (call == nullptr) {
      // A call no PreToolUse of this hook saw (its matcher left it out): recorded now, late.
      steps.push_back({{"type", "tool_call"}, {"tool", tool}, {"arguments", *tool_input}, {"unseen_before", true}});
      if (!call_id.empty()) steps.back()["id"] = call_id;
      call = &steps.back();
      answer.err = fmt::format("trajcheck hook: the call of {} ({}) was not decided before it ran: recorded now "
                               "(run the hook on PreToolUse for every tool)\n", tool, call_id.empty() ? "no id" : call_id);
    }
    if (event == "PostToolUse") {
      auto r = in.find("tool_response");
      (*call)["result"] = r != in.end() ? *r : Json();
    } else {
      (*call)["status"] = "error";
      auto e = in.find("error");
      (*call)["result"] = e != in.end() ? *e : Json("the call failed");
    }
  }

  std::string error;
  if (!write_atomically(state_path, state.dump() + "\n", &error))
    return fail(fmt::format("the session's state was not saved ({})", error));
  return answer;
}

}  // namespace trajcheck
